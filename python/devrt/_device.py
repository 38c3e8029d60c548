# SPDX-License-Identifier: Apache-2.0
"""Devices and their attributes (TVM's tvm.device / tvm_ffi.Device: tvm.device, tvm.cuda(0), ...).

The value type and every attribute getter are compiled (devrt._ext.Device); this adds the methods
that are not hot.
"""
import json

from devrt import _ext

# Attribute name -> (number, type: 0 bool, 1 int, 2 string, 3 dim3), from the C API itself.
ATTRIBUTES = _ext.attributes()


class Device(_ext.Device):
    """One device: a DLPack device type ("cuda", 2) and an index (TVM's and tvm-ffi's Device).

    Device("cuda", 1), Device("cuda:1"), Device(2, 1) are the same device; str() is "cuda:1" and
    repr() "device(type='cuda', index=1)". TVM's aliases are accepted (llvm, c, test: cpu; nvptx:
    cuda; cl: opencl). An index that is not an int is a TypeError; an unknown or malformed name a
    ValueError listing the accepted names; a number past 32 bits an OverflowError.

    Every devrt attribute is a property (`max_threads_per_block`, `compute_version`, ...); one the
    device does not report reads as None, and reading one on a device that does not exist raises
    (except `exist`, which is False). A plain value: hashable, comparable, picklable, thread-safe.
    """

    __slots__ = ()

    def sync(self):
        """Waits for all work queued on the device. Backends that cannot wait for all of a device's
        streams at once (OpenCL, Vulkan) wait for this thread's current stream of the device."""
        _ext.device_synchronize(self)

    def attribute(self, name):
        """Reads one attribute by name (as the properties do)."""
        if name not in ATTRIBUTES:
            raise AttributeError(f"devrt.Device has no attribute {name!r}; the attributes are {', '.join(ATTRIBUTES)}")
        return getattr(self, name)

    def attributes(self):
        """Every attribute as a dict (None for those the device does not report)."""
        return {name: getattr(self, name) for name in ATTRIBUTES}

    def target(self):
        """The device as a compiler target: TVM's target dict ({"kind": "cuda", "arch": ...})."""
        return json.loads(_ext.detect_target(self))


def device(device_type, index=None):
    """A Device from "cuda:0", ("cuda", 0), "cuda" (index 0) or (2, 0) (TVM's tvm.device).

    TypeError for an index that is not an int; ValueError, listing the device types, for a name
    devrt does not know or a malformed one; OverflowError past 32 bits."""
    return Device(device_type, index)


_KIND_BY_NAME = _ext.device_names()


def _kind_constructor(name):
    kind = _KIND_BY_NAME[name]

    def make(index=0):
        return Device(kind, index)
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
webgpu = _kind_constructor("webgpu")
ext_dev = _kind_constructor("ext_dev")


def device_count(kind):
    """How many devices of a kind ("cuda" or a DLPack number) are present; 0 without a backend."""
    return _ext.device_count(Device(kind, 0).dlpack_device_type())


def devices():
    """Every present device of every available backend, in registration order (the CPU first), as
    devrt::devices() gives them."""
    found = []
    for name, kind in _ext.backends():
        if _ext.backend_availability(name) is None:
            found += [Device(kind, index) for index in range(_ext.device_count(kind))]
    return found
