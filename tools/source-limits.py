#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks devrt's size limits on its own sources: no file over --max-file lines and no function
over --max-function lines, in the trees given (CI: src, include, tools, bench; tests are exempt).

Functions come from a parser, universal-ctags (Debian's universal-ctags): every C and C++
function definition (kind f, with its end line, whatever the layout of its signature) and every
Python function and method (kinds f and m). A lambda is part of the function that holds it.

usage: source-limits.py [--max-file N] [--max-function N] [--list N] [--count] DIR...
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys

SOURCE_SUFFIXES = {".c", ".h", ".cpp", ".hpp", ".py"}
FUNCTION_KINDS = {"C": {"function"}, "C++": {"function"}, "Python": {"function", "member"}}


def source_files(roots):
    for root in roots:
        for path in sorted(pathlib.Path(root).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file():
                yield path


def functions(paths):
    """(path, name, first line, last line) of every function definition ctags finds."""
    ctags = shutil.which("ctags")
    if ctags is None:
        sys.exit("source-limits: universal-ctags is not installed (Debian package universal-ctags)")
    # .h files are parsed as C++ (devrt's C headers are valid C++ too).
    command = [ctags, "--output-format=json", "--fields=+nKel", "--kinds-C=f", "--kinds-C++=f",
               "--kinds-Python=fm", "--languages=C,C++,Python", "--map-C++=+.h", "-f", "-"]
    listing = subprocess.run(command + [str(path) for path in paths], capture_output=True, text=True, check=True)
    for line in listing.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag.get("kind") not in FUNCTION_KINDS.get(tag.get("language"), ()):
            continue
        if "end" not in tag:
            continue  # a declaration ctags saw without a body
        yield tag["path"], tag.get("scope", "") + ("::" if tag.get("scope") else "") + tag["name"], tag["line"], \
            tag["end"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="+", type=pathlib.Path)
    parser.add_argument("--max-file", type=int, default=700)
    parser.add_argument("--max-function", type=int, default=80)
    parser.add_argument("--list", type=int, default=0, help="also print the N longest functions")
    args = parser.parse_args()
    paths = list(source_files(args.roots))
    failures = []
    for path in paths:
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > args.max_file:
            failures.append(f"{path}: {count} lines (limit {args.max_file})")
    found = []
    for path, name, first, last in functions(paths):
        length = last - first + 1
        found.append((length, f"{path}:{first}: {name}"))
        if length > args.max_function:
            failures.append(f"{path}:{first}: function of {length} lines (limit {args.max_function}): {name}")
    for length, where in sorted(found, reverse=True)[: args.list]:
        print(f"{length:4d} {where}")
    for failure in failures:
        print(failure)
    print(f"{len(paths)} files, {len(found)} functions checked; {len(failures)} over the limits")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
