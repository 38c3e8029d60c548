# SPDX-License-Identifier: Apache-2.0
"""Libraries TVM built, run on devrt's devices, as tvm.runtime.load_module runs them:

>>> lib = devrt.tvm.load_library("gpt2-q0f16-vulkan.so", devrt.vulkan(0))
>>> lib["layer_norm1"](x, gamma, beta, out)      # devrt tensors, DLPack tensors, ints, floats
>>> lib.synchronize()

Libraries of TVM <= 0.20 (export_library, MLC's model libraries), 0.21 and 0.22 to main
(tvm-ffi; no libtvm_ffi needed): their host functions (TVM's operators) run unchanged, their
kernels (Vulkan, OpenCL, WebGPU, CUDA, ROCm) run on devrt's device. A model's Relax VM program
(MLC's libraries carry one) runs as tvm.relax.VirtualMachine runs it:

>>> vm = devrt.tvm.VirtualMachine(lib, devrt.vulkan(0))
>>> caches = vm["_initialize_effect"]()
>>> logits, caches = vm["prefill"](tokens, devrt.tvm.Shape([8]), caches, params)

docs/tvm-libraries.md has what loads and how.
"""
import os

from devrt import _ext, _timing
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


# ---- The Relax VM --------------------------------------------------------------------------------

_NULL, _INT, _FLOAT, _DTYPE, _STRING, _SHAPE, _TENSOR, _TUPLE, _FUNCTION, _OBJECT = range(10)


class Shape(tuple):
    """A shape the VM takes or returns (TVM's ShapeTuple): a tuple of ints."""

    __slots__ = ()

    def __repr__(self):
        return f"Shape({list(self)})"


class Object:
    """A value of the VM that Python only holds and passes back: a KV cache, a storage, a
    function. `type_key` is TVM's ("relax.vm.AttentionKVCache", ...)."""

    __slots__ = ("_value", "type_key")

    def __init__(self, value, type_key):
        self._value = value
        self.type_key = type_key

    def __repr__(self):
        return f"<devrt.tvm.Object {self.type_key}>"


def _to_value(value):
    if isinstance(value, Object):
        return value._value
    if isinstance(value, bool):
        raise TypeError("a bool is no VM value: pass an int")
    if isinstance(value, int):
        return _ext.tvm_value_new(_INT, value)
    if isinstance(value, float):
        return _ext.tvm_value_new(_FLOAT, value)
    if isinstance(value, str):
        return _ext.tvm_value_new(_STRING, value)
    if isinstance(value, Shape):
        return _ext.tvm_value_new(_SHAPE, value)
    if isinstance(value, (tuple, list)):
        return _ext.tvm_value_new(_TUPLE, [_to_value(item) for item in value])
    if isinstance(value, Tensor):
        return _ext.tvm_value_new(_TENSOR, value)
    if hasattr(value, "__dlpack__"):
        return _ext.tvm_value_new(_TENSOR, from_dlpack(value))
    raise TypeError(f"a VM function takes tensors, Shapes, tuples, ints, floats, strs and the VM's objects, "
                    f"not {type(value).__name__}")


def _from_value(capsule):
    kind, payload, type_key = _ext.tvm_value_unpack(capsule)
    if kind == _SHAPE:
        return Shape(payload)
    if kind == _TUPLE:
        return tuple(_from_value(item) for item in payload)
    if kind in (_FUNCTION, _OBJECT):
        return Object(capsule, type_key)
    return payload  # None, int, float, the dtype's name, str, Tensor


class VirtualMachine:
    """The Relax VM of a library TVM built (devrt::tvm::VirtualMachine), as
    tvm.relax.VirtualMachine(lib, dev): vm["name"](*args) runs a VM function. Tensors go in as
    devrt tensors or DLPack producers on the library's device and come back as devrt.Tensor
    (DLPack to NumPy and PyTorch); shapes as devrt.tvm.Shape; tuples as tuples; a KV cache as a
    devrt.tvm.Object to pass back. One call at a time per VM."""

    __slots__ = ("_library", "_handle", "device")

    def __init__(self, library, device=None):
        if not isinstance(library, Library):
            raise TypeError(f"a VirtualMachine runs a devrt.tvm.Library, not {type(library).__name__}")
        if device is not None:
            device = device if isinstance(device, Device) else Device(device)
            if device != library.device:
                raise ValueError(f"the library is loaded on {library.device}, not {device}: load it for {device}")
        self._library = library
        self.device = library.device
        self._handle = _ext.tvm_vm_create(library._handle)

    @property
    def functions(self):
        """Its VM functions, in the executable's order."""
        return _ext.tvm_vm_functions(self._handle)

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"a VM function is named by a str, not {type(name).__name__}")
        if name not in self.functions:
            raise KeyError(f"the VM of {os.path.basename(self._library.path)} has no function '{name}'")
        return lambda *args: self.invoke(name, *args)

    def invoke(self, name, *args):
        """Runs VM function `name` on `args` and returns its result."""
        converted = tuple(_to_value(a) for a in args)
        return _from_value(_ext.tvm_vm_call(self._handle, name, converted))

    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                       cooldown_interval_ms=0, repeats_to_cooldown=1, cache_flush_bytes=0):
        """TVM's vm.time_evaluator: measures VM function `func_name` on `dev` (the library's device)
        with devrt.time_evaluator's rules; evaluator(*args) -> BenchmarkResult. A call is the whole
        function with its host work (shape heap, storage, KV-cache growth); before each call the KV
        caches among the arguments are put back to the length they had when the evaluator was
        called, so every call measures the same step (a decode step appends past it), and they end
        with that length. A remote device is refused (devrt.UnsupportedError): the server replays a
        captured batch there, which cannot replay the VM's host work."""
        from devrt._tensor import _stream_ref

        dev = dev if isinstance(dev, Device) else Device(dev)
        if dev != self.device:
            raise ValueError(f"time_evaluator: the library is loaded on {self.device}, not {dev}")
        if func_name not in self.functions:
            raise KeyError(f"the VM of {os.path.basename(self._library.path)} has no function '{func_name}'")
        handle = _ext.time_evaluator_create(dev, _stream_ref(dev, None), number, repeat, min_repeat_ms,
                                            limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown,
                                            cache_flush_bytes)
        return _VmTimeEvaluator(handle, self, func_name)

    def model_params(self, params):
        """The weights devrt.tvm.load_params loaded, as this model takes them (its
        `packed_params`): in the order its `_metadata` lists them, each checked against its dtype
        and shape."""
        if not isinstance(params, Params):
            raise TypeError(f"model_params takes what devrt.tvm.load_params returns, not {type(params).__name__}")
        return list(_from_value(_ext.tvm_vm_model_params(self._handle, params._value)))

    def __repr__(self):
        return f"<devrt.tvm.VirtualMachine of {os.path.basename(self._library.path)} on {self.device}>"


class _VmTimeEvaluator(_timing.TimeEvaluator):
    """What VirtualMachine.time_evaluator returns: evaluator(*args) -> BenchmarkResult of a VM
    function (TimeEvaluator's number and device_side as well)."""

    __slots__ = ("_vm", "_name")

    def __init__(self, handle, vm, name):
        super().__init__(handle, None, None, vm.device)
        self._vm = vm
        self._name = name

    def __call__(self, *args):
        converted = tuple(_to_value(a) for a in args)
        return _timing.BenchmarkResult(_ext.tvm_vm_time_function(self._vm._handle, self._handle, self._name, converted))


class Params:
    """A model's weights in MLC's format, loaded onto a device (devrt.tvm.load_params): a mapping
    of name to devrt.Tensor in the file's order; vm.model_params(params) orders them as the
    model's `packed_params`."""

    __slots__ = ("_value", "tensors")

    def __init__(self, value):
        self._value = value
        self.tensors = {name: tensor for name, tensor in _from_value(value)}

    def __getitem__(self, name):
        return self.tensors[name]

    def __len__(self):
        return len(self.tensors)

    def __iter__(self):
        return iter(self.tensors)


def load_params(directory, device):
    """MLC's weights: `directory`'s ndarray-cache.json and its params_shard_*.bin files (TVM's
    ndarray_cache_support format: "raw" and "f32-to-bf16" records), each a new tensor on `device`.
    Raises devrt.NotFoundError for a missing file and devrt.InvalidArgumentError naming the file and
    record for a short shard, a record past its shard's end, sizes that disagree with the shape."""
    device = device if isinstance(device, Device) else Device(device)
    return Params(_ext.tvm_load_params(os.fspath(directory), device))
