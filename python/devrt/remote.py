# SPDX-License-Identifier: Apache-2.0
"""Devices on other processes and machines, served by devrt-server over UCX (docs/remote.md).

>>> devs = devrt.remote.connect("127.0.0.1:9190")   # as tvm.rpc.connect(host, port) reads
>>> x = devrt.tensor(numpy.arange(4.0), devs[0])      # memory on the server's device
>>> devrt.remote.describe(devs[0])["kind"]            # what it is there: "opencl", ...

A remote device is Device("remote", n), numbered in connection order; it loads modules in the
formats its backend on the server loads. DEVRT_REMOTE=host:port[,host:port...] connects at discovery.
"""
import json
import os

from devrt import _ext
from devrt._device import Device


def connect(address, key_file=None):
    """Connects to the devrt-server at "host:port" and returns its devices, which devrt.devices()
    lists from then on. `key_file`: the key to prove to a keyed server (None: DEVRT_REMOTE_KEY_FILE,
    else none). UnavailableError naming the address when it cannot be reached (or UCX is missing);
    PermissionDeniedError when the server requires a key this client does not have, or does not
    prove the client's; InvalidArgumentError for an address that is not host:port; TypeError for a
    non-str."""
    if not isinstance(address, str):
        raise TypeError(f"devrt.remote.connect: the address is a str 'host:port', not {type(address).__name__}")
    if key_file is not None and not isinstance(key_file, (str, os.PathLike)):
        raise TypeError(f"devrt.remote.connect: key_file is a path, not {type(key_file).__name__}")
    first, count = _ext.remote_connect(address, None if key_file is None else os.fspath(key_file))
    return [Device("remote", first + i) for i in range(count)]


def describe(device):
    """What a remote device is on its server: {"server", "kind", "index", "name", "lost",
    "lost_reason"}. InvalidArgumentError for a device that is not remote."""
    return json.loads(_ext.remote_describe(Device(device)))
