#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the operators of MLC's GPT-2 model library (mlc-ai/binary-mlc-llm-libs: gpt2-q0f16-*.so,
no licence: fetched for a local check, never committed) through devrt.tvm and compares each with
NumPy on random inputs. Argument shapes and dtypes come from the library's own checks
(tools/tvm-probe.py); the reference of each operator is written from its name and GPT-2's
definition (layer norm, linear layers, GELU-tanh, softmax, reshapes). Prints one line per
operator: the largest error relative to max(1, |expected|), "NaN" where the kernel gave NaN, or
the error devrt returned. Exit 1 when an operator failed in devrt.

usage: tvm-gpt2-check.py LIBRARY DEVICE      (DEVICE: cuda:0, vulkan:0, ...)
"""
import importlib.util
import os
import sys

import numpy as np

import devrt


def layer_norm(x, g, b):
    x = x.astype(np.float32)
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g.astype(np.float32) + b.astype(np.float32)


def linear(x, w, b=None):
    y = x.astype(np.float32) @ w.astype(np.float32).T
    return y if b is None else y + b.astype(np.float32)


def gelu(y):
    return 0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y ** 3)))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def heads(x):
    return x.transpose(0, 2, 1, 3)


EXPECTED = {
    "add": lambda a, b: [a.astype(np.float32) + b],
    "layer_norm": lambda x, g, b: [layer_norm(x, g, b)],
    "layer_norm1": lambda x, g, b: [layer_norm(x, g, b)],
    **{name: (lambda t, i: [t[i]]) for name in ("take", "take1", "take2", "take3")},
    "fused_NT_matmul6_add1": lambda x, w, b: [linear(x, w, b)],
    "fused_NT_matmul_add5": lambda x, w, b: [linear(x, w, b)],
    **{name: (lambda x, w, b, r: [linear(x, w, b) + r]) for name in (
        "fused_NT_matmul2_add6_add4", "fused_NT_matmul8_add2_add", "fused_NT_matmul10_add2_add",
        "fused_NT_matmul4_add6_add4")},
    "fused_NT_matmul3_add7_gelu_tanh1": lambda x, w, b: [gelu(linear(x, w, b))],
    "fused_NT_matmul9_add3_gelu_tanh": lambda x, w, b: [gelu(linear(x, w, b))],
    "fused_NT_matmul5_cast2": lambda x, w: [linear(x, w)],
    **{name: (lambda x: [heads(x)]) for name in ("transpose", "transpose1", "fused_transpose", "fused_transpose7")},
    "fused_transpose8_reshape8": lambda x: [heads(x).reshape(1, 1, 768)],
    "reshape1": lambda x: [x.reshape(1, 1, 768)],
    "reshape2": lambda x: [x.reshape(1, 1, 36, 64)],
    "reshape3": lambda x: [x.reshape(1, 1, 12, 64)],
    "reshape4": lambda x: [x.reshape(1, 1, 768)],
    "fused_squeeze": lambda x: [x.reshape(1, 12, 64)],
    "fused_squeeze1": lambda x: [x.reshape(1, 12, 64)],
    "fused_reshape7_split1": lambda x: list(np.split(x.reshape(1, 1, 36, 64), 3, axis=2)),
    "fused_reshape6_reshape6_add4": lambda a, b: [(a.astype(np.float32) + b).reshape(1, 1, 768)],
    **{name: (lambda x: [softmax(x.astype(np.float64))]) for name in (
        "softmax1", "fused_softmax_cast1", "fused_softmax2_cast4")},
    "matmul": lambda a, b: [a.astype(np.float32) @ b],
    "matmul8": lambda a, b: [a.astype(np.float32) @ b],
}


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    path, where = sys.argv[1], sys.argv[2]
    kind, _, index = where.partition(":")
    device = devrt.device(kind, int(index or 0))
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("tvm_probe", os.path.join(here, "tvm-probe.py"))
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    lib = devrt.tvm.load_library(path, device)
    # GLSL.std.450 Pow of a negative base, defined at load (DEVRT_VULKAN_SPIRV_REWRITE=0: as written).
    print(f"{lib.rewritten_instructions} instructions rewritten at load")
    rng = np.random.default_rng(0)
    failed = matched = 0
    for name in sorted(EXPECTED):
        if name not in lib.functions:
            continue
        specs, reason = probe.arguments_of(lib, name, device)
        if specs is None:
            print(f"{name:40s} not run: {reason[:120]}")
            continue
        reference = EXPECTED[name]
        inputs = reference.__code__.co_argcount
        host, args = [], []
        for i, s in enumerate(specs):
            if s["int"]:
                args.append(s["value"])
            elif i < inputs:
                shape, dtype = tuple(s["shape"]), s["dtype"]
                if dtype == "int32":
                    value = rng.integers(0, min(specs[0]["shape"][0], 1024), size=shape).astype(np.int32)
                else:
                    value = (rng.standard_normal(shape) * 0.5).astype(dtype)
                host.append(value)
                args.append(devrt.tensor(value, device))
            else:
                args.append(devrt.empty(tuple(s["shape"]), s["dtype"], device))
        try:
            lib[name](*args)
            lib.synchronize()
        except devrt.DevrtError as error:
            failed += 1
            print(f"{name:40s} FAILED: {str(error)[:160]}")
            continue
        outputs = [a.numpy().astype(np.float64) for a in args[inputs:]]
        expected = [np.asarray(e, dtype=np.float64) for e in reference(*host)]
        outputs = outputs[-len(expected):]
        worst, nan = 0.0, False
        for out, exp in zip(outputs, expected):
            nan = nan or bool(np.isnan(out).any())
            worst = max(worst, float(np.nanmax(np.abs(out.reshape(exp.shape) - exp)) / max(1.0, np.abs(exp).max())))
        matched += not nan and worst < 5e-2
        print(f"{name:40s} {'NaN; ' if nan else ''}max relative error {worst:.2e}")
    print(f"{matched} operators within 5e-2 of NumPy, {failed} failed in devrt")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
