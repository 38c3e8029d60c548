#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python package's per-call costs against the same operation without devrt, in one run.

- attribute read: devrt.cpu(0).max_threads_per_block (a compiled getter calling the C API)
  against a plain Python attribute and an empty Python property;
- DLPack: numpy.from_dlpack(devrt tensor), devrt.from_dlpack(numpy array),
  torch.from_dlpack(devrt tensor) and devrt.from_dlpack(torch tensor), each against NumPy's own
  numpy.from_dlpack(numpy array), and the torch rows also against the same consumer or producer
  with NumPy on the other end (torch.from_dlpack(numpy array), numpy.from_dlpack(torch tensor)),
  which is what PyTorch itself costs;
- devrt.empty against numpy.empty.

Five interleaved repetitions, the fastest of each kept (interference only adds time). Writes
Google Benchmark-shaped JSON to the path given (or stdout) and prints the ratios.

usage: bench_python.py [out.json]
"""
import json
import sys
import timeit

import numpy as np

import devrt


class Plain:
    __slots__ = ("value",)

    def __init__(self):
        self.value = 1024

    @property
    def max_threads_per_block(self):
        return self.value


def cases():
    cpu = devrt.cpu(0)
    plain = Plain()
    array = np.arange(1024, dtype=np.float32)
    tensor = devrt.from_dlpack(array)
    table = {
        "attr/devrt_property": lambda: cpu.max_threads_per_block,
        "attr/plain_attribute": lambda: plain.value,
        "attr/empty_python_property": lambda: plain.max_threads_per_block,
        "dlpack/numpy_from_numpy": lambda: np.from_dlpack(array),
        "dlpack/numpy_from_devrt": lambda: np.from_dlpack(tensor),
        "dlpack/devrt_from_numpy": lambda: devrt.from_dlpack(array),
        "empty/devrt_64_float32": lambda: devrt.empty((64,), "float32"),
        "empty/numpy_64_float32": lambda: np.empty((64,), np.float32),
    }
    try:
        import torch
    except ImportError:
        return table
    torch_tensor = torch.arange(1024, dtype=torch.float32)
    table.update({
        "dlpack/torch_from_devrt": lambda: torch.from_dlpack(tensor),
        "dlpack/torch_from_numpy": lambda: torch.from_dlpack(array),
        "dlpack/devrt_from_torch": lambda: devrt.from_dlpack(torch_tensor),
        "dlpack/numpy_from_torch": lambda: np.from_dlpack(torch_tensor),
    })
    return table


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
    numpy_own = best["dlpack/numpy_from_numpy"]
    rows = [
        ("attribute read (cpu.max_threads_per_block)", best["attr/devrt_property"], best["attr/plain_attribute"],
         "a plain Python attribute", "goal <= 150 ns"),
        ("numpy.from_dlpack(devrt tensor)", best["dlpack/numpy_from_devrt"], numpy_own, "NumPy's own", "goal <= 1.5x"),
        ("devrt.from_dlpack(numpy array)", best["dlpack/devrt_from_numpy"], numpy_own, "NumPy's own", "goal <= 1.5x"),
        ("devrt.empty((64,), float32)", best["empty/devrt_64_float32"], best["empty/numpy_64_float32"],
         "numpy.empty", ""),
    ]
    if "dlpack/torch_from_devrt" in best:
        rows += [
            ("torch.from_dlpack(devrt tensor)", best["dlpack/torch_from_devrt"], numpy_own, "NumPy's own",
             "goal <= 1.5x"),
            ("  the same consumer", best["dlpack/torch_from_devrt"], best["dlpack/torch_from_numpy"],
             "torch.from_dlpack(numpy)", "PyTorch's own cost"),
            ("devrt.from_dlpack(torch tensor)", best["dlpack/devrt_from_torch"], numpy_own, "NumPy's own",
             "goal <= 1.5x"),
            ("  the same producer", best["dlpack/devrt_from_torch"], best["dlpack/numpy_from_torch"],
             "numpy.from_dlpack(torch)", "PyTorch's own cost"),
        ]
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, fastest of 5 interleaved repetitions",
          file=sys.stderr)
    for what, ours, raw, raw_name, goal in rows:
        print(f"  {what:<44} {ours:8.0f} ns  vs {raw_name:<26} {raw:6.0f} ns  ratio {ours / raw:5.2f}  {goal}",
              file=sys.stderr)
    print(f"  (an empty Python property: {best['attr/empty_python_property']:.0f} ns)", file=sys.stderr)


if __name__ == "__main__":
    main()
