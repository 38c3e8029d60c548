# SPDX-License-Identifier: Apache-2.0
"""devrt: one small API over device backends (CPU, OpenCL, Vulkan, CUDA, ROCm), from Python.

>>> import devrt
>>> devrt.cpu(0).max_threads_per_block
>>> t = devrt.empty((2, 3), "float32", devrt.cpu(0))
>>> import numpy; numpy.from_dlpack(t)

Importing the package loads the available backend plugins (see devrt.backend); the package talks
to libdevrt_c.so through ctypes (see devrt._capi for how the library is found).
"""
from devrt import _capi
from devrt._capi import (DevrtError, InvalidArgumentError, NotFoundError, OutOfMemoryError,  # noqa: F401
                         OutOfRangeError, ToolFailedError, UnavailableError, UnsupportedError)
from devrt._device import (Device, cpu, cuda, cuda_host, device, device_count, ext_dev, hexagon,  # noqa: F401
                           metal, opencl, rocm, vulkan)
from devrt._tensor import DataType, Stream, Tensor, empty, from_dlpack  # noqa: F401
from devrt import backend

__version__ = _capi.lib.devrt_version().decode()

backend._autoload()


def describe():
    """Prints devrt's build facts and backends, the table `devrt-info --build` prints."""
    print(_capi.call_string(_capi.lib.devrt_describe), end="")


def __getattr__(name):
    # devrt.support imports its helpers on first use: `import devrt` stays cheap.
    if name == "support":
        import importlib

        return importlib.import_module("devrt.support")
    raise AttributeError(f"module 'devrt' has no attribute '{name}'")
