# SPDX-License-Identifier: Apache-2.0
"""What people reach for beside the API (issue 53, items 4 and 6): python -m devrt, empty_cache, a
namespace of devrt's own names, and the interpreter check the README's install recipe runs first."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import devrt

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_python_m_devrt_runs_devrt_info():
    devrt_info = os.environ.get("DEVRT_TEST_DEVRT_INFO")
    if not devrt_info:
        pytest.skip("devrt-info is not built (-Dtools=false)")
    expected = subprocess.run([devrt_info, "--version"], capture_output=True, text=True, check=True).stdout
    got = subprocess.run([sys.executable, "-m", "devrt", "--version"], capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected
    bad = subprocess.run([sys.executable, "-m", "devrt", "--no-such-flag"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "usage: devrt-info" in bad.stderr


def test_devrt_library_follows_the_rule_of_every_library_variable():
    """docs/environment.md: an absolute path or a bare library name; a relative path is refused
    (it would name another file in each working folder), and nothing is loaded."""
    from conftest import run_python

    relative = run_python("import devrt", env={"DEVRT_LIBRARY": "build/src/libdevrt_c.so.0"}, check=False)
    assert relative.returncode != 0
    assert "DEVRT_LIBRARY=build/src/libdevrt_c.so.0 is a relative path" in relative.stderr
    missing = run_python("import devrt", env={"DEVRT_LIBRARY": "/nonexistent/libdevrt_c.so.0"}, check=False)
    assert missing.returncode != 0 and "/nonexistent/libdevrt_c.so.0 (no such file)" in missing.stderr


def test_empty_cache_gives_cached_memory_back():
    device = devrt.cpu(0)
    for _ in range(4):
        devrt.tensor(np.ones(1 << 16, dtype=np.float32), device)  # freed at once: cached
    assert devrt.memory_stats(device)["cached_bytes"] > 0
    devrt.empty_cache(device)
    assert devrt.memory_stats(device)["cached_bytes"] == 0
    with pytest.raises(devrt.InvalidArgumentError):
        devrt.empty_cache(devrt.cpu(5))


def test_the_namespace_holds_devrt_names_only():
    leaked = {"atexit", "json", "pkgutil", "sys", "os"} & set(dir(devrt))
    assert not leaked, f"devrt exposes {sorted(leaked)}"


def test_the_install_check_names_what_is_missing():
    check = ROOT / "tools" / "check-python.py"
    ok = subprocess.run([sys.executable, str(check)], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout == "" and ok.stderr == ""
    # Without site-packages, Debian's interpreter has neither meson-python nor pip: what a python3
    # of pyenv or conda is to the recipe.
    bare = subprocess.run([sys.executable, "-S", str(check)], capture_output=True, text=True, timeout=60)
    assert bare.returncode == 1
    lines = bare.stderr.strip().splitlines()
    assert len(lines) == 1 and "lacks meson-python and pip" in lines[0] and "/usr/bin/python3" in lines[0]
