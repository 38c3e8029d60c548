# SPDX-License-Identifier: Apache-2.0
"""Python callables in worker processes, with a timeout per call (TVM's tvm.contrib.popen_pool).

Workers are Python processes running devrt/support/_popen_worker.py, fed pickled calls, so a call that
crashes or hangs costs its worker, not the caller: a timeout kills the worker (and its children)
and the future raises TimeoutError; the next call starts a fresh worker. Functions and arguments
must be picklable (module-level functions of modules the workers can import: they get this
process's environment, with devrt's package directory added to PYTHONPATH).
"""
import concurrent.futures
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time

from devrt.support._popen_worker import read_message


class PopenWorker:
    """One worker process, started on first use. Not thread-safe: one call at a time."""

    def __init__(self, initializer=None, initargs=(), maxtasksperchild=None, stdout=None, stderr=None):
        self._initializer = initializer
        self._initargs = tuple(initargs)
        self._maxtasks = maxtasksperchild
        self._stdout = stdout
        self._stderr = stderr
        self._process = None
        self._tasks = 0

    def _start(self):
        environment = dict(os.environ)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, environment.get("PYTHONPATH")]))
        worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_popen_worker.py")
        self._process = subprocess.Popen([sys.executable, worker],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                         env=environment, start_new_session=True)
        self._tasks = 0
        if self._initializer is not None:
            self._exchange(("init", self._initializer, self._initargs, {}), None)

    def kill(self):
        """Stops the worker and everything it started."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        process.stdin.close()
        process.stdout.close()

    def _exchange(self, request, timeout):
        payload = pickle.dumps(request)
        try:
            self._process.stdin.write(struct.pack("<Q", len(payload)) + payload)
            self._process.stdin.flush()
        except BrokenPipeError:
            code = self._process.poll()
            self.kill()
            raise ChildProcessError(f"popen_pool: the worker exited (status {code}) before taking the call")
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._process.stdout], [], [], remaining)
            if ready:
                break
            if deadline is not None and time.monotonic() >= deadline:
                self.kill()
                raise TimeoutError(f"popen_pool: the call did not finish within {timeout} s; its worker was killed")
        reply = read_message(self._process.stdout)
        if reply is None:
            code = self._process.wait()
            self.kill()
            raise ChildProcessError(f"popen_pool: the worker died during the call (status {code})")
        succeeded, value = reply
        if not succeeded:
            raise value
        return value

    def call(self, function, args=(), kwargs=None, timeout=None):
        """Runs function(*args, **kwargs) in the worker and returns its result (or raises its error)."""
        if self._process is None or self._process.poll() is not None:
            self.kill()
            self._start()
        try:
            return self._exchange(("call", function, tuple(args), dict(kwargs or {})), timeout)
        finally:
            self._tasks += 1
            if self._maxtasks is not None and self._tasks >= self._maxtasks:
                self.kill()

    def __del__(self):
        self.kill()


class MapResult:
    """One result of map_with_error_catching: status is True with the value, or False with the error."""

    __slots__ = ("status", "value")

    def __init__(self, status, value):
        self.status = status
        self.value = value

    def __repr__(self):
        return f"MapResult(status={self.status}, value={self.value!r})"


class PopenPoolExecutor:
    """A pool of PopenWorkers behind concurrent.futures (TVM's PopenPoolExecutor).

    max_workers: parallel workers (default: the CPU count); timeout: seconds per call (None: no
    limit); initializer(*initargs) runs once in each new worker; maxtasksperchild restarts a worker
    after that many calls. Thread-safe.
    """

    def __init__(self, max_workers=None, timeout=None, initializer=None, initargs=(), maxtasksperchild=None,
                 stdout=None, stderr=None):
        self._timeout = timeout
        self._worker_args = (initializer, initargs, maxtasksperchild, stdout, stderr)
        self._threads = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers or os.cpu_count() or 1)
        self._local = threading.local()
        self._workers = []
        self._lock = threading.Lock()

    def _worker(self):
        worker = getattr(self._local, "worker", None)
        if worker is None:
            worker = PopenWorker(*self._worker_args)
            self._local.worker = worker
            with self._lock:
                self._workers.append(worker)
        return worker

    def submit(self, fn, *args, **kwargs):
        """Schedules fn(*args, **kwargs) in a worker; returns a concurrent.futures.Future."""
        return self._threads.submit(lambda: self._worker().call(fn, args, kwargs, self._timeout))

    def map_with_error_catching(self, fn, iterator):
        """[MapResult] for fn applied to each item, errors (timeouts included) caught per item."""
        futures = [self.submit(fn, item) for item in iterator]
        results = []
        for future in futures:
            try:
                results.append(MapResult(True, future.result()))
            except Exception as error:  # reported in the result, as TVM does
                results.append(MapResult(False, error))
        return results

    def shutdown(self, wait=True):
        """Stops accepting work and kills the workers once the queued calls are done (wait=True)."""
        self._threads.shutdown(wait=wait)
        with self._lock:
            for worker in self._workers:
                worker.kill()
            self._workers.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    def __del__(self):
        try:
            self.shutdown(wait=False)
        except Exception:  # interpreter shutdown: nothing left to report to
            pass
