# SPDX-License-Identifier: Apache-2.0
"""Tensors and DLPack: NumPy and PyTorch both ways, capsules released exactly once."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import devrt
from conftest import present_devices

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")


def test_empty_has_its_shape_dtype_and_device():
    t = devrt.empty((2, 3, 4), "int16")
    assert t.shape == (2, 3, 4) and t.strides == (12, 4, 1) and t.ndim == 3
    assert str(t.dtype) == "int16" and t.dtype == "int16" and t.nbytes == 48
    assert t.device == devrt.cpu(0) and t.is_contiguous
    assert devrt.empty(5).shape == (5,)
    with pytest.raises(ValueError):
        devrt.empty((2, -1))
    with pytest.raises(devrt.DevrtError):
        devrt.empty((2,), "float33")


def test_numpy_to_devrt_shares_memory_and_releases_the_array_once():
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    baseline = sys.getrefcount(array)
    tensor = devrt.from_dlpack(array)
    assert sys.getrefcount(array) == baseline + 1  # devrt holds NumPy's DLManagedTensor
    assert tensor.shape == (3, 4) and tensor.dtype == "float32"
    assert tensor.data_ptr == array.ctypes.data
    array[1, 2] = 42.0
    assert np.from_dlpack(tensor)[1, 2] == 42.0
    view = devrt.from_dlpack(tensor)  # a second reference to the same storage
    del tensor
    gc.collect()
    assert sys.getrefcount(array) == baseline + 1
    del view
    gc.collect()
    assert sys.getrefcount(array) == baseline  # the deleter ran, once


def test_devrt_to_numpy_values_and_lifetime():
    tensor = devrt.empty((2, 5), "float64").copyfrom(np.arange(10.0).reshape(2, 5))
    array = np.from_dlpack(tensor)
    assert array.ctypes.data == tensor.data_ptr
    del tensor
    gc.collect()
    np.testing.assert_array_equal(array, np.arange(10.0).reshape(2, 5))  # NumPy keeps the storage
    strided = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2]
    np.testing.assert_array_equal(np.from_dlpack(devrt.from_dlpack(strided)), strided)


def test_an_unconsumed_capsule_releases_its_reference_exactly_once():
    array = np.ones(8, dtype=np.uint8)
    baseline = sys.getrefcount(array)
    for options in ({}, {"max_version": (1, 0)}):
        tensor = devrt.from_dlpack(array)
        capsule = tensor.__dlpack__(**options)
        del tensor
        gc.collect()
        assert sys.getrefcount(array) == baseline + 1  # the capsule holds the storage
        del capsule
        gc.collect()
        assert sys.getrefcount(array) == baseline, options


def test_versioned_capsules_round_trip():
    tensor = devrt.empty((4,), "int32").copyfrom([1, 2, 3, 4])
    capsule = tensor.__dlpack__(max_version=(1, 2))
    assert "dltensor_versioned" in repr(capsule)
    again = devrt.from_dlpack(capsule)
    assert again.data_ptr == tensor.data_ptr
    np.testing.assert_array_equal(again.numpy(), [1, 2, 3, 4])
    with pytest.raises(TypeError):
        devrt.from_dlpack(capsule)  # used already
    legacy = tensor.__dlpack__(max_version=(0, 8))
    assert '"dltensor"' in repr(legacy)


def test_copy_and_dl_device_requests():
    tensor = devrt.empty((3,), "float32").copyfrom([1, 2, 3])
    copied = devrt.from_dlpack(tensor.__dlpack__(copy=True, max_version=(1, 0)))
    assert copied.data_ptr != tensor.data_ptr
    np.testing.assert_array_equal(copied.numpy(), [1, 2, 3])
    same = devrt.from_dlpack(tensor.__dlpack__(dl_device=(1, 0), copy=False))
    assert same.data_ptr == tensor.data_ptr
    with pytest.raises(BufferError):
        tensor.__dlpack__(dl_device=(4, 0), copy=False)
    with pytest.raises(BufferError):
        tensor.__dlpack__(stream=5)  # a CPU tensor takes no stream


def test_torch_to_devrt_and_back():
    source = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    baseline = sys.getrefcount(source)
    tensor = devrt.from_dlpack(source)
    assert tensor.shape == (3, 4) and tensor.data_ptr == source.data_ptr()
    source[2, 3] = -1.0
    assert tensor.numpy()[2, 3] == -1.0
    back = torch.from_dlpack(tensor)
    assert back.data_ptr() == source.data_ptr()
    assert torch.equal(back, source)
    del tensor, back
    gc.collect()
    assert sys.getrefcount(source) == baseline


def test_devrt_to_torch_values_dtypes_and_lifetime():
    for dtype, torch_dtype in (("float32", torch.float32), ("int64", torch.int64), ("uint8", torch.uint8),
                               ("float16", torch.float16), ("int8", torch.int8)):
        values = np.arange(6).reshape(2, 3)
        tensor = devrt.empty((2, 3), dtype).copyfrom(values)
        result = torch.from_dlpack(tensor)
        assert result.dtype == torch_dtype and result.data_ptr() == tensor.data_ptr
        del tensor
        gc.collect()
        assert torch.equal(result, torch.from_numpy(np.asarray(values).astype(dtype)))


def test_tensors_on_every_present_device_round_trip_through_numpy():
    values = np.arange(64, dtype=np.float32).reshape(8, 8)
    for device in present_devices():
        tensor = devrt.empty(values.shape, "float32", device).copyfrom(values)
        assert tensor.device == device
        np.testing.assert_array_equal(tensor.numpy(), values, err_msg=str(device))
        host = tensor.to(devrt.cpu(0))
        np.testing.assert_array_equal(np.from_dlpack(host), values, err_msg=str(device))


def test_malformed_inputs_are_refused():
    with pytest.raises(TypeError):
        devrt.from_dlpack(object())
    with pytest.raises(TypeError):
        devrt.from_dlpack(ctypes.pythonapi)  # not a capsule
    with pytest.raises(ValueError):
        devrt.empty((2, 2)).copyfrom(np.zeros((3, 3)))


@pytest.mark.skipif(not devrt.cuda(0).exist, reason="no CUDA device (devrt.cuda(0).exist is False)")
def test_cuda_tensors_exchange_with_torch_on_the_consumer_stream():
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA (Debian's python3-torch is CPU-only)")
    source = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    tensor = devrt.from_dlpack(source)
    assert tensor.device == devrt.cuda(0) and tensor.data_ptr == source.data_ptr()
    back = torch.from_dlpack(tensor)
    torch.cuda.synchronize()
    assert torch.equal(back, source)
    copy = devrt.empty(tensor.shape, "float32", devrt.cuda(0))
    copy.copyfrom(tensor)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        result = torch.from_dlpack(copy)  # waits on torch's current stream for devrt's copy
        assert torch.equal(result, source)
