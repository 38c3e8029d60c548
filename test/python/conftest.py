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
