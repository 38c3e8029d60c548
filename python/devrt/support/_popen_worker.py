# SPDX-License-Identifier: Apache-2.0
"""The worker process of popen_pool: runs the calls its parent sends, one at a time.

Started as ``python _popen_worker.py <read fd> <write fd>``: requests arrive on the first pipe,
replies leave on the second, so the called functions keep their own stdout and stderr. Each
message is a 4-byte little-endian length and a cloudpickle payload.

Requests are (fn, args, kwargs, timeout). For each the worker answers STARTED as soon as the call
is unpacked, then one of COMPLETE (the value), EXCEPTION (the exception, with the traceback text
attached) or TIMEOUT. The timeout is measured here, from the moment the call starts: the worker's
own start-up and the initializer never count against it. A call that outlives its timeout gets
TIMEOUT at once and the parent kills this process. SystemExit and everything else that is not an
Exception leave this process, which the parent reports as ChildProcessError.
"""
import json
import os
import pickle
import struct
import sys
import threading
import traceback
import types

# The status codes of popen_pool.StatusKind, repeated here so that the worker needs nothing from
# the devrt package (it starts as a plain script).
RUNNING, COMPLETE, EXCEPTION, TIMEOUT, STARTED = 0, 1, 2, 3, 4
_HEADER = struct.Struct("<i")


def read_message(reader):
    """The next unpickled message, or None when the other side closed the pipe."""
    header = reader.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    payload = reader.read(size)
    if len(payload) < size:
        return None
    return pickle.loads(payload)


def write_message(writer, message):
    import cloudpickle

    payload = cloudpickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(_HEADER.pack(len(payload)) + payload)
    writer.flush()


def _portable_exception(error):
    """The exception itself when it survives pickling, else a RuntimeError that describes it; the
    worker's traceback travels as the text of a RemoteTraceback in __cause__."""
    import cloudpickle

    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    try:
        pickle.loads(cloudpickle.dumps(error))
        portable = error
    except Exception:  # an exception type that cannot be rebuilt in the parent
        portable = RuntimeError(f"{type(error).__module__}.{type(error).__qualname__}: {error}")
    portable.__traceback__ = None
    return portable, text


# The caller's __main__ as this worker knows it. cloudpickle sends __main__'s functions by value,
# each call with a fresh copy of the globals they use; rebinding them here makes module state
# (a list an initializer fills, a counter) survive between calls, as it does for functions of
# importable modules.
_MAIN_GLOBALS = {"__name__": "__mp_main__"}


def _rebind(value, sent_globals):
    if not isinstance(value, types.FunctionType) or value.__globals__ is not sent_globals:
        return value
    rebound = types.FunctionType(value.__code__, _MAIN_GLOBALS, value.__name__, value.__defaults__,
                                 value.__closure__)
    rebound.__kwdefaults__ = value.__kwdefaults__
    rebound.__qualname__ = value.__qualname__
    rebound.__module__ = value.__module__
    rebound.__dict__.update(value.__dict__)
    return rebound


def adopt(fn):
    """`fn` itself, or, for a function of the caller's __main__, the same function bound to this
    worker's persistent copy of __main__'s globals (names it has not seen yet are added)."""
    if not isinstance(fn, types.FunctionType) or fn.__module__ != "__main__" or fn.__globals__ is _MAIN_GLOBALS:
        return fn
    sent = fn.__globals__
    for name, value in sent.items():
        if name not in _MAIN_GLOBALS:
            _MAIN_GLOBALS[name] = _rebind(value, sent)
    return _rebind(fn, sent)


class _Call:
    """One call's outcome, answered exactly once: by the call or by its timer."""

    def __init__(self, writer):
        self._writer = writer
        self._lock = threading.Lock()
        self._answered = False

    def answer(self, message):
        with self._lock:
            if self._answered:
                return False
            self._answered = True
            write_message(self._writer, message)
            return True


def serve(reader, writer):
    while True:
        request = read_message(reader)
        if request is None:
            return  # the parent is gone
        fn, args, kwargs, timeout = request
        fn = adopt(fn)
        write_message(writer, (STARTED, None))
        call = _Call(writer)
        timer = None
        if timeout is not None:
            timer = threading.Timer(timeout, call.answer, [(TIMEOUT, None)])
            timer.daemon = True
            timer.start()
        try:
            outcome = (COMPLETE, fn(*args, **kwargs))
        except Exception as error:  # reported to the caller; BaseException (SystemExit) ends us
            outcome = (EXCEPTION, _portable_exception(error))
        if timer is not None:
            timer.cancel()
        try:
            call.answer(outcome)
        except Exception as error:  # the value cannot be pickled
            call.answer((EXCEPTION, _portable_exception(
                TypeError(f"popen_pool: the result of {getattr(fn, '__qualname__', fn)!r} cannot be sent back: "
                          f"{type(error).__name__}: {error}"))))


def main():
    # Import as the parent does: its sys.path, not this script's directory (whose modules would
    # shadow the caller's: "utils", "tar").
    inherited = os.environ.pop("DEVRT_POPEN_WORKER_SYS_PATH", None)
    if inherited is not None:
        sys.path[:] = json.loads(inherited)
    elif sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    if len(sys.argv) != 3:
        sys.exit("usage: _popen_worker.py <read fd> <write fd>")
    reader = os.fdopen(int(sys.argv[1]), "rb")
    writer = os.fdopen(int(sys.argv[2]), "wb")
    try:
        serve(reader, writer)
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
