# SPDX-License-Identifier: Apache-2.0
"""Tensors, element types, streams and the DLPack Python protocol.

A devrt.Tensor holds one reference to devrt's reference-counted storage. The tensor itself, its
fields, __dlpack__ / __dlpack_device__, from_dlpack, empty and the copies are compiled
(devrt._ext); this module adds what is not hot. Exporting hands the consumer a DLManagedTensor
(or DLManagedTensorVersioned) in a capsule that holds its own reference; importing gives devrt
ownership of the producer's tensor, whose deleter runs exactly once.
"""

from devrt import _ext
from devrt._device import Device

# ---- Data types ----------------------------------------------------------------------------------


class DataType:
    """An element type: DLPack's (code, bits, lanes), written as TVM writes it: "float32", "int8",
    "bool", "float16x4", "handle", "bfloat16", "float8_e4m3fn" (every name TVM parses; see
    parse_data_type in <devrt/dtype.hpp>). Also takes a NumPy or PyTorch dtype. A name devrt does
    not know is a ValueError; a value that is not a name a TypeError. A plain value."""

    __slots__ = ("code", "bits", "lanes")

    def __init__(self, spec):
        if isinstance(spec, DataType):
            self.code, self.bits, self.lanes = spec.code, spec.bits, spec.lanes
            return
        if isinstance(spec, str):
            text = spec
        elif type(spec).__module__ in ("torch", "numpy"):  # torch.float32, numpy.dtype("float32")
            text = str(spec)
        elif isinstance(spec, type) and spec.__module__ == "numpy":  # numpy.float32
            import numpy

            text = str(numpy.dtype(spec))
        else:
            raise TypeError(f"DataType: expected a dtype name such as 'float32', not {type(spec).__name__}")
        if text.startswith("torch."):
            text = text[len("torch."):]
        self.code, self.bits, self.lanes = _ext.parse_dtype(text)

    @classmethod
    def _from_code(cls, code, bits, lanes):
        value = cls.__new__(cls)
        value.code, value.bits, value.lanes = code, bits, lanes
        return value

    type_code = property(lambda self: self.code, doc="DLPack type code (tvm-ffi's name for code)")
    itemsize = property(lambda self: (self.bits * self.lanes + 7) // 8, doc="bytes per element")

    def __str__(self):
        return _ext.dtype_to_string(self.code, self.bits, self.lanes)

    def __repr__(self):
        return f"DataType('{self}')"

    def __eq__(self, other):
        if not isinstance(other, DataType):
            try:
                other = DataType(other)
            except (ValueError, TypeError):
                return NotImplemented
        return (self.code, self.bits, self.lanes) == (other.code, other.bits, other.lanes)

    def __hash__(self):
        return hash((self.code, self.bits, self.lanes))


_DTYPE_NAMES = {}  # what the caller wrote -> devrt's name, resolved once


def _dtype_name(dtype):
    name = _DTYPE_NAMES.get(dtype) if isinstance(dtype, str) else None
    if name is None:
        name = str(DataType(dtype))
        if isinstance(dtype, str):
            _DTYPE_NAMES[dtype] = name
    return name


# ---- Streams -------------------------------------------------------------------------------------


class Stream:
    """A stream of work on a device (devrt_stream); destroyed with the object."""

    __slots__ = ("_handle", "device")

    def __init__(self, device):
        self.device = device if isinstance(device, Device) else Device(device)
        self._handle = _ext.stream_create(self.device)  # a capsule: the stream goes with it

    @property
    def handle(self):
        """The backend's stream handle as an int (a CUstream on CUDA), as DLPack's stream argument."""
        return _ext.stream_native_handle(self._handle)

    @property
    def _ref(self):
        return (self.device.dlpack_device_type(), self.device.index, self.handle or None)

    def sync(self):
        """Waits for everything queued on the stream."""
        _ext.stream_synchronize(self._handle)


def _stream_ref(device, stream):
    """The extension's stream argument for a Stream, a raw int handle, or None (current stream)."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        return stream._ref
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"a stream is a devrt.Stream, a raw int handle or None, not {type(stream).__name__}")
    return (device.dlpack_device_type(), device.index, stream or None)


# ---- Tensors -------------------------------------------------------------------------------------

_HOST_ACCESSIBLE = (1, 3, 11, 13)  # cpu, cuda_host, rocm_host, cuda_managed


class Tensor(_ext.Tensor):
    """An n-d array on a device (devrt::Tensor), exchanged with NumPy, PyTorch and others by DLPack.

    Create with devrt.empty(), devrt.tensor() or devrt.from_dlpack(); shape, strides (in elements),
    dtype and device are read-only properties, numel(), size(), data_ptr() and is_contiguous()
    methods (torch's and tvm-ffi's names). Views share storage. Thread-safe to read.
    """

    __slots__ = ("__weakref__",)

    @property
    def dtype(self):
        return DataType._from_code(*self._dtype_code)

    def size(self, dim=None):
        """The shape (dim None), or the extent of dimension `dim` (negative counts from the end),
        as torch's Tensor.size."""
        shape = self.shape
        if dim is None:
            return shape
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"Tensor.size: dim must be an int, not {type(dim).__name__}")
        if not -len(shape) <= dim < len(shape):
            raise IndexError(f"Tensor.size: dimension {dim} of a {len(shape)}-d tensor")
        return shape[dim]

    def __repr__(self):
        return f"devrt.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    def _create_view(self, shape, dtype=None, relative_byte_offset=0):
        """A compact view of this contiguous tensor's bytes with another shape and dtype (default:
        this one's), starting relative_byte_offset bytes after its first element (tvm-ffi's
        _create_view). OutOfRangeError past its end; UnsupportedError for a strided tensor."""
        return _ext.create_view(self, shape, None if dtype is None else _dtype_name(dtype), relative_byte_offset)

    def as_texture(self, shape, dtype="float32", scope="global.texture", texture_layout=None):
        """A texture of `shape` over this compact global tensor's memory, sharing its bytes (TVM's
        images over pooled buffers): its rows and layers lie in that memory texture_pitch apart.
        UnsupportedError naming why where the device makes none (an OpenCL device without
        cl_khr_image2d_from_buffer); ValueError for a tensor or shape it cannot go over."""
        if not isinstance(scope, str):
            raise TypeError(f"as_texture: scope must be a str, not {type(scope).__name__}")
        return _ext.as_texture(self, shape, _dtype_name(dtype), scope, texture_layout)

    def view(self, shape, dtype=None, relative_byte_offset=0):
        """The public name of _create_view: the same storage seen with another shape and dtype."""
        return self._create_view(shape, dtype, relative_byte_offset)

    def to(self, device, stream=None):
        """A compact copy on `device`; host results are complete on return, others ordered on `stream`."""
        device = device if isinstance(device, Device) else Device(device)
        return _ext.to(self, device, _stream_ref(device, stream))

    def copyto(self, target, stream=None):
        """Copies the elements to `target`: a Device (returns a new tensor there) or a Tensor of
        the same shape and dtype (returns it)."""
        if isinstance(target, Tensor):
            _ext.copy(target, self, _stream_ref(target.device, stream))
            return target
        if isinstance(target, (Device, str)):
            return self.to(target, stream)
        raise TypeError(f"Tensor.copyto: expected a Device or a Tensor, not {type(target).__name__}")

    def copyfrom(self, source, stream=None):
        """Copies a Tensor, or anything NumPy can turn into an array, into this tensor."""
        if isinstance(source, Tensor):
            _ext.copy(self, source, _stream_ref(self.device, stream))
            return self
        import numpy

        array = numpy.ascontiguousarray(source, dtype=numpy.dtype(str(self.dtype)))
        if array.shape != self.shape:
            raise ValueError(f"copyfrom: source shape {array.shape} but tensor shape {self.shape}")
        _ext.copy_from_host(self, array)
        return self

    def numpy(self):
        """The elements as a new NumPy array (copied to the host first when they are not there)."""
        import numpy

        host_ready = self.device.dlpack_device_type() in _HOST_ACCESSIBLE and self.is_contiguous()
        host = self if host_ready else self.to(Device(1, 0))
        if self.dtype == "bool":
            # NumPy before 1.25 takes no bool tensor through DLPack: the same bytes as uint8 (DLPack's
            # bool is one byte, 0 or 1), then viewed as bool, as TVM copies into numpy.empty.
            return numpy.from_dlpack(host.view(host.shape, "uint8")).view(numpy.bool_).copy()
        return numpy.from_dlpack(host).copy()


_CPU = Device(1, 0)


def _as_device(device):
    return _CPU if device is None else device if isinstance(device, Device) else Device(device)


def empty(shape, dtype="float32", device=None, scope="global", texture_layout=None):
    """A new compact tensor with uninitialised elements (device default: cpu(0)) in memory scope
    `scope`, TVM's name: "global", "global.texture", "global.texture-nhwc", "global.texture-weight"
    or "global.vtcm". An unknown name is ValueError; a scope the device lacks is an error naming
    both. A texture-scoped tensor is copied whole (copyfrom/copyto/to) and has no DLPack export.
    `texture_layout` names a texture's images: "image_array" (None: the default; TVM >= 0.23's
    image2d_array_t, the last axis a pack of texels) or "image2d" (TVM <= 0.22's image2d_t, the last
    axis 4 channels); with a scope that is no texture it is ValueError."""
    if not isinstance(scope, str):
        raise TypeError(f"devrt.empty: scope must be a str, not {type(scope).__name__}")
    if texture_layout is not None and not isinstance(texture_layout, str):
        raise TypeError(f"devrt.empty: texture_layout must be a str, not {type(texture_layout).__name__}")
    return _ext.empty(shape, _dtype_name(dtype), _as_device(device), scope, texture_layout)


def tensor(data, device=None, dtype=None):
    """A new tensor on `device` (default cpu(0)) holding a copy of `data`: a NumPy array, anything
    NumPy turns into one (lists, scalars), a devrt.Tensor or a DLPack producer such as a torch
    tensor (TVM's tvm.runtime.tensor). `dtype` converts NumPy data first."""
    device = _as_device(device)
    if isinstance(data, Tensor) or (hasattr(data, "__dlpack__") and type(data).__module__ != "numpy"):
        source = data if isinstance(data, Tensor) else from_dlpack(data)
        if dtype is not None and DataType(dtype) != source.dtype:
            raise ValueError(f"devrt.tensor: the data is {source.dtype}; converting it to {DataType(dtype)} is "
                             "NumPy's job (pass a NumPy array)")
        return source.to(device)
    import numpy

    # asarray, not ascontiguousarray: that one makes a 0-d array (a scalar) 1-d.
    array = numpy.asarray(data, dtype=None if dtype is None else numpy.dtype(str(DataType(dtype))), order="C")
    result = empty(array.shape, str(array.dtype), device)
    _ext.copy_from_host(result, array)
    return result


#: A Tensor sharing the memory of a DLPack producer (a NumPy array, a torch tensor, a capsule, a
#: devrt.Tensor): devrt takes the producer's tensor, whose deleter runs once, when the last devrt
#: reference is gone. The capsule is marked used, as the protocol asks.
from_dlpack = _ext.from_dlpack
