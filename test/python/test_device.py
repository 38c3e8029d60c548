# SPDX-License-Identifier: Apache-2.0
import os
import subprocess

import pytest

import devrt
from conftest import present_devices, run_python


def test_the_issue_one_liner():
    # The exact line of the issue, with and without autoload.
    code = "import devrt; print(devrt.cuda(0).exist, devrt.cpu(0).max_threads_per_block)"
    for env in ({}, {"DEVRT_BACKEND_AUTOLOAD": "0"}):
        words = run_python(code, env).stdout.split()
        assert words[0] in ("True", "False")
        assert int(words[1]) > 0


def test_devices_by_name_kind_and_number():
    assert devrt.device("cuda:0") == devrt.cuda(0) == devrt.device("cuda", 0) == devrt.device(2, 0)
    assert devrt.cpu() == devrt.cpu(0)
    assert repr(devrt.opencl(1)) == "opencl:1"
    assert devrt.vulkan(3).device_type == 7 and devrt.vulkan(3).device_id == 3
    assert len({devrt.cpu(0), devrt.device("cpu:0")}) == 1
    with pytest.raises(ValueError):
        devrt.device("warp:0")


def test_cpu_attributes_have_their_types():
    cpu = devrt.cpu(0)
    assert cpu.exist is True
    assert isinstance(cpu.max_threads_per_block, int) and cpu.max_threads_per_block > 0
    assert isinstance(cpu.device_name, str) and cpu.device_name
    assert len(cpu.max_thread_dimensions) == 3
    assert cpu.warp_size is None  # not reported by the CPU backend
    cpu.sync()


def test_every_present_device_answers_every_attribute():
    devices = present_devices()
    assert devrt.cpu(0) in devices
    for device in devices:
        attributes = device.attributes()
        assert set(attributes) == set(devrt._device.ATTRIBUTES), device
        assert attributes["exist"] is True
        assert isinstance(attributes["max_threads_per_block"], int)
        device.sync()


def test_a_missing_device_does_not_exist_and_its_attributes_raise():
    missing = devrt.cpu(5)
    assert missing.exist is False
    with pytest.raises(devrt.DevrtError) as error:
        missing.max_threads_per_block
    assert "cpu:5" in str(error.value)


def test_cuda_is_reported_with_its_reason_when_absent():
    if devrt.cuda(0).exist:
        assert devrt.cuda(0).compute_version
        return
    assert devrt.device_count("cuda") == 0
    reason = devrt.backend.availability("cuda") if "cuda" in devrt.backend.names() else "not built"
    assert reason


def test_target_of_the_cpu():
    target = devrt.cpu(0).target()
    assert target["kind"] == "llvm"


def test_describe_prints_devrt_info_build_table():
    devrt_info = os.environ.get("DEVRT_TEST_DEVRT_INFO")
    if not devrt_info:
        pytest.skip("devrt-info is not built (-Dtools=false)")
    # A fresh interpreter, as devrt-info is a fresh process: in this one PyTorch is loaded, and
    # libamdhip64 then finds no static TLS left (the ROCm line would differ, with that reason).
    expected = subprocess.run([devrt_info, "--build"], capture_output=True, text=True, check=True).stdout
    assert run_python("import devrt; devrt.describe()").stdout == expected
    assert run_python("import devrt.support; devrt.support.describe()").stdout == expected
