# SPDX-License-Identifier: Apache-2.0
"""numpy <-> devrt through DLPack, values checked both ways.

Usage: numpy_dlpack.py <path to libdevrt_numpy_shim.so>. Exit 77 (skip) when numpy is missing.
"""
import ctypes
import gc
import sys

try:
    import numpy as np
except ImportError as error:
    print(f"SKIP: numpy is not importable by {sys.executable}: {error}")
    sys.exit(77)

lib = ctypes.CDLL(sys.argv[1])
lib.shim_export.restype = ctypes.c_void_p
lib.shim_export.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_float]
lib.shim_export_versioned.restype = ctypes.c_void_p
lib.shim_export_versioned.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_float]
lib.shim_last_error.restype = ctypes.c_char_p
IMPORT_ARGS = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64), ctypes.c_int32,
               ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, ctypes.c_size_t]
lib.shim_import.argtypes = IMPORT_ARGS
lib.shim_import_versioned.argtypes = IMPORT_ARGS

capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = ctypes.c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
capsule_set_name.restype = ctypes.c_int
capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
DESTRUCTOR = ctypes.cast(lib.shim_capsule_destructor, ctypes.c_void_p)

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


class DevrtTensor:
    """The smallest DLPack producer: one devrt CPU tensor, exported once."""

    def __init__(self, rows, cols, seed):
        self.shape, self.seed = (rows, cols), seed

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if max_version is not None and max_version[0] >= 1:
            ptr = lib.shim_export_versioned(*self.shape, self.seed)
            return capsule_new(ptr, b"dltensor_versioned", DESTRUCTOR)
        ptr = lib.shim_export(*self.shape, self.seed)
        return capsule_new(ptr, b"dltensor", DESTRUCTOR)


def expected(rows, cols, seed):
    return (np.arange(rows * cols, dtype=np.float32) * np.float32(0.5) + np.float32(seed)).reshape(rows, cols)


# ---- devrt -> numpy ---------------------------------------------------------------------------
arr = np.from_dlpack(DevrtTensor(3, 4, 1.5))
check(arr.shape == (3, 4) and arr.dtype == np.float32, f"numpy sees a 3x4 float32 array (got {arr.shape} {arr.dtype})")
check(np.array_equal(arr, expected(3, 4, 1.5)), "numpy reads devrt's values")
check(lib.shim_live() == 1, "the export stays alive while numpy holds it")
view = arr[1:, ::2]
del arr
gc.collect()
check(lib.shim_live() == 1 and np.array_equal(view, expected(3, 4, 1.5)[1:, ::2]), "a numpy view keeps it alive")
del view
gc.collect()
check(lib.shim_live() == 0 and lib.shim_deleted() == 1, "numpy called the deleter exactly once")

capsule = DevrtTensor(2, 2, 0.0).__dlpack__()
del capsule
gc.collect()
check(lib.shim_live() == 0 and lib.shim_deleted() == 2, "an unconsumed capsule deletes its tensor")

try:
    arr = np.from_dlpack(DevrtTensor(5, 7, -3.0), copy=None)  # numpy >= 2.1 asks for the versioned struct
    check(np.array_equal(arr, expected(5, 7, -3.0)), "numpy reads a versioned export")
    del arr
    gc.collect()
except TypeError:
    print(f"note: numpy {np.__version__} speaks only unversioned DLPack; versioned export checked in unit tests")
check(lib.shim_live() == 0, "no export is left alive")


# ---- numpy -> devrt ---------------------------------------------------------------------------
def import_into_devrt(array):
    capsule = array.__dlpack__()
    ptr = capsule_pointer(capsule, b"dltensor")
    capsule_set_name(capsule, b"used_dltensor")  # devrt owns it now; numpy must not delete it again
    out = np.empty(array.shape, dtype=array.dtype)
    shape = (ctypes.c_int64 * 8)()
    ndim = ctypes.c_int32()
    dtype = ctypes.create_string_buffer(32)
    code = lib.shim_import(ptr, out.ctypes.data, out.nbytes, shape, 8, ctypes.byref(ndim), dtype, 32)
    del capsule
    return code, out, tuple(shape[: ndim.value]), dtype.value.decode()


for name, array in [
    ("float64 4x5", np.arange(20, dtype=np.float64).reshape(4, 5) * 1.25),
    ("int32 transposed (strided)", np.arange(24, dtype=np.int32).reshape(4, 6).T),
    ("uint8 every other column", np.arange(60, dtype=np.uint8).reshape(6, 10)[:, ::2]),
    ("float32 reversed rows", np.arange(12, dtype=np.float32).reshape(3, 4)[::-1]),
    ("float32 scalar", np.array(2.5, dtype=np.float32)),
    ("int64 empty", np.zeros((0, 3), dtype=np.int64)),
]:
    refs_before = sys.getrefcount(array)
    code, out, shape, dtype = import_into_devrt(array)
    gc.collect()
    check(code == 0, f"devrt imports {name} (code {code}: {lib.shim_last_error().decode()})")
    check(shape == array.shape, f"devrt sees shape {array.shape} for {name} (got {shape})")
    check(dtype == str(array.dtype), f"devrt sees dtype {array.dtype} for {name} (got {dtype})")
    check(np.array_equal(out, array), f"devrt reads numpy's values for {name}")
    check(sys.getrefcount(array) == refs_before, f"devrt called numpy's deleter for {name}")

# A malformed tensor from numpy's capsule: devrt refuses it and still calls numpy's deleter.
array = np.arange(6, dtype=np.float32)
refs_before = sys.getrefcount(array)
capsule = array.__dlpack__()
ptr = capsule_pointer(capsule, b"dltensor")
capsule_set_name(capsule, b"used_dltensor")
ctypes.c_int32.from_address(ptr + 8 + 8).value = -1  # DLTensor::ndim, after data and device
out = np.empty(6, dtype=np.float32)
code = lib.shim_import(ptr, out.ctypes.data, out.nbytes, (ctypes.c_int64 * 8)(), 8, ctypes.byref(ctypes.c_int32()),
                       ctypes.create_string_buffer(32), 32)
del capsule
gc.collect()
check(code == 1 and b"ndim -1" in lib.shim_last_error(), "devrt refuses ndim -1 with invalid_argument")
check(sys.getrefcount(array) == refs_before, "and numpy's deleter still ran once")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
