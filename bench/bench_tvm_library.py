#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The costs of a real TVM-built library through devrt.tvm (opt-in: MLC's libraries carry no
licence, so none is in the tree): the first load (file checked, dlopen, blob parsed, every kernel
built for the device), a later load on the same device (the file is open: kernels again), the
first call of an operator (its arguments learnt as tools/tvm-probe.py learns them) and a warm
call (median of 50, each waited for); then loads and warm calls with devrt's SPIR-V rewrite on and
off (DEVRT_VULKAN_SPIRV_REWRITE=1 and 0, interleaved, medians of 5 and 50: what defining
GLSL.std.450 Pow costs). Prints one JSON object; with no library, says why.

usage: DEVRT_TVM_LIBRARY=gpt2-q0f16-vulkan.so DEVRT_TVM_DEVICE=vulkan:0 bench_tvm_library.py [FUNCTION] [OUT.json]
"""
import importlib.util
import json
import os
import statistics
import sys
import time

import devrt


def rewrite_costs(path, device, function, args):
    """Loads (every kernel built again) and warm calls with the SPIR-V rewrite on and off."""
    loads = {"1": [], "0": []}
    calls = {"1": [], "0": []}
    for _ in range(5):
        for setting in ("1", "0"):
            os.environ["DEVRT_VULKAN_SPIRV_REWRITE"] = setting
            t0 = time.perf_counter()
            lib = devrt.tvm.load_library(path, device)
            loads[setting].append(time.perf_counter() - t0)
            lib[function](*args)  # the first call builds what is left to build
            lib.synchronize()
            for _ in range(10):
                t0 = time.perf_counter()
                lib[function](*args)
                lib.synchronize()
                calls[setting].append(time.perf_counter() - t0)
            del lib
    os.environ.pop("DEVRT_VULKAN_SPIRV_REWRITE")
    return {"load_ms_rewritten": statistics.median(loads["1"]) * 1e3,
            "load_ms_as_written": statistics.median(loads["0"]) * 1e3,
            "warm_call_ms_rewritten": statistics.median(calls["1"]) * 1e3,
            "warm_call_ms_as_written": statistics.median(calls["0"]) * 1e3}


def main():
    path = os.environ.get("DEVRT_TVM_LIBRARY", "")
    if not path:
        print(json.dumps({"skipped": "DEVRT_TVM_LIBRARY names no TVM-built library"}))
        return 0
    kind, _, index = os.environ.get("DEVRT_TVM_DEVICE", "vulkan:0").partition(":")
    device = devrt.device(kind, int(index or 0))
    function = sys.argv[1] if len(sys.argv) > 1 else "layer_norm"
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("tvm_probe", os.path.join(here, "..", "tools", "tvm-probe.py"))
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)

    t0 = time.perf_counter()
    lib = devrt.tvm.load_library(path, device)
    first_load = time.perf_counter() - t0
    kernels = len(lib.kernels)
    del lib
    t0 = time.perf_counter()
    lib = devrt.tvm.load_library(path, device)
    reload = time.perf_counter() - t0
    specs, reason = probe.arguments_of(lib, function, device)  # runs it once: its kernels' first launch
    if specs is None:
        print(json.dumps({"error": f"{function}: {reason}"}))
        return 1
    args = [s["value"] if s["int"] else devrt.empty(tuple(s["shape"]), s["dtype"], device) for s in specs]
    lib = devrt.tvm.load_library(path, device)  # a fresh hold: the first call below is the library's first
    del lib
    lib = devrt.tvm.load_library(path, device)
    t0 = time.perf_counter()
    lib[function](*args)
    lib.synchronize()
    first_call = time.perf_counter() - t0
    warm = []
    for _ in range(50):
        t0 = time.perf_counter()
        lib[function](*args)
        lib.synchronize()
        warm.append(time.perf_counter() - t0)
    result = {"library": os.path.basename(path), "device": str(device), "kernels": kernels, "function": function,
              "arguments": [s.get("shape", s.get("value")) for s in specs],
              "first_load_ms": first_load * 1e3, "reload_ms": reload * 1e3, "first_call_ms": first_call * 1e3,
              "warm_call_ms_median": statistics.median(warm) * 1e3,
              "rewritten_instructions": lib.rewritten_instructions}
    del lib
    result.update(rewrite_costs(path, device, function, args))
    print(json.dumps(result))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as out:
            json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
