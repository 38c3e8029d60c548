#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a program under mpirun over loopback and checks that every rank said "rank R: passed".

usage: run_mpi.py MPIRUN NP [--peer-exits] [--shared-memory] -- PROGRAM ARGS...

Exit status: 0 when mpirun succeeded and all NP ranks passed, 77 (skip) when the program said
SKIP, 1 otherwise. With --peer-exits a rank leaves without MPI_Finalize on purpose, so mpirun is
told not to abort the job for it (orte_allowed_exit_without_sync) and its own exit status is not
trusted: the ranks' lines are. The ranks talk over loopback TCP, as between machines, unless
--shared-memory leaves Open MPI its default transports (shared memory within a machine), as the
benchmarks do.
"""
import os
import re
import subprocess
import sys


def main():
    separator = sys.argv.index("--")
    options, program = sys.argv[1:separator], sys.argv[separator + 1:]
    mpirun, np = options[0], int(options[1])
    peer_exits = "--peer-exits" in options
    command = [mpirun, "-np", str(np), "--oversubscribe", "--mca", "oob_tcp_if_include", "lo"]
    if "--shared-memory" not in options:
        command += ["--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")  # CI runs as root; Open MPI refuses it otherwise
    if peer_exits:
        command += ["--mca", "orte_allowed_exit_without_sync", "1", "--mca", "orte_abort_on_non_zero_status", "0"]
    # mpirun's own limit, below meson's, so that a hang still ends with the ranks' output.
    command += ["--timeout", "240"]
    result = subprocess.run(command + program, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(result.stdout)
    if re.search(r"^SKIP:", result.stdout, re.M):
        return 77
    passed = set(int(r) for r in re.findall(r"rank (\d+): passed", result.stdout))
    print(f"run_mpi.py: mpirun exited {result.returncode}; ranks passed: {sorted(passed)} of {np}")
    if passed != set(range(np)):
        return 1
    if not peer_exits and result.returncode != 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
