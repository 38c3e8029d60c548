#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What an application pays to include <devrt/devrt.hpp>, against a budget.

Compiles a one-function application (allocate a buffer, look at the result) and the floor, the
standard headers devrt's application API needs (<string>, <string_view>, <span>, <optional>,
<cstdint>), with the same compiler and flags, and counts for each:
  headers: the files `-H` reports opening
  lines:   the lines of `-E` output
Fails when the application exceeds the floor by more than --header-ratio or --line-ratio
(default 1.10 and 1.09: with GCC 12 in C++20, 172 headers and 31,195 lines for the floor). Prints both measurements and, for each header over the floor, where it came from.

With --readme, the figures README.md states for devrt.hpp ("N headers and M preprocessed lines with
GCC V") must be the ones measured when the compiler is GCC V: a stale number fails.

usage: header-budget.py [--header-ratio R] [--line-ratio R] [--readme README.md] -I DIR... -- COMPILER [ARGS...]
"""
import argparse
import math
import os
import re
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
    parser.add_argument("--readme", help="README.md, whose stated figures for devrt.hpp are checked")
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
    if args.readme:
        failures += stated_figures(args.readme, compiler, len(app_headers), app_lines)
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    return 0


def stated_figures(readme, compiler, headers, lines):
    """Where README.md's figures for devrt.hpp differ from the measured ones (for its compiler)."""
    text = " ".join(open(readme, encoding="utf-8").read().split())
    stated = re.search(r"`devrt\.hpp` \(([0-9,]+) headers and ([0-9,]+) preprocessed lines with GCC ([0-9]+)", text)
    if stated is None:
        return ["README.md no longer states devrt.hpp's figures (\"N headers and M preprocessed lines with GCC V\")"]
    version = subprocess.run(compiler + ["-dumpversion"], capture_output=True, text=True).stdout.strip()
    if version.split(".")[0] != stated.group(3) or "clang" in " ".join(compiler):
        print(f"README.md's figures are for GCC {stated.group(3)}; this compiler is {version}: not compared")
        return []
    said = (int(stated.group(1).replace(",", "")), int(stated.group(2).replace(",", "")))
    if said != (headers, lines):
        return [f"README.md says devrt.hpp costs {stated.group(1)} headers and {stated.group(2)} lines; "
                f"it costs {headers} and {lines:,}"]
    print(f"README.md states {stated.group(1)} headers and {stated.group(2)} lines: as measured")
    return []


if __name__ == "__main__":
    sys.exit(main())
