# SPDX-License-Identifier: Apache-2.0
"""libdevrt_c.so: finding and opening it (devrt._loader; devrt._ext links it), devrt's exception
classes and status codes. Every call into the library goes through devrt._ext.
"""
import enum
import os
import pathlib

from devrt import _loader

_HERE = pathlib.Path(__file__).resolve().parent
_SONAME = "libdevrt_c.so.0"


def _candidates():
    """Where libdevrt_c.so may be, most specific first."""
    explicit = os.environ.get("DEVRT_LIBRARY")
    if explicit:
        # The rule of every library variable (docs/environment.md): an absolute path or a bare
        # library name; a relative path would name another file in each working folder.
        if os.sep in explicit and not os.path.isabs(explicit):
            raise ImportError(f"devrt: DEVRT_LIBRARY={explicit} is a relative path: name an absolute path or a "
                              "bare library name")
        yield explicit
        return
    # A wheel built by meson-python keeps the project's libraries beside the package (the real
    # file only, libdevrt_c.so.<version>: wheels hold no symbolic links).
    wheel_libs = sorted((_HERE.parent / ".devrt.mesonpy.libs").glob(_SONAME + "*"))
    yield str(wheel_libs[-1]) if wheel_libs else str(_HERE.parent / ".devrt.mesonpy.libs" / _SONAME)
    # `meson install` records where it put the library.
    try:
        from devrt import _install

        yield str(pathlib.Path(_install.LIBDIR) / _SONAME)
    except ImportError:
        pass
    # Otherwise the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig's cache).
    yield _SONAME


def _load():
    tried = []
    for candidate in _candidates():
        if os.sep in candidate and not os.path.exists(candidate):
            tried.append(f"{candidate} (no such file)")
            continue
        try:
            _loader.open(candidate)
            return candidate
        except OSError as error:
            tried.append(f"{candidate} ({error})")
    raise ImportError(
        "devrt: cannot load libdevrt_c.so; tried: " + "; ".join(tried) +
        ". Set DEVRT_LIBRARY to its path, or install devrt (README.md, 'Python').")


#: The libdevrt_c.so devrt opened (a path, or the soname the dynamic loader found).
LIBRARY = _load()

from devrt import _ext  # noqa: E402 -- links libdevrt_c.so, loaded just above

# The C API's status codes by name: devrt.Status.INVALID_ARGUMENT, ... (never bare numbers).
Status = enum.IntEnum("Status", {name.upper(): number for name, number in _ext.STATUS_CODES.items()},
                      module="devrt")
Status.__doc__ = "A devrt status code, as the C API numbers it (DEVRT_STATUS_*); DevrtError.status holds one."

# ---- Errors --------------------------------------------------------------------------------------

class DevrtError(RuntimeError):
    """A devrt call failed; `code` is the status name ("invalid_argument", ...), `status` the
    devrt.Status member."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.status = Status[code.upper()] if code.upper() in Status.__members__ else None


class UnavailableError(DevrtError):
    """The backend or device cannot be used here (no driver, no device)."""


class UnsupportedError(DevrtError):
    """The backend does not implement this operation."""


class NotFoundError(DevrtError, LookupError):
    """A named thing (backend, kernel, plugin) does not exist."""


class ToolFailedError(DevrtError):
    """An external tool (compiler, linker, archiver) ran and failed; the message holds its output."""


class PermissionDeniedError(DevrtError, PermissionError):
    """Refused for want of a right: a devrt-server that requires a key, or a limit of its clients."""


class InvalidArgumentError(DevrtError, ValueError):
    """Something malformed was passed (a bad device, dtype, shape or name)."""


class OutOfRangeError(DevrtError, IndexError):
    """An offset, size or index lies outside what it refers to."""


class OutOfMemoryError(DevrtError, MemoryError):
    """An allocation could not be satisfied."""


ERROR_TYPES = {Status.INVALID_ARGUMENT: InvalidArgumentError, Status.OUT_OF_RANGE: OutOfRangeError,
               Status.UNAVAILABLE: UnavailableError, Status.UNSUPPORTED: UnsupportedError,
               Status.OUT_OF_MEMORY: OutOfMemoryError, Status.NOT_FOUND: NotFoundError,
               Status.TOOL_FAILED: ToolFailedError, Status.PERMISSION_DENIED: PermissionDeniedError}
# Public as devrt.<name>: tracebacks and reprs say so, not devrt._capi.<name>.
for _public in (DevrtError, *ERROR_TYPES.values()):
    _public.__module__ = "devrt"
del _public


#: True when libdevrt_c.so carries devrt_toolchain (devrt.support needs it).
HAS_TOOLCHAIN = bool(_ext.HAS_TOOLCHAIN)

API_VERSION = 2
if _ext.C_API_VERSION != API_VERSION:
    raise ImportError(f"devrt: libdevrt_c.so speaks C API version {_ext.C_API_VERSION}, "
                      f"this package speaks {API_VERSION}")
