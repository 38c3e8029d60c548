#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sums meson test logs (meson-logs/<logbase>.json) into one closing line:
"N passed, N failed, N skipped". A configuration whose log is missing counts as one failure.
Each failed test is named first, with the last lines of its output, so that the tail of a CI
log says what broke. Exit status 0 only when nothing failed."""
import json
import os
import sys

PASS = {"OK", "EXPECTEDFAIL"}
SKIP = {"SKIP"}
TAIL_LINES = 15


def report_failure(path, result):
    config = os.path.basename(path).removesuffix(".json")
    print(f"FAILED [{config}] {result.get('name', '?')}: {result['result']}"
          f" after {result.get('duration', 0):.1f} s")
    output = (result.get("stdout") or "") + (result.get("stderr") or "")
    for line in output.rstrip().splitlines()[-TAIL_LINES:]:
        print(f"    {line}")


def main(argv):
    passed = failed = skipped = 0
    if len(argv) >= 2 and argv[0] == "--extra-failed":
        unbuilt = int(argv[1])
        failed += unbuilt
        if unbuilt:
            print(f"FAILED: {unbuilt} configuration(s) did not set up or build (see above)")
        argv = argv[2:]
    for path in argv:
        if not os.path.exists(path):
            print(f"{path}: missing (the configuration did not build or run)")
            failed += 1
            continue
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                result = json.loads(line)
                if result["result"] in PASS:
                    passed += 1
                elif result["result"] in SKIP:
                    skipped += 1
                else:
                    failed += 1
                    report_failure(path, result)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
