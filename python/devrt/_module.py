# SPDX-License-Identifier: Apache-2.0
"""Kernel modules and launches: devrt.Module and devrt.Function (TVM: runtime.Module and its
PackedFunc), over devrt_module_* and devrt_function_launch."""

import os

from devrt import _ext
from devrt._device import Device
from devrt._tensor import _stream_ref

#: {name: number} of the module formats (DEVRT_MODULE_*).
MODULE_FORMATS = _ext.module_formats()


def _format_number(format):
    if isinstance(format, str):
        try:
            return MODULE_FORMATS[format]
        except KeyError:
            raise ValueError(f"unknown module format {format!r} (known: {', '.join(MODULE_FORMATS)})") from None
    if isinstance(format, bool) or not isinstance(format, int):
        raise TypeError(f"a module format is a name such as 'opencl_c', not {type(format).__name__}")
    return format


class Function:
    """A kernel of a loaded Module. Calling it queues one launch:

        f(x, y, 2.0, n, grid=(n // 256,), block=(256,), stream=None)

    Arguments are devrt.Tensor (contiguous; the kernel gets its memory), int (an int32), float (a
    float32) or NumPy scalars (their dtype: numpy.int64(n), numpy.float64(x), ...); the backend
    checks them against the kernel's parameters. grid and block are an int or a tuple of one to
    three ints; dynamic_shared_bytes is the dynamic shared (OpenCL: local) memory per block.
    stream is a devrt.Stream, a raw handle, or None for the device's current stream. Tensors must
    stay alive until the stream has run the launch. Thread-safe."""

    __slots__ = ("_handle", "name", "module")

    def __init__(self, module, name, handle):
        self.module = module
        self.name = name
        self._handle = handle

    def __call__(self, *args, grid, block, dynamic_shared_bytes=0, stream=None):
        self._handle.launch(args, grid, block, dynamic_shared_bytes, _stream_ref(self.module.device, stream))

    def __repr__(self):
        return f"<devrt.Function {self.name!r} of {self.module!r}>"


class Module:
    """Code loaded on one device (TVM: runtime.Module). Module.load(device, format, data) builds
    or loads it; module["name"] or module.get_function("name") gives a kernel. Unloaded when the
    last reference goes (after the device has finished its work). Thread-safe."""

    __slots__ = ("_handle", "device", "format", "__weakref__")

    def __init__(self, handle, device, format):
        self._handle = handle
        self.device = device
        self.format = format

    @staticmethod
    def load(device, format, data, options=None):
        """Loads `data` on `device` in `format` ('opencl_c', 'spirv', 'ptx', 'cubin', 'fatbin',
        'hsaco', 'wgsl', 'opencl_binary', 'host_table', 'shared_object' or its DEVRT_MODULE_* number).
        `data` is bytes-like (the image), a str (source text, or a kernel table's name), or an
        os.PathLike (a file to read). `options` go to the backend's compiler (OpenCL build
        options). Build errors raise with the build log in the message."""
        device = device if isinstance(device, Device) else Device(device)
        number = _format_number(format)
        name = next((key for key, value in MODULE_FORMATS.items() if value == number), str(number))
        if options is not None and not isinstance(options, str):
            raise TypeError(f"options is a str or None, not {type(options).__name__}")
        if isinstance(data, os.PathLike):
            handle = _ext.load_module(device, number, None, os.fsdecode(os.fspath(data)), options)
        elif isinstance(data, str):
            handle = _ext.load_module(device, number, data.encode(), None, options)
        elif isinstance(data, (bytes, bytearray, memoryview)):
            handle = _ext.load_module(device, number, data, None, options)
        else:
            raise TypeError(f"module data is bytes, str or os.PathLike, not {type(data).__name__}")
        return Module(handle, device, name)

    @property
    def rewritten_instructions(self):
        """How many instructions devrt rewrote at load to define what the format leaves undefined:
        GLSL.std.450 Pow of a negative base in SPIR-V (DEVRT_VULKAN_SPIRV_REWRITE=0 turns it off)."""
        return self._handle.rewritten_instructions()

    def get_function(self, name):
        """The kernel `name` (for SPIR-V, the compute entry point's name); NotFoundError naming the
        module's kernels when absent."""
        return Function(self, name, self._handle.function(name))

    def __getitem__(self, name):
        return self.get_function(name)

    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                       cooldown_interval_ms=0, repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=None,
                       stream=None):
        """TVM's Module.time_evaluator: measures the kernel `func_name` on `dev` (the module's
        device) with devrt.time_evaluator's rules. The evaluator takes the kernel's arguments and
        its launch: evaluator(x, y, n, grid=..., block=...) -> BenchmarkResult; the launches are timed
        on `stream` (None: the device's current stream); on a remote device each batch is captured
        and replayed on the server."""
        from devrt._timing import time_evaluator

        dev = dev if isinstance(dev, Device) else Device(dev)
        if dev != self.device:
            raise ValueError(f"time_evaluator: the module is loaded on {self.device}, not {dev}")
        function = self.get_function(func_name)

        # The evaluator makes the stream it times (or captures on) current while it calls this.
        def launch(*args, grid, block, dynamic_shared_bytes=0):
            function(*args, grid=grid, block=block, dynamic_shared_bytes=dynamic_shared_bytes)

        return time_evaluator(launch, dev, number, repeat, min_repeat_ms, limit_zero_time_iterations,
                              cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes, f_preproc, stream)

    def __repr__(self):
        return f"<devrt.Module {self.format} on {self.device}>"


def load_module(device, format, data, options=None):
    """Module.load under TVM's name (tvm.runtime.load_module takes a path; this takes a device and
    a format too, since devrt loads onto one device)."""
    return Module.load(device, format, data, options)
