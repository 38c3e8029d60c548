# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for the devrt package's tests."""
import os
import subprocess
import sys

import pytest


def run_python(code, env=None, python=None, check=True):
    """Runs `code` in a fresh interpreter (autoload state is per process); returns the result."""
    environment = dict(os.environ)
    environment.update(env or {})
    result = subprocess.run([python or sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                            timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"python exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


#: Set by meson test python-remote, which runs the suite beside a devrt-server (with_server.sh):
#: each test's device of a kind is then the server's device of that kind.
REMOTE = os.environ.get("DEVRT_TEST_REMOTE") == "1"


def kind_of(device):
    """The kind of device that runs `device`'s code: its own, or a remote device's on its server."""
    import devrt

    return devrt.remote.describe(device)["kind"] if device.type == "remote" else device.type


def device_under_test(kind):
    """The device a test of `kind` runs on: kind:0 here, or in the remote run the server's device of
    that kind; skips when there is none."""
    import devrt

    if REMOTE:
        for device in devrt.devices():
            if device.type == "remote" and kind_of(device) == kind:
                return device
        pytest.skip(f"the server exports no {kind} device")
    device = devrt.device(kind, 0)
    if not device.exist:
        pytest.skip(f"no {device} here ({devrt.backend.availability(device.type) or 'no device'})")
    return device


def present_devices():
    """Every present device of every registered, available backend: the conformance set."""
    import devrt

    devices = []
    seen = set()
    for name in devrt.backend.names():
        if devrt.backend.availability(name) is not None:
            continue
        kind = devrt.device(name, 0).device_type
        if kind in seen:
            continue
        seen.add(kind)
        devices += [devrt.device(kind, index) for index in range(devrt.device_count(kind))]
    return devices


@pytest.fixture
def example_plugin():
    path = os.environ.get("DEVRT_TEST_EXAMPLE_PLUGIN", "")
    if not path or not os.path.exists(path):
        pytest.skip("the example out-of-tree plugin was not built (DEVRT_TEST_EXAMPLE_PLUGIN)")
    return path
