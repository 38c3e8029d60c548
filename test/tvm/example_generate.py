#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The generate example (examples/generate) as a user runs it, on the fixture language model
(test/tvm/tvm_vm_fixture.py's bigram_lm: the next token's logits are row `last id` of its one
parameter, a vocab x vocab table): the C++ program built as its own Meson project against this
build installed in a scratch prefix (pkg-config only), and the Python program over this build's
package. Weights in MLC's format written here (f32-to-bf16, values bf16 holds exactly), so the
tokens each must print follow from the table alone:
  - greedy: each token the row's largest entry, also as the VM run on the same weights passed as
    tensors; sampled: NumPy's softmax and the examples' SplitMix64 draw; both programs agree;
  - random weights: both programs print the same tokens;
  - mistakes (no weights directory, a short shard, a parameter of another dtype, a prompt longer
    than the context window, bad arguments): exit status 1 and one line naming the fault.

usage: example_generate.py BUILD_DIR SOURCE_DIR LIBRARY
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

VOCAB = 16
PROMPT = [1, 2, 3]
TOKENS = 10
SAMPLER_STREAM = 0xD1B54A32D192ED03
failures = []


def check(condition, what):
    print(("ok: " if condition else "FAIL: ") + what)
    if not condition:
        failures.append(what)


def build_cpp_example(build, source, work):
    """Installs the build into work/root and builds examples/generate against it."""
    subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", str(work / "root")],
                   check=True, stdout=subprocess.DEVNULL)
    pc = next((work / "root").rglob("devrt.pc"))
    prefix = next(line for line in pc.read_text().splitlines() if line.startswith("prefix=")).split("=", 1)[1]
    (work / "pkgconfig").mkdir()
    (work / "pkgconfig" / "devrt.pc").write_text(pc.read_text().replace(f"prefix={prefix}\n",
                                                                        f"prefix={work / 'root'}{prefix}\n", 1))
    env = dict(os.environ, PKG_CONFIG_PATH=str(work / "pkgconfig"))
    for command in (["meson", "setup", str(work / "example"), str(source / "examples" / "generate"), "--werror"],
                    ["ninja", "-C", str(work / "example")]):
        run = subprocess.run(command, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)}\n{run.stdout}{run.stderr}")
    return work / "example" / "generate"


def write_params(directory, table, dtype="float32"):
    """MLC's format: one shard, the table stored "f32-to-bf16" (each float's upper half)."""
    directory.mkdir()
    raw = (table.view(np.uint32) >> 16).astype(np.uint16).tobytes()
    record = {"name": "table", "shape": list(table.shape), "dtype": dtype, "format": "f32-to-bf16",
              "nbytes": len(raw), "byteOffset": 0}
    (directory / "params_shard_0.bin").write_bytes(raw)
    index = {"metadata": {"ParamSize": 1}, "records": [{"dataPath": "params_shard_0.bin", "format": "raw-shard",
                                                        "nbytes": len(raw), "records": [record]}]}
    (directory / "ndarray-cache.json").write_text(json.dumps(index))


def splitmix64(state):
    z = (state * 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return z ^ (z >> 31)


def expected_tokens(table, temperature=0.0, seed=0):
    tokens, last = [], PROMPT[-1]
    for step in range(TOKENS):
        row = table[last]
        if temperature <= 0:
            last = int(np.argmax(row))
        else:
            p = np.exp((row - row.max()) / np.float32(temperature))
            cumulative = np.cumsum((p / p.sum()).astype(np.float32).astype(np.float64))
            u = (splitmix64((seed ^ SAMPLER_STREAM) + step + 1) >> 11) * 2.0**-53
            last = min(int(np.searchsorted(cumulative, u * cumulative[-1], side="right")), VOCAB - 1)
        tokens.append(last)
    return tokens


def tokens_passed_as_tensors(library, table):
    """Greedy tokens of the VM run directly, the table a devrt tensor made from the array."""
    import devrt

    vm = devrt.tvm.VirtualMachine(devrt.tvm.load_library(library, devrt.cpu(0)))
    params = [devrt.tensor(table)]
    caches = vm["_initialize_effect"]()
    ids = devrt.tensor(np.array([PROMPT], dtype=np.int32))
    logits, caches = vm["prefill"](ids, devrt.tvm.Shape([len(PROMPT)]), caches, params)
    tokens = []
    while True:
        tokens.append(int(np.argmax(np.from_dlpack(logits).reshape(-1))))
        if len(tokens) == TOKENS:
            return tokens
        ids = devrt.tensor(np.array([[tokens[-1]]], dtype=np.int32))
        logits, caches = vm["decode"](ids, devrt.tvm.Shape([len(PROMPT) + len(tokens)]), caches, params)


def run(program, library, *args):
    command = ([sys.executable, str(program)] if program.suffix == ".py" else [str(program)]) + [library, "cpu:0"]
    result = subprocess.run(command + [str(a) for a in args], capture_output=True, text=True)
    tokens = [line.split()[1:] for line in result.stdout.splitlines() if line.startswith("tokens:")]
    return result, [int(t) for t in tokens[0]] if tokens else None


def main():
    build, source, library = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
    rng = np.random.default_rng(3)
    table = (rng.integers(-8, 8, size=(VOCAB, VOCAB)) / 8).astype(np.float32)  # eighths: exact in bf16
    for t in range(VOCAB):
        table[t, (5 * t + 3) % VOCAB] = 2.0  # one largest entry per row
    with tempfile.TemporaryDirectory() as scratch:
        work = pathlib.Path(scratch)
        programs = {"C++": build_cpp_example(build, source, work), "Python": source / "examples/generate/generate.py"}
        write_params(work / "params", table)
        prompt = ["--prompt", ",".join(map(str, PROMPT)), "--tokens", TOKENS]
        greedy = expected_tokens(table)
        check(tokens_passed_as_tensors(library, table) == greedy, f"the VM on the table as tensors: {greedy}")
        sampled = expected_tokens(table, 0.8, 11)
        for name, program in programs.items():
            result, tokens = run(program, library, "--params", work / "params", *prompt)
            check(result.returncode == 0 and tokens == greedy, f"{name} greedy from the weights directory: {tokens}"
                  f" (expected {greedy}){result.stderr}")
            check("prefill: 3 tokens in" in result.stdout and "decode: 9 tokens" in result.stdout,
                  f"{name} prints its prefill and per-token times")
            result, tokens = run(program, library, "--params", work / "params", *prompt, "--temperature", 0.8,
                                 "--seed", 11)
            check(result.returncode == 0 and tokens == sampled, f"{name} sampled at 0.8, seed 11: {tokens}"
                  f" (expected {sampled}){result.stderr}")
        random = {name: run(p, library, "--random-weights", "--seed", 5, *prompt)[1] for name, p in programs.items()}
        check(random["C++"] == random["Python"] and random["C++"] is not None,
              f"random weights, seed 5: C++ {random['C++']}, Python {random['Python']}")
        check_mistakes(programs, library, work, table, prompt)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


def check_mistakes(programs, library, work, table, prompt):
    shard = (work / "params" / "params_shard_0.bin").read_bytes()
    (work / "short").mkdir()
    (work / "short" / "ndarray-cache.json").write_text((work / "params" / "ndarray-cache.json").read_text())
    (work / "short" / "params_shard_0.bin").write_bytes(shard[:100])
    write_params(work / "float16", table.astype(np.float16).astype(np.float32), dtype="float16")
    cases = [(["--params", work / "nowhere", *prompt], "nowhere/ndarray-cache.json: no such file"),
             (["--params", work / "short", *prompt], "params_shard_0.bin: 100 bytes"),
             (["--params", work / "float16", *prompt], "'table'"),
             (["--random-weights", "--prompt", "1", "--tokens", 64], "do not fit the context window (64)"),
             (["--random-weights", "--tokens", 0], "usage"),
             (["--params"], "usage")]
    for name, program in programs.items():
        for args, words in cases:
            result, _ = run(program, library, *args)
            lines = result.stderr.strip().splitlines()
            said = result.stderr if words == "usage" else (lines[-1] if lines else "")  # argparse: 2 lines
            check(result.returncode != 0 and words in said and "tokens:" not in result.stdout,
                  f"{name} {' '.join(map(str, args[:2]))}: {lines[-1] if lines else '(nothing)'}")


if __name__ == "__main__":
    sys.exit(main())
