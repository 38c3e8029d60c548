#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints all-reduce bus bandwidth and devrt/raw ratios from bench-collectives' JSON.

usage: report_collectives.py bench-collectives.json

Bus bandwidth is nccl-tests' definition for all-reduce: algorithm bandwidth (bytes / time) times
2 (n - 1) / n, the fraction of the data each rank must send and receive, so that figures for
different rank counts compare with the links' speed. Each variant ran in several rounds,
round-robin with the others; the table gives the fastest and the median round.
"""
import json
import statistics
import sys


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    rounds = {}
    info = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        _, variant, size = b["run_name"].split("/")[:3]
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
        rounds.setdefault((int(size), variant), []).append(b["real_time"] * scale)
        info[int(size)] = int(b["ranks"])
    pairs = [("devrt_all_reduce_timeout0", "raw_mpi_allreduce", "same call: MPI_Allreduce"),
             ("devrt_all_reduce", "raw_mpi_iallreduce_wait", "same call: MPI_Iallreduce"),
             ("devrt_all_reduce", "raw_mpi_allreduce", "devrt's default against MPI_Allreduce"),
             ("devrt_all_reduce_staged_opencl", "devrt_all_reduce", "staging: OpenCL buffers against host memory")]
    print(f"{'bytes':>10} {'ranks':>5} {'variant':<28} {'fastest':>10} {'median':>10} {'busbw GB/s':>11}")
    for size in sorted(info):
        n = info[size]
        for (s, variant), times in sorted(rounds.items()):
            if s != size:
                continue
            fastest, median = min(times), statistics.median(times)
            busbw = size / fastest * 2 * (n - 1) / n / 1e9
            print(f"{size:>10} {n:>5} {variant:<28} {fastest * 1e3:>8.3f}ms {median * 1e3:>8.3f}ms {busbw:>11.2f}")
        for mine, raw, what in pairs:
            if (size, mine) in rounds and (size, raw) in rounds:
                fastest = min(rounds[(size, mine)]) / min(rounds[(size, raw)])
                median = statistics.median(rounds[(size, mine)]) / statistics.median(rounds[(size, raw)])
                print(f"{'':>10} {'':>5} {mine} / {raw} ({what}): time ratio {fastest:.3f} fastest, "
                      f"{median:.3f} median")


if __name__ == "__main__":
    main()
