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
    assert t.device == devrt.cpu(0) and t.is_contiguous()
    assert devrt.empty(5).shape == (5,)
    with pytest.raises(ValueError):
        devrt.empty((2, -1))
    with pytest.raises(ValueError) as error:
        devrt.empty((2,), "float33")  # a bad name is a ValueError (devrt's InvalidArgumentError)
    assert isinstance(error.value, devrt.InvalidArgumentError)


def test_numpy_to_devrt_shares_memory_and_releases_the_array_once():
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    baseline = sys.getrefcount(array)
    tensor = devrt.from_dlpack(array)
    assert sys.getrefcount(array) == baseline + 1  # devrt holds NumPy's DLManagedTensor
    assert tensor.shape == (3, 4) and tensor.dtype == "float32"
    assert tensor.data_ptr() == array.ctypes.data
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
    assert array.ctypes.data == tensor.data_ptr()
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
    assert again.data_ptr() == tensor.data_ptr()
    np.testing.assert_array_equal(again.numpy(), [1, 2, 3, 4])
    with pytest.raises(TypeError):
        devrt.from_dlpack(capsule)  # used already
    legacy = tensor.__dlpack__(max_version=(0, 8))
    assert '"dltensor"' in repr(legacy)


def test_copy_and_dl_device_requests():
    tensor = devrt.empty((3,), "float32").copyfrom([1, 2, 3])
    copied = devrt.from_dlpack(tensor.__dlpack__(copy=True, max_version=(1, 0)))
    assert copied.data_ptr() != tensor.data_ptr()
    np.testing.assert_array_equal(copied.numpy(), [1, 2, 3])
    same = devrt.from_dlpack(tensor.__dlpack__(dl_device=(1, 0), copy=False))
    assert same.data_ptr() == tensor.data_ptr()
    with pytest.raises(BufferError):
        tensor.__dlpack__(dl_device=(4, 0), copy=False)
    with pytest.raises(BufferError):
        tensor.__dlpack__(stream=5)  # a CPU tensor takes no stream


def test_torch_to_devrt_and_back():
    source = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    baseline = sys.getrefcount(source)
    tensor = devrt.from_dlpack(source)
    assert tensor.shape == (3, 4) and tensor.data_ptr() == source.data_ptr()
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
        assert result.dtype == torch_dtype and result.data_ptr() == tensor.data_ptr()
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
    assert tensor.device == devrt.cuda(0) and tensor.data_ptr() == source.data_ptr()
    back = torch.from_dlpack(tensor)
    torch.cuda.synchronize()
    assert torch.equal(back, source)
    copy = devrt.empty(tensor.shape, "float32", devrt.cuda(0))
    copy.copyfrom(tensor)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        result = torch.from_dlpack(copy)  # waits on torch's current stream for devrt's copy
        assert torch.equal(result, source)


def test_tensor_with_torch_and_tvm_ffi_names():
    for device in present_devices():
        array = np.arange(24, dtype="float32").reshape(2, 3, 4)
        t = devrt.tensor(array, device)
        assert t.device == device and t.shape == (2, 3, 4) and t.dtype == "float32" and t.ndim == 3
        assert t.strides == (12, 4, 1) and t.numel() == 24 and t.size() == (2, 3, 4)
        assert t.size(0) == 2 and t.size(-1) == 4
        with pytest.raises(IndexError):
            t.size(3)
        assert t.is_contiguous() is True and isinstance(t.data_ptr(), int) and t.data_ptr() != 0
        assert (t.numpy() == array).all()
        # copyto a device, and into a tensor; copyfrom an array and a tensor.
        host = t.copyto(devrt.cpu(0))
        assert host.device == devrt.cpu(0) and (host.numpy() == array).all()
        other = devrt.empty((2, 3, 4), "float32", device)
        assert t.copyto(other) is other and (other.numpy() == array).all()
        other.copyfrom(array * 2)
        assert (other.numpy() == array * 2).all()
        assert (t.copyfrom(other).numpy() == array * 2).all()
        with pytest.raises(TypeError):
            t.copyto(42)


def test_views_of_the_same_storage_on_every_device():
    for device in present_devices():
        array = np.arange(16, dtype="int32")
        t = devrt.tensor(array, device)
        view = t._create_view((2, 4), "int32", 32)  # the last 8 elements as 2x4
        assert view.shape == (2, 4) and (view.numpy() == array[8:].reshape(2, 4)).all()
        wide = t.view((4,), "int64", 16)  # the same bytes as int64
        assert (wide.numpy() == array[4:12].view("int64")).all()
        assert (t.view((16,)).numpy() == array).all()
        view.copyfrom(np.zeros((2, 4), "int32"))  # writes through to the storage
        assert (t.numpy()[8:] == 0).all() and (t.numpy()[:8] == array[:8]).all()
        with pytest.raises(devrt.OutOfRangeError):
            t.view((17,), "int32")
        with pytest.raises(devrt.OutOfRangeError):
            t.view((2,), "int64", 56)
        with pytest.raises(devrt.InvalidArgumentError):
            t.view((1,), "int64", 4)  # misaligned for int64
        with pytest.raises(ValueError):
            t.view((-1,))
        with pytest.raises(TypeError):
            t.view((2.5,))


def test_a_strided_tensor_has_no_view():
    strided = devrt.from_dlpack(np.arange(12, dtype="float32").reshape(3, 4)[:, ::2])
    assert not strided.is_contiguous()
    with pytest.raises(devrt.UnsupportedError):
        strided.view((6,))


def test_one_call_tensor_from_lists_numpy_and_torch():
    assert devrt.tensor([[1, 2], [3, 4]]).numpy().tolist() == [[1, 2], [3, 4]]
    assert devrt.tensor([1.5, 2.5], dtype="float16").dtype == "float16"
    assert devrt.tensor(np.ones(3, "uint8"), "cpu:0").dtype == "uint8"
    # A scalar stays 0-d (TVM's temperature argument of softmax_with_temperature is one).
    scalar = devrt.tensor(np.array(0.5, dtype=np.float32))
    assert scalar.shape == () and scalar.numpy().tolist() == 0.5
    assert devrt.tensor(np.ones((2, 3), order="F")).numpy().flags.c_contiguous
    try:
        import torch
    except ImportError:
        return
    from_torch = devrt.tensor(torch.arange(6, dtype=torch.int64), devrt.cpu(0))
    assert from_torch.numpy().tolist() == list(range(6))


def test_data_types_parse_every_tvm_name():
    names = {"int8": (0, 8, 1), "int32": (0, 32, 1), "int": (0, 32, 1), "uint1": (1, 1, 1), "uint64": (1, 64, 1),
             "float16": (2, 16, 1), "float": (2, 32, 1), "float64x2": (2, 64, 2), "handle": (3, 64, 1),
             "bfloat16": (4, 16, 1), "complex128": (5, 128, 1), "bool": (6, 8, 1), "float8_e3m4": (7, 8, 1),
             "float8_e4m3": (8, 8, 1), "float8_e4m3b11fnuz": (9, 8, 1), "float8_e4m3fn": (10, 8, 1),
             "float8_e4m3fnuz": (11, 8, 1), "float8_e5m2": (12, 8, 1), "float8_e5m2fnuz": (13, 8, 1),
             "float8_e8m0fnu": (14, 8, 1), "float6_e2m3fn": (15, 6, 1), "float6_e3m2fn": (16, 6, 1),
             "float4_e2m1fn": (17, 4, 1), "float8_e5m2x4": (12, 8, 4), "void": (3, 0, 0)}
    for name, (code, bits, lanes) in names.items():
        dtype = devrt.DataType(name)
        assert (dtype.type_code, dtype.bits, dtype.lanes) == (code, bits, lanes), name
        assert devrt.DataType(str(dtype)) == dtype, name
    assert str(devrt.DataType("handle")) == "handle" and str(devrt.DataType("float")) == "float32"
    for bad in ("float33", "bfloat32", "complex32", "float8", "int3", "Float32", "float32x0", "quux", "float8_e9m9"):
        with pytest.raises(ValueError) as error:
            devrt.DataType(bad)
        assert bad in str(error.value) and "float8_e4m3fn" in str(error.value)  # names the accepted forms
    with pytest.raises(TypeError):
        devrt.DataType(32)

    assert devrt.DataType(np.float32) == devrt.DataType(np.dtype("float32")) == "float32"


def test_float8_tensors_exist_on_every_device():
    for device in present_devices():
        t = devrt.empty((4, 4), "float8_e4m3fn", device)
        assert t.dtype.type_code == 10 and t.nbytes == 16
        with pytest.raises(devrt.UnsupportedError):
            devrt.empty((4,), "float4_e2m1fn", device)  # sub-byte elements are not stored


def test_memory_scopes_by_tvm_name_and_refused_where_absent():
    t = devrt.empty((2, 4), "float32", devrt.cpu(0), scope="global")
    assert t.scope == "global" and devrt.empty((2, 4)).scope == "global"
    with pytest.raises(ValueError) as error:
        devrt.empty((2, 4), "float32", devrt.cpu(0), scope="texture")  # not TVM's name: no guess
    assert "unknown memory scope 'texture'" in str(error.value)
    with pytest.raises(TypeError):
        devrt.empty((2, 4), "float32", devrt.cpu(0), scope=1)
    for scope in ("global.texture", "global.texture-nhwc", "global.texture-weight", "global.vtcm"):
        with pytest.raises(devrt.UnsupportedError) as error:
            devrt.empty((2, 4), "float32", devrt.cpu(0), scope=scope)
        assert "cpu:0" in str(error.value) and f"'{scope}'" in str(error.value)


@pytest.mark.skipif(not devrt.opencl(0).exist, reason="no OpenCL device (devrt.opencl(0).exist is False)")
def test_a_texture_round_trips_and_refuses_dlpack():
    try:
        texture = devrt.empty((2, 3, 5, 4), "float32", devrt.opencl(0), scope="global.texture")
    except devrt.UnsupportedError as error:
        pytest.skip(f"opencl(0) has no textures: {error}")
    assert texture.scope == "global.texture" and texture.shape == (2, 3, 5, 4)
    values = np.arange(120, dtype=np.float32).reshape(2, 3, 5, 4)
    texture.copyfrom(values)
    np.testing.assert_array_equal(texture.numpy(), values)
    with pytest.raises(devrt.UnsupportedError) as error:
        texture.__dlpack__()
    assert "DLPack has no memory scopes" in str(error.value)
    with pytest.raises(devrt.UnsupportedError):
        np.from_dlpack(texture)


@pytest.mark.skipif(not devrt.opencl(0).exist, reason="no OpenCL device (devrt.opencl(0).exist is False)")
def test_texture_layouts_by_name_and_packed_texels():
    try:
        # TVM's test_texture_nd: an int8 [256, 64, 16] texture, 16 int8 in each float32 texel.
        packed = devrt.empty((256, 64, 16), "int8", devrt.opencl(0), scope="global.texture")
    except devrt.UnsupportedError as error:
        pytest.skip(f"opencl(0) has no textures: {error}")
    values = (np.arange(256 * 64 * 16) % 251 - 125).astype(np.int8).reshape(256, 64, 16)
    packed.copyfrom(values)
    np.testing.assert_array_equal(packed.numpy(), values)
    # TVM 0.22's 2-D images by name; a pack other than 4 has no texel there.
    flat = devrt.empty((2, 3, 5, 4), "float32", devrt.opencl(0), scope="global.texture", texture_layout="image2d")
    floats = np.arange(120, dtype=np.float32).reshape(2, 3, 5, 4)
    flat.copyfrom(floats)
    np.testing.assert_array_equal(flat.numpy(), floats)
    with pytest.raises(ValueError) as error:
        devrt.empty((256, 64, 16), "int8", devrt.opencl(0), scope="global.texture", texture_layout="image2d")
    assert "axis of 4" in str(error.value)
    with pytest.raises(ValueError) as error:
        devrt.empty((2, 4), "float32", devrt.opencl(0), scope="global.texture", texture_layout="image2d_array")
    assert "unknown texture layout 'image2d_array'" in str(error.value)
    with pytest.raises(ValueError) as error:
        devrt.empty((2, 4), "float32", devrt.opencl(0), texture_layout="image2d")
    assert "no texture" in str(error.value)
    with pytest.raises(TypeError):
        devrt.empty((2, 4), "float32", devrt.opencl(0), scope="global.texture", texture_layout=2)


@pytest.mark.skipif(not devrt.vulkan(0).exist, reason="no Vulkan device (devrt.vulkan(0).exist is False)")
def test_a_texture_over_a_tensor_shares_its_memory():
    pool = devrt.empty((4096,), "float32", devrt.vulkan(0))
    try:
        texture = pool.as_texture((3, 5, 4), "float32")
    except devrt.UnsupportedError as error:
        pytest.skip(f"vulkan(0) makes no textures over buffers: {error}")
    row, layer = texture.texture_pitch
    assert row >= 5 * 16 and layer >= 3 * row and pool.texture_pitch == (0, 0)
    values = np.arange(60, dtype=np.float32).reshape(3, 5, 4)
    texture.copyfrom(values)
    memory = pool.numpy().view(np.uint8)
    for r in range(3):
        np.testing.assert_array_equal(memory[r * row : r * row + 80].view(np.float32), values[r].ravel())
    with pytest.raises(ValueError):
        devrt.empty((16,), "float32", devrt.vulkan(0)).as_texture((3, 5, 4), "float32")  # too few bytes
    with pytest.raises(ValueError):
        pool.as_texture((3, 5, 4), "float32", scope="global")


def test_bool_tensors_come_back_through_numpy():
    # NumPy 1.24 takes no bool through DLPack; numpy() copies the bytes instead, as TVM does.
    values = np.array([True, False, True, True, False])
    for device in present_devices():
        tensor = devrt.empty(values.shape, "bool", device).copyfrom(values)
        back = tensor.numpy()
        assert back.dtype == np.bool_
        assert back.tolist() == values.tolist()


def test_a_shape_mismatch_names_both_shapes():
    with pytest.raises(devrt.DevrtError) as error:
        devrt.empty((4,), "float32").copyfrom(devrt.empty((5,), "float32"))
    assert "[5] and [4]" in str(error.value)
