#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks src/backends/webgpu/webgpu_api.hpp's struct layouts against a real webgpu.h.

Every non-template struct webgpu_api.hpp declares under a webgpu.h name is measured twice, with
the same probe: compiled against the given webgpu.h (webgpu-native/webgpu-headers, or Dawn's), and
against devrt's declarations. The sizes and field offsets must agree. With --emit, prints the
static_asserts that webgpu_api.hpp keeps (the real header's figures), for pasting after a
deliberate update.

Usage: webgpu-layouts.py <path of webgpu.h> [--source ROOT] [--cxx c++] [--emit]
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

API = pathlib.Path("src/backends/webgpu/webgpu_api.hpp")


def declared_structs(text):
    """{struct: [fields]} of webgpu_api.hpp's plain WGPU* structs (templates and devrt's own skipped)."""
    structs = {}
    for match in re.finditer(r"^(template <[^\n]*>\n)?struct (WGPU\w+) \{\n(.*?)^\};", text, re.S | re.M):
        if match.group(1):
            continue
        fields = []
        for line in match.group(3).splitlines():
            line = line.split("//")[0].strip()
            field = re.match(r".*?(\w+)(\[\d+\])?;$", line)
            if field and "(" not in line:
                fields.append(field.group(1))
        structs[match.group(2)] = fields
    return structs


def probe_source(structs, prelude):
    lines = [prelude, "#include <cstddef>", "#include <cstdio>", "int main() {"]
    for name, fields in structs.items():
        lines.append(f'  std::printf("{name} %zu\\n", sizeof({name}));')
        for field in fields:
            lines.append(f'  std::printf("{name}.{field} %zu\\n", offsetof({name}, {field}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def measure(cxx, source, include_dirs):
    with tempfile.TemporaryDirectory() as work:
        path = pathlib.Path(work) / "probe.cpp"
        path.write_text(source)
        binary = pathlib.Path(work) / "probe"
        command = [cxx, "-std=c++20", "-Wno-invalid-offsetof", "-o", str(binary), str(path)]
        command += [f"-I{d}" for d in include_dirs]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"webgpu-layouts: the probe does not compile:\n{result.stderr[-3000:]}")
        out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    return dict(line.rsplit(" ", 1) for line in out.splitlines())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("header", type=pathlib.Path)
    parser.add_argument("--source", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("--emit", action="store_true")
    args = parser.parse_args()
    structs = declared_structs((args.source / API).read_text())
    header = args.header.resolve()
    real = measure(args.cxx, probe_source(structs, f'#include "{header}"'), [])
    ours = measure(args.cxx, probe_source(structs, f'#include "{args.source / API}"\nusing namespace devrt::webgpu;'),
                   [args.source / "src"])
    differences = [f"{key}: webgpu.h {real[key]}, devrt {ours[key]}" for key in real if real[key] != ours[key]]
    if args.emit:
        for name, fields in structs.items():
            print(f"static_assert(sizeof({name}) == {real[name]});")
            for field in fields:
                print(f"static_assert(offsetof({name}, {field}) == {real[name + '.' + field]});")
    for difference in differences:
        print("DIFFERS", difference, file=sys.stderr)
    print(f"webgpu-layouts: {len(structs)} structs, {len(real)} sizes and offsets, {len(differences)} differ",
          file=sys.stderr)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
