# SPDX-License-Identifier: Apache-2.0
"""devrt: one small API over device backends (CPU, OpenCL, Vulkan, CUDA, ROCm), from Python.

>>> import devrt
>>> devrt.cpu(0).max_threads_per_block
>>> t = devrt.tensor([[1.0, 2.0], [3.0, 4.0]], devrt.device("cpu", 0))
>>> import numpy; numpy.from_dlpack(t)

The names follow TVM's (tvm.device, tvm.runtime.tensor, tvm.support, tvm.backend, tvm.target);
docs/python.md lists each with its TVM counterpart. Everything runs in a compiled module over
CPython's stable ABI (devrt._ext, typed in _ext.pyi; devrt._capi finds libdevrt_c.so and opens it
with devrt._loader first), devrt.support's toolchain calls included. Importing the package loads the
available backends once every public name below is defined (see devrt.backend).
"""
import atexit as _atexit
import pkgutil as _pkgutil

# A build tree keeps the compiled devrt._ext in <build>/python/devrt/: put that directory on
# sys.path (after the sources) and the package finds it there.
__path__ = _pkgutil.extend_path(__path__, __name__)

from devrt import _capi  # noqa: E402 -- loads libdevrt_c.so, which devrt._ext links
from devrt import _ext  # noqa: E402
from devrt._capi import (DevrtError, InvalidArgumentError, NotFoundError, OutOfMemoryError,  # noqa: F401
                         OutOfRangeError, PermissionDeniedError, Status, ToolFailedError, UnavailableError,
                         UnsupportedError)
from devrt._device import (Device, cpu, cuda, cuda_host, device, device_count, devices, ext_dev, hexagon,  # noqa: F401
                           metal, opencl, rocm, vulkan, webgpu)
from devrt._tensor import DataType, Stream, Tensor, empty, from_dlpack, tensor  # noqa: F401
from devrt._module import MODULE_FORMATS, Function, Module, load_module  # noqa: F401
from devrt._timing import BenchmarkResult, time_evaluator  # noqa: F401
from devrt._graph import Graph, graph  # noqa: F401
from devrt import remote  # noqa: F401
from devrt import target  # noqa: F401
from devrt import tvm  # noqa: F401
from devrt import backend

_ext.register_types(Device, Tensor, {status: _capi.ERROR_TYPES.get(status, DevrtError) for status in Status
                                     if status != Status.OK})

__version__ = _ext.version()


def describe():
    """Prints devrt's build facts and backends, the table `devrt-info --build` prints."""
    print(_ext.describe(), end="")


def memory_stats(dev):
    """The device's memory figures as a dict with PyTorch's flat keys: allocated_bytes.<scope>.current
    and .peak, allocation.<scope>.current, reserved_bytes.<scope>.current and .peak (<scope>: all,
    global, global.texture, global.texture-nhwc, global.texture-weight, global.vtcm), cached_bytes,
    cache.hits, cache.misses, history, stream_pool.*, graph.held_bytes and graph.held_allocations
    (memory live graphs keep after its owners freed it). devrt.memory_stats in docs/python.md."""
    return _ext.memory_stats(dev)


def empty_cache(dev):
    """Gives the device's cached, unused memory back to its backend (torch.cuda.empty_cache): the
    Buffer cache's free blocks and the stream pools' blocks whose frees have completed. Memory in use,
    and memory a live graph keeps, stays."""
    _ext.empty_cache(dev)


def reset_peak_memory_stats(dev):
    """Sets the device's peaks to their current figures."""
    _ext.reset_peak_memory_stats(dev)


def set_memory_history(enabled):
    """True: remember every live allocation (size, scope, age) for memory_snapshot; False: forget."""
    _ext.set_memory_history(enabled)


def memory_snapshot(dev):
    """The device's live allocations the history remembers: {"device", "history", "allocations": [
    {"address", "bytes", "scope", "age_ns"}, ...]}."""
    import json

    return json.loads(_ext.memory_snapshot(dev))


def shutdown():
    """Closes every device devrt opened (also done at interpreter exit); later calls open them again."""
    _ext.shutdown()


def __getattr__(name):
    # devrt.support imports its helpers on first use: `import devrt` stays cheap.
    if name == "support":
        import importlib

        return importlib.import_module("devrt.support")
    raise AttributeError(f"module 'devrt' has no attribute '{name}'")


# Last, once every name above exists: backend hooks and entry points may use any of them.
backend._autoload()
# Registered after the backends loaded, so that it runs before anything they registered.
_atexit.register(_ext.shutdown)
