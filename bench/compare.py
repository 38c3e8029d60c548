#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares two builds of one benchmark on this machine, in one run: the binaries take turns for
--rounds rounds (so that a noisy neighbour or a clock change hits both alike), and each benchmark's
figure is the lowest of its per-round medians. Prints one line per benchmark: baseline ns, new ns,
new/baseline.

  bench/compare.py OLD/bench/bench-core NEW/bench/bench-core --filter 'alloc/buffer/64$|copy/devrt/64$'
"""
import argparse
import json
import subprocess
import sys
import tempfile


def one_round(binary, pattern, repetitions):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([binary, f"--benchmark_filter={pattern}", f"--benchmark_repetitions={repetitions}",
                        "--benchmark_report_aggregates_only=true", f"--benchmark_out={out.name}",
                        "--benchmark_out_format=json"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        report = json.load(open(out.name, encoding="utf-8"))
    return {b["run_name"]: b["real_time"] for b in report["benchmarks"] if b.get("aggregate_name") == "median"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline")
    parser.add_argument("candidate")
    parser.add_argument("--filter", required=True)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    best = ({}, {})
    for _ in range(args.rounds):
        for side, binary in enumerate((args.baseline, args.candidate)):
            for name, ns in one_round(binary, args.filter, args.repetitions).items():
                best[side][name] = min(ns, best[side].get(name, ns))
    print(f"{'benchmark':40} {'baseline ns':>12} {'new ns':>10} {'new/base':>9}")
    for name in sorted(best[0]):
        if name in best[1]:
            print(f"{name:40} {best[0][name]:12.2f} {best[1][name]:10.2f} {best[1][name] / best[0][name]:9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
