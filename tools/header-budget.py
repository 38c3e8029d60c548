#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What an application pays to include <devrt/devrt.hpp>, against a budget.

Compiles a one-function application (allocate a buffer, look at the result) and the floor, the
standard headers devrt's application API needs (<string>, <string_view>, <span>, <optional>,
<cstdint>), with the same compiler and flags, and counts for each:
  headers: the files `-H` reports opening
  lines:   the lines of `-E` output
Fails when the application exceeds the floor by more than --header-ratio or --line-ratio
(default 1.10 and 1.09: with GCC 12 in C++20, 190 headers and 34,003 lines over a floor of 172
and 31,195). Prints both measurements and, for each header over the floor, where it came from.

usage: header-budget.py [--header-ratio R] [--line-ratio R] -I DIR... -- COMPILER [ARGS...]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

FLOOR = """#include <string>
#include <string_view>
#include <span>
#include <optional>
#include <cstdint>
"""

APPLICATION = """#include <devrt/devrt.hpp>
int main() {
  auto buffer = devrt::Buffer::allocate(devrt::kHostDevice, 64);
  return buffer.ok() ? 0 : 1;
}
"""


def measure(compiler, flags, source_path):
    """(headers opened, in order; preprocessed line count) for one source file."""
    syntax = subprocess.run(compiler + flags + ["-H", "-fsyntax-only", source_path],
                            capture_output=True, text=True, check=False)
    if syntax.returncode != 0:
        sys.exit(f"header-budget: {source_path} does not compile:\n{syntax.stderr}")
    headers = [line.lstrip(". ") for line in syntax.stderr.splitlines() if line.startswith(".")]
    preprocessed = subprocess.run(compiler + flags + ["-E", source_path], capture_output=True, text=True,
                                  check=True)
    return headers, preprocessed.stdout.count("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--header-ratio", type=float, default=1.10)
    parser.add_argument("--line-ratio", type=float, default=1.09)
    parser.add_argument("-I", dest="includes", action="append", default=[])
    parser.add_argument("compiler", nargs="+")
    args = parser.parse_args()
    # ccache neither caches nor changes -H or -E; run the compiler itself.
    compiler = [part for part in args.compiler if os.path.basename(part) != "ccache"]
    flags = ["-std=c++20"] + [f"-I{directory}" for directory in args.includes]

    with tempfile.TemporaryDirectory() as scratch:
        floor_path = os.path.join(scratch, "floor.cpp")
        app_path = os.path.join(scratch, "application.cpp")
        with open(floor_path, "w", encoding="utf-8") as out:
            out.write(FLOOR)
        with open(app_path, "w", encoding="utf-8") as out:
            out.write(APPLICATION)
        floor_headers, floor_lines = measure(compiler, flags, floor_path)
        app_headers, app_lines = measure(compiler, flags, app_path)

    header_budget = math.ceil(len(floor_headers) * args.header_ratio)
    line_budget = math.ceil(floor_lines * args.line_ratio)
    print(f"floor:       {len(floor_headers)} headers, {floor_lines} lines")
    print(f"application: {len(app_headers)} headers, {app_lines} lines "
          f"(budget {header_budget} headers, {line_budget} lines)")
    extra = [header for header in app_headers if header not in set(floor_headers)]
    print(f"{len(extra)} headers over the floor:")
    for header in extra:
        print(f"  {header}")
    failures = []
    if len(app_headers) > header_budget:
        failures.append(f"{len(app_headers)} headers > {header_budget}")
    if app_lines > line_budget:
        failures.append(f"{app_lines} lines > {line_budget}")
    if failures:
        print("FAIL: <devrt/devrt.hpp> is over its budget: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
