#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints devrt-vs-raw ratios from a Google Benchmark JSON file written by bench-core.

usage: report.py bench-core.json [bench-kernels.json ...]
"""
import json
import sys


def load(path):
    """Times per benchmark name. With repetitions, the fastest repetition: on a shared machine the
    interference only ever adds time (here whole repetitions land 40% slower at random), and
    devrt and raw rows are treated alike."""
    with open(path) as f:
        data = json.load(f)
    times = {}
    counters = {}
    known = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
             "real_time", "cpu_time", "time_unit", "family_index", "per_family_instance_index",
             "aggregate_name", "aggregate_unit", "bytes_per_second", "items_per_second", "label", "error_occurred",
             "error_message"}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        entry = (b["real_time"] * scale, b.get("bytes_per_second"))
        if name not in times or entry[0] < times[name][0]:
            times[name] = entry
        mine = {k: v for k, v in b.items() if k not in known and isinstance(v, (int, float))}
        for k, v in mine.items():
            counters.setdefault(name, {})
            counters[name][k] = min(v, counters[name].get(k, v))
    return data.get("context", {}), times, counters


class Figures:
    """The fastest time (ns) and counters of each benchmark across the files read."""

    def __init__(self, paths):
        self.context, self.times, self.counters = load(paths[0])
        for extra in paths[1:]:
            more_context, more, more_counters = load(extra)
            self.times.update(more)
            self.counters.update(more_counters)
            self.context.update(more_context)

    def ns(self, name):
        return self.times[name][0] if name in self.times else None


def call_rows(f):
    rows = []
    direct, table = f.ns("call/direct"), f.ns("call/table")
    if direct and table:
        rows.append(("type-erased call - direct call (64 B copy)", f"{table - direct:+.2f} ns", "goal <= +1 ns"))
    for name in ("call/backend_ref", "call/devrt_copy", "call/compile_time_copy"):
        if f.ns(name) and direct:
            rows.append((f"{name} - direct", f"{f.ns(name) - direct:+.2f} ns", "checked path"))
    checked, raw = f.ns("call/compile_time_copy"), f.ns("call/memcpy")
    if checked and raw:
        rows.append((f"compile-time copy 64 B: {checked:.2f} ns vs memcpy {raw:.2f} ns (checks, no table)",
                     f"{checked - raw:+.2f} ns", "same checks as devrt::copy"))
    copy, table = f.ns("call/devrt_copy"), f.ns("call/table")
    if copy and table:
        rows.append((f"devrt::copy 64 B host->host: {copy:.2f} ns vs backend call {table:.2f} ns",
                     f"{copy - table:+.2f} ns", "goal <= 6 ns and <= backend call + 4 ns"))
    clock, pair = f.ns("timed_pair/clock"), f.ns("timed_pair/devrt")
    if clock and pair:
        rows.append((f"cpu timed event pair: {pair:.1f} ns vs two clock reads {clock:.1f} ns",
                     f"{pair - clock:+.1f} ns", "docs/timing.md"))
    return rows


def copy_rows(f):
    rows = []
    for size in (64, 4 << 10, 1 << 20, 16 << 20, 32 << 20, 64 << 20, 256 << 20):
        raw, ours = f.times.get(f"copy/memcpy/{size}"), f.times.get(f"copy/devrt/{size}")
        if not (raw and ours and raw[1] and ours[1]):
            continue
        if size == 64:
            rows.append((f"copy 64 B: devrt {ours[0]:.2f} ns vs memcpy {raw[0]:.2f} ns (checks + call)",
                         f"{ours[0] - raw[0]:+.2f} ns", "goal: devrt <= 6 ns"))
            continue
        goal = "goal >= 0.95x" if size <= 4 << 10 else ("goal >= 1.2x past the LLC" if size >= 32 << 20
                                                        else "goal >= 0.98x")
        rows.append((f"copy {size} B: devrt {ours[1] / 1e9:.1f} GB/s vs memcpy {raw[1] / 1e9:.1f} GB/s",
                     f"{ours[1] / raw[1]:.2f}x", goal))
    return rows


def allocation_rows(f):
    rows = []
    for size in (64, 4 << 10, 1 << 20):
        raw, ours = f.ns(f"alloc/aligned_alloc/{size}"), f.ns(f"alloc/workspace_pool/{size}")
        if raw and ours:
            rows.append((f"pool alloc+free {size} B: {ours:.1f} ns vs aligned_alloc+free {raw:.1f} ns",
                         f"{raw / ours:.1f}x faster", "goal >= 4x"))
        table, ours, uncached = (f.ns(f"alloc/{v}/{size}") for v in ("backend_table", "buffer", "buffer_uncached"))
        if table and ours:
            rows.append((f"Buffer::allocate+free {size} B: {ours:.1f} ns cached, "
                         f"{uncached or 0:.1f} ns uncached, backend table {table:.1f} ns",
                         f"{ours:.1f} ns", "goal <= 15 ns from the cache"))
    threads = f.ns(f"alloc/buffer_threads/{4 << 10}/real_time/threads:2")
    if threads:
        rows.append(("Buffer::allocate+free 4 KiB on 2 threads at once", f"{threads:.1f} ns", "per-thread caches"))
    return rows


def tensor_rows(f):
    rows = []
    for name, goal in (("dlpack/roundtrip", "goal <= 100 ns"), ("dlpack/roundtrip_versioned", "goal <= 100 ns"),
                       ("dlpack/import_foreign", "import + release")):
        if f.ns(name):
            rows.append((f"{name}: export + import + release", f"{f.ns(name):.1f} ns", goal))
    for size in (64, 4 << 10, 1 << 20, 64 << 20):
        raw, ours = f.ns(f"tensor_copy/raw_backend/{size}"), f.ns(f"tensor_copy/devrt/{size}")
        if raw and ours:
            rows.append((f"Tensor::copy_from {size} B: {ours:.1f} ns vs raw backend copy {raw:.1f} ns",
                         f"{raw / ours:.2f}x", "goal <= 8 ns" if size == 64 else "ratio raw/devrt, goal ~1.0x"))
    cold, warm = f.ns("target/detect_cpu_uncached"), f.ns("target/detect_cpu_cached")
    if cold and warm:
        rows.append((f"CPU target detection: {cold / 1e3:.1f} us uncached, {warm:.0f} ns cached",
                     f"{cold / warm:.0f}x", "cache gain"))
    return rows


def startup_rows(f):
    rows = []
    start = next((b for b in f.counters if b.startswith("startup/modes")), None)
    if start:
        c = f.counters[start]
        empty, ready, off = c.get("empty_main_us"), c.get("registry_ready_us"), c.get("autoload_off_us")
        if empty and ready:
            rows.append((f"process start to registry ready: {ready:.0f} us (empty main {empty:.0f} us), "
                         f"medians of interleaved starts", f"{ready - empty:+.0f} us", "goal <= 100 us"))
        for key, label, goal in (("registry_ready_us", "autoload, no plugin directory present", "goal <= 50 us"),
                                 ("plugins_none_us", "autoload, an empty directory on DEVRT_PLUGIN_PATH",
                                  "goal <= 50 us"),
                                 ("plugins_all_us", "autoload, every plugin present", "goal <= 0.5 ms")):
            if key in c and off:
                rows.append((f"{label}: {c[key]:.0f} us vs autoload off {off:.0f} us", f"{c[key] - off:+.0f} us",
                             goal))
    if f.ns("plugins/load_backend_absent"):
        rows.append(("load_backend of an absent name (search path, stat per directory)",
                     f"{f.ns('plugins/load_backend_absent') / 1e3:.1f} us", "not_found"))
    for backend in ("opencl", "vulkan"):
        if f.ns(f"plugins/device_count/{backend}"):
            rows.append((f"{backend} device_count through its table",
                         f"{f.ns(f'plugins/device_count/{backend}'):.2f} ns", "equal static vs plugin"))
    return rows


def device_rows(f, device):
    """bench-kernels: one device's rows, named by the run's context ("device opencl:1")."""
    rows = []
    label = f"{device} [{f.context.get(f'device {device}', '?')}]"
    raw, ours = f.ns(f"{device}/launch_sync/raw/real_time"), f.ns(f"{device}/launch_sync/devrt/real_time")
    if raw and ours:
        rows.append((f"{label} empty launch + sync: {ours / 1e3:.1f} us vs raw {raw / 1e3:.1f} us",
                     f"{ours / raw:.2f}x", "devrt/raw, goal <= 1.05x"))
    raw, ours = f.ns(f"{device}/launch_1000/raw/real_time"), f.ns(f"{device}/launch_1000/devrt/real_time")
    if raw and ours:
        rows.append((f"{label} 1000 launches + sync: {ours / 1e6:.2f} vs raw {raw / 1e6:.2f} us/launch",
                     f"{ours / raw:.2f}x", "devrt/raw, goal <= 1.1x"))
    raw, ours = f.ns(f"{device}/timed_pair/raw/real_time"), f.ns(f"{device}/timed_pair/devrt/real_time")
    if raw and ours:
        rows.append((f"{label} timed event pair: {ours / 1e3:.1f} us vs raw {raw / 1e3:.1f} us",
                     f"{ours / raw:.2f}x", "devrt/raw (docs/timing.md)"))
    each, replay, raw_replay = (f.ns(f"{what}/{device}/100/real_time")
                                for what in ("launch_each", "graph_replay", "raw_graph_replay"))
    if each and replay:
        rows.append((f"{label} 100 launches replayed as a graph: {replay / 1e3:.0f} us vs one by one "
                     f"{each / 1e3:.0f} us", f"{replay / each:.2f}x", "graph/each, goal <= 0.5x"))
    if replay and raw_replay:
        rows.append((f"{label} graph replay vs the driver's own replay {raw_replay / 1e3:.0f} us",
                     f"{replay / raw_replay:.2f}x", "devrt/raw, goal <= 1.1x"))
    single = f.ns(f"{device}/launch_1000/single_submit/real_time")
    if single and ours:
        rows.append((f"{label} batched vs one submit per dispatch", f"{single / ours:.2f}x",
                     "throughput gain, goal >= 1.9x"))
    size = 1 << 20
    raw, ours, pool = (f.ns(f"{device}/alloc_free/{v}/{size}") for v in ("raw", "devrt", "pool"))
    if raw and ours and pool:
        rows.append((f"{label} 1 MiB alloc+free: raw {raw:.0f} ns, devrt {ours:.0f} ns, pool {pool:.1f} ns",
                     f"{raw / pool:.0f}x", "pool vs raw create, goal >= 10x"))
    for direction, goal in (("write", "raw/devrt time, goal >= 0.95x"), ("read", "raw/devrt time, goal >= 0.9x")):
        for size in (1 << 20, 64 << 20):
            raw = f.ns(f"{device}/{direction}/raw/{size}/real_time")
            ours = f.ns(f"{device}/{direction}/devrt/{size}/real_time")
            if raw and ours:
                rows.append((f"{label} {direction} {size >> 20} MiB: {size / ours:.2f} vs raw "
                             f"{size / raw:.2f} GB/s", f"{raw / ours:.2f}x", goal))
            # The same bytes as a texture (global.texture), against the raw image copy and the buffer.
            raw_texture = f.ns(f"{device}/texture_{direction}/raw/{size}/real_time")
            texture = f.ns(f"{device}/texture_{direction}/devrt/{size}/real_time")
            if raw_texture and texture:
                rows.append((f"{label} texture {direction} {size >> 20} MiB: {size / texture:.2f} vs raw image "
                             f"{size / raw_texture:.2f} GB/s", f"{raw_texture / texture:.2f}x", goal))
            if texture and ours:
                rows.append((f"{label} texture {direction} {size >> 20} MiB vs buffer", f"{ours / texture:.2f}x",
                             "buffer/texture time (informational)"))
    return rows


def kernel_rows(f):
    rows = []
    graph_rows = ("launch_each", "graph_replay", "raw_graph_replay")  # <what>/<device>/<launches>
    named = {name.split("/")[1] if name.split("/")[0] in graph_rows else name.split("/")[0] for name in f.times}
    devices = sorted({device for device in named if ":" in device},
                     key=lambda d: ("(GPU)" not in f.context.get(f"device {d}", ""), d))
    for device in devices:
        rows += device_rows(f, device)
    for key in sorted(k for k in f.context if k.startswith("skipped ")):
        rows.append((f"{key[len('skipped '):]}: skipped ({f.context[key]})", "-", "no device"))
    return rows


def cuda_rows(f):
    rows = []
    raw, ours = f.ns("cuda/launch_sync/raw/real_time"), f.ns("cuda/launch_sync/devrt/real_time")
    if raw and ours:
        rows.append((f"cuda empty launch + sync: {ours / 1e3:.2f} us vs raw {raw / 1e3:.2f} us",
                     f"{ours / raw:.3f}x", "devrt/raw, goal <= 1.02x"))
    raw, ours = f.ns("cuda/launch_1000/raw/real_time"), f.ns("cuda/launch_1000/devrt/real_time")
    if raw and ours:
        rows.append((f"cuda 1000 launches + sync: {ours / 1e3:.2f} vs raw {raw / 1e3:.2f} ns/launch",
                     f"{ours / raw:.3f}x", "devrt/raw, goal <= 1.02x"))
    raw, ours = f.ns("cuda/timed_pair/raw/real_time"), f.ns("cuda/timed_pair/devrt/real_time")
    if raw and ours:
        rows.append((f"cuda timed event pair: {ours / 1e3:.2f} us vs raw {raw / 1e3:.2f} us",
                     f"{ours / raw:.3f}x", "devrt/raw (docs/timing.md)"))
    raw, pool = f.ns(f"cuda/alloc_free/raw/{1 << 20}"), f.ns(f"cuda/alloc_free/pool/{1 << 20}")
    if raw and pool:
        rows.append((f"cuda 1 MiB cuMemAlloc+cuMemFree {raw:.0f} ns vs pool {pool:.1f} ns",
                     f"{raw / pool:.0f}x", "pool vs raw, goal >= 20x"))
    raw, asynchronous, buffer = (f.ns(f"cuda/alloc_free/{v}/{1 << 20}") for v in ("raw", "async", "buffer"))
    if raw and buffer:
        rows.append((f"cuda 1 MiB Buffer alloc+free {buffer:.0f} ns vs cuMemAlloc+Free {raw:.0f} ns, "
                     f"cuMemAllocAsync+FreeAsync {asynchronous or 0:.0f} ns", f"{buffer:.0f} ns", "goal <= 1 us"))
    for direction in ("h2d", "d2h"):
        for size in (1 << 20, 256 << 20):
            for pinned, label in ((1, "pinned"), (0, "pageable")):
                raw = f.ns(f"cuda/{direction}/raw/{size}/{pinned}/real_time")
                ours = f.ns(f"cuda/{direction}/devrt/{size}/{pinned}/real_time")
                if raw and ours:
                    rows.append((f"cuda {direction} {size >> 20} MiB {label}: {size / ours:.2f} vs raw "
                                 f"{size / raw:.2f} GB/s", f"{ours / raw:.3f}x", "devrt/raw time, goal <= 1.02x"))
    cold, cached = f.ns("nvrtc/compile/cold"), f.ns("nvrtc/compile/cached")
    if cold and cached:
        rows.append((f"NVRTC compile of test/kernels/kernels.cu: cold {cold / 1e6:.1f} ms, cached "
                     f"{cached / 1e6:.3f} ms", f"{cold / cached:.0f}x", "cached goal <= 1 ms"))
    return rows


SECTIONS = (call_rows, copy_rows, allocation_rows, tensor_rows, startup_rows, kernel_rows, cuda_rows)


def main():
    figures = Figures(sys.argv[1:])
    context = figures.context
    print(f"host: {context.get('num_cpus')} cpus @ {context.get('mhz_per_cpu')} MHz, "
          f"(libbenchmark itself built as {context.get('library_build_type')}); with repetitions, the fastest")
    rows = [row for section in SECTIONS for row in section(figures)]
    if not rows:
        print("no figures in these files")
        return
    width = max(len(r[0]) for r in rows)
    for what, figure, goal in rows:
        print(f"{what:<{width}}  {figure:>14}  ({goal})")


if __name__ == "__main__":
    main()
