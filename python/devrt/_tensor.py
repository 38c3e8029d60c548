# SPDX-License-Identifier: Apache-2.0
"""Tensors and the DLPack Python protocol (__dlpack__ / __dlpack_device__ / from_dlpack).

A devrt.Tensor holds one reference to devrt's reference-counted storage (a devrt_tensor handle).
Exporting hands the consumer a DLManagedTensor (or DLManagedTensorVersioned) in a PyCapsule that
holds its own reference; importing gives devrt ownership of the producer's tensor, whose deleter
runs exactly once, when the last devrt reference is gone.
"""
import ctypes
import operator

from devrt import _capi
from devrt._capi import check, lib
from devrt._device import Device

# ---- DLPack's structs, for reading the deleter of a capsule nobody consumed --------------------


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _capi.CDevice), ("ndim", ctypes.c_int32),
                ("dtype", _capi.CDataType), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_FLAG_READ_ONLY = 1
_FLAG_IS_COPIED = 2
_UNVERSIONED = b"dltensor"
_VERSIONED = b"dltensor_versioned"
_USED = {_UNVERSIONED: b"used_dltensor", _VERSIONED: b"used_dltensor_versioned"}

_api = ctypes.pythonapi
_PyCapsule_New = _api.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_PyCapsule_IsValid = _api.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PyCapsule_IsValidObject = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_PyCapsule_GetPointerRaw = _api.PyCapsule_GetPointer
_PyCapsule_GetPointerRaw.restype = ctypes.c_void_p
_PyCapsule_GetPointerRaw.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(("PyCapsule_SetName", _api))
# The names must outlive every capsule (PyCapsule keeps the pointer, not a copy).
_NAME_BUFFERS = {name: ctypes.create_string_buffer(name) for name in (_UNVERSIONED, _VERSIONED, *_USED.values())}


def _run_deleter(struct_type, pointer):
    managed = struct_type.from_address(pointer)
    if managed.deleter:
        _Deleter(managed.deleter)(pointer)


# Capsule destructors: a capsule still carrying its original name was never consumed, so its
# tensor is still ours to delete. Raw pointers only: the capsule is being destroyed.
@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _destroy_unversioned(capsule):
    if _PyCapsule_IsValid(capsule, _UNVERSIONED):
        _run_deleter(_DLManagedTensor, _PyCapsule_GetPointerRaw(capsule, _UNVERSIONED))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _destroy_versioned(capsule):
    if _PyCapsule_IsValid(capsule, _VERSIONED):
        _run_deleter(_DLManagedTensorVersioned, _PyCapsule_GetPointerRaw(capsule, _VERSIONED))


_DESTRUCTORS = {_UNVERSIONED: ctypes.cast(_destroy_unversioned, ctypes.c_void_p).value,
                _VERSIONED: ctypes.cast(_destroy_versioned, ctypes.c_void_p).value}

# ---- Data types ----------------------------------------------------------------------------------


class DataType:
    """An element type: DLPack's (code, bits, lanes), written as TVM writes it: "float32", "int8",
    "bool", "float16x4", "handle", "bfloat16", "float8_e4m3fn" (every name TVM parses; see
    parse_data_type in <devrt/dtype.hpp>). Also takes a NumPy or PyTorch dtype. A name devrt does
    not know is a ValueError; a value that is not a name a TypeError. A plain value."""

    __slots__ = ("_c",)

    def __init__(self, spec):
        if isinstance(spec, DataType):
            self._c = spec._c
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
        parsed = _capi.CDataType()
        check(lib.devrt_dtype_parse(text.encode(), ctypes.byref(parsed)))
        self._c = parsed

    @classmethod
    def _from_c(cls, c):
        value = cls.__new__(cls)
        value._c = c
        return value

    code = property(lambda self: self._c.code, doc="DLPack type code (0 int, 1 uint, 2 float, 4 bfloat, 6 bool)")
    type_code = property(lambda self: self._c.code, doc="DLPack type code (tvm-ffi's name for code)")
    bits = property(lambda self: self._c.bits, doc="bits per lane")
    lanes = property(lambda self: self._c.lanes, doc="vector lanes (1 for scalars)")
    itemsize = property(lambda self: self._c.bits * self._c.lanes // 8, doc="bytes per element")

    def __str__(self):
        text = ctypes.create_string_buffer(64)
        check(lib.devrt_dtype_to_string(self._c, text, len(text)))
        return text.value.decode()

    def __repr__(self):
        return f"DataType('{self}')"

    def __eq__(self, other):
        if not isinstance(other, DataType):
            try:
                other = DataType(other)
            except (_capi.DevrtError, TypeError):
                return NotImplemented
        return (self.code, self.bits, self.lanes) == (other.code, other.bits, other.lanes)

    def __hash__(self):
        return hash((self.code, self.bits, self.lanes))


# ---- Streams -------------------------------------------------------------------------------------


class Stream:
    """A stream of work on a device (devrt_stream); destroyed with the object."""

    __slots__ = ("_handle", "device")

    def __init__(self, device):
        self.device = device if isinstance(device, Device) else Device(device)
        handle = ctypes.c_void_p()
        check(lib.devrt_stream_create(self.device._c, ctypes.byref(handle)))
        self._handle = handle

    @property
    def handle(self):
        """The backend's stream handle as an int (a CUstream on CUDA), as DLPack's stream argument."""
        return lib.devrt_stream_get_ref(self._handle).handle or 0

    def sync(self):
        """Waits for everything queued on the stream."""
        check(lib.devrt_stream_synchronize(lib.devrt_stream_get_ref(self._handle)))

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.devrt_stream_release(self._handle)
            self._handle = None


def _stream_ref(device, stream):
    """A devrt_stream_ref for a Stream, an int handle, or None (the current stream)."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        return ctypes.byref(lib.devrt_stream_get_ref(stream._handle))
    return ctypes.byref(_capi.CStreamRef(device._c, int(stream) or None))


# ---- Tensors -------------------------------------------------------------------------------------

_CUDA_LIKE = (2, 10)  # cuda, rocm: DLPack's stream argument applies
_HOST_ACCESSIBLE = (1, 3, 11, 13)  # cpu, cuda_host, rocm_host, cuda_managed


class Tensor:
    """An n-d array on a device (devrt::Tensor), exchanged with NumPy, PyTorch and others by DLPack.

    Create with devrt.empty() or devrt.from_dlpack(); shape, strides (in elements), dtype and device
    are read-only properties. Copies share storage. Thread-safe to read from several threads.
    """

    __slots__ = ("_handle", "__weakref__")

    def __init__(self, handle):
        """Wraps a devrt_tensor handle (ownership passes to the Tensor). Use empty() or from_dlpack()."""
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.devrt_tensor_release(self._handle)
            self._handle = None

    @property
    def ndim(self):
        return lib.devrt_tensor_ndim(self._handle)

    @property
    def shape(self):
        dims = lib.devrt_tensor_shape(self._handle)
        return tuple(dims[i] for i in range(self.ndim))

    @property
    def strides(self):
        """Strides in elements (DLPack's convention), always explicit."""
        steps = lib.devrt_tensor_strides(self._handle)
        return tuple(steps[i] for i in range(self.ndim))

    @property
    def dtype(self):
        return DataType._from_c(lib.devrt_tensor_dtype(self._handle))

    @property
    def device(self):
        c = lib.devrt_tensor_device(self._handle)
        return Device(c.kind, c.id)

    @property
    def nbytes(self):
        return lib.devrt_tensor_nbytes(self._handle)

    def numel(self):
        """The number of elements (the product of the shape)."""
        count = 1
        for extent in self.shape:
            count *= extent
        return count

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

    def data_ptr(self):
        """DLTensor::data as an int (a handle on backends whose memory is not addressable, such as
        OpenCL's cl_mem); elements start byte_offset bytes after it."""
        return lib.devrt_tensor_data(self._handle) or 0

    @property
    def byte_offset(self):
        return lib.devrt_tensor_byte_offset(self._handle)

    def is_contiguous(self):
        """True when the elements are compact in row-major order."""
        return bool(lib.devrt_tensor_is_contiguous(self._handle))

    @property
    def read_only(self):
        return bool(lib.devrt_tensor_read_only(self._handle))

    def __repr__(self):
        return f"devrt.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    def _create_view(self, shape, dtype=None, relative_byte_offset=0):
        """A compact view of this contiguous tensor's bytes with another shape and dtype (default:
        this one's), starting relative_byte_offset bytes after its first element (tvm-ffi's
        _create_view). OutOfRangeError past its end; UnsupportedError for a strided tensor."""
        dims = _shape_array(shape)
        if isinstance(relative_byte_offset, bool) or not isinstance(relative_byte_offset, int):
            raise TypeError("Tensor.view: relative_byte_offset must be an int")
        if not 0 <= relative_byte_offset < 2**64:
            raise OverflowError(f"Tensor.view: relative_byte_offset {relative_byte_offset} is out of range")
        c_dtype = lib.devrt_tensor_dtype(self._handle) if dtype is None else _c_dtype(dtype)
        out = ctypes.c_void_p()
        check(lib.devrt_tensor_create_view(self._handle, dims, len(dims._shape), c_dtype, relative_byte_offset,
                                           ctypes.byref(out)))
        return Tensor(out)

    def view(self, shape, dtype=None, relative_byte_offset=0):
        """The public name of _create_view: the same storage seen with another shape and dtype."""
        return self._create_view(shape, dtype, relative_byte_offset)

    def copyto(self, target, stream=None):
        """Copies the elements to `target`: a Device (returns a new tensor there) or a Tensor of
        the same shape and dtype (returns it)."""
        if isinstance(target, Tensor):
            check(lib.devrt_tensor_copy(target._handle, self._handle, _stream_ref(target.device, stream)))
            return target
        if isinstance(target, (Device, str)):
            return self.to(target, stream)
        raise TypeError(f"Tensor.copyto: expected a Device or a Tensor, not {type(target).__name__}")

    def to(self, device, stream=None):
        """A compact copy on `device`; host results are complete on return, others ordered on `stream`."""
        device = device if isinstance(device, Device) else Device(device)
        out = ctypes.c_void_p()
        check(lib.devrt_tensor_to(self._handle, device._c, _stream_ref(device, stream), ctypes.byref(out)))
        return Tensor(out)

    def copyfrom(self, source, stream=None):
        """Copies a Tensor, or anything NumPy can turn into an array, into this tensor."""
        if isinstance(source, Tensor):
            check(lib.devrt_tensor_copy(self._handle, source._handle, _stream_ref(self.device, stream)))
            return self
        import numpy

        array = numpy.ascontiguousarray(source, dtype=numpy.dtype(str(self.dtype)))
        if array.shape != self.shape:
            raise ValueError(f"copyfrom: source shape {array.shape} but tensor shape {self.shape}")
        check(lib.devrt_tensor_copy_from_host(self._handle, array.ctypes.data, array.nbytes))
        return self

    def numpy(self):
        """The elements as a new NumPy array (copied to the host first when they are not there)."""
        import numpy

        host = self if self.device.device_type in _HOST_ACCESSIBLE and self.is_contiguous() else self.to(Device(1, 0))
        return numpy.from_dlpack(host).copy()

    def __dlpack_device__(self):
        c = lib.devrt_tensor_device(self._handle)
        return (c.kind, c.id)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """Exports the tensor as a DLPack capsule (Python array API protocol).

        `stream`: the consumer's stream on CUDA/ROCm (None: the legacy default, -1: no
        synchronization); the export makes it wait for work queued on devrt's current stream.
        A versioned capsule ("dltensor_versioned") when max_version >= (1, 0), else "dltensor".
        `dl_device`: another device asks for a copy there (refused when copy is False). `copy`:
        True always copies, False never does.
        """
        source = self
        copied = False
        own_device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != own_device:
            if copy is False:
                raise BufferError(f"__dlpack__: the tensor is on {self.device}, dl_device {tuple(dl_device)} "
                                  "needs a copy and copy=False")
            source, copied = self.to(Device(*dl_device)), True
        elif copy:
            source, copied = self.to(self.device), True
        source._order_for_consumer(stream)
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        out = ctypes.c_void_p()
        if versioned:
            check(lib.devrt_tensor_to_dlpack_versioned(source._handle, ctypes.byref(out)))
            if copied:
                _DLManagedTensorVersioned.from_address(out.value).flags |= _FLAG_IS_COPIED
            name = _VERSIONED
        else:
            if source.read_only:
                raise BufferError("__dlpack__: a read-only tensor can only be exported as a versioned capsule "
                                  "(the consumer must pass max_version >= (1, 0))")
            check(lib.devrt_tensor_to_dlpack(source._handle, ctypes.byref(out)))
            name = _UNVERSIONED
        return _PyCapsule_New(out.value, ctypes.addressof(_NAME_BUFFERS[name]), _DESTRUCTORS[name])

    def _order_for_consumer(self, stream):
        kind, index = self.__dlpack_device__()
        if kind not in _CUDA_LIKE:
            if stream not in (None, -1):
                raise BufferError(f"__dlpack__: stream={stream!r} given for a {self.device} tensor (must be None)")
            return
        if stream == -1:
            return
        device = Device(kind, index)
        handle = None if stream in (None, 0, 1) else int(stream)
        event = ctypes.c_void_p()
        check(lib.devrt_event_create(device._c, ctypes.byref(event)))
        try:
            check(lib.devrt_event_record(event, None))
            consumer = _capi.CStreamRef(device._c, handle)
            check(lib.devrt_event_wait(event, ctypes.byref(consumer)))
        finally:
            lib.devrt_event_release(event)


_PARSED_TYPES = {}  # "float32" -> its devrt_dtype, parsed once
_CPU = Device(1, 0)


def _c_dtype(dtype):
    c = _PARSED_TYPES.get(dtype) if isinstance(dtype, str) else None
    if c is None:
        c = DataType(dtype)._c
        if isinstance(dtype, str):
            _PARSED_TYPES[dtype] = c
    return c


def _shape_array(shape):
    """A C int64 array of a shape (an int or a sequence of ints): TypeError for anything else,
    OverflowError past int64, ValueError for a negative extent. The tuple is array._shape."""
    if isinstance(shape, bool):
        raise TypeError("a shape is an int or a sequence of ints, not a bool")
    if hasattr(shape, "__index__"):
        shape = (shape,)
    try:
        extents = tuple(shape)
    except TypeError:
        raise TypeError(f"a shape is an int or a sequence of ints, not {type(shape).__name__}") from None
    checked = []
    for extent in extents:
        if isinstance(extent, bool) or not hasattr(extent, "__index__"):
            raise TypeError(f"a shape's extents are ints, not {type(extent).__name__} ({extent!r})")
        extent = operator.index(extent)
        if extent < 0:
            raise ValueError(f"a shape's extents are >= 0, not {extent}")
        if extent >= 2**63:
            raise OverflowError(f"the extent {extent} does not fit in 64 bits")
        checked.append(extent)
    array = (ctypes.c_int64 * max(len(checked), 1))(*checked)
    array._shape = tuple(checked)
    return array


def _as_device(device):
    return _CPU if device is None else device if isinstance(device, Device) else Device(device)


def empty(shape, dtype="float32", device=None):
    """A new compact tensor with uninitialised elements (device default: cpu(0))."""
    device = _as_device(device)
    dims = _shape_array(shape)
    out = ctypes.c_void_p()
    check(lib.devrt_tensor_empty(dims, len(dims._shape), _c_dtype(dtype), device._c, ctypes.byref(out)))
    return Tensor(out)


def tensor(data, device=None, dtype=None):
    """A new tensor on `device` (default cpu(0)) holding a copy of `data`: a NumPy array, anything
    NumPy turns into one (lists, scalars), a devrt.Tensor or a DLPack producer such as a torch
    tensor (TVM's tvm.runtime.tensor). `dtype` converts NumPy data first."""
    device = _as_device(device)
    if isinstance(data, Tensor) or (hasattr(data, "__dlpack__") and not _is_numpy(data)):
        source = data if isinstance(data, Tensor) else from_dlpack(data)
        if dtype is not None and DataType(dtype) != source.dtype:
            raise ValueError(f"devrt.tensor: the data is {source.dtype}; converting it to {DataType(dtype)} is "
                             "NumPy's job (pass a NumPy array)")
        return source.to(device)
    import numpy

    array = numpy.ascontiguousarray(data, dtype=None if dtype is None else numpy.dtype(str(DataType(dtype))))
    return empty(array.shape, str(array.dtype), device).copyfrom(array)


def _is_numpy(data):
    return type(data).__module__ == "numpy"


def _consumer_stream(kind, index):
    """What devrt passes as __dlpack__'s stream for a producer on (kind, index)."""
    if kind not in _CUDA_LIKE:
        return None
    handle = lib.devrt_current_stream(_capi.CDevice(kind, index)).handle
    if handle:
        return handle
    return 1 if kind == 2 else 0  # CUDA's legacy default stream is 1 in the protocol; ROCm's default is 0


_LEGACY_PRODUCERS = set()  # producer types whose __dlpack__ takes no max_version


def _capsule_from(source):
    """Asks a producer for a capsule, newest protocol first."""
    if not hasattr(source, "__dlpack__"):
        return source  # a capsule already (or a type error below)
    kind, index = source.__dlpack_device__()
    stream = _consumer_stream(kind, index)
    producer = type(source)
    if producer not in _LEGACY_PRODUCERS:
        try:
            return source.__dlpack__(stream=stream, max_version=(1, 0))
        except TypeError:  # older than DLPack 1.0's protocol (NumPy < 2.1, PyTorch < 2.3): remembered
            _LEGACY_PRODUCERS.add(producer)
    return source.__dlpack__(stream=stream) if stream is not None else source.__dlpack__()


def from_dlpack(source):
    """A devrt.Tensor sharing the memory of a DLPack producer (a NumPy array, a torch tensor, a capsule).

    devrt takes the producer's DLManagedTensor: its deleter runs once, when the last devrt
    reference is gone. The capsule is marked used, as the protocol asks.
    """
    if isinstance(source, Tensor):
        out = ctypes.c_void_p()
        check(lib.devrt_tensor_share(source._handle, ctypes.byref(out)))
        return Tensor(out)
    capsule = _capsule_from(source)
    for name, importer in ((_VERSIONED, lib.devrt_tensor_from_dlpack_versioned),
                           (_UNVERSIONED, lib.devrt_tensor_from_dlpack)):
        if not _PyCapsule_IsValidObject(capsule, name):  # 0, not an error, for anything else
            continue
        pointer = _PyCapsule_GetPointer(capsule, name)
        # Ownership moves to devrt before the call: from here only devrt may call the deleter
        # (it does so itself when it refuses the tensor).
        if _PyCapsule_SetName(capsule, ctypes.addressof(_NAME_BUFFERS[_USED[name]])) != 0:
            raise BufferError("from_dlpack: cannot mark the capsule used")
        out = ctypes.c_void_p()
        check(importer(pointer, 0, ctypes.byref(out)))
        return Tensor(out)
    raise TypeError(f"from_dlpack: {type(source).__name__} is neither a DLPack producer nor an unused "
                    "'dltensor'/'dltensor_versioned' capsule")
