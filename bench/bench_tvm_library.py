#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The costs of a real TVM-built library through devrt.tvm (opt-in: MLC's libraries carry no
licence, so none is in the tree): the first load (file checked, dlopen, blob parsed, every kernel
built for the device), a later load on the same device (the file is open: kernels again), the
first call of an operator (its arguments learnt as tools/tvm-probe.py learns them) and a warm
call (median of 50, each waited for); then loads and warm calls with devrt's SPIR-V rewrite on and
off (DEVRT_VULKAN_SPIRV_REWRITE=1 and 0, interleaved, medians of 5 and 50: what defining
GLSL.std.450 Pow costs); and for a model (a library carrying a Relax VM program: MLC's GPT-2), a
decode step through devrt.tvm.VirtualMachine (prefill on 8 tokens, then 16 decode steps, each waited
for): the step's wall time, the calling thread's CPU time during the VM call (host work: the
interpreter, the operators' host code, launches; the device's work runs on the driver's threads),
and the device time a time_evaluator measures on the device's clock. Prints one JSON object; with
no library, says why.

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


def decode_costs(path, device, here):
    """A GPT-2 model's decode step: wall, host CPU and device time (medians of 16 steps)."""
    spec = importlib.util.spec_from_file_location("gpt2", os.path.join(here, "..", "tools", "tvm-gpt2-model.py"))
    gpt2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpt2)
    import numpy as np

    lib = devrt.tvm.load_library(path, device)
    vm = devrt.tvm.VirtualMachine(lib, device)
    params = [devrt.tensor(w, device) for _, w in gpt2.weights(json.loads(vm["_metadata"]()), 0)]
    caches = vm["_initialize_effect"]()
    prompt = devrt.tensor(np.array([gpt2.PROMPT], dtype=np.int32), device)
    logits, caches = vm["prefill"](prompt, devrt.tvm.Shape([8]), caches, params)
    lib.synchronize()
    steps, host = [], []
    token = devrt.tensor(np.array([[464]], dtype=np.int32), device)
    for position in range(8, 24):
        t0, c0 = time.perf_counter(), time.thread_time()
        logits, caches = vm["decode"](token, devrt.tvm.Shape([position + 1]), caches, params)
        host.append(time.thread_time() - c0)
        lib.synchronize()
        steps.append(time.perf_counter() - t0)
    length = [24]

    def step():
        nonlocal caches
        _, caches = vm["decode"](token, devrt.tvm.Shape([length[0] + 1]), caches, params)
        length[0] += 1

    evaluator = devrt.time_evaluator(step, device, number=1, repeat=8)
    device_time = evaluator().median
    return {"decode_step_ms": statistics.median(steps) * 1e3, "decode_host_cpu_ms": statistics.median(host) * 1e3,
            "decode_host_share": statistics.median(host) / statistics.median(steps),
            "decode_device_ms": device_time * 1e3, "decode_device_side": evaluator.device_side,
            "decode_wall_minus_device_ms": (statistics.median(steps) - device_time) * 1e3}


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
    has_vm = any(reason.startswith("relax.Executable") for reason in lib.skipped)
    del lib
    if has_vm:
        result.update(decode_costs(path, device, here))
    result.update(rewrite_costs(path, device, function, args))
    print(json.dumps(result))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as out:
            json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
