# SPDX-License-Identifier: Apache-2.0
"""Temporary directories and file locks (TVM's tvm.contrib.utils), over devrt_toolchain."""
import ctypes
import os

from devrt._capi import check
from devrt.support._toolchain import require


class TempDirectory:
    """A fresh directory, removed with its contents by remove(), on leaving a `with`, or when the
    object dies, unless kept (keep_for_debug, or DEVRT_KEEP_TEMPDIR=1 in the environment)."""

    def __init__(self, custom_path=None, keep_for_debug=False):
        self._handle = None
        if custom_path is not None:
            os.makedirs(custom_path, exist_ok=True)
            self.temp_dir = os.fspath(custom_path)
            return
        library = require()
        handle = ctypes.c_void_p()
        check(library.devrt_tc_tempdir_create(b"devrt-", ctypes.byref(handle)))
        self._handle = handle
        self.temp_dir = library.devrt_tc_tempdir_path(handle).decode()
        if keep_for_debug:
            library.devrt_tc_tempdir_keep(handle)

    @property
    def path(self):
        return self.temp_dir

    def relpath(self, name):
        """The path of `name` inside the directory."""
        return os.path.join(self.temp_dir, name)

    def listdir(self):
        """The names in the directory."""
        return os.listdir(self.temp_dir)

    def remove(self):
        """Removes the directory now (unless kept, or given as custom_path)."""
        if self._handle:
            require().devrt_tc_tempdir_release(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __del__(self):
        if getattr(self, "_handle", None):
            self.remove()


def tempdir(custom_path=None, keep_for_debug=None):
    """A TempDirectory (TVM's utils.tempdir)."""
    return TempDirectory(custom_path, bool(keep_for_debug))


class FileLock:
    """An exclusive advisory lock on a file (created if missing), between processes and within one.

    Acquired on construction (waiting, or raising UnavailableError at once with blocking=False);
    released by release(), on leaving a `with`, or when the object dies."""

    def __init__(self, path, blocking=True):
        self.path = os.fspath(path)
        handle = ctypes.c_void_p()
        check(require().devrt_tc_filelock_acquire(os.fsencode(self.path), 1 if blocking else 0, ctypes.byref(handle)))
        self._handle = handle

    def release(self):
        """Releases the lock (idempotent)."""
        if self._handle:
            require().devrt_tc_filelock_release(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __del__(self):
        if getattr(self, "_handle", None):
            self.release()


def filelock(path):
    """A FileLock on `path` (TVM's utils.filelock)."""
    return FileLock(path)
