#!/usr/bin/env python3
"""Prints devrt-vs-raw ratios from a Google Benchmark JSON file written by bench-core.

usage: report.py bench-core.json
"""
import json
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    times = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        times[name] = (b["real_time"] * scale, b.get("bytes_per_second"))
    return data.get("context", {}), times


def main():
    context, t = load(sys.argv[1])
    print(f"host: {context.get('num_cpus')} cpus @ {context.get('mhz_per_cpu')} MHz, "
          f"(libbenchmark itself built as {context.get('library_build_type')})")
    rows = []

    def ns(name):
        return t[name][0] if name in t else None

    direct, table = ns("call/direct"), ns("call/table")
    if direct and table:
        rows.append(("type-erased call - direct call (64 B copy)", f"{table - direct:+.2f} ns",
                     "goal <= +1 ns"))
    for name in ("call/backend_ref", "call/devrt_copy"):
        if ns(name) and direct:
            rows.append((f"{name} - direct", f"{ns(name) - direct:+.2f} ns", "checked path"))
    for size in (4 << 10, 1 << 20, 64 << 20, 256 << 20):
        raw, ours = t.get(f"copy/memcpy/{size}"), t.get(f"copy/devrt/{size}")
        if raw and ours and raw[1] and ours[1]:
            rows.append((f"copy {size} B: devrt {ours[1] / 1e9:.1f} GB/s vs memcpy {raw[1] / 1e9:.1f} GB/s",
                         f"{ours[1] / raw[1]:.2f}x", "goal >= 1.0x"))
    for size in (64, 4 << 10, 1 << 20):
        raw, ours = ns(f"alloc/aligned_alloc/{size}"), ns(f"alloc/workspace_pool/{size}")
        if raw and ours:
            rows.append((f"pool alloc+free {size} B: {ours:.1f} ns vs aligned_alloc+free {raw:.1f} ns",
                         f"{raw / ours:.1f}x faster", "goal >= 4x"))
    for name, goal in (("dlpack/roundtrip", "goal <= 100 ns"), ("dlpack/roundtrip_versioned", "goal <= 100 ns"),
                       ("dlpack/import_foreign", "import + release")):
        if ns(name):
            rows.append((f"{name}: export + import + release", f"{ns(name):.1f} ns", goal))
    for size in (64, 4 << 10, 1 << 20, 64 << 20):
        raw, ours = ns(f"tensor_copy/raw_backend/{size}"), ns(f"tensor_copy/devrt/{size}")
        if raw and ours:
            rows.append((f"tensor copy {size} B: {ours:.1f} ns vs raw backend copy {raw:.1f} ns",
                         f"{raw / ours:.2f}x", "ratio raw/devrt, goal ~1.0x"))
    cold, warm = ns("target/detect_cpu_uncached"), ns("target/detect_cpu_cached")
    if cold and warm:
        rows.append((f"CPU target detection: {cold / 1e3:.1f} us uncached, {warm:.0f} ns cached",
                     f"{cold / warm:.0f}x", "cache gain"))
    empty, ready = ns("startup/empty_main"), ns("startup/registry_ready")
    if empty and ready:
        rows.append((f"process start to registry ready: {ready / 1e3:.0f} us (empty main {empty / 1e3:.0f} us)",
                     f"{(ready - empty) / 1e3:+.0f} us", "devrt's share"))
    width = max(len(r[0]) for r in rows)
    for what, figure, goal in rows:
        print(f"{what:<{width}}  {figure:>14}  ({goal})")


if __name__ == "__main__":
    main()
