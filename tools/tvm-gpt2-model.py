#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs MLC's GPT-2 model library (mlc-ai/binary-mlc-llm-libs: gpt2-q0f16-*.so, no licence:
fetched for a local check, never committed) as a whole model through devrt's Relax VM, and checks
it against a NumPy GPT-2 written here from the parameter names (no TVM involved) on the same
seeded random weights, shaped from the library's `_metadata`.

The VM runs `_initialize_effect`, `prefill` on 8 tokens and 16 `decode` steps; NumPy runs the same
tokens (teacher forcing: both sides are fed the same token at each step). At each of the 17 steps
the largest logit difference must be at most 5% of that step's logit range, and NumPy's argmax
among devrt's top 5. Then a free-running greedy generation of 16 tokens from devrt's logits,
reported with NumPy's. Prints one line per step; exit 1 when a step is off or a call failed.

With --dump DIR it also writes what a C++ run needs to check itself against the same NumPy
model (test/tvm/tvm_vm_test.cpp, DEVRT_TVM_GPT2_DUMP=DIR): `params.txt` (per parameter its name,
rank and shape, in _metadata's order), `params.bin` (their float16 bytes, in that order),
`tokens.txt` (the 8 prompt tokens, then one per decode step) and `logits.bin` (NumPy's float32
logits of each step).

With --write-params DIR it writes the same weights in MLC's format (ndarray-cache.json and its
shards): examples/generate with --params DIR and the prompt below must print the greedy tokens.

usage: tvm-gpt2-model.py LIBRARY DEVICE [--steps N] [--seed S] [--dump DIR] [--write-params DIR]
"""
import argparse
import json
import sys
import time

import numpy as np

import devrt

PROMPT = [464, 2068, 7586, 21831, 18045, 625, 262, 16931]  # 8 token ids


def weights(metadata, seed):
    """Seeded random weights for every parameter the model takes, in its order: layer norms near
    1 and 0, embeddings and linear layers small (GPT-2's initialisation), as float16."""
    rng = np.random.default_rng(seed)
    out = []
    for p in metadata["params"]:
        name, shape = p["name"], p["shape"]
        if p["dtype"] != "float16":
            raise SystemExit(f"{name}: dtype {p['dtype']} (this check is for the q0f16 model)")
        if ".ln_" in name and name.endswith(".weight"):
            w = 1.0 + 0.1 * rng.standard_normal(shape)
        elif ".ln_" in name or name.endswith(".bias"):
            w = 0.02 * rng.standard_normal(shape)
        elif "wte" in name or "wpe" in name or name == "lm_head.weight":
            w = 0.1 * rng.standard_normal(shape)
        else:
            w = 0.02 * rng.standard_normal(shape)
        out.append((name, w.astype(np.float16)))
    return out


class NumpyGPT2:
    """GPT-2 in float32 from the float16 weights (linear weights are [out, in], as MLC stores
    them), with a KV cache per layer."""

    def __init__(self, params, n_head):
        self.p = {name: w.astype(np.float32) for name, w in params}
        self.n_layer = sum(1 for name in self.p if name.endswith(".ln_1.weight"))
        self.n_head = n_head
        self.keys = [None] * self.n_layer
        self.values = [None] * self.n_layer

    @staticmethod
    def layer_norm(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-5) * g + b

    def linear(self, x, prefix):
        return x @ self.p[prefix + ".weight"].T + self.p[prefix + ".bias"]

    def attention(self, layer, h, start):
        qkv = self.linear(h, f"transformer.h.{layer}.attn.c_attn")
        t, width = h.shape
        d = width // self.n_head
        q, k, v = (a.reshape(t, self.n_head, d) for a in np.split(qkv, 3, axis=-1))
        self.keys[layer] = k if self.keys[layer] is None else np.concatenate([self.keys[layer], k])
        self.values[layer] = v if self.values[layer] is None else np.concatenate([self.values[layer], v])
        keys, values = self.keys[layer], self.values[layer]
        scores = np.einsum("thd,shd->hts", q, keys) / np.sqrt(d)
        visible = np.arange(keys.shape[0])[None, :] <= (start + np.arange(t))[:, None]
        scores = np.where(visible[None], scores, -np.inf)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        out = np.einsum("hts,shd->thd", scores, values).reshape(t, width)
        return self.linear(out, f"transformer.h.{layer}.attn.c_proj")

    def forward(self, tokens, start):
        """The logits of the last of `tokens`, at positions start, start + 1, ..."""
        p = self.p
        x = p["transformer.wte.weight"][tokens] + p["transformer.wpe.weight"][start:start + len(tokens)]
        for layer in range(self.n_layer):
            pre = f"transformer.h.{layer}"
            h = self.layer_norm(x, p[pre + ".ln_1.weight"], p[pre + ".ln_1.bias"])
            x = x + self.attention(layer, h, start)
            h = self.layer_norm(x, p[pre + ".ln_2.weight"], p[pre + ".ln_2.bias"])
            y = self.linear(h, pre + ".mlp.c_fc")
            y = 0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y ** 3)))
            x = x + self.linear(y, pre + ".mlp.c_proj")
        x = self.layer_norm(x, p["transformer.ln_f.weight"], p["transformer.ln_f.bias"])
        return x[-1] @ p["lm_head.weight"].T


def write_mlc_params(directory, params, shard_bytes=32 << 20):
    """The weights in MLC's format (ndarray-cache.json, params_shard_N.bin of at most shard_bytes,
    "raw" records), for examples/generate's --params: its tokens must equal the greedy run here."""
    import os

    os.makedirs(directory, exist_ok=True)
    shards, records, data = [], [], bytearray()
    for name, w in params:
        raw = np.ascontiguousarray(w).tobytes()
        if records and len(data) + len(raw) > shard_bytes:
            shards.append((records, bytes(data)))
            records, data = [], bytearray()
        records.append({"name": name, "shape": list(w.shape), "dtype": str(w.dtype), "format": "raw",
                        "nbytes": len(raw), "byteOffset": len(data)})
        data += raw
    shards.append((records, bytes(data)))
    index = {"metadata": {"ParamSize": len(params)}, "records": []}
    for i, (records, blob) in enumerate(shards):
        with open(os.path.join(directory, f"params_shard_{i}.bin"), "wb") as out:
            out.write(blob)
        index["records"].append({"dataPath": f"params_shard_{i}.bin", "format": "raw-shard", "nbytes": len(blob),
                                 "records": records})
    with open(os.path.join(directory, "ndarray-cache.json"), "w") as out:
        json.dump(index, out)


def dump(directory, params, tokens, logits):
    import os

    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "params.txt"), "w") as listing:
        for name, w in params:
            listing.write(" ".join([name, str(w.ndim)] + [str(d) for d in w.shape]) + "\n")
    with open(os.path.join(directory, "params.bin"), "wb") as out:
        for _, w in params:
            out.write(np.ascontiguousarray(w).tobytes())
    with open(os.path.join(directory, "tokens.txt"), "w") as out:
        out.write(" ".join(str(t) for t in tokens) + "\n")
    with open(os.path.join(directory, "logits.bin"), "wb") as out:
        for step in logits:
            out.write(step.tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library")
    parser.add_argument("device")
    parser.add_argument("--steps", type=int, default=16, help="decode steps (default 16)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dump", help="write the weights, tokens and NumPy's logits here")
    parser.add_argument("--write-params", metavar="DIR", help="write the weights in MLC's format here")
    args = parser.parse_args()
    device = devrt.Device(args.device)
    lib = devrt.tvm.load_library(args.library, device)
    vm = devrt.tvm.VirtualMachine(lib, device)
    metadata = json.loads(vm["_metadata"]())
    params = weights(metadata, args.seed)
    n_head = 12  # GPT-2 small; the library's attention kernels are written for it
    reference = NumpyGPT2(params, n_head)
    on_device = [devrt.tensor(w, device) for _, w in params]
    if args.write_params:
        write_mlc_params(args.write_params, params)

    caches = vm["_initialize_effect"]()
    tokens = PROMPT + [(PROMPT[i % len(PROMPT)] * 7 + i) % 50257 for i in range(args.steps)]
    worst = 0.0
    failures = 0
    expected_logits = []
    host = time.perf_counter()
    for step in range(args.steps + 1):
        if step == 0:
            feed, start = tokens[:len(PROMPT)], 0
            fn = "prefill"
        else:
            start = len(PROMPT) + step - 1
            feed, fn = tokens[start:start + 1], "decode"
        ids = devrt.tensor(np.array([feed], dtype=np.int32), device)
        logits, caches = vm[fn](ids, devrt.tvm.Shape([start + len(feed)]), caches, on_device)
        got = np.from_dlpack(logits.to(devrt.cpu(0))).reshape(-1).astype(np.float64)
        want = reference.forward(np.array(feed), start).astype(np.float64)
        expected_logits.append(want.astype(np.float32))
        span = float(want.max() - want.min())
        diff = float(np.abs(got - want).max())
        top5 = np.argsort(-got)[:5]
        ok = np.isfinite(got).all() and diff <= 0.05 * span and int(want.argmax()) in top5
        worst = max(worst, diff / span)
        failures += not ok
        print(f"step {step:2d} ({fn:7s} {len(feed)} token{'s' if len(feed) > 1 else ' '}): max |diff| {diff:.4f}"
              f" = {100 * diff / span:.2f}% of the range {span:.3f}; argmax numpy {int(want.argmax())}"
              f" devrt {int(got.argmax())} {'ok' if ok else 'OFF'}")
    elapsed = time.perf_counter() - host
    if args.dump:
        dump(args.dump, params, tokens, expected_logits)
    print(f"{args.steps + 1} steps: worst difference {100 * worst:.2f}% of the range, {failures} off; "
          f"{elapsed:.1f} s with the NumPy reference")

    # Free-running greedy generation from the prompt, on devrt's logits.
    caches = vm["_initialize_effect"]()
    reference = NumpyGPT2(params, n_head)
    ids = devrt.tensor(np.array([PROMPT], dtype=np.int32), device)
    logits, caches = vm["prefill"](ids, devrt.tvm.Shape([len(PROMPT)]), caches, on_device)
    want = reference.forward(np.array(PROMPT), 0)
    generated, expected = [], []
    for i in range(16):
        token = int(np.from_dlpack(logits.to(devrt.cpu(0))).argmax())
        generated.append(token)
        expected.append(int(want.argmax()))
        position = len(PROMPT) + i
        ids = devrt.tensor(np.array([[token]], dtype=np.int32), device)
        logits, caches = vm["decode"](ids, devrt.tvm.Shape([position + 1]), caches, on_device)
        want = reference.forward(np.array([token]), position)
    same = sum(a == b for a, b in zip(generated, expected))
    print(f"greedy: devrt {generated}")
    print(f"        numpy {expected} (same token at {same} of 16 steps, NumPy fed devrt's tokens)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
