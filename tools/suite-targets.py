#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints, relative to BUILD_DIR, the build outputs that the tests of SUITE need (their programs and
their depends:), so that a configuration which runs one suite builds only that (Meson 1.0's
`meson test` rebuilds everything). Usage: suite-targets.py BUILD_DIR SUITE"""
import json
import os
import subprocess
import sys


def main(build_dir, suite):
    info = json.loads(subprocess.run(["meson", "introspect", build_dir, "--tests", "--targets"],
                                     check=True, capture_output=True, text=True).stdout)
    outputs = {target["id"]: target["filename"] for target in info["targets"]}
    by_path = {path: target_id for target_id, paths in outputs.items() for path in paths}
    needed = set()
    for test in info["tests"]:
        if not any(name.split(":")[-1] == suite for name in test["suite"]):
            continue
        needed.update(test.get("depends", []))
        if test["cmd"] and test["cmd"][0] in by_path:
            needed.add(by_path[test["cmd"][0]])
    if not needed:
        sys.exit(f"suite-targets: no test of suite '{suite}' in {build_dir}")
    root = os.path.abspath(build_dir)
    for target_id in sorted(needed):
        for path in outputs.get(target_id, []):
            print(os.path.relpath(path, root))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
