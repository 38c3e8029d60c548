#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks, before pip runs, that this interpreter can build and run devrt's Python package from a
checkout without PyPI (README, "C API and Python"): CPython 3.11 or later, pip, and meson-python as
the build backend (pip's --no-build-isolation uses the interpreter's own). Prints one line naming
what is missing and how to get it, and exits 1; prints nothing and exits 0 when all is there.

usage: <python> tools/check-python.py
"""
import importlib.util
import sys

DEBIAN = ("use Debian's interpreter, /usr/bin/python3, which has them as packages "
          "(apt-get install python3-mesonpy python3-pip python3-venv; tools/install-deps.sh installs them), "
          "and make the virtual environment with it")


def missing():
    if sys.version_info < (3, 11):
        return f"Python {sys.version_info.major}.{sys.version_info.minor} (3.11 or later is needed)"
    names = {"mesonpy": "meson-python", "pip": "pip"}
    absent = [package for module, package in names.items() if importlib.util.find_spec(module) is None]
    return " and ".join(absent) if absent else None


def main():
    what = missing()
    if what is None:
        return 0
    print(f"check-python: {sys.executable} (Python {sys.version.split()[0]}) lacks {what}: {DEBIAN}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
