#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python package's per-call costs against the raw call beneath each, in one run.

- attribute read: devrt.cpu(0).max_threads_per_block against the same C function called through
  ctypes with its arguments prepared (the floor any ctypes binding pays) and an empty Python
  property (the interpreter's own floor);
- DLPack: devrt.from_dlpack(numpy array) and numpy.from_dlpack(devrt tensor) against
  numpy.from_dlpack(numpy array), the same exchange with NumPy on both ends;
- devrt.empty against numpy.empty.

Five interleaved repetitions, the fastest of each kept (interference only adds time). Writes
Google Benchmark-shaped JSON to the path given (or stdout) and prints the ratios.

usage: bench_python.py [out.json]
"""
import ctypes
import json
import sys
import timeit

import numpy as np

import devrt
from devrt import _capi


class Plain:
    __slots__ = ("value",)

    def __init__(self):
        self.value = 1024

    @property
    def max_threads_per_block(self):
        return self.value


def cases():
    cpu = devrt.cpu(0)
    function = _capi.lib.devrt_device_attribute_int
    c_device = _capi.CDevice(1, 0)
    out = ctypes.c_int64()
    out_ref = ctypes.byref(out)
    plain = Plain()
    array = np.arange(1024, dtype=np.float32)
    tensor = devrt.from_dlpack(array)
    return {
        "attr/python_property": lambda: cpu.max_threads_per_block,
        "attr/raw_ctypes_call": lambda: function(c_device, 1, out_ref),
        "attr/empty_python_property": lambda: plain.max_threads_per_block,
        "dlpack/devrt_from_numpy": lambda: devrt.from_dlpack(array),
        "dlpack/numpy_from_devrt": lambda: np.from_dlpack(tensor),
        "dlpack/numpy_from_numpy": lambda: np.from_dlpack(array),
        "empty/devrt_64_float32": lambda: devrt.empty((64,), "float32"),
        "empty/numpy_64_float32": lambda: np.empty((64,), np.float32),
    }


def measure(repetitions=5, seconds=0.2):
    table = cases()
    counts = {}
    for name, call in table.items():
        number = 1
        while timeit.timeit(call, number=number) < seconds / 4:
            number *= 4
        counts[name] = number
    best = {}
    for _ in range(repetitions):
        for name, call in table.items():  # interleaved: each repetition runs every case once
            per_call = timeit.timeit(call, number=counts[name]) / counts[name] * 1e9
            best[name] = min(per_call, best.get(name, per_call))
    return best, counts


def main():
    best, counts = measure()
    report = {
        "context": {"executable": sys.executable, "python": sys.version.split()[0], "numpy": np.__version__,
                    "devrt": devrt.__version__},
        "benchmarks": [{"name": name, "run_name": name, "run_type": "iteration", "iterations": counts[name],
                        "real_time": ns, "cpu_time": ns, "time_unit": "ns"} for name, ns in best.items()],
    }
    text = json.dumps(report, indent=2)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as out:
            out.write(text + "\n")
    else:
        print(text)
    rows = [
        ("attribute read (devrt.cpu(0).max_threads_per_block)", best["attr/python_property"],
         best["attr/raw_ctypes_call"], "raw ctypes call", "goal <= 1000 ns"),
        ("devrt.from_dlpack(numpy array)", best["dlpack/devrt_from_numpy"], best["dlpack/numpy_from_numpy"],
         "numpy.from_dlpack(numpy)", ""),
        ("numpy.from_dlpack(devrt tensor)", best["dlpack/numpy_from_devrt"], best["dlpack/numpy_from_numpy"],
         "numpy.from_dlpack(numpy)", ""),
        ("devrt.empty((64,), float32)", best["empty/devrt_64_float32"], best["empty/numpy_64_float32"],
         "numpy.empty", ""),
    ]
    print(f"python {sys.version.split()[0]}, fastest of 5 interleaved repetitions", file=sys.stderr)
    for what, ours, raw, raw_name, goal in rows:
        print(f"  {what:<52} {ours:8.0f} ns  vs {raw_name} {raw:6.0f} ns  ratio {ours / raw:5.2f}  {goal}",
              file=sys.stderr)
    print(f"  (an empty Python property: {best['attr/empty_python_property']:.0f} ns)", file=sys.stderr)
    if best["attr/python_property"] > 1000:
        print("attribute read over the 1 us goal", file=sys.stderr)


if __name__ == "__main__":
    main()
