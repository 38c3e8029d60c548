# SPDX-License-Identifier: Apache-2.0
"""devrt: one small API over device backends (CPU, OpenCL, Vulkan, CUDA, ROCm), from Python.

>>> import devrt
>>> devrt.cpu(0).max_threads_per_block
>>> t = devrt.tensor([[1.0, 2.0], [3.0, 4.0]], devrt.device("cpu", 0))
>>> import numpy; numpy.from_dlpack(t)

The names follow TVM's (tvm.device, tvm.runtime.tensor, tvm.support, tvm.backend, tvm.target);
docs/python.md lists each with its TVM counterpart. Devices, attributes, tensors, DLPack and copies
run in a compiled module over CPython's stable ABI (devrt._ext); the rest talks to libdevrt_c.so
through ctypes (see devrt._capi for how the library is found). Importing the package loads the
available backends once every public name below is defined (see devrt.backend).
"""
import pkgutil

# A build tree keeps the compiled devrt._ext in <build>/python/devrt/: put that directory on
# sys.path (after the sources) and the package finds it there.
__path__ = pkgutil.extend_path(__path__, __name__)

from devrt import _capi  # noqa: E402 -- loads libdevrt_c.so, which devrt._ext links
from devrt import _ext  # noqa: E402
from devrt._capi import (DevrtError, InvalidArgumentError, NotFoundError, OutOfMemoryError,  # noqa: F401
                         OutOfRangeError, ToolFailedError, UnavailableError, UnsupportedError)
from devrt._device import (Device, cpu, cuda, cuda_host, device, device_count, ext_dev, hexagon,  # noqa: F401
                           metal, opencl, rocm, vulkan)
from devrt._tensor import DataType, Stream, Tensor, empty, from_dlpack, tensor  # noqa: F401
from devrt import target  # noqa: F401
from devrt import backend

_ext.register_types(Device, Tensor, {code: _capi.ERROR_TYPES.get(code, DevrtError) for code in range(1, 64)})

__version__ = _capi.lib.devrt_version().decode()


def describe():
    """Prints devrt's build facts and backends, the table `devrt-info --build` prints."""
    print(_capi.call_string(_capi.lib.devrt_describe), end="")


def __getattr__(name):
    # devrt.support imports its helpers on first use: `import devrt` stays cheap.
    if name == "support":
        import importlib

        return importlib.import_module("devrt.support")
    raise AttributeError(f"module 'devrt' has no attribute '{name}'")


# Last, once every name above exists: backend hooks and entry points may use any of them.
backend._autoload()
