#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sums meson test logs (meson-logs/<logbase>.json) into one closing line:
"N passed, N failed, N skipped". A configuration whose log is missing counts as one failure.
Each failed test is named first, with the last lines of its output, so that the tail of a CI
log says what broke. Exit status 0 only when nothing failed."""
import json
import os
import re
import sys

PASS = {"OK", "EXPECTEDFAIL"}
SKIP = {"SKIP"}
TAIL_LINES = 15
CASE_LINES = 40
RULE = re.compile(r"^(-{79}|={79})$")


def failed_cases(lines):
    """Catch2's console blocks that hold a FAILED assertion: the case's header (between two
    rules of dashes) through the next rule, so that a CI log names the assertion that broke."""
    blocks = []
    for i, line in enumerate(lines):
        if "FAILED:" not in line:
            continue
        rules_before = [k for k in range(i) if RULE.match(lines[k])]
        start = rules_before[-2] if len(rules_before) >= 2 else max(0, i - 5)
        end = next((k for k in range(i + 1, len(lines)) if RULE.match(lines[k])), len(lines))
        block = lines[start:end][:CASE_LINES]
        if block not in blocks:
            blocks.append(block)
    return blocks


def report_failure(path, result):
    config = os.path.basename(path).removesuffix(".json")
    print(f"FAILED [{config}] {result.get('name', '?')}: {result['result']}"
          f" after {result.get('duration', 0):.1f} s")
    output = (result.get("stdout") or "") + "\n" + (result.get("stderr") or "")
    lines = output.rstrip().splitlines()
    for block in failed_cases(lines)[:3]:
        for line in block:
            print(f"    {line}")
    for line in lines[-TAIL_LINES:]:
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
