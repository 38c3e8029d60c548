#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates tokens with a language model TVM compiled (an MLC model library: its Relax VM program
and operators) on a devrt device, without TVM: loads the library and its weights (MLC's
ndarray-cache.json directory, or --random-weights shaped from the model's _metadata), runs
`prefill` on the prompt's token ids, then `decode` one token at a time, greedily or sampling from
`softmax_with_temperature` with a seeded generator. Prints the tokens and the prefill and
per-token times; a progress line on a terminal while it runs.

Token ids in, token ids out: no tokenizer (turn text into ids with the model's tokenizer, for
instance Hugging Face's tokenizers, and back). examples/generate/generate.cpp is the same program
over the installed C++ package and prints the same tokens for the same arguments.

usage: generate.py LIBRARY DEVICE (--params DIR | --random-weights) [--prompt 1,2,3] [--tokens N]
                   [--temperature T] [--seed S]
"""
import argparse
import json
import sys
import time

import numpy as np

import devrt

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
SAMPLER_STREAM = 0xD1B54A32D192ED03


def splitmix64(counters):
    """SplitMix64's output for each state in `counters` (a uint64 array): the generator both
    examples share, so they draw the same numbers."""
    z = counters * GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(seed, first, count):
    """`count` doubles in [0, 1): draws first+1 .. first+count of the stream `seed`."""
    counters = np.uint64(seed) + np.arange(first + 1, first + count + 1, dtype=np.uint64)
    return (splitmix64(counters) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def random_weights(specs, seed, device, scale=0.05):
    """One tensor per parameter the model lists, in its order: floats uniform in [-scale, scale)
    (drawn in float64, rounded to float32, then to the parameter's dtype), integers random bits."""
    out, drawn = [], 0
    for spec in specs:
        shape, dtype = spec["shape"], np.dtype(spec["dtype"])
        if any(not isinstance(d, int) for d in shape):
            raise SystemExit(f"--random-weights: '{spec['name']}' has a symbolic extent {shape}; give --params")
        count = int(np.prod(shape, dtype=np.int64))
        if dtype.kind == "f" and dtype.itemsize in (2, 4):
            values = (scale * (2.0 * uniform(seed, drawn, count) - 1.0)).astype(np.float32).astype(dtype)
        elif dtype.kind in "iu":
            counters = np.uint64(seed) + np.arange(drawn + 1, drawn + count + 1, dtype=np.uint64)
            values = splitmix64(counters).astype(dtype.str.replace("i", "u")).view(dtype)
        else:
            raise SystemExit(f"--random-weights: '{spec['name']}' is {dtype}, which this example does not draw")
        drawn += count
        out.append(devrt.tensor(values.reshape(shape), device))
    return out


def pick(logits, vm, temperature, seed, step, device):
    """The next token: the first largest logit, or a draw from softmax(logits / temperature)."""
    if temperature <= 0:
        return int(np.argmax(host_floats(logits)))
    t = devrt.tensor(np.array(temperature, dtype=np.float32), device)
    probs = host_floats(vm["softmax_with_temperature"](logits, t)).astype(np.float64)
    cumulative = np.cumsum(probs)
    u = uniform(seed ^ SAMPLER_STREAM, step, 1)[0]
    return min(int(np.searchsorted(cumulative, u * cumulative[-1], side="right")), len(probs) - 1)


def host_floats(tensor):
    return np.from_dlpack(tensor.to(devrt.cpu(0))).reshape(-1).astype(np.float32)


def progress(text):
    if sys.stderr.isatty():
        print(f"\r{text}\033[K", end="", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library", help="the model library (MLC's <model>-<quantization>-<target>.so)")
    parser.add_argument("device", help="where it runs: vulkan:0, opencl:0, cuda:0, cpu:0, ...")
    weights = parser.add_mutually_exclusive_group(required=True)
    weights.add_argument("--params", metavar="DIR", help="the weights: a directory with ndarray-cache.json")
    weights.add_argument("--random-weights", action="store_true", help="seeded random weights instead")
    parser.add_argument("--prompt", default="1,2,3", help="the prompt's token ids, comma-separated")
    parser.add_argument("--tokens", type=int, default=16, help="tokens to generate (default 16)")
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy (default); else sample")
    parser.add_argument("--seed", type=int, default=0, help="for the random weights and the sampler")
    args = parser.parse_args()
    prompt = [int(t) for t in args.prompt.split(",")]
    if args.tokens < 1 or not prompt or args.seed < 0:
        parser.error("--tokens must be at least 1, --prompt not empty, --seed not negative")

    device = devrt.Device(args.device)
    vm = devrt.tvm.VirtualMachine(devrt.tvm.load_library(args.library, device))
    metadata = json.loads(vm["_metadata"]())
    context = metadata.get("context_window_size", -1)
    if 0 < context < len(prompt) + args.tokens:
        parser.error(f"{len(prompt)} prompt + {args.tokens} new tokens do not fit the context window ({context})")
    if args.params:
        params = vm.model_params(devrt.tvm.load_params(args.params, device))
    else:
        params = random_weights(metadata["params"], args.seed, device)
    print(f"model: {metadata.get('model_type', '?')} ({metadata.get('quantization', '?')}), {len(params)} "
          f"parameters, on {device}")

    caches = vm["_initialize_effect"]()
    ids = devrt.tensor(np.array([prompt], dtype=np.int32), device)
    start = time.perf_counter()
    logits, caches = vm["prefill"](ids, devrt.tvm.Shape([len(prompt)]), caches, params)
    tokens = [pick(logits, vm, args.temperature, args.seed, 0, device)]
    prefill_ms = 1e3 * (time.perf_counter() - start)
    step_ms = []
    while len(tokens) < args.tokens:
        progress(f"decoding {len(tokens)}/{args.tokens}: {tokens[-1]}")
        start = time.perf_counter()
        ids = devrt.tensor(np.array([[tokens[-1]]], dtype=np.int32), device)
        total = devrt.tvm.Shape([len(prompt) + len(tokens)])
        logits, caches = vm["decode"](ids, total, caches, params)
        tokens.append(pick(logits, vm, args.temperature, args.seed, len(tokens), device))
        step_ms.append(1e3 * (time.perf_counter() - start))
    progress("")
    print(f"prompt: {' '.join(map(str, prompt))}")
    print(f"tokens: {' '.join(map(str, tokens))}")
    print(f"prefill: {len(prompt)} tokens in {prefill_ms:.2f} ms (the first new token included)")
    if step_ms:
        print(f"decode: {len(step_ms)} tokens, {np.median(step_ms):.2f} ms/token median "
              f"(min {min(step_ms):.2f}, max {max(step_ms):.2f})")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (devrt.DevrtError, OSError) as error:
        print(f"generate.py: {error}", file=sys.stderr)
        sys.exit(1)
