# SPDX-License-Identifier: Apache-2.0
"""Captured graphs from Python as PyTorch users write them (torch.cuda.graph): `with
devrt.graph(stream) as g`, then g.replay() and g.update(); on every backend present."""
import numpy as np
import pytest

import devrt
from test_module import present, vadd_module

N = 1024


@pytest.mark.parametrize("device", ["cpu", "opencl", "vulkan", "webgpu"])
def test_a_captured_vector_add_replays_and_updates(device):
    device = present(devrt.device(device, 0))
    module, name, block = vadd_module(device)
    vadd = module[name]
    a = devrt.tensor(np.arange(N, dtype=np.float32), device)
    b = devrt.tensor(np.full(N, 0.5, dtype=np.float32), device)
    c = devrt.empty((N,), "float32", device)
    stream = devrt.Stream(device)
    with devrt.graph(stream) as g:
        vadd(a, b, c, N, grid=N // block, block=block, stream=stream)  # c = a + b
        vadd(c, b, a, N, grid=N // block, block=block, stream=stream)  # a = c + b
    assert (g.node_count, g.launch_count) == (2, 2)
    assert g.mode in ("native", "recorded", "mixed")
    # Nothing ran while capturing.
    np.testing.assert_array_equal(np.from_dlpack(a.to(devrt.cpu(0))), np.arange(N, dtype=np.float32))
    for _ in range(10):
        g.replay()
    stream.sync()
    np.testing.assert_array_equal(np.from_dlpack(a.to(devrt.cpu(0))), np.arange(N, dtype=np.float32) + 10.0)
    g.update(1, a, b, c, N)  # the second launch now writes c = a + b, leaving a as it is
    g.replay(stream)
    stream.sync()
    np.testing.assert_array_equal(np.from_dlpack(a.to(devrt.cpu(0))), np.arange(N, dtype=np.float32) + 10.0)
    np.testing.assert_array_equal(np.from_dlpack(c.to(devrt.cpu(0))), np.arange(N, dtype=np.float32) + 10.5)
    with pytest.raises(devrt.InvalidArgumentError, match="shape"):
        g.update(0, a, b, c)
    with pytest.raises(devrt.InvalidArgumentError, match="shape"):
        g.update(0, a, b, c, 1.5)  # float where the kernel's int was captured
    with pytest.raises(devrt.OutOfRangeError):
        g.update(2, a, b, c, N)
    with pytest.raises(ValueError, match=">= 0"):
        g.update(-1, a, b, c, N)  # never wrapped to a huge index


def test_a_capture_refuses_a_host_read_and_an_exception_discards_it():
    device = present(devrt.opencl(0))
    module, name, block = vadd_module(device)
    a = devrt.tensor(np.arange(N, dtype=np.float32), device)
    stream = devrt.Stream(device)
    with pytest.raises(devrt.InvalidArgumentError, match="host read"):
        with devrt.graph(stream) as g:
            module[name](a, a, a, N, grid=N // block, block=block, stream=stream)
            a.to(devrt.cpu(0), stream=stream)
    with pytest.raises(RuntimeError, match="empty"):
        g.replay()
    with pytest.raises(ValueError, match="raised inside"):
        with devrt.graph(stream):
            raise ValueError("raised inside")
    # Both captures ended: the stream captures again.
    with devrt.graph(stream) as again:
        module[name](a, a, a, N, grid=N // block, block=block, stream=stream)
    again.replay()
    stream.sync()
    np.testing.assert_array_equal(np.from_dlpack(a.to(devrt.cpu(0))), 2 * np.arange(N, dtype=np.float32))
    with pytest.raises(TypeError, match="devrt.Stream"):
        devrt.graph(None)
