# SPDX-License-Identifier: Apache-2.0
"""Devices and their attributes (TVM's Device: tvm.device, tvm.cuda(0), ...)."""
import ctypes
import json
import operator

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


# Device kind names: devrt's own (the C API's), and the aliases TVM's device() also takes.
_NAME_BY_KIND = {}
for _kind in range(1, 64):
    _kind_name = lib.devrt_device_kind_name(_kind)
    if _kind_name:
        _NAME_BY_KIND[_kind] = _kind_name.decode()
_TVM_ALIASES = {"llvm": "cpu", "c": "cpu", "test": "cpu", "nvptx": "cuda", "cl": "opencl"}
_KIND_BY_NAME = {name: kind for kind, name in _NAME_BY_KIND.items()}
_KIND_BY_NAME.update({alias: _KIND_BY_NAME[name] for alias, name in _TVM_ALIASES.items()})
_INT32_MAX = 2**31 - 1


def _accepted_names():
    return ", ".join(sorted(_NAME_BY_KIND.values())) + " (and TVM's aliases " + ", ".join(
        f"{alias} = {name}" for alias, name in _TVM_ALIASES.items()) + ")"


def _check_int32(value, what, minimum):
    """`value` as an int in [minimum, 2**31 - 1]: TypeError for a non-integer (a float, a str,
    a bool), OverflowError past int32, ValueError below the minimum."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"devrt.device: the {what} must be an int, not {type(value).__name__} ({value!r})")
    value = operator.index(value)
    if value > _INT32_MAX or value < -_INT32_MAX - 1:
        raise OverflowError(f"devrt.device: the {what} {value} does not fit in 32 bits")
    if value < minimum:
        raise ValueError(f"devrt.device: the {what} must be >= {minimum}, not {value}")
    return value


def _parse_name(text):
    """(kind, index or None) from "cuda", "cuda:1", "llvm" or "cuda:0 -some-annotation"."""
    original = text
    # TVM's device() ignores annotations after the name ("cuda -arch=sm_80"); nothing else may follow.
    if " " in text:
        text, annotation = text.split(" ", 1)
        if not annotation.lstrip(" ").startswith("-"):
            text = original  # refused below
    name, colon, index_text = text.partition(":")
    if name not in _KIND_BY_NAME:
        raise ValueError(f"devrt.device: unknown device {original!r}; the device types are {_accepted_names()}, "
                         "written <type> or <type>:<index>")
    if not colon:
        return _KIND_BY_NAME[name], None
    canonical = index_text.isascii() and index_text.isdigit() and (index_text == "0" or index_text[0] != "0")
    if not canonical:
        raise ValueError(f"devrt.device: malformed device index in {original!r}: expected <type>:<index> with a "
                         "decimal index such as cuda:1")
    return _KIND_BY_NAME[name], _check_int32(int(index_text), "index", 0)


class Device:
    """One device: a kind ("cuda", DLPack number 2) and an index (TVM's and tvm-ffi's Device).

    Device("cuda", 1), Device("cuda:1"), Device(2, 1) are the same device; str() is "cuda:1".
    Every devrt attribute is a property (`max_threads_per_block`, `compute_version`, ...); one the
    device does not report reads as None, and reading one on a device that does not exist raises
    (except `exist`, which is False). A plain value: hashable, comparable, picklable, thread-safe.
    """

    __slots__ = ("_c",)

    def __init__(self, device_type, index=None):
        if isinstance(device_type, Device):
            kind, parsed_index = device_type._c.kind, device_type._c.id
        elif isinstance(device_type, str):
            kind, parsed_index = _parse_name(device_type)
        else:
            kind, parsed_index = _check_int32(device_type, "device type", 1), None
        if parsed_index is None:
            parsed_index = 0 if index is None else _check_int32(index, "index", 0)
        self._c = _capi.CDevice(kind, parsed_index)

    @property
    def type(self):
        """The device type's name: "cuda", "cpu", ... ("kind<N>" for a number devrt does not name)."""
        return _NAME_BY_KIND.get(self._c.kind, f"kind<{self._c.kind}>")

    @property
    def index(self):
        """The index among devices of this type."""
        return self._c.id

    def dlpack_device_type(self):
        """The DLPack device type number (1 cpu, 2 cuda, 4 opencl, 7 vulkan, 10 rocm, ...)."""
        return self._c.kind

    @property
    def device_type(self):
        """The DLPack device type number (TVM's older name; dlpack_device_type() is tvm-ffi's)."""
        return self._c.kind

    @property
    def device_id(self):
        """The index among devices of this kind (TVM's older name for index)."""
        return self._c.id

    @property
    def kind_name(self):
        """"cuda", "cpu", ...; "" for a kind devrt does not name."""
        return _NAME_BY_KIND.get(self._c.kind, "")

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

    def __str__(self):
        return f"{self.type}:{self._c.id}"

    def __repr__(self):
        return f"device(type='{self.type}', index={self._c.id})"

    def __eq__(self, other):
        return isinstance(other, Device) and (self._c.kind, self._c.id) == (other._c.kind, other._c.id)

    def __ne__(self, other):
        return not self.__eq__(other)

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


def device(device_type, index=None):
    """A Device from "cuda:0", ("cuda", 0), "cuda" (index 0) or (2, 0) (TVM's tvm.device).

    TypeError for an index that is not an int; ValueError, listing the device types, for a name
    devrt does not know or a malformed one; OverflowError past 32 bits."""
    return Device(device_type, index)


def _kind_constructor(name):
    def make(index=0):
        return Device(_KIND_BY_NAME[name], index)
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
    return lib.devrt_device_count(Device(kind, 0).dlpack_device_type())
