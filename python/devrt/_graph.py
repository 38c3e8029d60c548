# SPDX-License-Identifier: Apache-2.0
"""Captured work graphs as PyTorch users know them (torch.cuda.graph): devrt.graph(stream) captures
what is issued to the stream inside the `with` block, and the Graph it gives replays it
(devrt/graph.hpp, docs/graphs.md).

>>> with devrt.graph(stream) as g:
...     scale(x, 2.0, n, grid=16, block=64, stream=stream)
>>> g.replay()
>>> g.update(0, y, 3.0, n)
"""

from devrt import _ext
from devrt._tensor import Stream


class Graph:
    """What a capture recorded, replayable on any stream of its device (devrt_graph). Filled when
    the `with devrt.graph(...)` block that made it ends without an exception."""

    __slots__ = ("_handle", "stream")

    def __init__(self, stream):
        self._handle = None
        self.stream = stream

    def _captured(self):
        if self._handle is None:
            raise RuntimeError("the graph is empty: its capture has not ended, or ended in an exception")
        return self._handle

    def replay(self, stream=None):
        """Queues the captured work on `stream` (default: the stream it was captured on),
        asynchronously; sync the stream to wait for it."""
        handle = self._captured()
        _ext.graph_launch(handle, (stream or self.stream)._ref)

    def update(self, launch_index, *args):
        """New arguments for captured launch number `launch_index` (capture order, from 0) from the
        next replay on: the same count, kinds and scalar types (devrt.InvalidArgumentError
        otherwise; devrt.OutOfRangeError past the launches)."""
        _ext.graph_update(self._captured(), launch_index, args)

    @property
    def node_count(self):
        return _ext.graph_info(self._captured())[0]

    @property
    def launch_count(self):
        return _ext.graph_info(self._captured())[1]

    @property
    def mode(self):
        """'native' (replayed as the backend's own command buffer), 'recorded' or 'mixed'."""
        return _ext.graph_info(self._captured())[2]


class graph:  # noqa: N801 -- named as torch.cuda.graph
    """Captures the work issued to `stream` (a devrt.Stream) inside a `with` block; `as g` gives the
    Graph, filled when the block ends. An exception inside the block ends the capture, discards it
    and propagates."""

    def __init__(self, stream):
        if not isinstance(stream, Stream):
            raise TypeError(f"devrt.graph captures a devrt.Stream, not {type(stream).__name__}")
        self._graph = Graph(stream)

    def __enter__(self):
        _ext.graph_begin_capture(self._graph.stream._ref)
        return self._graph

    def __exit__(self, exc_type, exc, traceback):
        try:
            handle = _ext.graph_end_capture(self._graph.stream._ref)
        except Exception:
            if exc_type is not None:
                return False  # the block's own exception is the one to see
            raise
        if exc_type is None:
            self._graph._handle = handle
        return False
