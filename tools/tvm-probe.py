#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loads a library TVM built through devrt.tvm and runs each of its functions once, on arguments
whose ranks, dtypes and static shapes it learns from the library's own checks: TVM's host code
asserts every argument (num_args, ndim, dtype, shape[i] against a constant) and says what it
expected, so each refusal names the next fact. Symbolic dimensions are tried at 1. Prints, per
function, the arguments it ran with, or why it could not; exit 1 when a function that was given
arguments it accepted failed in devrt.

The way to try a real library (MLC's, say) on a machine: the opt-in test
(DEVRT_TVM_LIBRARY=... in test/python/test_tvm.py) checks that it loads; this runs its operators.

usage: tvm-probe.py LIBRARY DEVICE [FUNCTION ...]    (DEVICE: vulkan:0, opencl:0, cpu:0, ...)
"""
import re
import sys

import devrt

CHECKED = re.compile(r"\.(\w+)\.(ndim|dtype|shape\[(\d+)\])")


def arguments_of(lib, name, device):
    """(specs, None) once the function ran, or (None, reason)."""
    try:
        lib[name]()
    except devrt.DevrtError as error:
        found = re.search(r"num_args should be (\d+)", str(error))
        if found is None:
            return None, str(error)
        count = int(found.group(1))
    else:
        return [], None
    specs = [{"int": False, "dtype": "float32", "shape": [1]} for _ in range(count)]
    order = []  # the functions' argument names in the order their checks name them
    last = None
    for _ in range(100):
        args = [s["value"] if s["int"] else devrt.empty(tuple(s["shape"]), s["dtype"], device) for s in specs]
        try:
            lib[name](*args)
            lib.synchronize()
            return specs, None
        except devrt.DevrtError as error:
            message = str(error)
            if message == last:
                return None, message
            last = message
            wants_int = re.search(r"Expect arg\[(\d+)\] to be int", message)
            if wants_int:
                specs[int(wants_int.group(1))] = {"int": True, "value": 1}
                continue
            checked = CHECKED.search(message.split(name, 1)[-1])
            if checked is None:
                return None, message
            var, what, dim = checked.groups()
            if var not in order:
                order.append(var)
            tensors = [s for s in specs if not s["int"]]
            spec = tensors[min(order.index(var), len(tensors) - 1)]
            if what == "ndim":
                rank = int(re.search(r"equal (\d+)", message).group(1))
                spec["shape"] = [1] * rank
            elif what == "dtype":
                spec["dtype"] = re.search(r"expected to be (\w+)", message).group(1)
            else:
                value = re.search(r"constraint: \(?(?:T\.int64\()?(\d+)\)? ==", message)
                if value is None:
                    return None, message
                spec["shape"][int(dim)] = int(value.group(1))
    return None, last


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    device = devrt.device(sys.argv[2])
    lib = devrt.tvm.load_library(sys.argv[1], device)
    print(f"{lib}: {len(lib.functions)} functions, {len(lib.kernels)} kernels, {lib.rewritten_instructions} "
          f"instructions rewritten at load; skipped: {lib.skipped}")
    failed = 0
    for name in sys.argv[3:] or lib.functions:
        specs, reason = arguments_of(lib, name, device)
        if specs is None:
            devrt_side = "TVM library" in reason and "Assert" not in reason and "constraint" not in reason
            failed += devrt_side
            print(f"{'FAIL' if devrt_side else 'SKIP'} {name}: {reason[:240]}")
        else:
            shown = ", ".join(str(s["value"]) if s["int"] else f"{s['dtype']}{s['shape']}" for s in specs)
            print(f"ran  {name}({shown})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
