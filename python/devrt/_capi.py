# SPDX-License-Identifier: Apache-2.0
"""libdevrt_c.so: finding and loading it (devrt._ext links it), devrt's exception classes and
status codes, and, through ctypes, the C API of the toolchain helpers (devrt_tc_*) that devrt.support
uses and the compiled module devrt._ext does not bind yet. Everything else goes through devrt._ext.
"""
import ctypes
import enum
import os
import pathlib

_HERE = pathlib.Path(__file__).resolve().parent
_SONAME = "libdevrt_c.so.0"


def _candidates():
    """Where libdevrt_c.so may be, most specific first."""
    explicit = os.environ.get("DEVRT_LIBRARY")
    if explicit:
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
            return ctypes.CDLL(candidate, mode=ctypes.RTLD_LOCAL)
        except OSError as error:
            tried.append(f"{candidate} ({error})")
    raise ImportError(
        "devrt: cannot load libdevrt_c.so; tried: " + "; ".join(tried) +
        ". Set DEVRT_LIBRARY to its path, or install devrt (README.md, 'Python').")


lib = _load()

from devrt import _ext  # noqa: E402 -- links libdevrt_c.so, loaded just above

# The C API's status codes by name: devrt.Status.INVALID_ARGUMENT, ... (never bare numbers).
Status = enum.IntEnum("Status", {name.upper(): number for name, number in _ext.STATUS_CODES.items()},
                      module="devrt")
Status.__doc__ = "A devrt status code, as the C API numbers it (DEVRT_STATUS_*); DevrtError.status holds one."

# ---- Types ---------------------------------------------------------------------------------------

c_status = ctypes.c_int32


class CCompileOptions(ctypes.Structure):  # devrt_tc_compile_options
    _fields_ = [("kind", ctypes.c_int32), ("output", ctypes.c_char_p), ("inputs", ctypes.c_void_p),
                ("num_inputs", ctypes.c_size_t), ("options", ctypes.c_void_p), ("num_options", ctypes.c_size_t),
                ("compiler", ctypes.c_char_p), ("launcher", ctypes.c_void_p), ("num_launcher", ctypes.c_size_t),
                ("env", ctypes.c_void_p), ("num_env", ctypes.c_size_t), ("working_directory", ctypes.c_char_p)]


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


class InvalidArgumentError(DevrtError, ValueError):
    """Something malformed was passed (a bad device, dtype, shape or name)."""


class OutOfRangeError(DevrtError, IndexError):
    """An offset, size or index lies outside what it refers to."""


class OutOfMemoryError(DevrtError, MemoryError):
    """An allocation could not be satisfied."""


ERROR_TYPES = {Status.INVALID_ARGUMENT: InvalidArgumentError, Status.OUT_OF_RANGE: OutOfRangeError,
               Status.UNAVAILABLE: UnavailableError, Status.UNSUPPORTED: UnsupportedError,
               Status.OUT_OF_MEMORY: OutOfMemoryError, Status.NOT_FOUND: NotFoundError,
               Status.TOOL_FAILED: ToolFailedError}
# Public as devrt.<name>: tracebacks and reprs say so, not devrt._capi.<name>.
for _public in (DevrtError, *ERROR_TYPES.values()):
    _public.__module__ = "devrt"
del _public


def last_error(status):
    """The exception for a failed call's status, with this thread's last error message."""
    message = lib.devrt_last_error().decode("utf-8", "replace")
    return ERROR_TYPES.get(status, DevrtError)(lib.devrt_status_name(status).decode(), message)


def check(status):
    """Raises the matching DevrtError when a call did not return DEVRT_STATUS_OK."""
    if status != Status.OK:
        raise last_error(status)


def take_string(pointer):
    """Decodes and frees a char* the C API handed over through a char** out parameter."""
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib.devrt_string_free(pointer)


def call_string(function, *args):
    """Calls a C function whose last parameter is char** and returns that string."""
    out = ctypes.c_void_p()
    check(function(*args, ctypes.byref(out)))
    return take_string(out)


def string_list(items):
    """A (const char* const*, count) pair for a list of str, kept alive by the returned array."""
    items = [os.fspath(item) for item in (items or [])]
    array = (ctypes.c_char_p * max(len(items), 1))(*[item.encode() for item in items])
    return array, len(items)


# ---- Prototypes ----------------------------------------------------------------------------------

_P = ctypes.c_void_p
_S = ctypes.c_size_t
_STR = ctypes.c_char_p
_OUT = ctypes.POINTER(ctypes.c_void_p)

_PROTOTYPES = {
    "devrt_api_version": (ctypes.c_uint32, []),
    "devrt_last_error": (_STR, []),
    "devrt_status_name": (_STR, [c_status]),
    "devrt_string_free": (None, [_P]),
}

_TOOLCHAIN_PROTOTYPES = {
    "devrt_tc_find_cxx_compiler": (c_status, [_OUT]),
    "devrt_tc_create_shared": (c_status, [_STR, _P, _S, _P, _S, _STR]),
    "devrt_tc_create_executable": (c_status, [_STR, _P, _S, _P, _S, _STR]),
    "devrt_tc_create_staticlib": (c_status, [_STR, _P, _S, _STR]),
    "devrt_tc_compile": (c_status, [ctypes.POINTER(CCompileOptions)]),
    "devrt_tc_target_triple": (c_status, [_STR, _OUT]),
    "devrt_tc_global_symbol_sections": (c_status, [_STR, _OUT]),
    "devrt_tc_find_cuda_path": (c_status, [_OUT]),
    "devrt_tc_cuda_version": (c_status, [_STR, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    "devrt_tc_compile_cuda": (c_status, [_STR, _STR, _P, _S, _P, _S, _STR, _OUT, ctypes.POINTER(_S)]),
    "devrt_tc_parse_compute_version": (c_status, [_STR, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    "devrt_tc_cuda_has_feature": (c_status, [_STR, _STR, ctypes.POINTER(ctypes.c_int)]),
    "devrt_tc_have_cudagraph": (ctypes.c_int, []),
    "devrt_tc_find_lld": (c_status, [ctypes.c_int, _OUT]),
    "devrt_tc_rocm_link": (c_status, [_STR, _STR, _STR]),
    "devrt_tc_tempdir_create": (c_status, [_STR, _OUT]),
    "devrt_tc_tempdir_path": (_STR, [_P]),
    "devrt_tc_tempdir_keep": (None, [_P]),
    "devrt_tc_tempdir_release": (None, [_P]),
    "devrt_tc_filelock_acquire": (c_status, [_STR, ctypes.c_int, _OUT]),
    "devrt_tc_filelock_release": (None, [_P]),
    "devrt_tc_tar_create": (c_status, [_STR, _P, _S]),
    "devrt_tc_tar_extract": (c_status, [_STR, _STR, _OUT]),
}


def _declare(prototypes):
    for name, (restype, argtypes) in prototypes.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


_declare(_PROTOTYPES)
#: True when libdevrt_c.so carries devrt_toolchain's C API (devrt.support needs it).
HAS_TOOLCHAIN = hasattr(lib, "devrt_tc_available")
if HAS_TOOLCHAIN:
    _declare(_TOOLCHAIN_PROTOTYPES)

API_VERSION = 2
if lib.devrt_api_version() != API_VERSION:
    raise ImportError(f"devrt: libdevrt_c.so speaks C API version {lib.devrt_api_version()}, "
                      f"this package speaks {API_VERSION}")
