# SPDX-License-Identifier: Apache-2.0
"""Libraries TVM built, run on devrt's devices, as tvm.runtime.load_module runs them:

>>> lib = devrt.tvm.load_library("gpt2-q0f16-vulkan.so", devrt.vulkan(0))
>>> lib["layer_norm1"](x, gamma, beta, out)      # devrt tensors, DLPack tensors, ints, floats
>>> lib.synchronize()

Libraries of TVM <= 0.20 (export_library, MLC's model libraries), 0.21 and 0.22 to main
(tvm-ffi; no libtvm_ffi needed): their host functions (TVM's operators) run unchanged, their
kernels (Vulkan, OpenCL, WebGPU, CUDA, ROCm) run on devrt's device; the Relax VM's program they
may carry is not run. docs/tvm-libraries.md has what loads and how.
"""
import os

from devrt import _ext
from devrt._device import Device
from devrt._tensor import Tensor, from_dlpack


class Function:
    """One host function of a Library: call it with tensors (devrt.Tensor or any DLPack producer on
    the library's device), ints and floats."""

    __slots__ = ("_library", "name")

    def __init__(self, library, name):
        self._library = library
        self.name = name

    def __call__(self, *args):
        converted = tuple(_argument(a) for a in args)
        _ext.tvm_library_call(self._library._handle, self.name, converted)

    def __repr__(self):
        return f"<devrt.tvm.Function {self.name} of {os.path.basename(self._library.path)}>"


class Library:
    """A library TVM built, loaded for one device (devrt::tvm::Library)."""

    __slots__ = ("_handle", "path", "device")

    def __init__(self, path, device):
        self.path = os.fspath(path)
        self.device = device if isinstance(device, Device) else Device(device)
        self._handle = _ext.tvm_library_load(self.path, self.device)

    @property
    def functions(self):
        """The host functions the library exports (TVM's operators), sorted."""
        return _ext.tvm_library_functions(self._handle)

    @property
    def kernels(self):
        """The device kernels of its blob for this device: [(name, [launch tags])]."""
        return [(name, tags.split(",") if tags else []) for name, tags in _ext.tvm_library_kernels(self._handle)]

    @property
    def skipped(self):
        """What loading skipped in its blob, each with the reason (a Relax VM program, ...)."""
        return _ext.tvm_library_skipped(self._handle)

    @property
    def rewritten_instructions(self):
        """How many instructions devrt rewrote in its kernels at load (GLSL.std.450 Pow of a
        negative base in SPIR-V, defined as C's pow; docs/tvm-libraries.md)."""
        return _ext.tvm_library_rewritten_instructions(self._handle)

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"a function is named by a str, not {type(name).__name__}")
        if name not in self.functions:
            raise KeyError(f"{os.path.basename(self.path)} exports no function '{name}'")
        return Function(self, name)

    def __contains__(self, name):
        return name in self.functions

    def get_function(self, name):
        """TVM's Module.get_function."""
        return self[name]

    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                       cooldown_interval_ms=0, repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=None,
                       stream=None):
        """TVM's Module.time_evaluator: measures host function `func_name` on `dev` (the library's
        device) with devrt.time_evaluator's rules; evaluator(*args) -> BenchmarkResult. Its kernels
        are timed on `stream` (None: the device's current stream); on a remote device each batch is
        captured and replayed on the server."""
        from devrt._timing import time_evaluator

        dev = dev if isinstance(dev, Device) else Device(dev)
        if dev != self.device:
            raise ValueError(f"time_evaluator: the library is loaded on {self.device}, not {dev}")
        return time_evaluator(self[func_name], dev, number, repeat, min_repeat_ms, limit_zero_time_iterations,
                              cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes, f_preproc, stream)

    def synchronize(self):
        """Waits for the kernels this thread's calls queued; an asynchronous failure names the last
        function this thread called."""
        _ext.tvm_library_synchronize(self._handle)

    def __repr__(self):
        return f"<devrt.tvm.Library {os.path.basename(self.path)} on {self.device}>"


def _argument(value):
    if isinstance(value, (Tensor, int, float)):
        return value
    if hasattr(value, "__dlpack__"):
        return from_dlpack(value)
    raise TypeError(f"a TVM function takes tensors, ints and floats, not {type(value).__name__}")


def load_library(path, device):
    """Loads the library TVM built at `path` for `device` (a devrt.Device or a name such as
    "vulkan:0"): its file checked before it is opened, its device blob parsed, its kernels loaded.
    Raises devrt.NotFoundError (no file), devrt.InvalidArgumentError (not a loadable library, a
    malformed blob, kernels for another kind of device), devrt.UnsupportedError (kernels devrt
    cannot run yet)."""
    return Library(path, device)
