# SPDX-License-Identifier: Apache-2.0
"""Temporary directories and file locks (TVM's tvm.support.utils).

Every TempDirectory not kept is removed when the program exits (an atexit hook), and creating one
after that hook ran raises DirectoryCreatedPastAtExit. Kept directories (keep_for_debug, or
TempDirectory.set_keep_for_debug) live under <tmp>/devrt-debug-mode-tempdirs/<time>___<random>/,
numbered in creation order. DEVRT_KEEP_TEMPDIR keeps them all when set to a true value (1, true, on,
yes), read by the C++ library's rule for boolean variables, as in devrt_toolchain.
"""
import atexit
import datetime
import os
import pathlib
import shutil
import tempfile
import threading

from devrt import _ext
from devrt.support._toolchain import require


class DirectoryCreatedPastAtExit(Exception):
    """A TempDirectory was created after the exit hook that removes them had run."""


class _KeepForDebug:
    """What set_keep_for_debug returns: the setting is made at once; as a context manager it
    is put back on exit."""

    def __init__(self, owner, previous):
        self._owner = owner
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._owner._KEEP_FOR_DEBUG = self._previous


class TempDirectory:
    """A fresh directory, removed with its contents by remove(), on leaving a `with`, when the
    object is collected, or at exit, unless kept for debugging (TVM's TempDirectory).

    custom_path: create exactly that directory (it must not exist) instead of a random one.
    keep_for_debug: True keeps this one, False removes it even while set_keep_for_debug(True)
    holds, None follows set_keep_for_debug. Thread-safe to create.
    """

    _KEEP_FOR_DEBUG = _ext.environment_flag("DEVRT_KEEP_TEMPDIR", False)
    _lock = threading.Lock()
    _debug_parent = None
    _debug_count = 0
    #: Directories to remove at exit; None once the exit hook ran.
    TEMPDIRS = set()

    @classmethod
    def set_keep_for_debug(cls, set_to=True):
        """Keeps (or, with False, stops keeping) the directories created from now on, past exit.

        Takes effect at once; used as a context manager (`with TempDirectory.set_keep_for_debug():`)
        it puts the previous setting back on leaving.
        """
        previous = cls._KEEP_FOR_DEBUG
        cls._KEEP_FOR_DEBUG = bool(set_to)
        return _KeepForDebug(cls, previous)

    @classmethod
    def remove_tempdirs(cls):
        """Removes every directory not kept; the exit hook. Later creations raise."""
        with cls._lock:
            directories, cls.TEMPDIRS = cls.TEMPDIRS, None
        for path in directories or ():
            shutil.rmtree(path, ignore_errors=True)

    @classmethod
    def _debug_directory(cls):
        with cls._lock:
            if cls._debug_parent is None:
                root = os.path.join(tempfile.gettempdir(), "devrt-debug-mode-tempdirs")
                os.makedirs(root, exist_ok=True)
                stamp = datetime.datetime.now().strftime("%Y-%m-%dT%H-%M-%S___")
                cls._debug_parent = tempfile.mkdtemp(prefix=stamp, dir=root)
            number = cls._debug_count
            cls._debug_count += 1
        path = os.path.join(cls._debug_parent, f"{number:05d}")
        os.mkdir(path)
        return path

    def __init__(self, custom_path=None, keep_for_debug=None):
        self.temp_dir = None
        if TempDirectory.TEMPDIRS is None:
            raise DirectoryCreatedPastAtExit(
                "devrt.support.utils: a TempDirectory was created after the exit hook removed the others")
        self._keep = self._KEEP_FOR_DEBUG if keep_for_debug is None else bool(keep_for_debug)
        if custom_path is not None:
            os.mkdir(custom_path)
            path = os.fspath(custom_path)
        elif self._keep:
            path = self._debug_directory()
        else:
            path = tempfile.mkdtemp(prefix="devrt-")
        self.temp_dir = path
        if not self._keep:
            with TempDirectory._lock:
                if TempDirectory.TEMPDIRS is not None:
                    TempDirectory.TEMPDIRS.add(path)

    def remove(self):
        """Removes the directory and its contents now (a kept one stays); idempotent."""
        path, self.temp_dir = self.temp_dir, None
        if path is None or self._keep:
            return
        shutil.rmtree(path, ignore_errors=True)
        with TempDirectory._lock:
            if TempDirectory.TEMPDIRS is not None:
                TempDirectory.TEMPDIRS.discard(path)

    @property
    def path(self):
        """The directory as a pathlib.Path."""
        return pathlib.Path(self.temp_dir)

    def relpath(self, name):
        """The path (a str) of `name` inside the directory."""
        return os.path.join(self.temp_dir, name)

    def listdir(self):
        """The names in the directory."""
        return os.listdir(self.temp_dir)

    def __truediv__(self, other):
        if not isinstance(other, (str, pathlib.PurePath)):
            raise TypeError(f"TempDirectory / operand must be a str or a pathlib.Path, not {type(other).__name__}")
        return self.path / other

    def __fspath__(self):
        return self.temp_dir

    def __repr__(self):
        return f"TempDirectory({self.temp_dir!r}{', kept' if self._keep else ''})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __del__(self):
        # After the exit hook ran the directory is gone already, or kept.
        if TempDirectory.TEMPDIRS is not None and getattr(self, "temp_dir", None) is not None:
            self.remove()


atexit.register(TempDirectory.remove_tempdirs)


def tempdir(custom_path=None, keep_for_debug=None):
    """A new TempDirectory (TVM's utils.tempdir)."""
    return TempDirectory(custom_path, keep_for_debug)


class FileLock:
    """An exclusive advisory lock on a file (created if missing), between processes and between
    threads of one process (TVM's FileLock).

    Acquired on construction, waiting for the holder (blocking=False raises UnavailableError at
    once instead); released by release(), on leaving a `with`, or when the object is collected.
    """

    def __init__(self, path, blocking=True):
        self._handle = None
        self.path = os.fspath(path)
        self._handle = require().tc_filelock_acquire(self.path, bool(blocking))

    def release(self):
        """Releases the lock (idempotent)."""
        if self._handle is not None:
            require().tc_filelock_release(self._handle)
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


def is_source_path(path):
    """True when `path` names an existing file, or looks like a file name with an extension
    rather than source text (TVM's utils.is_source_path)."""
    if os.path.exists(path):
        return True
    if "\n" in path:
        return False
    parts = path.rsplit(".", 1)
    return len(parts) == 2 and parts[1].strip() == parts[1]


def which(name):
    """The full path of an executable on PATH (or given with a directory), or None."""
    return shutil.which(name)
