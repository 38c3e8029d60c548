#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks devrt's include graph against the rooms of docs/architecture.md.

Reads the table between "<!-- rooms: begin -->" and "<!-- rooms: end -->": each row is a room,
the file patterns it holds and the rooms (or single headers, as backticked paths) it may include.
Every C/C++ file under include/, src/, tools/, python/ext/, bench/ and test/ goes to the first
room whose pattern matches; then every include of a project file is checked against the
including file's room. Fails on a file in no room, an include its room may not make, a cycle
between components of the library's own rooms (see the section's text for what a component is),
a function an internal header declares but only another room defines, and, for the core's rooms
(src/core/<room>/), a cycle in the directions the table gives them or a meson.build whose "Uses:"
line differs from its row.

usage: include-graph.py [SOURCE_ROOT]
"""
import collections
import functools
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cpp", ".cpp.in", ".hpp.in")
SCANNED_DIRECTORIES = ("include", "src", "tools", "python/ext", "bench", "test")
# Rooms whose components must form no cycle.
ACYCLIC_ROOMS = {"application", "backend-author", "support", "nvrtc", "backend helpers", "platform", "registry",
                 "plugins", "devices", "execution", "memory", "tensors", "graphs"}
CORE_ROOM = re.compile(r"src/core/([a-z_]+)/\*")
# A statement that starts at the first column (namespace scope: namespaces are not indented),
# up to its ";" or "{"; and the function it declares or defines.
STATEMENT_START = re.compile(r"^[A-Za-z_]", re.M)
NOT_A_FUNCTION = re.compile(r"^(namespace|using|class|struct|union|enum|template|typedef|static_assert|extern|"
                            r"constexpr|consteval|inline|thread_local|public|protected|private|#)\b")
FUNCTION_NAME = re.compile(r"(?:\b(?:devrt|detail)::)*\b([A-Za-z_]\w*)\s*\($")
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


class Room:
    def __init__(self, name, patterns, allowed):
        self.name = name
        self.globs = patterns
        self.globs = patterns
        self.patterns = [compile_pattern(p) for p in patterns]
        self.rooms = {a for a in allowed if "/" not in a}
        self.headers = {a for a in allowed if "/" in a}

    def match(self, path):
        """The room's name for `path` ("backend cpu" for a {name} room), or None."""
        for pattern in self.patterns:
            found = pattern.fullmatch(path)
            if found:
                instance = found.groupdict().get("name")
                return self.name.replace("{name}", instance) if instance else self.name
        return None


def compile_pattern(pattern):
    """A glob as a regex: ** any path, * one name part, {name} one directory, {a,b} a choice."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern.startswith("{name}", i):
            out += "(?P<name>[^/]+)"
            i += len("{name}")
        elif pattern[i] == "{":
            end = pattern.index("}", i)
            out += "(?:" + "|".join(re.escape(choice) for choice in pattern[i + 1:end].split(",")) + ")"
            i = end + 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out)


def read_rooms(architecture):
    text = open(architecture, encoding="utf-8").read()
    try:
        table = text.split("<!-- rooms: begin -->", 1)[1].split("<!-- rooms: end -->", 1)[0]
    except IndexError:
        sys.exit(f"include-graph: {architecture} has no rooms table")
    rooms = []
    for line in table.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3:
            sys.exit(f"include-graph: malformed rooms row: {line}")
        patterns = re.findall(r"`([^`]+)`", cells[1])
        allowed = []
        for part in re.split(r",\s*", cells[2]) if cells[2] else []:
            allowed.append(part.strip("`"))
        rooms.append(Room(cells[0], patterns, allowed))
    return rooms


@functools.lru_cache(maxsize=None)
def room_of(rooms, path):
    """(room, its name for `path`) of the first matching room, or (None, None). `rooms`: a tuple."""
    for room in rooms:
        name = room.match(path)
        if name:
            return room, name
    return None, None


def resolve(root, including, quote, target):
    """The source-tree path of an included project file, or None for system and generated ones."""
    candidates = []
    if target.startswith("devrt/"):
        candidates += ["include/" + target, "include/" + target + ".in"]
    if quote == '"':
        candidates += [os.path.normpath(os.path.join(os.path.dirname(including), target)), "src/" + target]
        if target.startswith("test/") or target.startswith("bench/"):
            candidates.append(target)
    for candidate in candidates:
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def stem(path):
    base = os.path.basename(path)
    for suffix in (".cpp.in", ".hpp.in", ".hpp", ".cpp", ".h", ".c"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def component(path, header_stems):
    """The component a file belongs to (the docs' rule)."""
    name = stem(path)
    if path.startswith(("include/devrt/detail/", "include/devrt/backend/detail/")) and "_" in name:
        owner = name.split("_", 1)[0]
        if owner in header_stems:
            return owner
    if name.endswith("_internal"):
        return name[: -len("_internal")]
    if path.endswith((".cpp", ".cpp.in", ".c")) and name not in header_stems:
        return "source:" + path  # no header of its name: nothing can include it
    return name


def find_cycles(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                cycles.append(sorted(members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return cycles


def shortest_loop(edges, members):
    """One shortest cycle through the first member, as a list of components ending where it began."""
    start = members[0]
    inside = set(members)
    previous = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if nxt in inside and nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    return members


def namespace_scope_functions(text, definitions):
    """Names of the functions `text` declares (definitions=False) or defines (True) at namespace
    scope, free functions only (a name qualified by anything but devrt:: or detail:: is a member)."""
    names = set()
    for start in STATEMENT_START.finditer(text):
        line_start = text[start.start():]
        if NOT_A_FUNCTION.match(line_start):
            continue
        end = re.search(r"[;{]", line_start)
        if end is None:
            continue
        statement = line_start[: end.start()]
        if "(" not in statement or "=" in statement.split("(", 1)[0]:
            continue
        if (line_start[end.start()] == "{") != definitions:
            continue
        head = statement.split("(", 1)[0].rstrip() + "("
        found = FUNCTION_NAME.search(head)
        if found is None or "operator" in head:
            continue
        qualifier = head[: found.start(1)]
        if qualifier.endswith("::") and not re.search(r"\b(devrt|detail)::$", qualifier):
            continue
        names.add(found.group(1))
    return names


def declared_elsewhere(rooms, texts):
    """Functions an internal header (src/) declares that no file of its room defines, though a file
    of another room does: a call across rooms the include check cannot see. `texts`: each file's
    text, by path."""
    definers = collections.defaultdict(set)
    for path, text in texts.items():
        if path.startswith("src/") and path.endswith((".cpp", ".cpp.in")):
            for name in namespace_scope_functions(text, definitions=True):
                definers[name].add(path)
    problems = []
    for path, text in sorted(texts.items()):
        if not (path.startswith("src/") and path.endswith((".hpp", ".h"))):
            continue
        room = room_of(rooms, path)[1]
        for name in sorted(namespace_scope_functions(text, definitions=False)):
            defined_in = {p: room_of(rooms, p)[1] for p in definers.get(name, ())}
            if defined_in and room not in defined_in.values():
                where = ", ".join(f"{p} ({r})" for p, r in sorted(defined_in.items()))
                problems.append(f"{path} ({room}) declares {name}(), which only another room defines: {where}")
    return problems


def core_room_directions(root, rooms):
    """The core's rooms: the table's directions among them acyclic, and each room's meson.build
    naming on its "Uses:" line exactly what its row allows of the core."""
    core = {}
    for room in rooms:
        for glob in room.globs:
            found = CORE_ROOM.fullmatch(glob)
            if found:
                core[room.name] = (room, found.group(1))
    problems = []
    edges = {name: {r for r in room.rooms if r in core} for name, (room, _) in core.items()}
    for members in find_cycles(edges):
        problems.append("the rooms table's directions make a cycle: " + " -> ".join(shortest_loop(edges, members)))
    for name, (room, folder) in sorted(core.items()):
        build = os.path.join(root, "src", "core", folder, "meson.build")
        if not os.path.isfile(build):
            problems.append(f"src/core/{folder}/ ({name}) has no meson.build")
            continue
        uses = re.search(r"^# Uses: (.*)$", open(build, encoding="utf-8").read(), re.M)
        stated = set() if uses is None or uses.group(1).strip() == "(none)" else {
            part.strip() for part in uses.group(1).split(",")}
        expected = edges[name] | {h for h in room.headers if h.startswith("src/core/")}
        if uses is None or stated != expected:
            problems.append(f"src/core/{folder}/meson.build: \"# Uses: {', '.join(sorted(stated)) or '(none)'}\" "
                            f"but the rooms table gives {name}: {', '.join(sorted(expected)) or '(none)'}")
    for entry in sorted(os.listdir(os.path.join(root, "src", "core"))):
        if entry != "meson.build" and os.path.isfile(os.path.join(root, "src", "core", entry)):
            problems.append(f"src/core/{entry}: loose in src/core (every core file is in a room's folder)")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    rooms = tuple(read_rooms(os.path.join(root, "docs", "architecture.md")))
    files = []
    for directory in SCANNED_DIRECTORIES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, directory)):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
            for filename in filenames:
                if filename.endswith(SOURCE_SUFFIXES):
                    files.append(os.path.relpath(os.path.join(dirpath, filename), root))
    files.sort()

    problems = []
    includes = {}
    texts = {}
    for path in files:
        room, _ = room_of(rooms, path)
        if room is None:
            problems.append(f"{path}: in no room of docs/architecture.md")
            continue
        text = texts[path] = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
        includes[path] = []
        for quote, target in INCLUDE.findall(text):
            resolved = resolve(root, path, quote, target)
            if resolved is not None:
                includes[path].append(resolved)

    checked = 0
    for path, targets in includes.items():
        room, name = room_of(rooms, path)
        for target in targets:
            target_room, target_name = room_of(rooms, target)
            checked += 1
            if target_room is None or target_name == name:
                continue
            allowed = target_room.name in room.rooms or target in room.headers
            if allowed and "{name}" in target_room.name and "{name}" in room.name:
                allowed = False  # one backend never includes another
            if not allowed:
                problems.append(f"{path} ({name}) includes {target} ({target_name})")

    header_stems = {stem(p) for p in includes if p.endswith((".h", ".hpp", ".hpp.in"))}
    edges = collections.defaultdict(set)
    reasons = collections.defaultdict(list)
    for path, targets in includes.items():
        if room_of(rooms, path)[0].name not in ACYCLIC_ROOMS:
            continue
        source = component(path, header_stems)
        for target in targets:
            if room_of(rooms, target)[0].name not in ACYCLIC_ROOMS:
                continue
            sink = component(target, header_stems)
            if sink != source:
                edges[source].add(sink)
                reasons[(source, sink)].append(f"{path} -> {target}")
    for members in find_cycles(edges):
        loop = shortest_loop(edges, members)
        lines = [f"include cycle: {' -> '.join(loop)}"]
        for a, b in zip(loop, loop[1:]):
            lines += [f"    {reason}" for reason in reasons[(a, b)]]
        problems.append("\n".join(lines))

    problems += declared_elsewhere(rooms, texts)
    problems += core_room_directions(root, rooms)

    print(f"include-graph: {len(files)} files in {len(rooms)} rooms, {checked} includes of project files, "
          f"{len(edges)} components with dependencies")
    for problem in problems:
        print("FAIL: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
