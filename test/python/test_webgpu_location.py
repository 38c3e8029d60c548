# SPDX-License-Identifier: Apache-2.0
"""Where devrt finds a WebGPU implementation with no variable set (issue 53, item 3): the per-user
folder tools/install-deps.sh installs Dawn into, from any working directory, in devrt-info and in
Python; never a folder relative to the working directory."""
import os
import shutil
import subprocess

import pytest

from conftest import run_python

DAWN = os.environ.get("DEVRT_WEBGPU_LIBRARY", "")


@pytest.fixture
def user_home(tmp_path):
    if not DAWN or not os.path.exists(DAWN):
        pytest.skip("no WebGPU implementation here (DEVRT_WEBGPU_LIBRARY unset: Dawn was not installed)")
    home = tmp_path / "home"
    folder = home / ".local" / "share" / "devrt" / "webgpu"
    folder.mkdir(parents=True)
    shutil.copy(DAWN, folder / "libwebgpu_wrapper.so")
    return home


def environment(home, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("DEVRT_WEBGPU_LIBRARY", "XDG_DATA_HOME")}
    env.update(HOME=str(home), **extra)
    return env


def webgpu_line(env, cwd):
    devrt_info = os.environ.get("DEVRT_TEST_DEVRT_INFO")
    if not devrt_info:
        pytest.skip("devrt-info is not built (-Dtools=false)")
    out = subprocess.run([devrt_info], env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=True)
    return next(line for line in out.stdout.splitlines() if line.startswith("backend webgpu"))


def test_a_new_shell_finds_the_per_user_implementation(user_home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert "available, 1 device" in webgpu_line(environment(user_home), elsewhere)
    code = "import devrt; d = devrt.webgpu(0); print(d.exist, d.device_name is not None)"
    result = run_python(code, environment(user_home))
    assert result.stdout.split() == ["True", "True"]


def test_xdg_data_home_is_followed_when_absolute_and_ignored_when_relative(user_home, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(user_home / ".local" / "share", data)
    empty_home = tmp_path / "empty"
    empty_home.mkdir()
    assert "available" in webgpu_line(environment(empty_home, XDG_DATA_HOME=str(data)), tmp_path)
    # A relative XDG_DATA_HOME would name a folder of the working directory, which holds the library
    # here: devrt does not look there.
    line = webgpu_line(environment(empty_home, XDG_DATA_HOME="data"), tmp_path)
    assert "unavailable" in line and "no WebGPU implementation" in line


def test_devrt_info_says_what_the_drivers_printed_after_its_listing(user_home, tmp_path):
    """Issue 53, item 7: Dawn's and Mesa's stderr never lands inside devrt-info's listing; devrt-info
    says once, after it, what those lines are."""
    devrt_info = os.environ.get("DEVRT_TEST_DEVRT_INFO")
    if not devrt_info:
        pytest.skip("devrt-info is not built (-Dtools=false)")
    for args in ([], ["--selftest"], ["--json"]):
        result = subprocess.run([devrt_info, *args], env=environment(user_home), cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=180)
        out = result.stdout
        assert result.returncode == 0, out
        note = "devrt-info: drivers printed on stderr while devrt opened them"
        if note not in out:
            continue  # this machine's drivers printed nothing
        listing, said = out.split(note, 1)
        assert "XDG_RUNTIME_DIR" not in listing and "Dynamic" not in listing, listing
        assert "webgpu:" in said
        if args == ["--json"]:
            import json

            json.loads(listing)  # nothing but the JSON before the note
