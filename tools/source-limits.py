#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks devrt's size limits on its own sources: no file over --max-file lines and no function
over --max-function lines in src/ (generated tables and tests excepted). clang-format lays out
every function the same way, so a definition is a line that ends in `{` after a parameter list
at namespace or class depth, and it ends at the `}` with the same indentation."""
import argparse
import pathlib
import re
import sys

SIGNATURE_END = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[^{]+)?\{\s*$")
NOT_A_FUNCTION = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return|case)\b|=\s*\[|\]\s*\(.*\)\s*(mutable\s*)?(->[^{]*)?\{\s*$")


def functions(lines):
    """Yields (name line, first line, last line) of each function definition, 1-based."""
    i = 0
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        if SIGNATURE_END.search(line) and not NOT_A_FUNCTION.search(line) and indent <= 2:
            start = i
            # A signature that wraps starts at the last line with less indentation.
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].rstrip().endswith((";", "}", "{", ":")) \
                    and not lines[start - 1].lstrip().startswith(("//", "#")):
                start -= 1
            head_indent = len(lines[start]) - len(lines[start].lstrip())
            closing = " " * head_indent + "}"
            end = i + 1
            while end < len(lines) and not lines[end].startswith(closing):
                end += 1
            yield lines[start].strip(), start + 1, end + 1
            i = end + 1
            continue
        i += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=pathlib.Path)
    parser.add_argument("--max-file", type=int, default=700)
    parser.add_argument("--max-function", type=int, default=80)
    parser.add_argument("--list", type=int, default=0, help="also print the N longest functions")
    args = parser.parse_args()
    failures = []
    found = []
    for path in sorted(args.root.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h", ".c") or not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > args.max_file:
            failures.append(f"{path}: {len(lines)} lines (limit {args.max_file})")
        for head, first, last in functions(lines):
            length = last - first + 1
            found.append((length, f"{path}:{first}: {head[:70]}"))
            if length > args.max_function:
                failures.append(f"{path}:{first}: function of {length} lines (limit {args.max_function}): {head[:70]}")
    for length, where in sorted(found, reverse=True)[: args.list]:
        print(f"{length:4d} {where}")
    for failure in failures:
        print(failure)
    print(f"{len(found)} functions checked; {len(failures)} over the limits")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
