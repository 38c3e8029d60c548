#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that tools/source-limits.py sees every function clang sees.

Parses each translation unit of a build's compile_commands.json that lies in the checked trees
with libclang (Debian's python3-clang-14) and collects every function definition written in
those trees: functions, methods, constructors, destructors, conversion functions and templates
with a body, at the line of their name. Defaulted functions and functions a macro writes
(DEVRT_REGISTER_BACKEND's) are not source a person wrote and are left out. Fails when one of them
does not start where a function of source-limits' parser (universal-ctags) starts.

usage: functions-vs-clang.py BUILD_DIR SOURCE_ROOT [TREE...]   (trees default: src include tools bench)
"""
import importlib.util
import json
import os
import pathlib
import shlex
import sys

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


def clang_functions(build, root, trees):
    prefixes = tuple(os.path.join(root, tree) + os.sep for tree in trees)
    commands = json.load(open(os.path.join(build, "compile_commands.json"), encoding="utf-8"))
    index = cindex.Index.create()
    found, made_by_macros, parsed = set(), set(), set()
    lines_of = {}
    for entry in commands:
        source = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        if not source.startswith(prefixes) or source in parsed:
            continue
        parsed.add(source)
        os.chdir(entry["directory"])
        unit = index.parse(source, args=clang_arguments(entry, source))
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
    return found, made_by_macros, len(parsed)


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
