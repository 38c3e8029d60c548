# SPDX-License-Identifier: Apache-2.0
"""Devices and their attributes (TVM's Device: tvm.device, tvm.cuda(0), ...)."""
import ctypes
import json

from devrt import _capi
from devrt._capi import check, lib

# Attribute name -> (number, type: 0 bool, 1 int, 2 string, 3 dim3), from the C API itself.
ATTRIBUTES = {}
for _number in range(64):
    _name = lib.devrt_attribute_name(_number).decode()
    if not _name:
        break
    ATTRIBUTES[_name] = (_number, lib.devrt_attribute_type(_number))

_attribute_int = lib.devrt_device_attribute_int
_attribute_string = lib.devrt_device_attribute_string
_attribute_dim3 = lib.devrt_device_attribute_dim3
_NOT_REPORTED = -1
_UNSUPPORTED = 4


def _read_int(device, number, _int64=ctypes.c_int64, _byref=ctypes.byref):
    value = _int64()
    status = _attribute_int(device._c, number, _byref(value))
    if status == 0:
        return value.value
    if status == _NOT_REPORTED:
        return None
    raise _capi.last_error(status)


def _read_string(device, number):
    size = ctypes.c_size_t()
    text = ctypes.create_string_buffer(256)
    status = _attribute_string(device._c, number, text, len(text), ctypes.byref(size))
    if status == _NOT_REPORTED:
        return None
    check(status)
    if size.value >= len(text):
        text = ctypes.create_string_buffer(size.value + 1)
        check(_attribute_string(device._c, number, text, len(text), None))
    return text.value.decode("utf-8", "replace")


def _read_dim3(device, number):
    xyz = (ctypes.c_int64 * 3)()
    status = _attribute_dim3(device._c, number, xyz)
    if status == _NOT_REPORTED:
        return None
    check(status)
    return (xyz[0], xyz[1], xyz[2])


_READERS = {0: lambda d, n: bool(_read_int(d, n)), 1: _read_int, 2: _read_string, 3: _read_dim3}


class Device:
    """One device: a kind ("cuda", DLPack number 2) and an index.

    Every devrt attribute is a property (`max_threads_per_block`, `compute_version`, ...); one the
    device does not report reads as None, and reading one on a device that does not exist raises
    (except `exist`, which is False). A plain value: hashable, comparable, thread-safe.
    """

    __slots__ = ("_c",)

    def __init__(self, kind, index=0):
        if isinstance(kind, str):
            parsed = _capi.CDevice()
            text = kind if ":" in kind else f"{kind}:{int(index)}"
            check(lib.devrt_device_parse(text.encode(), ctypes.byref(parsed)))
            self._c = parsed
        else:
            self._c = _capi.CDevice(int(kind), int(index))

    @property
    def device_type(self):
        """The DLPack device type number (1 cpu, 2 cuda, 4 opencl, 7 vulkan, 10 rocm, ...)."""
        return self._c.kind

    @property
    def device_id(self):
        """The index among devices of this kind."""
        return self._c.id

    @property
    def kind_name(self):
        """"cuda", "cpu", ...; "" for a kind devrt does not name."""
        return lib.devrt_device_kind_name(self._c.kind).decode()

    @property
    def exist(self):
        """True when the device is present and its backend usable."""
        return bool(lib.devrt_device_exists(self._c))

    def sync(self):
        """Waits for all work queued on the device. Backends that cannot wait for all of a device's
        streams at once (OpenCL, Vulkan) wait for this thread's current stream of the device."""
        status = lib.devrt_device_synchronize(self._c)
        if status == _UNSUPPORTED:
            status = lib.devrt_stream_synchronize(lib.devrt_current_stream(self._c))
        check(status)

    def attribute(self, name):
        """Reads one attribute by name (as the properties do)."""
        number, kind = ATTRIBUTES[name]
        return _READERS[kind](self, number)

    def attributes(self):
        """Every attribute as a dict (None for those the device does not report)."""
        return {name: self.attribute(name) for name in ATTRIBUTES}

    def target(self):
        """The device as a compiler target: TVM's target dict ({"kind": "cuda", "arch": ...})."""
        return json.loads(_capi.call_string(lib.devrt_detect_target, self._c))

    def __dlpack_device__(self):
        return (self._c.kind, self._c.id)

    def __repr__(self):
        name = self.kind_name or f"kind{self._c.kind}"
        return f"{name}:{self._c.id}"

    def __eq__(self, other):
        return isinstance(other, Device) and (self._c.kind, self._c.id) == (other._c.kind, other._c.id)

    def __hash__(self):
        return hash((self._c.kind, self._c.id))

    def __reduce__(self):
        return (Device, (self._c.kind, self._c.id))


def _make_property(name, number, kind):
    if kind == 1:
        def read(self):
            return _read_int(self, number)
    else:
        reader = _READERS[kind]

        def read(self):
            return reader(self, number)
    read.__name__ = name
    read.__doc__ = f"The device's {name} attribute (None when the device does not report it)."
    return property(read)


for _name, (_number, _kind) in ATTRIBUTES.items():
    if _name != "exist":
        setattr(Device, _name, _make_property(_name, _number, _kind))


def device(kind, index=0):
    """A Device from "cuda:0", ("cuda", 0) or (2, 0)."""
    return Device(kind, index)


def _kind_constructor(name):
    def make(index=0):
        return Device(name, index)
    make.__name__ = name
    make.__doc__ = f"The {name} device with this index: devrt.{name}(0)."
    return make


cpu = _kind_constructor("cpu")
cuda = _kind_constructor("cuda")
cuda_host = _kind_constructor("cuda_host")
opencl = _kind_constructor("opencl")
vulkan = _kind_constructor("vulkan")
metal = _kind_constructor("metal")
rocm = _kind_constructor("rocm")
hexagon = _kind_constructor("hexagon")
ext_dev = _kind_constructor("ext_dev")


def device_count(kind):
    """How many devices of a kind ("cuda" or a DLPack number) are present; 0 without a backend."""
    number = Device(kind, 0).device_type if isinstance(kind, str) else int(kind)
    return lib.devrt_device_count(number)
