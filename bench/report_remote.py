#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints devrt's remote figures against raw UCX from bench-remote's JSON files, with issue 60's
targets: per transport, the round trip, a launch's issue cost, 1,000 launches and a synchronize
(beside the same launches on the client's own OpenCL device, the driver's cost without the
network), and 64 MiB each way. The fastest repetition of each row counts (report.py's load()):
on a shared machine interference only adds time, and the rows are interleaved.

usage: report_remote.py bench-remote-tcp.json [bench-remote-shm.json ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import load  # noqa: E402

BATCH = 1000
GGML_RPC_ROUND_TRIP_US = 31.0  # ggml-rpc's published TCP round trip


def figures(path):
    """{'raw/round_trip': (ns, bytes_per_second), ...} and the transport's name."""
    context, times, _ = load(path)
    rows = {}
    for name, entry in times.items():
        parts = name.split("/")
        rows["/".join(parts[1:3])] = entry
    return context.get("transport", os.path.basename(path)), context.get("raw error mode", "peer"), rows


def line(what, devrt, raw, ratio, goal):
    print(f"  {what:<44} {devrt:>14} {raw:>14} {ratio:>8}  {goal}")


def report(path):
    transport, error_mode, rows = figures(path)
    ns = {k: v[0] for k, v in rows.items()}
    bandwidth = {k: v[1] for k, v in rows.items()}
    print(f"{transport} (raw endpoints' error mode: {error_mode})")
    line("", "devrt", "raw UCX", "ratio", "target")
    ok = True
    if "raw/round_trip" in ns and "devrt/synchronize" in ns:
        ratio = ns["devrt/synchronize"] / ns["raw/round_trip"]
        line("synchronize, idle stream / AM ping-pong", f"{ns['devrt/synchronize'] / 1e3:.1f} us",
             f"{ns['raw/round_trip'] / 1e3:.1f} us", f"{ratio:.2f}x", "<= 1.2x over TCP")
        ok &= transport != "tcp" or ratio <= 1.2
        print(f"  {'':<44} (ggml-rpc publishes a {GGML_RPC_ROUND_TRIP_US:.0f} us TCP round trip)")
    if "raw/one_way_send_x1000" in ns and "devrt/launch_issue_x1000" in ns:
        devrt, raw = ns["devrt/launch_issue_x1000"] / BATCH, ns["raw/one_way_send_x1000"] / BATCH
        line("no-op launch issued / one-way AM send", f"{devrt / 1e3:.2f} us", f"{raw / 1e3:.2f} us",
             f"{devrt / raw:.2f}x", "<= 1.5x")
        ok &= devrt / raw <= 1.5
        if "devrt/launch_1000_synchronize" in ns and "raw/round_trip" in ns:
            bound = ns["raw/round_trip"] + ns["raw/one_way_send_x1000"]
            batch = ns["devrt/launch_1000_synchronize"]
            line("1,000 launches + synchronize / RTT + 1,000 sends", f"{batch / 1e6:.2f} ms", f"{bound / 1e6:.2f} ms",
                 f"{batch / bound:.2f}x", "<= 1.0x")
            ok &= batch <= bound
            if "local/launch_1000_synchronize" in ns:
                local = ns["local/launch_1000_synchronize"]
                line("  the same 1,000 on this machine's own driver", f"{local / 1e6:.2f} ms", "", "",
                     "the driver's floor")
    for devrt_row, raw_row, what in (("devrt/to_server_64MiB", "raw/put_64MiB", "64 MiB to server memory"),
                                     ("devrt/from_server_64MiB", "raw/get_64MiB", "64 MiB from server memory")):
        if bandwidth.get(devrt_row) and bandwidth.get(raw_row):
            ratio = bandwidth[devrt_row] / bandwidth[raw_row]
            line(what, f"{bandwidth[devrt_row] / 1e9:.2f} GB/s", f"{bandwidth[raw_row] / 1e9:.2f} GB/s",
                 f"{ratio:.2f}x", ">= 0.8x")
            ok &= ratio >= 0.8
    for devrt_row, what in (("devrt/to_driver_64MiB", "64 MiB into a driver (OpenCL), staged"),
                            ("devrt/from_driver_64MiB", "64 MiB out of a driver (OpenCL), staged")):
        if bandwidth.get(devrt_row):
            line(what, f"{bandwidth[devrt_row] / 1e9:.2f} GB/s", "", "", "reported")
    print(f"  targets {'met' if ok else 'NOT met'}")
    return ok


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    results = [report(p) for p in paths]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
