# SPDX-License-Identifier: Apache-2.0
"""The Python boundary refuses what it cannot represent: OverflowError out of range, TypeError for
the wrong type, ValueError for a bad value; never a wrap, a truncation or a SystemError; and a
failure leaks nothing."""
import ctypes
import gc

import numpy as np
import pytest

import devrt
from conftest import present_devices

BIG = 2**64 + 5

CASES = [
    # (what the caller wrote, the call, the exception)
    ("empty((2**64 + 5,))", lambda: devrt.empty((BIG,)), OverflowError),
    ("empty((2**63,))", lambda: devrt.empty((2**63,)), OverflowError),
    ("empty((-1,))", lambda: devrt.empty((-1,)), ValueError),
    ("empty((2.5,))", lambda: devrt.empty((2.5,)), TypeError),
    ("empty((True,))", lambda: devrt.empty((True,)), TypeError),
    ("empty('ab')", lambda: devrt.empty("ab"), TypeError),
    ("empty(None)", lambda: devrt.empty(None), TypeError),
    ("empty(65 dimensions)", lambda: devrt.empty((1,) * 65), ValueError),
    ("empty(dtype='float33')", lambda: devrt.empty((2,), "float33"), ValueError),
    ("empty(dtype='float32\\0')", lambda: devrt.empty((2,), "float32\x00"), ValueError),
    ("empty(dtype=5)", lambda: devrt.empty((2,), 5), TypeError),
    ("empty(device=2**40)", lambda: devrt.empty((2,), device=2**40), OverflowError),
    ("device(2**32 + 1)", lambda: devrt.device(2**32 + 1), OverflowError),
    ("device(-1)", lambda: devrt.device(-1), ValueError),
    ("device(3.5)", lambda: devrt.device(3.5), TypeError),
    ("device('cpu', 2**31)", lambda: devrt.device("cpu", 2**31), OverflowError),
    ("device('cpu', 1.0)", lambda: devrt.device("cpu", 1.0), TypeError),
    ("device('cpu\\0:0')", lambda: devrt.device("cpu\x00:0"), ValueError),
    ("device('cpu:4294967297')", lambda: devrt.device("cpu:4294967297"), OverflowError),
    ("device('cpu:99999999999')", lambda: devrt.device("cpu:99999999999"), OverflowError),
    ("device('cpu:' + 30 digits)", lambda: devrt.device("cpu:" + "9" * 30), OverflowError),
    ("device('cpu:007')", lambda: devrt.device("cpu:007"), ValueError),
    ("backend.load('')", lambda: devrt.backend.load(""), ValueError),
    ("device(b'cpu')", lambda: devrt.device(b"cpu"), TypeError),
    ("DataType('bfloat32')", lambda: devrt.DataType("bfloat32"), ValueError),
    ("DataType('complex32')", lambda: devrt.DataType("complex32"), ValueError),
    ("from_dlpack(object())", lambda: devrt.from_dlpack(object()), TypeError),
    ("from_dlpack(b'bytes')", lambda: devrt.from_dlpack(b"bytes"), TypeError),
    ("view offset -1", lambda: devrt.empty((4,)).view((1,), None, -1), ValueError),
    ("view offset 2**64", lambda: devrt.empty((4,)).view((1,), None, 2**64), OverflowError),
    ("copyto(3)", lambda: devrt.empty((4,)).copyto(3), TypeError),
    ("to(stream=1.5)", lambda: devrt.empty((4,)).to(devrt.cpu(0), stream=1.5), TypeError),
    ("__dlpack__(max_version=1)", lambda: devrt.empty((4,)).__dlpack__(max_version=1), TypeError),
    ("__dlpack__(dl_device=(1, 2**40))", lambda: devrt.empty((4,)).__dlpack__(dl_device=(1, 2**40)), OverflowError),
    ("__dlpack__(stream=5) on the CPU", lambda: devrt.empty((4,)).__dlpack__(stream=5), BufferError),
    ("__dlpack__(bogus=1)", lambda: devrt.empty((4,)).__dlpack__(bogus=1), TypeError),
    ("Tensor() directly", lambda: devrt.Tensor(), TypeError),
]


@pytest.mark.parametrize("what,call,expected", CASES, ids=[case[0] for case in CASES])
def test_bad_input_gets_the_documented_error(what, call, expected):
    with pytest.raises(expected) as error:
        call()
    assert not isinstance(error.value, SystemError), what
    assert str(error.value), what  # a message, not an empty exception


def test_nothing_wraps_or_truncates():
    # What ctypes used to accept silently.
    assert devrt.device(1, 0) == devrt.cpu(0)
    for call in (lambda: devrt.empty((BIG,)), lambda: devrt.device(2**32 + 1), lambda: devrt.device(3.5),
                 lambda: devrt.empty((2.5,))):
        with pytest.raises((OverflowError, TypeError)):
            call()


def test_numpy_refusing_a_dtype_is_numpys_error_not_a_system_error():
    tensor = devrt.empty((4,), "bfloat16")
    with pytest.raises(Exception) as error:
        np.from_dlpack(tensor)
    assert not isinstance(error.value, SystemError)


def _rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


FAILING = {
    "numpy refuses bfloat16": lambda t: np.from_dlpack(t),
    "unknown device": lambda t: devrt.device("gpu"),
    "negative extent": lambda t: devrt.empty((-1,)),
    "not a producer": lambda t: devrt.from_dlpack(object()),
    "overflowing extent": lambda t: devrt.empty((BIG,)),
    "view past the end": lambda t: t.view((5,), "bfloat16"),
}


@pytest.mark.parametrize("name", list(FAILING))
def test_a_failing_call_leaks_nothing(name):
    call = FAILING[name]
    tensor = devrt.empty((4,), "bfloat16")

    def fail(times):
        for _ in range(times):
            try:
                call(tensor)
            except Exception:
                pass

    fail(2000)  # warm up: caches, allocator arenas
    gc.collect()
    before = _rss()
    fail(100_000)
    gc.collect()
    grown = _rss() - before
    assert grown < 1 << 20, f"{name}: memory grew {grown} bytes over 100,000 failing calls"


def _capsule_tensor(capsule, versioned):
    """The DLTensor inside an unused capsule, read through ctypes."""
    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = get_pointer(capsule, b"dltensor_versioned" if versioned else b"dltensor")
    offset = 32 if versioned else 0  # DLManagedTensorVersioned: version, manager_ctx, deleter, flags first
    return DLTensor.from_address(pointer + offset)


def test_compact_tensors_export_null_strides_and_strided_ones_their_strides():
    for device in present_devices():
        compact = devrt.tensor(np.arange(12, dtype="float32").reshape(3, 4), device)
        dl = _capsule_tensor(compact.__dlpack__(), versioned=False)
        assert dl.ndim == 2 and not dl.strides, device  # NULL: compact (DLPack < 1.2, PyTorch 1.13)
        dl = _capsule_tensor(compact.__dlpack__(max_version=(1, 0)), versioned=True)
        assert dl.strides and dl.strides[0] == 4, device  # versioned: always explicit (DLPack 1.2)
    strided = devrt.from_dlpack(np.arange(12, dtype="float32").reshape(3, 4)[:, ::2])
    dl = _capsule_tensor(strided.__dlpack__(), versioned=False)
    assert dl.strides and (dl.strides[0], dl.strides[1]) == (4, 2)


def test_both_ways_with_numpy_and_pytorch_strided_and_compact():
    torch = pytest.importorskip("torch")
    source = np.arange(24, dtype="float32").reshape(4, 6)
    for array in (source, source[::2, 1::2], source.T):
        tensor = devrt.from_dlpack(array)
        assert (np.from_dlpack(tensor) == array).all()
        assert (torch.from_dlpack(tensor).numpy() == array).all()
    for t in (torch.arange(24.0).reshape(4, 6), torch.arange(24.0).reshape(4, 6).t(),
              torch.arange(24.0).reshape(4, 6)[:, ::3]):
        tensor = devrt.from_dlpack(t)
        assert tensor.shape == tuple(t.shape) and tensor.strides == tuple(t.stride())
        assert (tensor.numpy() == t.numpy()).all()
        assert (torch.from_dlpack(tensor) == t).all()


def test_torch_refusing_an_opencl_tensor_releases_it_once():
    torch = pytest.importorskip("torch")
    if not devrt.opencl(0).exist:
        pytest.skip("no OpenCL device")
    tensor = devrt.tensor(np.arange(6, dtype="float32"), "opencl:0")
    for _ in range(1000):
        with pytest.raises(RuntimeError):
            torch.from_dlpack(tensor)
    assert (tensor.numpy() == np.arange(6)).all()  # the storage is intact, referenced once more by none


def test_backend_names_are_strings_without_nul():
    with pytest.raises(TypeError):
        devrt.backend.availability(b"cpu")
    with pytest.raises(ValueError):
        devrt.backend.availability("cp\0u")
    with pytest.raises(devrt.NotFoundError):
        devrt.backend.availability("no_such_backend")
    assert devrt.backend.availability("cpu") is None


def test_a_stream_is_a_capsule_the_module_made():
    stream = devrt.Stream(devrt.cpu(0))
    stream.sync()
    assert isinstance(stream.handle, int)
    from devrt import _ext
    with pytest.raises((TypeError, ValueError)):
        _ext.stream_synchronize(object())
    with pytest.raises(devrt.InvalidArgumentError):
        devrt.Stream(devrt.cpu(9999))
