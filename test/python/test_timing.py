# SPDX-License-Identifier: Apache-2.0
"""time_evaluator and BenchmarkResult from Python, with TVM's own expectations
(tests/python/runtime/test_runtime_measure.py, python/tvm/runtime/module.py) written as devrt
tests: the call counts, the grown number, the statistics and the repr."""
import time

import numpy as np
import pytest

import devrt
from conftest import device_under_test, kind_of
from test_module import vadd_module


def test_benchmark_result_has_tvms_fields_and_repr():
    r = devrt.BenchmarkResult([1, 2, 2, 5])
    assert r.mean == 2.5
    assert r.median == 2.0
    assert r.min == 1
    assert r.max == 5
    assert r.std == 1.5
    assert r.results == [1, 2, 2, 5]
    assert repr(r) == "BenchmarkResult(min=1, mean=2.5, median=2.0, max=5, std=1.5, results=[1, 2, 2, 5])"
    assert "mean (ms)" in str(r) and "2500.0000" in str(r)


def test_min_repeat_ms_as_tvm_tests_it():
    calls = []

    def my_debug():
        """One call lasts 100 ms and leaves a mark (TVM writes a character to a file)."""
        time.sleep(0.1)
        calls.append("c")

    ftimer = devrt.time_evaluator(my_debug, devrt.cpu(0), number=1, repeat=1)
    result = ftimer()
    assert len(calls) == 2
    assert isinstance(result, devrt.BenchmarkResult) and len(result.results) == 1
    assert result.results[0] >= 0.1
    assert ftimer.device_side  # the CPU's timed events read its own clock

    ftimer = devrt.time_evaluator(my_debug, devrt.cpu(0), number=1, repeat=1, min_repeat_ms=1000)
    ftimer()
    # make sure we get more than 10 calls
    assert len(calls) > 10 + 2
    assert 9 <= ftimer.number <= 11  # max(1000 / ms + 1, 1.618) for calls of about 100 ms, kept


def test_arguments_and_preprocess_reach_the_function():
    seen, prepared = [], []
    ftimer = devrt.time_evaluator(lambda x, scale=1: seen.append(x * scale), "cpu:0", number=3, repeat=2,
                                  f_preproc=lambda x, scale=1: prepared.append(x))
    result = ftimer(7, scale=2)
    assert seen == [14] * (1 + 3 * 2)
    assert prepared == [7, 7]
    assert len(result.results) == 2


def test_unsafe_parameters_are_refused_never_wrapped():
    with pytest.raises(devrt.InvalidArgumentError, match="number = 0"):
        devrt.time_evaluator(lambda: None, devrt.cpu(0), number=0)
    with pytest.raises(devrt.InvalidArgumentError, match="repeat = -1"):
        devrt.time_evaluator(lambda: None, devrt.cpu(0), repeat=-1)
    with pytest.raises(devrt.InvalidArgumentError, match="repeats_to_cooldown = 0"):
        devrt.time_evaluator(lambda: None, devrt.cpu(0), repeats_to_cooldown=0)
    with pytest.raises(OverflowError):
        devrt.time_evaluator(lambda: None, devrt.cpu(0), number=2**31)
    with pytest.raises(OverflowError):
        devrt.time_evaluator(lambda: None, devrt.cpu(0), cache_flush_bytes=2**63)
    with pytest.raises(TypeError):
        devrt.time_evaluator(lambda: None, devrt.cpu(0), number=1.5)
    with pytest.raises(TypeError):
        devrt.time_evaluator(42, devrt.cpu(0))


def test_an_exception_in_the_timed_function_is_raised_as_it_was():
    def broken():
        raise KeyError("from the timed function")

    with pytest.raises(KeyError, match="from the timed function"):
        devrt.time_evaluator(broken, devrt.cpu(0))()


@pytest.mark.parametrize("device", ["cpu", "opencl", "vulkan", "webgpu"])
def test_module_time_evaluator_times_a_kernel(device):
    device = device_under_test(device)
    module, name, block = vadd_module(device)
    n = 1 << 16
    a = devrt.tensor(np.arange(n, dtype=np.float32), device)
    b = devrt.tensor(np.ones(n, dtype=np.float32), device)
    c = devrt.empty((n,), "float32", device)
    ftimer = module.time_evaluator(name, device, number=5, repeat=3, cache_flush_bytes=1 << 20)
    result = ftimer(a, b, c, n, grid=(n + block - 1) // block, block=block)
    assert len(result.results) == 3
    assert all(seconds > 0 for seconds in result.results)
    # WebGPU cannot time events: the host clock then, and said so.
    assert ftimer.device_side == (kind_of(device) != "webgpu")
    np.testing.assert_array_equal(np.from_dlpack(c.to(devrt.cpu(0))), np.arange(n, dtype=np.float32) + 1)
    with pytest.raises(ValueError, match="loaded on"):
        module.time_evaluator(name, devrt.cpu(0) if device.type != "cpu" else devrt.opencl(0))

    # With a stream given: the launches are timed there (captured there, on a remote device).
    stream = devrt.Stream(device)
    ftimer = module.time_evaluator(name, device, number=3, repeat=2, stream=stream)
    result = ftimer(a, b, c, n, grid=(n + block - 1) // block, block=block)
    assert len(result.results) == 2 and all(seconds > 0 for seconds in result.results)
    stream.sync()

    # A plain callable that launches on the device's current stream, as devrt.time_evaluator asks.
    vadd = module[name]
    ftimer = devrt.time_evaluator(lambda: vadd(a, b, c, n, grid=(n + block - 1) // block, block=block), device,
                                  number=2, repeat=2)
    assert len(ftimer().results) == 2
