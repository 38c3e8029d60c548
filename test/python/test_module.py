# SPDX-License-Identifier: Apache-2.0
"""Modules and launches from Python (devrt.Module, devrt.Function), as a TVM user writes them:
load code on a device, take a kernel by name, call it on tensors and scalars with a grid and a
block. Each backend present runs the same vector add; errors arrive as the C++ API gives them."""
import os
import pathlib

import numpy as np
import pytest

import devrt
from conftest import REMOTE, device_under_test, kind_of, run_python

N = 1000
OPENCL_VADD = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""


def present(device):
    if not device.exist:
        pytest.skip(f"no {device} here ({devrt.backend.availability(device.type) or 'no device'})")
    return device


def vadd_module(device):
    """The vector add on `device`: OpenCL C, SPIR-V (entry point main), or the CPU test kernels."""
    kind = kind_of(device)
    if kind == "opencl":
        return devrt.Module.load(device, "opencl_c", OPENCL_VADD), "vadd", 1
    if kind == "vulkan":
        spirv = pathlib.Path(os.environ.get("DEVRT_TEST_SPIRV_DIR", "")) / "vadd.spv"
        if not spirv.is_file():
            pytest.skip(f"no {spirv} (glslc was not found when this build was configured)")
        return devrt.Module.load(device, "spirv", spirv), "main", 64
    if kind == "webgpu":
        wgsl = pathlib.Path(os.environ.get("DEVRT_TEST_WGSL_DIR", "")) / "vadd.wgsl"
        return devrt.Module.load(device, "wgsl", wgsl.read_text()), "vadd", 64
    if kind == "cpu":
        shared_object = os.environ.get("DEVRT_TEST_CPU_KERNELS_SO", "")
        if not shared_object:
            pytest.skip("DEVRT_TEST_CPU_KERNELS_SO is not set")
        return devrt.Module.load(device, "shared_object", pathlib.Path(shared_object).read_bytes()), "vadd", 64
    pytest.skip(f"no vector add for {kind} in this test")


@pytest.mark.parametrize("device", ["cpu", "opencl", "vulkan", "webgpu"])
def test_vector_add_runs_on_every_backend_present(device):
    device = device_under_test(device)
    module, name, block = vadd_module(device)
    a = devrt.tensor(np.arange(N, dtype=np.float32), device)
    b = devrt.tensor(np.full(N, 0.5, dtype=np.float32), device)
    c = devrt.empty((N,), "float32", device)
    stream = devrt.Stream(device)
    module[name](a, b, c, N, grid=(N + block - 1) // block, block=block, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(np.from_dlpack(c.to(devrt.cpu(0))), np.arange(N, dtype=np.float32) + 0.5)
    assert module.get_function(name).name == name
    assert module.device == device


def test_a_kernel_takes_tensor_views_at_their_offset():
    device = present(devrt.opencl(0))
    module = devrt.Module.load(device, "opencl_c", OPENCL_VADD)
    half = 1024  # 4 KiB: a multiple of every device's base address alignment
    whole = devrt.tensor(np.arange(2 * half, dtype=np.float32), device)
    second_half = whole.view((half,), relative_byte_offset=4 * half)
    out = devrt.empty((half,), "float32", device)
    module["vadd"](second_half, second_half, out, half, grid=half, block=1)
    expected = 2 * np.arange(half, 2 * half, dtype=np.float32)
    np.testing.assert_array_equal(np.from_dlpack(out.to(devrt.cpu(0))), expected)
    # A view at an offset the device cannot bind is refused, naming the rule.
    with pytest.raises(devrt.InvalidArgumentError, match="base address alignment"):
        module["vadd"](whole.view((half,), relative_byte_offset=4), second_half, out, half, grid=half, block=1)


def test_scalars_keep_their_numpy_type_and_the_backend_checks_it():
    device = present(devrt.opencl(0))
    module = devrt.Module.load(device, "opencl_c", OPENCL_VADD)
    a = devrt.empty((4,), "float32", device)
    with pytest.raises(devrt.InvalidArgumentError, match="argument 3 is int64"):
        module["vadd"](a, a, a, np.int64(4), grid=4, block=1)
    module["vadd"](a, a, a, np.int32(4), grid=4, block=1)


def test_bad_launches_are_refused_with_the_reason():
    device = present(devrt.opencl(0))
    vadd = devrt.Module.load(device, "opencl_c", OPENCL_VADD)["vadd"]
    a = devrt.empty((4,), "float32", device)
    with pytest.raises(OverflowError, match=r"kernel argument 3 1099511627776 is out of range"):
        vadd(a, a, a, 2**40, grid=4, block=1)
    with pytest.raises(TypeError, match="kernel argument 3 is a bool"):
        vadd(a, a, a, True, grid=4, block=1)
    with pytest.raises(TypeError, match="kernel argument 0 is a list"):
        vadd([1.0], a, a, 4, grid=4, block=1)
    with pytest.raises(OverflowError, match="does not fit a float32"):
        vadd(a, a, a, 1e300, grid=4, block=1)
    with pytest.raises(ValueError, match="grid must be >= 1"):
        vadd(a, a, a, 4, grid=0, block=1)
    with pytest.raises(OverflowError, match="block"):
        vadd(a, a, a, 4, grid=1, block=2**32)
    with pytest.raises(ValueError, match="4 dimensions"):
        vadd(a, a, a, 4, grid=(1, 1, 1, 1), block=1)
    with pytest.raises(ValueError, match="at most 64"):
        vadd(*([a] * 65), grid=1, block=1)
    with pytest.raises(TypeError, match="grid"):
        vadd(a, a, a, 4, block=1)
    with pytest.raises(devrt.InvalidArgumentError, match="takes 4 arguments"):
        vadd(a, a, grid=4, block=1)
    column = devrt.from_dlpack(np.zeros((4, 4), dtype=np.float32)[:, 0])
    with pytest.raises(ValueError, match="non-contiguous"):
        vadd(column, a, a, 4, grid=4, block=1)
    elsewhere = devrt.empty((4,), "float32", devrt.cpu(0))
    with pytest.raises(devrt.DevrtError, match="cpu"):
        vadd(elsewhere, a, a, 4, grid=4, block=1)


def test_load_errors_name_the_format_and_carry_the_build_log(tmp_path):
    device = present(devrt.opencl(0))
    with pytest.raises(devrt.DevrtError, match="undeclared|error") as caught:
        devrt.Module.load(device, "opencl_c", "__kernel void broken(__global float* x) { x[0] = y; }")
    assert "broken" in str(caught.value) or "y" in str(caught.value)
    with pytest.raises(ValueError, match="unknown module format 'openclc'"):
        devrt.Module.load(device, "openclc", OPENCL_VADD)
    with pytest.raises(devrt.DevrtError, match="missing.cl"):
        devrt.Module.load(device, "opencl_c", tmp_path / "missing.cl")
    with pytest.raises(devrt.DevrtError):
        devrt.Module.load(device, "opencl_c", b"")
    with pytest.raises(TypeError, match="bytes, str or os.PathLike"):
        devrt.Module.load(device, "opencl_c", 42)
    with pytest.raises(devrt.NotFoundError, match="no kernel 'nope'"):
        devrt.Module.load(device, "opencl_c", OPENCL_VADD)["nope"]
    source = tmp_path / "vadd.cl"
    source.write_text(OPENCL_VADD)
    assert devrt.load_module(device, devrt.MODULE_FORMATS["opencl_c"], source)["vadd"].name == "vadd"


def test_a_spirv_kernel_is_named_by_its_entry_point():
    device = present(devrt.vulkan(0))
    module, _, _ = vadd_module(device)
    with pytest.raises(devrt.NotFoundError, match=r"no compute entry point 'vadd' \(it has: main\)"):
        module["vadd"]


def test_a_function_keeps_its_module_alive():
    device = present(devrt.opencl(0))
    vadd = devrt.Module.load(device, "opencl_c", OPENCL_VADD)["vadd"]
    a = devrt.tensor(np.ones(8, dtype=np.float32), device)
    vadd(a, a, a, 8, grid=8, block=1)
    device.sync()
    np.testing.assert_array_equal(np.from_dlpack(a.to(devrt.cpu(0))), np.full(8, 2, dtype=np.float32))


def test_webgpu_tensors_go_out_by_copy_and_say_why_not_by_dlpack():
    device = present(devrt.webgpu(0))
    values = np.arange(16, dtype=np.float32)
    tensor = devrt.tensor(values, device)
    assert tensor.__dlpack_device__() == (15, 0)  # kDLWebGPU: a buffer handle, not an address
    with pytest.raises(RuntimeError, match="Unsupported device"):
        np.from_dlpack(tensor)
    np.testing.assert_array_equal(tensor.numpy(), values)
    np.testing.assert_array_equal(np.from_dlpack(tensor.to(devrt.cpu(0))), values)
    # A wrong argument type is refused with the WGSL kernel's signature before anything runs.
    module, name, block = vadd_module(device)
    c = devrt.empty((16,), "float32", device)
    with pytest.raises(Exception, match="float32|int32"):
        module[name](tensor, tensor, c, 1.5, grid=1, block=block)


def test_spirv_bytes_loaded_as_source_are_named():
    """Issue 53, item 5: SPIR-V given as OpenCL C is named as SPIR-V, not passed to the compiler."""
    device = present(devrt.opencl(0))
    spirv = pathlib.Path(os.environ.get("DEVRT_TEST_SPIRV_DIR", "")) / "vadd.spv"
    if not spirv.is_file():
        pytest.skip(f"no {spirv} (glslc was not found when this build was configured)")
    with pytest.raises(devrt.InvalidArgumentError, match="not opencl_c source but SPIR-V .*load it as spirv"):
        devrt.Module.load(device, "opencl_c", spirv.read_bytes())


def test_spirv_pow_is_defined_at_load_and_the_switch_turns_it_off():
    """Issue 71: GLSL.std.450 Pow of a negative base is rewritten to C's pow at load, the count is
    reported, and DEVRT_VULKAN_SPIRV_REWRITE=0 loads the SPIR-V as written."""
    device = device_under_test("vulkan")
    power = pathlib.Path(os.environ.get("DEVRT_TEST_SPIRV_DIR", "")) / "power.spv"
    if not power.is_file():
        pytest.skip(f"no {power} (glslc was not found when this build was configured)")
    module = devrt.Module.load(device, "spirv", power)
    assert module.rewritten_instructions == 1
    bases = np.array([-2.0, -2.0, -8.0, 0.0, 2.0], dtype=np.float32)
    exponents = np.array([3.0, 2.0, 1.0 / 3.0, -1.0, 0.5], dtype=np.float32)
    a, b = devrt.tensor(bases, device), devrt.tensor(exponents, device)
    c = devrt.empty((5,), "float32", device)
    module["main"](a, b, c, 5, grid=1, block=64)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.power(bases, exponents)
    np.testing.assert_allclose(c.numpy(), expected, rtol=1e-5)  # -8, 4, NaN, inf, sqrt(2)
    if REMOTE:
        return  # the switch is the server's to set
    code = f"""
import pathlib
import devrt
module = devrt.Module.load(devrt.vulkan(0), "spirv", pathlib.Path({str(power)!r}))
print(module.rewritten_instructions)
"""
    assert run_python(code, env={"DEVRT_VULKAN_SPIRV_REWRITE": "0"}).stdout.split() == ["0"]
    assert run_python(code, env={"DEVRT_VULKAN_SPIRV_REWRITE": "off"}).stdout.split() == ["0"]
    # A value that is no boolean: the one rule for booleans (a warning, then the default).
    bad = run_python(code, env={"DEVRT_VULKAN_SPIRV_REWRITE": "maybe"})
    assert bad.stdout.split() == ["1"]
    assert "DEVRT_VULKAN_SPIRV_REWRITE=maybe is not a boolean" in bad.stderr
