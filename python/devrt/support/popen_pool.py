# SPDX-License-Identifier: Apache-2.0
"""Python callables in worker processes, with a timeout per call (TVM's tvm.support.popen_pool).

A call that crashes, exits or hangs costs its worker, never the caller: the caller gets
ChildProcessError for a worker that died (a segfault, os._exit, sys.exit inside the call) and
TimeoutError for a call that ran past its timeout, and the next call starts a fresh worker.
Functions and arguments travel with cloudpickle, so lambdas, closures and functions defined in
``__main__`` work; workers import modules with the caller's sys.path.

The timeout covers the call only. The worker measures it from the moment the call starts, after
its own start-up and its initializer, so a short timeout on a quick function always succeeds.
"""
import concurrent.futures
import enum
import json
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from collections import namedtuple

from devrt.support import _popen_worker as _wire

# How long past its timeout a call may stay silent before the caller kills the worker itself: the
# worker's own timer answers at the timeout unless the call holds the interpreter (a C function
# that never releases the GIL).
_TIMEOUT_GRACE_SECONDS = 2.0


class StatusKind(enum.IntEnum):
    """How a call ended (TVM's StatusKind)."""

    RUNNING = 0
    COMPLETE = 1
    EXCEPTION = 2
    TIMEOUT = 3


class MapResult(namedtuple("MapResult", ["status", "value"])):
    """One result of map_with_error_catching: a StatusKind and the value or the exception."""

    __slots__ = ()


class RemoteTraceback(Exception):
    """The worker-side traceback of an exception a call raised; it is the exception's __cause__."""

    def __str__(self):
        return self.args[0] if self.args else ""


def _children(pid):
    """The pids whose parent is `pid`, read from /proc."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def kill_child_processes(pid):
    """Kills every process descending from `pid` (not `pid` itself), deepest first."""
    pending = [pid]
    tree = []
    while pending:
        children = _children(pending.pop())
        tree += children
        pending += children
    for child in reversed(tree):
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass


def _check_timeout(timeout):
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"popen_pool: timeout must be a number of seconds or None, not {type(timeout).__name__}")
    if not timeout >= 0:
        raise ValueError(f"popen_pool: timeout must be >= 0 seconds, not {timeout!r}")
    return float(timeout)


def _check_uses(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"popen_pool: {name} must be a positive int or None, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"popen_pool: {name} must be >= 1, not {value}")
    return value


def _describe_exit(code):
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class _Reader:
    """Reads the worker's replies from a pipe, with a deadline."""

    def __init__(self, fd):
        self._fd = fd
        self._buffer = b""

    def _fill(self, count, deadline):
        while len(self._buffer) < count:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                return False
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise EOFError
            self._buffer += chunk
        return True

    def read(self, deadline=None):
        """The next message; None at the deadline; EOFError when the worker closed the pipe."""
        header = _wire._HEADER.size
        if not self._fill(header, deadline):
            return None
        (size,) = _wire._HEADER.unpack(self._buffer[:header])
        if not self._fill(header + size, deadline):
            return None
        payload, self._buffer = self._buffer[header:header + size], self._buffer[header + size:]
        return pickle.loads(payload)


class PopenWorker:
    """One worker process, started by the first send() (TVM's PopenWorker).

    initializer(*initargs) runs in each new process before its first call. maximum_uses: the
    process is killed and restarted (re-running the initializer) after that many calls; None keeps
    it until a call times out or the process dies. Module state a call leaves behind is there for
    the next call until then. stdout/stderr: the process's, as subprocess.Popen takes them (None:
    this process's). Not thread-safe: one call at a time, send() then recv().
    """

    def __init__(self, initializer=None, initargs=(), maximum_uses=None, stdout=None, stderr=None, *,
                 maxtasksperchild=None):
        # Every attribute first: __del__ of a constructor that raises below finds them all.
        self._proc = None
        self._reader = None
        self._writer = None
        self._pending = False
        self._call_timeout = None
        self._remaining_uses = None
        self._initializer = initializer
        self._initargs = tuple(initargs)
        self._stdout = stdout
        self._stderr = stderr
        if maximum_uses is None:
            maximum_uses = maxtasksperchild  # devrt's earlier name
        self._maximum_uses = _check_uses("maximum_uses", maximum_uses)
        if initializer is not None and not callable(initializer):
            raise TypeError(f"popen_pool: initializer must be callable, not {type(initializer).__name__}")

    def __del__(self):
        try:
            self.kill()
        except Exception:  # interpreter shutdown: the modules this needs may be gone
            pass

    def _start(self):
        import cloudpickle  # noqa: F401 -- fails here, in the caller, when it is missing

        parent_read, child_write = os.pipe()
        child_read, parent_write = os.pipe()
        environment = dict(os.environ)
        environment["DEVRT_POPEN_WORKER_SYS_PATH"] = json.dumps([os.path.abspath(p) if p else os.getcwd()
                                                                  for p in sys.path])
        try:
            self._proc = subprocess.Popen([sys.executable, _wire.__file__, str(child_read), str(child_write)],
                                          pass_fds=(child_read, child_write), stdout=self._stdout,
                                          stderr=self._stderr, env=environment, start_new_session=True)
        except BaseException:
            for fd in (parent_read, parent_write):
                os.close(fd)
            raise
        finally:
            os.close(child_read)
            os.close(child_write)
        self._reader = _Reader(parent_read)
        self._writer = os.fdopen(parent_write, "wb")
        self._pending = False

    def kill(self):
        """Kills the worker process and everything it started; the next send() starts a new one."""
        proc, self._proc = self._proc, None
        self._pending = False
        self._remaining_uses = None
        if proc is None:
            return
        for close in (self._writer.close, lambda: os.close(self._reader._fd)):
            try:
                close()
            except OSError:
                pass
        self._writer = self._reader = None
        kill_child_processes(proc.pid)
        try:
            proc.kill()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def join(self, timeout=None):
        """Waits up to `timeout` seconds (None: for ever) for the worker process to end."""
        if self._proc is not None:
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass

    def is_alive(self):
        """True while the worker process runs."""
        return self._proc is not None and self._proc.poll() is None

    def _write(self, request):
        import cloudpickle

        payload = cloudpickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self._writer.write(_wire._HEADER.pack(len(payload)) + payload)
            self._writer.flush()
        except OSError:
            pass  # the worker is gone: recv() reports it

    def send(self, fn, args=(), kwargs=None, timeout=None):
        """Starts fn(*args, **kwargs) in the worker; recv() returns its result.

        `timeout` (seconds, None: none) limits the call itself. Raises what the initializer
        raises when a new process runs it, and pickling errors before anything is sent.
        """
        timeout = _check_timeout(timeout)
        if self._pending:
            raise RuntimeError("popen_pool: send() again before recv() took the previous call's result")
        request = (fn, tuple(args), dict(kwargs or {}), timeout)
        if self._proc is not None and self._maximum_uses is not None and self._remaining_uses == 0:
            self.kill()
        if self._proc is None:
            self._start()
            if self._initializer is not None:
                self._write((self._initializer, self._initargs, {}, None))
                self._pending, self._call_timeout = True, None
                try:
                    self.recv()
                except BaseException:
                    self.kill()
                    raise
            self._remaining_uses = self._maximum_uses
        self._write(request)
        self._pending, self._call_timeout = True, timeout
        if self._remaining_uses is not None:
            self._remaining_uses -= 1

    def _died(self):
        code = self._proc.poll() if self._proc is not None else None
        if code is None and self._proc is not None:
            try:
                code = self._proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        return ChildProcessError(f"popen_pool: the worker process {_describe_exit(code)} during the call")

    def recv(self):
        """The result of the last send().

        Raises ChildProcessError when the worker died, TimeoutError when the call ran past its
        timeout (the worker is killed in both cases), and the call's own exception, whose
        __cause__ holds the worker's traceback.
        """
        if not self._pending:
            raise RuntimeError("popen_pool: recv() without a send()")
        self._pending = False
        try:
            started = self._reader.read()
            if started is None or started[0] != _wire.STARTED:
                raise EOFError
            # The worker measures the call's timeout itself; this deadline, a grace later, only
            # catches a worker whose timer cannot run.
            deadline = None
            if self._call_timeout is not None:
                deadline = time.monotonic() + self._call_timeout + _TIMEOUT_GRACE_SECONDS
            reply = self._reader.read(deadline)
        except EOFError:
            raise self._died() from None
        if reply is None or reply[0] == _wire.TIMEOUT:
            self.kill()
            raise TimeoutError(f"popen_pool: the call did not finish within its timeout of {self._call_timeout} s; "
                               "its worker was killed")
        status, value = reply
        if status == _wire.EXCEPTION:
            error, text = value
            raise error from RemoteTraceback(text)
        return value

    def call(self, fn, args=(), kwargs=None, timeout=None):
        """send() then recv(): fn(*args, **kwargs) in the worker, its result or its error."""
        self.send(fn, args, kwargs, timeout)
        return self.recv()


class PopenPoolExecutor:
    """Calls in a pool of PopenWorkers behind concurrent.futures (TVM's PopenPoolExecutor).

    max_workers: parallel workers (None: os.cpu_count()); timeout: seconds per call (None: no
    limit); initializer(*initargs) runs in each new worker process; maximum_process_uses: a worker
    process is restarted after that many calls; stdout/stderr: the workers'. Thread-safe; call
    shutdown() (or use it as a context manager) rather than relying on garbage collection.
    """

    def __init__(self, max_workers=None, timeout=None, initializer=None, initargs=(), maximum_process_uses=None,
                 stdout=None, stderr=None, *, maxtasksperchild=None):
        # First: a constructor that raises leaves __del__ nothing to shut down.
        self._shutdown = True
        if maximum_process_uses is None:
            maximum_process_uses = maxtasksperchild  # devrt's earlier name
        self._timeout = _check_timeout(timeout)
        self._worker_args = (initializer, tuple(initargs), _check_uses("maximum_process_uses", maximum_process_uses),
                             stdout, stderr)
        if initializer is not None and not callable(initializer):
            raise TypeError(f"popen_pool: initializer must be callable, not {type(initializer).__name__}")
        if max_workers is None:
            max_workers = os.cpu_count() or 1
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"popen_pool: max_workers must be a positive int, not {max_workers!r}")
        self._workers = {}  # thread id -> PopenWorker
        self._lock = threading.Lock()
        self._threadpool = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers)
        self._shutdown = False

    def __del__(self):
        # Never wait here: a collector running this must not block on the pool's own threads.
        if not getattr(self, "_shutdown", True):
            try:
                self.shutdown(wait=False)
            except Exception:  # interpreter shutdown
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    def _worker(self):
        thread = threading.get_ident()
        with self._lock:
            worker = self._workers.get(thread)
            if worker is None:
                worker = self._workers[thread] = PopenWorker(*self._worker_args)
        return worker

    def _run(self, fn, args, kwargs):
        return self._worker().call(fn, args, kwargs, self._timeout)

    def _run_catching(self, fn, args, kwargs):
        try:
            return MapResult(StatusKind.COMPLETE, self._run(fn, args, kwargs))
        except TimeoutError as error:
            return MapResult(StatusKind.TIMEOUT, error)
        except Exception as error:  # reported in the result, as TVM does
            return MapResult(StatusKind.EXCEPTION, error)

    def submit(self, fn, *args, **kwargs):
        """Schedules fn(*args, **kwargs) in a worker; returns a concurrent.futures.Future."""
        return self._threadpool.submit(self._run, fn, args, kwargs)

    def map_with_error_catching(self, fn, iterator):
        """An iterator of MapResult(StatusKind, value), in order, for fn applied to each item:
        COMPLETE with the result, EXCEPTION or TIMEOUT with the exception."""
        return self._threadpool.map(lambda item: self._run_catching(fn, (item,), {}), iterator)

    def shutdown(self, wait=True):
        """Stops taking work. wait=True: the queued calls finish first; wait=False: they are
        cancelled and the running ones fail. Then every worker process is killed."""
        self._shutdown = True
        self._threadpool.shutdown(wait=wait, cancel_futures=not wait)
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        for worker in workers:
            worker.kill()
