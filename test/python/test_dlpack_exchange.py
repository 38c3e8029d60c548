# SPDX-License-Identifier: Apache-2.0
"""DLPack 1.2's C exchange table: devrt's own (type(t).__dlpack_c_exchange_api__), read and called
through ctypes as tvm-ffi or PyTorch >= 2.11 would, and devrt consuming another type's table."""
import ctypes

import numpy as np
import pytest

import devrt


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class ManagedVersioned(ctypes.Structure):
    pass


Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(ManagedVersioned))
ManagedVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", Deleter), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]
ManagedPtr = ctypes.POINTER(ManagedVersioned)
SetError = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
Allocator = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.POINTER(ManagedPtr), ctypes.c_void_p,
                             SetError)
FromPyObject = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ManagedPtr))
ToPyObject = ctypes.CFUNCTYPE(ctypes.c_int, ManagedPtr, ctypes.POINTER(ctypes.c_void_p))
DLTensorFromPyObject = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))
CurrentStream = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class ExchangeAPI(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p),
                ("managed_tensor_allocator", Allocator), ("managed_tensor_from_py_object_no_sync", FromPyObject),
                ("managed_tensor_to_py_object_no_sync", ToPyObject),
                ("dltensor_from_py_object_no_sync", DLTensorFromPyObject), ("current_work_stream", CurrentStream)]


_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.Py_DecRef.argtypes = [ctypes.c_void_p]


def with_gil(function, prototype):
    """A table entry called with the GIL held, as a C consumer calls it (ctypes' CFUNCTYPE calls
    release the GIL, and these functions use the Python API)."""
    return ctypes.PYFUNCTYPE(prototype._restype_, *prototype._argtypes_)(ctypes.cast(function, ctypes.c_void_p).value)


def devrt_table():
    capsule = devrt.Tensor.__dlpack_c_exchange_api__
    assert _api.PyCapsule_GetName(capsule) == b"dlpack_exchange_api"
    return ExchangeAPI.from_address(_api.PyCapsule_GetPointer(capsule, b"dlpack_exchange_api"))


def test_devrt_offers_dlpack_1_2s_table_on_its_tensor_type():
    table = devrt_table()
    assert (table.major, table.minor) == (1, 2) and not table.prev_api
    tensor = devrt.tensor(np.arange(6, dtype="int32").reshape(2, 3))
    assert type(tensor).__dlpack_c_exchange_api__ is devrt.Tensor.__dlpack_c_exchange_api__
    # managed_tensor_from_py_object_no_sync: an owning versioned tensor, released by its deleter.
    from_py_object = with_gil(table.managed_tensor_from_py_object_no_sync, FromPyObject)
    to_py_object = with_gil(table.managed_tensor_to_py_object_no_sync, ToPyObject)
    dltensor_from_py_object = with_gil(table.dltensor_from_py_object_no_sync, DLTensorFromPyObject)
    out = ManagedPtr()
    assert from_py_object(id(tensor), ctypes.byref(out)) == 0
    managed = out.contents
    assert (managed.major, managed.dl_tensor.ndim, managed.dl_tensor.device_type) == (1, 2, 1)
    assert managed.dl_tensor.data == tensor.data_ptr() and managed.dl_tensor.shape[1] == 3
    # managed_tensor_to_py_object_no_sync steals it into a new devrt.Tensor.
    result = ctypes.c_void_p()
    assert to_py_object(out, ctypes.byref(result)) == 0
    back = ctypes.cast(result, ctypes.py_object).value
    _api.Py_DecRef(result)  # .value took its own reference
    assert isinstance(back, devrt.Tensor) and back.data_ptr() == tensor.data_ptr()
    assert back.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    # dltensor_from_py_object_no_sync: a borrowed view.
    view = DLTensor()
    assert dltensor_from_py_object(id(tensor), ctypes.byref(view)) == 0
    assert view.data == tensor.data_ptr() and view.strides[0] == 3 and (view.code, view.bits) == (0, 32)
    # current_work_stream: the CPU has none.
    stream = ctypes.c_void_p(1)
    assert table.current_work_stream(1, 0, ctypes.byref(stream)) == 0 and not stream.value
    # managed_tensor_allocator: a new tensor from a prototype.
    shape = (ctypes.c_int64 * 2)(4, 5)
    prototype = DLTensor(None, 1, 0, 2, 2, 32, 1, shape, None, 0)
    errors = []
    set_error = SetError(lambda ctx, kind, message: errors.append((kind, message)))
    allocate = with_gil(table.managed_tensor_allocator, Allocator)
    assert allocate(ctypes.byref(prototype), ctypes.byref(out), None, set_error) == 0
    assert out.contents.dl_tensor.shape[1] == 5 and out.contents.dl_tensor.data
    out.contents.deleter(out)
    prototype.code, prototype.bits = 2, 33  # float33: refused through set_error, exactly once
    assert allocate(ctypes.byref(prototype), ctypes.byref(out), None, set_error) != 0
    assert len(errors) == 1 and errors[0][0] == b"ValueError" and b"33" in errors[0][1]


def test_the_table_refuses_other_objects_with_a_python_error():
    table = devrt_table()
    out = ManagedPtr()
    not_a_tensor = np.zeros(3)
    fn = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ManagedPtr))(
        ctypes.cast(table.managed_tensor_from_py_object_no_sync, ctypes.c_void_p).value)  # keeps the GIL
    with pytest.raises(TypeError):
        fn(not_a_tensor, ctypes.byref(out))


class TableProducer:
    """A producer with no __dlpack__ at all: only DLPack 1.2's table, built here with ctypes over
    devrt's own export, so that devrt.from_dlpack must take the C path."""

    calls = 0

    def __init__(self, array):
        self.array = array


def _producer_from_py_object(obj_pointer, out):
    producer = ctypes.cast(obj_pointer, ctypes.py_object).value
    TableProducer.calls += 1
    capsule = devrt.from_dlpack(producer.array).__dlpack__(max_version=(1, 0))
    pointer = _api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    _api.PyCapsule_SetName(capsule, b"used_dltensor_versioned")  # ownership leaves the capsule
    out[0] = ctypes.cast(pointer, ManagedPtr)
    return 0


_PRODUCER_CALLBACKS = {
    "from": FromPyObject(_producer_from_py_object),
    "stream": CurrentStream(lambda kind, index, out: 0),
}
_PRODUCER_TABLE = ExchangeAPI(1, 2, None, Allocator(), _PRODUCER_CALLBACKS["from"], ToPyObject(),
                              DLTensorFromPyObject(), _PRODUCER_CALLBACKS["stream"])
TableProducer.__dlpack_c_exchange_api__ = _api.PyCapsule_New(ctypes.addressof(_PRODUCER_TABLE),
                                                            b"dlpack_exchange_api", None)


def test_devrt_consumes_another_types_table_without_calling_python():
    array = np.arange(8, dtype="float64")
    before = TableProducer.calls
    tensor = devrt.from_dlpack(TableProducer(array))
    assert TableProducer.calls == before + 1
    assert tensor.data_ptr() == array.ctypes.data and (tensor.numpy() == array).all()
