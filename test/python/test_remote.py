# SPDX-License-Identifier: Apache-2.0
"""devrt.remote: a devrt-server on loopback, connected from Python as tvm.rpc.connect is. Each check
runs in a Python of its own, so that the remote devices it adds never reach the other tests'
devrt.devices()."""
import contextlib
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

SERVER = os.environ.get("DEVRT_TEST_SERVER", "")


@contextlib.contextmanager
def serving(*arguments, log=None):
    """A devrt-server exporting the CPU device with `arguments` (its messages into the file `log`,
    if given); yields its address."""
    with tempfile.TemporaryDirectory() as scratch:
        address_file = os.path.join(scratch, "address")
        messages = open(log, "w") if log else subprocess.DEVNULL
        process = subprocess.Popen([SERVER, "--devices", "cpu", *arguments, "--address-file", address_file],
                                   stdout=subprocess.DEVNULL, stderr=messages)
        try:
            for _ in range(600):
                if os.path.exists(address_file):
                    break
                assert process.poll() is None, "devrt-server exited before listening"
                time.sleep(0.1)
            with open(address_file) as f:
                yield f.read().strip()
        finally:
            process.kill()
            process.wait()
            if log:
                messages.close()


@pytest.fixture(scope="module")
def server():
    if not SERVER:
        pytest.skip("devrt-server was not built (no remote backend: UCX's headers are missing)")
    with serving() as address:
        yield address


def run_client(address, code):
    script = "import devrt, numpy, pytest\nADDRESS = " + repr(address) + "\n" + textwrap.dedent(code)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_connect_gives_remote_devices(server):
    run_client(server, """
        devices = devrt.remote.connect(ADDRESS)
        assert len(devices) == 1
        dev = devices[0]
        assert str(dev).startswith("remote:"), dev
        assert dev in devrt.devices()
        info = devrt.remote.describe(dev)
        assert info["server"] == ADDRESS and info["kind"] == "cpu" and info["index"] == 0, info
        assert not info["lost"]
        assert dev.device_name == info["name"]
        assert dev.target()["kind"] == "llvm"
    """)


def test_tensor_round_trip_through_the_server(server):
    run_client(server, """
        dev = devrt.remote.connect(ADDRESS)[0]
        values = numpy.arange(1000, dtype=numpy.float32)
        remote = devrt.tensor(values, dev)
        numpy.testing.assert_array_equal(remote.numpy(), values)
        with pytest.raises(devrt.UnsupportedError, match="remote"):
            numpy.from_dlpack(remote)
    """)


def test_connect_refuses_what_it_cannot_use(server):
    run_client(server, """
        with pytest.raises(TypeError):
            devrt.remote.connect(("127.0.0.1", 1))
        with pytest.raises(devrt.InvalidArgumentError, match="host:port"):
            devrt.remote.connect("localhost")
        with pytest.raises(devrt.InvalidArgumentError, match="no remote device"):
            devrt.remote.describe(devrt.cpu(0))
    """)


def test_keyed_server_wants_its_key():
    if not SERVER:
        pytest.skip("devrt-server was not built (no remote backend: UCX's headers are missing)")
    with tempfile.TemporaryDirectory() as scratch:
        key = os.path.join(scratch, "key")
        subprocess.run([SERVER, "--generate-key", key], check=True, capture_output=True)
        with serving("--key-file", key) as address:
            run_client(address, f"""
                import pathlib
                with pytest.raises(devrt.PermissionDeniedError, match="requires a key"):
                    devrt.remote.connect(ADDRESS)
                dev = devrt.remote.connect(ADDRESS, key_file=pathlib.Path({key!r}))[0]
                values = numpy.arange(16, dtype=numpy.int32)
                numpy.testing.assert_array_equal(devrt.tensor(values, dev).numpy(), values)
                with pytest.raises(TypeError):
                    devrt.remote.connect(ADDRESS, key_file=3)
            """)


def test_a_client_that_exits_normally_says_goodbye(tmp_path):
    """The server hears a normal exit at once, as a closed connection, not a keep-alive timeout."""
    if not SERVER:
        pytest.skip("devrt-server was not built (no remote backend: UCX's headers are missing)")
    log = tmp_path / "server.log"
    with serving(log=str(log)) as address:
        run_client(address, """
            dev = devrt.remote.connect(ADDRESS)[0]
            devrt.tensor(numpy.arange(16, dtype=numpy.int32), dev).numpy()
        """)
        for _ in range(600):  # the server writes the line when its UCX thread sees the close
            if "left (" in log.read_text():
                break
            time.sleep(0.1)
    text = log.read_text()
    assert "client 1 left (it closed the connection)" in text, text
