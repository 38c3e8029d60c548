#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that tools/source-limits.py sees every function clang sees.

Parses the sources of a build's compile_commands.json that lie in the checked trees with libclang
(Debian's python3-clang-14), joined into units as a unity build joins them, and collects every
function definition written in those trees: functions, methods, constructors, destructors,
conversion functions and templates with a body, at the line of their name. Defaulted functions and
functions a macro writes (DEVRT_REGISTER_BACKEND's) are not source a person wrote and are left out.
Fails when one of them does not start where a function of source-limits' parser (universal-ctags)
starts.

usage: functions-vs-clang.py BUILD_DIR SOURCE_ROOT [TREE...]   (trees default: src include tools bench)
"""
import importlib.util
import json
import os
import pathlib
import shlex
import sys
import tempfile

import clang.cindex as cindex

FUNCTION_KINDS = {
    cindex.CursorKind.FUNCTION_DECL, cindex.CursorKind.CXX_METHOD, cindex.CursorKind.CONSTRUCTOR,
    cindex.CursorKind.DESTRUCTOR, cindex.CursorKind.FUNCTION_TEMPLATE, cindex.CursorKind.CONVERSION_FUNCTION,
}
# Statements walked for the declarations in them (a local class's methods): a function's
# statements are otherwise not walked, which is most of the tree.
DESCENDED_STATEMENTS = {cindex.CursorKind.COMPOUND_STMT, cindex.CursorKind.DECL_STMT}
# Arguments libclang does not need or GCC alone understands.
SKIPPED_WITH_VALUE = {"-o", "-MF", "-MQ", "-MT"}
UNITY_SIZE = 16


def clang_arguments(entry, source):
    arguments = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    arguments = arguments[1:]
    if arguments and os.path.basename(arguments[0]) in ("c++", "g++", "cc", "gcc", "clang++", "clang"):
        arguments = arguments[1:]  # ccache's compiler
    kept, skip = [], False
    for argument in arguments:
        if skip:
            skip = False
        elif argument in SKIPPED_WITH_VALUE:
            skip = True
        elif argument == "-c" or argument.startswith(("-W", "-fdiagnostics")):
            continue
        elif os.path.normpath(os.path.join(entry["directory"], argument)) == source:
            continue
        else:
            kept.append(argument)
    return kept + ["-Wno-everything"]


def unity_groups(build, prefixes):
    """The units to parse: the sources of one target with one command, up to UNITY_SIZE at a time,
    joined as Meson's unity builds join them (each unit pays for its standard and {fmt} headers
    once, so this parses in a fraction of the time; the asan build proves the sources join)."""
    commands = json.load(open(os.path.join(build, "compile_commands.json"), encoding="utf-8"))
    groups, seen = {}, set()
    for entry in commands:
        source = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        if not source.startswith(prefixes) or source in seen:
            continue
        seen.add(source)
        arguments = clang_arguments(entry, source)
        key = (entry["directory"], os.path.dirname(entry.get("output", "")), tuple(arguments))
        groups.setdefault(key, []).append(source)
    for (directory, _, arguments), sources in groups.items():
        for first in range(0, len(sources), UNITY_SIZE):
            yield directory, list(arguments), sources[first:first + UNITY_SIZE]


def parse(index, directory, arguments, sources, scratch):
    """The unit of sources, or None when clang reports an error in it (two sources that do not
    join: then each is parsed alone)."""
    os.chdir(directory)
    if len(sources) == 1:
        return index.parse(sources[0], args=arguments)
    joined = os.path.join(scratch, f"unit{len(os.listdir(scratch))}.cpp")
    pathlib.Path(joined).write_text("".join(f'#include "{source}"\n' for source in sources), encoding="utf-8")
    unit = index.parse(joined, args=arguments)
    errors = [d for d in unit.diagnostics if d.severity >= cindex.Diagnostic.Error]
    return None if errors else unit


def clang_functions(build, root, trees):
    prefixes = tuple(os.path.join(root, tree) + os.sep for tree in trees)
    index = cindex.Index.create()
    found, made_by_macros, parsed = set(), set(), 0
    lines_of = {}
    with tempfile.TemporaryDirectory() as scratch:
        for directory, arguments, sources in unity_groups(build, prefixes):
            unit = parse(index, directory, arguments, sources, scratch)
            units = [unit] if unit else [parse(index, directory, arguments, [s], scratch) for s in sources]
            parsed += len(sources)
            for unit in units:
                walk(unit, prefixes, root, lines_of, found, made_by_macros)
    return found, made_by_macros, parsed


def walk(unit, prefixes, root, lines_of, found, made_by_macros):
    stack = [unit.cursor]
    while stack:
        for child in stack.pop().get_children():
            location = child.location
            if location.file is None:
                continue
            path = os.path.normpath(location.file.name)
            if not path.startswith(prefixes):
                continue
            if child.kind.is_declaration() or child.kind in DESCENDED_STATEMENTS:
                stack.append(child)
            if child.kind not in FUNCTION_KINDS or not child.is_definition() or child.is_default_method():
                continue
            if path not in lines_of:
                lines_of[path] = pathlib.Path(path).read_text(encoding="utf-8").splitlines()
            key = (os.path.relpath(path, root), location.line)
            name = child.spelling
            if name in lines_of[path][location.line - 1] or name.startswith(("operator", "~")):
                found.add(key)
            else:
                made_by_macros.add(key)


def ctags_functions(root, trees):
    spec = importlib.util.spec_from_file_location("source_limits", os.path.join(root, "tools", "source-limits.py"))
    source_limits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source_limits)
    os.chdir(root)
    paths = [p for p in source_limits.source_files([pathlib.Path(t) for t in trees]) if p.suffix != ".py"]
    return {(str(path), first) for path, _, first, _ in source_limits.functions(paths)}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    trees = sys.argv[3:] or ["src", "include", "tools", "bench"]
    found, made_by_macros, units = clang_functions(build, root, trees)
    ctags = ctags_functions(root, trees)
    missing = sorted(found - ctags)
    print(f"clang: {len(found)} function definitions in {units} translation units "
          f"({len(made_by_macros)} more written by macros); source-limits (ctags): {len(ctags)} in "
          f"{', '.join(trees)}, {len(found) - len(missing)} of clang's among them")
    for path, line in missing:
        print(f"FAIL: {path}:{line}: a function clang finds and source-limits does not")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
