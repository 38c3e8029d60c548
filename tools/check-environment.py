#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that devrt reads the environment by one table and one set of rules (docs/environment.md):

- no file of the library (src/, include/) calls getenv or secure_getenv except
  src/support/environment_variables.cpp (the one lookup, which only the readers call), whose readers check each name against the table when compiling;
- every variable of the table (src/support/environment_variables.hpp) is read somewhere: its name
  is in a reader's call in src/ or, for the Python package's own, in python/devrt/;
- every variable the Python package reads is in the table;
- docs/environment.md's table, between its markers, is the table (name, kind, range, meaning).

usage: check-environment.py SOURCE_ROOT [--write]   (--write rewrites docs/environment.md's table)
Prints what is wrong and exits 1, or prints a summary and exits 0.
"""
import pathlib
import re
import sys

TABLE = "src/support/environment_variables.hpp"
DOCS = "docs/environment.md"
BEGIN, END = "<!-- environment: begin -->", "<!-- environment: end -->"
READER = "src/support/environment_variables.cpp"
READERS = (READER, "src/support/environment.cpp", TABLE, "src/support/environment.hpp")
ENTRY = re.compile(r'\{"([A-Z0-9_]+)", EnvKind::(\w+), (\w+), (\w+), ((?:"[^"]*"\s*)+)\}')
CALL = re.compile(r'\b(?:secure_)?getenv\s*\(')
LOOKUP = re.compile(r'\blookup_env\s*\(')
PY_READ = re.compile(r'(?:os\.environ(?:\.get|\.pop)?\(|os\.getenv\(|environment_flag\()\s*"([A-Z0-9_]+)"')
SIZE_MAX_TEXT = "18446744073709551615"


def code_lines(text):
    """The lines of a C or C++ file with // comments and /* */ blocks blanked."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return [re.sub(r"//.*", "", line) for line in text.split("\n")]


def table(root):
    text = (root / TABLE).read_text()
    rows = []
    for name, kind, low, high, meaning in ENTRY.findall(text):
        meaning = "".join(re.findall(r'"([^"]*)"', meaning))
        rows.append((name, kind, low, high, meaning))
    return rows


def kind_text(kind, low, high):
    if kind != "number":
        return kind.replace("_", " ")
    high = SIZE_MAX_TEXT if high == "kEnvSizeMax" else high
    return f"number, {low} to {high}"


def docs_block(rows):
    lines = [BEGIN, "| Variable | Kind | Meaning |", "|---|---|---|"]
    for name, kind, low, high, meaning in rows:
        lines.append(f"| `{name}` | {kind_text(kind, low, high)} | {meaning} |")
    lines.append(END)
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    write = "--write" in sys.argv[2:]
    failures = []
    rows = table(root)
    if len(rows) < 10:
        failures.append(f"{TABLE}: found {len(rows)} entries; the pattern no longer matches the table")
    names = [row[0] for row in rows]
    for name in {n for n in names if names.count(n) > 1}:
        failures.append(f"{TABLE}: {name} is listed twice")

    library_files = [p for d in ("src", "include") for p in sorted((root / d).rglob("*"))
                     if p.suffix in (".cpp", ".hpp", ".h", ".c", ".cc") and p.is_file()]
    used = set()
    for path in library_files:
        relative = path.relative_to(root).as_posix()
        text = path.read_text(errors="replace")
        if relative != TABLE:
            used.update(re.findall(r'"([A-Z][A-Z0-9_]*)"', text))
        if relative == READER:
            continue
        for number, line in enumerate(code_lines(text), 1):
            if LOOKUP.search(line) and relative not in READERS:
                failures.append(f"{relative}:{number}: calls lookup_env, which skips the table; use a reader of "
                                "support/environment.hpp")
            if CALL.search(line):
                failures.append(f"{relative}:{number}: reads the environment with getenv; use a reader of "
                                "support/environment.hpp (one rule per kind, secure_getenv, names from the table)")

    python_reads = set()
    for path in sorted((root / "python" / "devrt").rglob("*.py")):
        for name in PY_READ.findall(path.read_text()):
            python_reads.add(name)
            if name not in names:
                failures.append(f"{path.relative_to(root)}: reads {name}, which {TABLE} does not list")
    for name in names:
        if name not in used and name not in python_reads:
            failures.append(f"{TABLE}: {name} is listed but nothing in src/ or python/devrt/ reads it")

    docs = root / DOCS
    text = docs.read_text() if docs.is_file() else ""
    block = docs_block(rows)
    if BEGIN not in text or END not in text:
        failures.append(f"{DOCS}: no table between {BEGIN} and {END}")
    else:
        current = text[text.index(BEGIN):text.index(END) + len(END)]
        if current != block:
            if write:
                docs.write_text(text.replace(current, block))
                print(f"check-environment: rewrote {DOCS}'s table")
            else:
                want = set(block.split("\n"))
                have = set(current.split("\n"))
                for line in sorted(want - have):
                    failures.append(f"{DOCS}: lacks the row {line}")
                for line in sorted(have - want):
                    failures.append(f"{DOCS}: has a row the code does not: {line}")
                if want == have:
                    failures.append(f"{DOCS}: the rows are in another order than {TABLE}'s")
    if failures:
        for failure in failures:
            print("FAIL:", failure)
        print("(run tools/check-environment.py . --write to rewrite the docs' table from the code's)")
        sys.exit(1)
    print(f"check-environment: {len(rows)} variables, each read by one rule, listed in {DOCS}; "
          f"no getenv outside {READER} in {len(library_files)} files")


if __name__ == "__main__":
    main()
