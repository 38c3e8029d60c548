# SPDX-License-Identifier: Apache-2.0
"""Captured graphs from Python as PyTorch users write them (torch.cuda.graph): `with
devrt.graph(stream) as g`, then g.replay() and g.update(); on every backend present."""
import numpy as np
import pytest

import devrt
from conftest import device_under_test
from test_module import present, vadd_module

N = 1024


@pytest.mark.parametrize("device", ["cpu", "opencl", "vulkan", "webgpu"])
def test_a_captured_vector_add_replays_and_updates(device):
    device = device_under_test(device)
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


@pytest.mark.parametrize("device", ["cpu", "opencl", "vulkan", "webgpu"])
@pytest.mark.parametrize("dropped", ["output", "input"])
def test_a_replay_never_writes_or_reads_memory_that_a_dropped_tensor_gave_back(device, dropped):
    """The sequence a user met (issue 53): capture c = a + a, `del` one of them, allocate a tensor of
    the same size (the Buffer cache's first choice is the dropped one's memory), replay. The graph
    keeps the memory it touches until it is destroyed; memory_stats shows it meanwhile."""
    device = device_under_test(device)
    module, name, block = vadd_module(device)
    vadd = module[name]
    stream = devrt.Stream(device)
    for _ in range(3):
        a = devrt.tensor(np.ones(N, dtype=np.float32), device)
        c = devrt.empty((N,), "float32", device)
        held = devrt.memory_stats(device)["graph.held_bytes"]
        with devrt.graph(stream) as g:
            vadd(a, a, c, N, grid=N // block, block=block, stream=stream)
        if dropped == "output":
            del c
        else:
            del a
        assert devrt.memory_stats(device)["graph.held_bytes"] == held + 4 * N
        fresh = devrt.tensor(np.full(N, 7.0, dtype=np.float32), device)
        g.replay()
        stream.sync()
        np.testing.assert_array_equal(fresh.numpy(), np.full(N, 7.0, dtype=np.float32))
        if dropped == "input":
            np.testing.assert_array_equal(c.numpy(), np.full(N, 2.0, dtype=np.float32))
        del g
        assert devrt.memory_stats(device)["graph.held_bytes"] == held


def test_a_graph_keeps_a_numpy_array_it_reads_through_dlpack():
    """Host memory devrt does not own, imported through DLPack: the graph keeps the import (and so the
    array) until it is destroyed."""
    device = present(devrt.device("cpu", 0))
    module, name, block = vadd_module(device)
    stream = devrt.Stream(device)
    source = np.full(N, 3.0, dtype=np.float32)
    out = devrt.empty((N,), "float32", device)
    with devrt.graph(stream) as g:
        module[name](devrt.from_dlpack(source), devrt.from_dlpack(source), out, N, grid=N // block, block=block,
                     stream=stream)
    import sys
    import weakref

    alive = weakref.ref(source) if hasattr(source, "__weakref__") else None
    refs_before = sys.getrefcount(source)
    del source
    g.replay()
    stream.sync()
    np.testing.assert_array_equal(out.numpy(), np.full(N, 6.0, dtype=np.float32))
    assert refs_before >= 3  # ours, getrefcount's argument, and the graph's import
    if alive is not None:
        assert alive() is not None
        del g
        assert alive() is None


def test_capture_messages_speak_the_users_terms():
    """Issue 53, item 5: a launch without stream= during a capture says to pass the capturing stream;
    t.numpy() during a capture is a host read; exceptions are devrt.<Name>."""
    device = present(devrt.opencl(0))
    module, name, block = vadd_module(device)
    a = devrt.tensor(np.arange(N, dtype=np.float32), device)
    stream = devrt.Stream(device)
    with devrt.graph(stream):
        with pytest.raises(devrt.InvalidArgumentError, match="no stream was given.*pass the capturing stream") as e:
            module[name](a, a, a, N, grid=N // block, block=block)
        with pytest.raises(devrt.InvalidArgumentError, match="a host read of device memory"):
            a.numpy()
    assert type(e.value).__module__ == "devrt" and type(e.value).__qualname__ == "InvalidArgumentError"
    assert "devrt.InvalidArgumentError" in repr(type(e.value))
