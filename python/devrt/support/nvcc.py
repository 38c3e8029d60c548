# SPDX-License-Identifier: Apache-2.0
"""CUDA compilation and facts (TVM's tvm.contrib.nvcc), over devrt_toolchain.

compile_cuda(compiler="nvrtc") uses devrt's own NVRTC path (libnvrtc opened with dlopen); no
cuda-python is needed.
"""
import ctypes
import os

from devrt import _capi
from devrt._capi import check
from devrt.support._toolchain import require


def compile_cuda(code, target_format="ptx", arch=None, options=None, path_target=None, compiler="nvcc"):
    """Compiles CUDA C++ source to "ptx", "cubin" or "fatbin" and returns the bytes.

    `arch`: "sm_90" or a list of them (None: cuda:0's, or the compiler's default); `options`: a
    string or a list; `path_target`: also write the result there; `compiler`: "nvcc" or "nvrtc".
    Raises ToolFailedError with the compiler's log, UnavailableError without a compiler.
    """
    library = require()
    archs = [] if arch is None else [arch] if isinstance(arch, str) else list(arch)
    flags = [] if options is None else options.split() if isinstance(options, str) else list(options)
    arch_list, arch_count = _capi.string_list(archs)
    flag_list, flag_count = _capi.string_list(flags)
    data = ctypes.c_void_p()
    size = ctypes.c_size_t()
    check(library.devrt_tc_compile_cuda(code.encode(), (target_format or "ptx").encode(), arch_list, arch_count,
                                        flag_list, flag_count, compiler.encode(), ctypes.byref(data),
                                        ctypes.byref(size)))
    try:
        result = ctypes.string_at(data, size.value)
    finally:
        library.devrt_string_free(data)
    if path_target:
        with open(path_target, "wb") as out:
            out.write(result)
    return result


def find_cuda_path():
    """The CUDA toolkit's root ($CUDA_PATH, $CUDA_HOME, nvcc's parent, /usr/local/cuda).

    Raises UnavailableError (saying what was tried) when there is none."""
    return _capi.call_string(require().devrt_tc_find_cuda_path)


def get_cuda_version(cuda_path=None):
    """The toolkit version as a float, 13.0 (TVM's convention)."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    check(require().devrt_tc_cuda_version(os.fsencode(cuda_path) if cuda_path else None, ctypes.byref(major),
                                          ctypes.byref(minor)))
    return float(f"{major.value}.{minor.value}")


def parse_compute_version(compute_version):
    """"8.6", "sm_86" or "compute_86" -> (8, 6); ValueError otherwise."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    check(require().devrt_tc_parse_compute_version(str(compute_version).encode(), ctypes.byref(major),
                                                   ctypes.byref(minor)))
    return major.value, minor.value


def _has(feature, compute_version):
    result = ctypes.c_int()
    check(require().devrt_tc_cuda_has_feature(feature.encode(), str(compute_version).encode(), ctypes.byref(result)))
    return bool(result.value)


def have_fp16(compute_version):
    """fp16 arithmetic: compute 5.3 and >= 6.0."""
    return _has("fp16", compute_version)


def have_int8(compute_version):
    """int8 dot products (dp4a): compute >= 6.1."""
    return _has("int8", compute_version)


def have_tensorcore(compute_version=None, target=None):
    """Tensor cores: compute >= 7.0. With no compute version, cuda:0's (or target's "arch")."""
    if compute_version is None:
        if target is not None and "arch" in target:
            compute_version = target["arch"]
        else:
            from devrt import cuda

            compute_version = cuda(0).compute_version
            if compute_version is None:
                return False
    return _has("tensorcore", compute_version)


def have_bf16(compute_version):
    """bfloat16 arithmetic: compute >= 8.0."""
    return _has("bf16", compute_version)


def have_cudagraph():
    """True when the CUDA toolkit found supports CUDA graphs (>= 10.0)."""
    return bool(require().devrt_tc_have_cudagraph())
