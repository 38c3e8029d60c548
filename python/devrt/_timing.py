# SPDX-License-Identifier: Apache-2.0
"""Measuring work on a device with TVM's rules: devrt.time_evaluator and Module.time_evaluator
(TVM: Module.time_evaluator, src/runtime/profiling.cc's WrapTimeEvaluator) over devrt's
TimeEvaluator (devrt/timing.hpp), and TVM's BenchmarkResult. docs/timing.md says where TVM's
behaviour surprises and how devrt follows it."""

from devrt import _ext
from devrt._device import Device


class BenchmarkResult:
    """Runtimes of a benchmark, in seconds (TVM's class: the same fields, repr and str).

    results: the runtimes, one per repeat (each the mean over `number` calls); mean, std (of the
    population), median, min and max of them."""

    def __init__(self, results):
        import numpy as np  # only here: importing devrt needs no NumPy

        self.results = results
        self.mean = np.mean(self.results)
        self.std = np.std(self.results)
        self.median = np.median(self.results)
        self.min = np.min(self.results)
        self.max = np.max(self.results)

    def __repr__(self):
        return "BenchmarkResult(min={}, mean={}, median={}, max={}, std={}, results={})".format(
            self.min, self.mean, self.median, self.max, self.std, self.results
        )

    def __str__(self):
        return """Execution time summary:
{:^12} {:^12} {:^12} {:^12} {:^12}
{:^12.4f} {:^12.4f} {:^12.4f} {:^12.4f} {:^12.4f}
               """.format(
            "mean (ms)",
            "median (ms)",
            "max (ms)",
            "min (ms)",
            "std (ms)",
            self.mean * 1000,
            self.median * 1000,
            self.max * 1000,
            self.min * 1000,
            self.std * 1000,
        )


class TimeEvaluator:
    """What time_evaluator returns: calling it with the timed function's arguments measures it
    and returns a BenchmarkResult. It keeps TVM's grown `number` between calls (TVM's evaluator
    captures it). `device_side` says whether the last call timed on the device's clock (False:
    the backend cannot time events; devrt then synchronizes and reads the host clock, and logs
    it once). One thread at a time."""

    __slots__ = ("_handle", "_function", "_preprocess", "device")

    def __init__(self, handle, function, preprocess, device):
        self._handle = handle
        self._function = function
        self._preprocess = preprocess
        self.device = device

    def __call__(self, *args, **kwargs):
        function = self._function

        def call():
            function(*args, **kwargs)

        preprocess = None
        if self._preprocess is not None:
            before = self._preprocess

            def preprocess():
                before(*args, **kwargs)

        return BenchmarkResult(_ext.time_evaluator_run(self._handle, call, preprocess))

    @property
    def number(self):
        """The calls a timed batch makes now (min_repeat_ms grows it)."""
        return _ext.time_evaluator_state(self._handle)[0]

    @property
    def device_side(self):
        return _ext.time_evaluator_state(self._handle)[1]


def time_evaluator(f, device, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                   cooldown_interval_ms=0, repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=None,
                   stream=None):
    """Measures `f`, a callable that queues work on the device's current stream of `device`, with
    TVM's time_evaluator rules and parameters. While f runs, the current stream is `stream` (a
    devrt.Stream, or None for the device's current stream), or on a remote device the stream each
    batch is captured on, to be replayed on the server; work f queues on another stream is refused
    there. One untimed
    call, then `repeat` batches of `number` calls each (grown until a batch lasts min_repeat_ms),
    the device synchronized before each batch, `cache_flush_bytes` copied between two device
    buffers before each, f_preproc (a callable taking f's arguments, TVM's f_preproc) before each
    repeat, and cooldown_interval_ms of sleep after repeat i when i % repeats_to_cooldown == 0.
    Returns a TimeEvaluator; calling it with f's arguments returns a BenchmarkResult (seconds per
    call). number, repeat or repeats_to_cooldown below 1, or a negative value, raise
    InvalidArgumentError; a value beyond 32 bits (cache_flush_bytes: 64) raises OverflowError."""
    from devrt._tensor import _stream_ref

    if not callable(f):
        raise TypeError(f"time_evaluator measures a callable, not {type(f).__name__}")
    if f_preproc is not None and not callable(f_preproc):
        raise TypeError(f"f_preproc is a callable or None, not {type(f_preproc).__name__}")
    device = device if isinstance(device, Device) else Device(device)
    handle = _ext.time_evaluator_create(device, _stream_ref(device, stream), number, repeat, min_repeat_ms,
                                        limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown,
                                        cache_flush_bytes)
    return TimeEvaluator(handle, f, f_preproc, device)
