# SPDX-License-Identifier: Apache-2.0
"""devrt.tvm: libraries TVM built, as tvm.runtime.load_module(path)["f"](...) runs them, on the
TVM-layout libraries this build makes (test/tvm/), against NumPy; DLPack producers as arguments;
refusals."""
import os

import numpy as np
import pytest

import devrt
from conftest import REMOTE, device_under_test

N = 777


def fixture(device):
    path = os.environ.get(f"DEVRT_TEST_TVM_{device.upper()}", "")
    if not path:
        pytest.skip(f"no TVM-layout {device} library in this build")
    return path


def present(device):
    if not device.exist:
        pytest.skip(f"no {device}: {devrt.backend.availability(device.type) or 'no such device'}")
    return device


def test_a_cpu_library_runs_with_numpy_arrays_through_dlpack():
    lib = devrt.tvm.load_library(fixture("cpu"), devrt.cpu(0))
    assert lib.functions == ["cpu_vadd"] and lib.kernels == [] and lib.skipped == []
    a = np.arange(N, dtype=np.float32)
    b = np.full(N, 0.25, dtype=np.float32)
    c = np.zeros(N, dtype=np.float32)
    lib["cpu_vadd"](a, b, c)  # NumPy arrays, shared through DLPack: c is written in place
    lib.synchronize()
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(devrt.InvalidArgumentError, match="unsatisfied constraint"):
        lib["cpu_vadd"](a, b[:10], c)
    with pytest.raises(KeyError, match="no function 'nothing'"):
        lib["nothing"]
    with pytest.raises(TypeError, match="tensors, ints and floats"):
        lib["cpu_vadd"](a, b, "c")


def test_a_tvm_ffi_library_runs_where_no_libtvm_ffi_exists():
    """The CPU library as TVM >= 0.22 builds it: tvm-ffi functions, libtvm_ffi's imports (absent
    here) bound to devrt; tvm-ffi's stable C ABI example among its functions."""
    lib = devrt.tvm.load_library(fixture("cpu_ffi"), devrt.cpu(0))
    assert lib.functions == ["cpu_vadd", "stable_add_one"]
    a = np.arange(N, dtype=np.float32)
    b = np.full(N, 0.25, dtype=np.float32)
    c = np.zeros(N, dtype=np.float32)
    lib["cpu_vadd"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    lib["stable_add_one"](a, c)
    np.testing.assert_array_equal(c, a + 1)
    with pytest.raises(devrt.InvalidArgumentError, match="RuntimeError: .*unsatisfied constraint"):
        lib["cpu_vadd"](a, b[:10], c)
    with pytest.raises(devrt.InvalidArgumentError, match="ValueError: Expects a Tensor input"):
        lib["stable_add_one"](3, c)


@pytest.mark.parametrize("abi", ["", "_ffi", "_ffi_0_21"])
@pytest.mark.parametrize("kind", ["opencl", "vulkan", "webgpu"])
def test_a_device_library_runs_its_kernels(kind, abi):
    device = device_under_test(kind)
    lib = devrt.tvm.load_library(fixture(kind + abi), device)
    assert lib.functions == ["missing", "scale"] + (["stable_add_one"] if abi == "_ffi" else []) + ["sum_scalars", "vadd"]
    assert ("vadd_kernel", ["blockIdx.x", "threadIdx.x"]) in lib.kernels
    # The Vulkan library carries the conformance suite's pow kernel: its one Pow is defined at load.
    assert lib.rewritten_instructions == (1 if kind == "vulkan" else 0)
    a = devrt.tensor(np.arange(N, dtype=np.float32), device)
    b = devrt.tensor(np.full(N, 0.5, dtype=np.float32), device)
    c = devrt.empty((N,), "float32", device)
    lib["vadd"](a, b, c)
    lib["scale"](c, 3.0)
    lib.synchronize()
    np.testing.assert_allclose(c.numpy(), (np.arange(N, dtype=np.float32) + 0.5) * 3.0)
    sums = devrt.empty((N,), "int32", device)
    scalars = list(range(-8, 9))
    lib["sum_scalars"](sums, *scalars)  # 17 scalars: a uniform buffer on Vulkan
    np.testing.assert_array_equal(sums.numpy(), np.full(N, sum(scalars), dtype=np.int32))
    with pytest.raises(devrt.InvalidArgumentError, match=f"argument 'B' must be on a {kind} device; the call gave "
                                                         f"argument 0 {device}, argument 1 cpu:0"):
        lib["vadd"](a, devrt.tensor(np.ones(N, np.float32)), c)  # a host tensor
    with pytest.raises(devrt.InvalidArgumentError, match="argument 'B' must be float32; the call gave "
                                                         "argument 0 float32, argument 1 int32, argument 2 float32"):
        lib["vadd"](a, devrt.empty((N,), "int32", device), c)
    with pytest.raises(devrt.NotFoundError, match="missing_kernel"):
        lib["missing"]()
    # TVM's Module.time_evaluator over a host function: its kernels timed on the device (captured
    # and replayed on the server for a remote one).
    ftimer = lib.time_evaluator("vadd", device, number=3, repeat=2)
    result = ftimer(a, b, c)
    assert len(result.results) == 2 and all(seconds > 0 for seconds in result.results)
    lib.synchronize()
    np.testing.assert_allclose(c.numpy(), np.arange(N, dtype=np.float32) + 0.5)
    with pytest.raises(ValueError, match="loaded on"):
        lib.time_evaluator("vadd", devrt.cpu(0))


@pytest.mark.skipif(not REMOTE, reason="the remote run only (meson test python-remote)")
@pytest.mark.parametrize("abi", ["", "_ffi", "_ffi_0_21"])
def test_a_cpu_library_is_refused_on_a_remote_device(abi):
    device = device_under_test("cpu")
    with pytest.raises(devrt.InvalidArgumentError, match="compute in its host code, in this process"):
        devrt.tvm.load_library(fixture("cpu" + abi), device)


def test_loading_refuses_what_it_cannot_run(tmp_path):
    with pytest.raises(devrt.NotFoundError):
        devrt.tvm.load_library(tmp_path / "absent.so", devrt.cpu(0))
    text = tmp_path / "text.so"
    text.write_text("not a library")
    with pytest.raises(devrt.InvalidArgumentError, match="refused before dlopen"):
        devrt.tvm.load_library(text, devrt.cpu(0))
    path = os.environ.get("DEVRT_TEST_TVM_OPENCL", "")
    if path:
        with pytest.raises(devrt.InvalidArgumentError, match="its kernels are opencl code"):
            devrt.tvm.load_library(path, devrt.cpu(0))
    import ctypes.util

    libm = ctypes.util.find_library("m")  # a shared object TVM did not build
    libm_path = next((line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith("/" + libm)), None)
    if libm_path:
        with pytest.raises(devrt.InvalidArgumentError, match="not a library TVM built"):
            devrt.tvm.load_library(libm_path, devrt.cpu(0))


@pytest.mark.skipif(not os.environ.get("DEVRT_TVM_LIBRARY"), reason="DEVRT_TVM_LIBRARY names no TVM-built library")
def test_a_library_named_by_devrt_tvm_library_loads_and_runs():
    """Opt-in, for a real library (MLC's, say): DEVRT_TVM_LIBRARY=path and DEVRT_TVM_DEVICE=vulkan:0
    list its functions, kernels and what was skipped, and run each function once on the shapes its
    own assertions ask for (tools/tvm-probe.py): none may fail on devrt's side."""
    import importlib.util
    import pathlib

    probe_path = pathlib.Path(__file__).resolve().parents[2] / "tools" / "tvm-probe.py"
    spec = importlib.util.spec_from_file_location("tvm_probe", probe_path)
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    device = present(devrt.device(os.environ.get("DEVRT_TVM_DEVICE", "cpu:0")))
    lib = devrt.tvm.load_library(os.environ["DEVRT_TVM_LIBRARY"], device)
    print(f"{lib}: {len(lib.functions)} functions, {len(lib.kernels)} kernels, skipped {lib.skipped}")
    assert lib.functions
    ran = 0
    for name in lib.functions:
        specs, reason = probe.arguments_of(lib, name, device)
        if specs is not None:
            ran += 1
        else:
            assert "Assert" in reason or "constraint" in reason, f"{name}: {reason}"
    print(f"{ran} of {len(lib.functions)} functions ran")
    assert ran > 0


@pytest.mark.parametrize("era", ["", "_ffi_0_21", "_main"])  # TVM <= 0.19 (MLC's libraries), 0.21, main
@pytest.mark.parametrize("kind", ["cpu", "opencl", "vulkan"])
def test_a_model_runs_on_the_relax_vm_as_tvm_relax_virtualmachine_runs_it(kind, era):
    """The model library (test/tvm/tvm_vm_fixture.py): vm["main"] on NumPy and torch inputs through
    DLPack, its tuple, shape and tensors back; the KV cache held as an Object and passed back. In
    the remote run on a server's device: the VM here, its kernels there."""
    device = present(devrt.cpu(0)) if kind == "cpu" else device_under_test(kind)
    lib = devrt.tvm.load_library(fixture(f"vm_{kind}{era}"), device)
    vm = devrt.tvm.VirtualMachine(lib, device)
    assert "main" in vm.functions and "kv_step" in vm.functions
    x = np.arange(256, dtype=np.float32)
    y = np.linspace(0, 1, 256, dtype=np.float32)
    total, shape, partial = vm["main"](devrt.tensor(x, device), devrt.tensor(y, device))
    assert shape == devrt.tvm.Shape([256]) and isinstance(shape, devrt.tvm.Shape)
    np.testing.assert_allclose(np.from_dlpack(total.to(devrt.cpu(0))), x + 3 * y, rtol=1e-6)
    np.testing.assert_allclose(np.from_dlpack(partial.to(devrt.cpu(0))), x + y, rtol=1e-6)
    if kind == "cpu":
        torch = pytest.importorskip("torch")
        out, _, _ = vm["main"](torch.arange(256, dtype=torch.float32), torch.ones(256))
        assert torch.equal(torch.from_dlpack(out), torch.arange(256, dtype=torch.float32) + 3)
    cache = vm["kv_init"]()
    assert isinstance(cache, devrt.tvm.Object) and cache.type_key == "relax.vm.AttentionKVCache"
    for step in range(3):
        cache, rows, first = vm["kv_step"](cache, devrt.tensor(np.full((1, 4), step, np.float32), device))
    np.testing.assert_array_equal(np.from_dlpack(rows.to(devrt.cpu(0))), np.repeat(np.arange(3.0), 4).reshape(3, 4))
    assert vm["choose"](devrt.tensor(np.array(0, np.int32), device), 1, 2) == 2
    if device.type == "remote":
        with pytest.raises(devrt.UnsupportedError, match="a capture cannot replay the VM's host work"):
            vm.time_evaluator("main", device)(devrt.tensor(x, device), devrt.tensor(y, device))


def test_vm_time_evaluator_times_the_same_decode_step_each_call():
    """vm.time_evaluator("decode", ...) on the generate example's model: each decode call checks the
    total length against its KV cache, so every timed call passes only from the same cache length."""
    device = devrt.cpu(0)
    vm = devrt.tvm.VirtualMachine(devrt.tvm.load_library(fixture("vm_cpu_lm"), device))
    params = [devrt.tensor(np.eye(16, dtype=np.float32))]
    caches = vm["_initialize_effect"]()
    _, caches = vm["prefill"](np.array([[1, 2, 3]], np.int32), devrt.tvm.Shape([3]), caches, params)
    step = (np.array([[4]], np.int32), devrt.tvm.Shape([4]), caches, params)
    evaluator = vm.time_evaluator("decode", device, number=4, repeat=3)
    result = evaluator(*step)
    assert len(result.results) == 3 and result.min > 0 and evaluator.number == 4
    logits, _ = vm["decode"](*step)  # the caches ended the timing where it began
    assert int(np.argmax(np.from_dlpack(logits))) == 4
    with pytest.raises(devrt.InvalidArgumentError, match="match_cast error"):
        vm["decode"](*step)  # a real step moved them on
    with pytest.raises(KeyError, match="no function 'generate'"):
        vm.time_evaluator("generate", device)
    with pytest.raises(ValueError, match="loaded on cpu:0"):
        vm.time_evaluator("decode", "vulkan:0")
    with pytest.raises(devrt.InvalidArgumentError, match="number"):
        vm.time_evaluator("decode", device, number=0)


def test_the_relax_vm_refuses_in_tvms_words():
    device = devrt.cpu(0)
    vm = devrt.tvm.VirtualMachine(devrt.tvm.load_library(fixture("vm_cpu"), device))
    x = np.zeros(8, np.float32)
    with pytest.raises(devrt.InvalidArgumentError, match="requires 2 inputs but only 1 inputs are provided"):
        vm["main"](x)
    with pytest.raises(devrt.InvalidArgumentError, match="mismatch to a previous populated value"):
        vm["main"](x, np.zeros(9, np.float32))
    with pytest.raises(KeyError, match="no function 'prefill'"):
        vm["prefill"]
    with pytest.raises(TypeError, match="a bool is no VM value"):
        vm["choose"](True, 1, 2)
    with pytest.raises(devrt.NotFoundError, match="carries no Relax VM program"):
        devrt.tvm.VirtualMachine(devrt.tvm.load_library(fixture("cpu"), device))
    with pytest.raises(ValueError, match="loaded on cpu:0"):
        devrt.tvm.VirtualMachine(devrt.tvm.load_library(fixture("vm_cpu"), device), "vulkan:0")


@pytest.mark.skipif(not os.environ.get("DEVRT_TVM_LIBRARY"), reason="DEVRT_TVM_LIBRARY names no TVM-built library")
def test_a_gpt2_model_named_by_devrt_tvm_library_matches_numpy():
    """Opt-in, for MLC's GPT-2 (gpt2-q0f16-*.so): DEVRT_TVM_LIBRARY=path and DEVRT_TVM_DEVICE=vulkan:0
    run prefill and 16 decode steps on devrt's VM against a NumPy GPT-2 (tools/tvm-gpt2-model.py)."""
    import pathlib
    import subprocess
    import sys

    device = present(devrt.device(os.environ.get("DEVRT_TVM_DEVICE", "cpu:0")))
    lib = devrt.tvm.load_library(os.environ["DEVRT_TVM_LIBRARY"], device)
    if not any(reason.startswith("relax.Executable") for reason in lib.skipped):
        pytest.skip(f"{lib.path} carries no Relax VM program")
    tool = pathlib.Path(__file__).resolve().parents[2] / "tools" / "tvm-gpt2-model.py"
    run = subprocess.run([sys.executable, str(tool), lib.path, str(device)], capture_output=True, text=True)
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr


def write_mlc_params(directory, arrays, shard_bytes=64):
    """MLC's weight format as its writer lays it out (records packed into shards of at most
    shard_bytes, each record's bytes at its byteOffset; float32 arrays also as f32-to-bf16)."""
    import json

    shards, current, offset = [], [], 0
    data = bytearray()
    for name, (array, fmt) in arrays.items():
        raw = (array.view(np.uint32) >> 16).astype(np.uint16).tobytes() if fmt == "f32-to-bf16" else array.tobytes()
        if current and offset + len(raw) > shard_bytes:
            shards.append((current, bytes(data)))
            current, offset, data = [], 0, bytearray()
        current.append({"name": name, "shape": list(array.shape), "dtype": str(array.dtype), "format": fmt,
                        "nbytes": len(raw), "byteOffset": offset})
        data += raw
        offset += len(raw)
    shards.append((current, bytes(data)))
    index = {"metadata": {"ParamSize": len(arrays)}, "records": []}
    for i, (records, blob) in enumerate(shards):
        (directory / f"params_shard_{i}.bin").write_bytes(blob)
        index["records"].append({"dataPath": f"params_shard_{i}.bin", "format": "raw-shard", "nbytes": len(blob),
                                 "records": records})
    (directory / "ndarray-cache.json").write_text(json.dumps(index))
    return len(shards)


@pytest.mark.parametrize("kind", ["cpu", "opencl", "vulkan"])
def test_mlc_weights_load_and_order_as_the_model_takes_them(tmp_path, kind):
    device = present(devrt.device(f"{kind}:0"))
    rng = np.random.default_rng(5)
    arrays = {"a": (rng.standard_normal(5).astype(np.float32), "raw"),
              "b": (np.arange(3, dtype=np.int32), "raw"),
              "c": (rng.standard_normal(2).astype(np.float32), "f32-to-bf16"),
              "extra": (rng.standard_normal((4, 4)).astype(np.float16), "raw")}
    assert write_mlc_params(tmp_path, arrays) > 1
    params = devrt.tvm.load_params(tmp_path, device)
    assert list(params) == ["a", "b", "c", "extra"]
    np.testing.assert_array_equal(np.from_dlpack(params["a"].to(devrt.cpu(0))), arrays["a"][0])
    truncated = (arrays["c"][0].view(np.uint32) & 0xFFFF0000).view(np.float32)
    np.testing.assert_array_equal(np.from_dlpack(params["c"].to(devrt.cpu(0))), truncated)
    vm = devrt.tvm.VirtualMachine(devrt.tvm.load_library(fixture(f"vm_{kind}"), device))
    c, a, b = vm.model_params(params)  # _metadata lists c, a, b; "extra" is not the model's
    np.testing.assert_array_equal(np.from_dlpack(b.to(devrt.cpu(0))), arrays["b"][0])
    (tmp_path / "params_shard_1.bin").write_bytes(b"short")
    with pytest.raises(devrt.InvalidArgumentError, match="params_shard_1.bin: 5 bytes, ndarray-cache.json says"):
        devrt.tvm.load_params(tmp_path, device)
    with pytest.raises(devrt.NotFoundError, match="ndarray-cache.json: no such file"):
        devrt.tvm.load_params(tmp_path / "nowhere", device)
