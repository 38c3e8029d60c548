# SPDX-License-Identifier: Apache-2.0
"""CUDA compilation and facts (TVM's tvm.contrib.nvcc), over devrt_toolchain.

compile_cuda(compiler="nvrtc") uses devrt's own NVRTC path (libnvrtc opened with dlopen); no
cuda-python is needed.
"""

from devrt.support._toolchain import require


def compile_cuda(code, target_format=None, arch=None, options=None, path_target=None, compiler="nvcc"):
    """Compiles CUDA C++ source to "ptx", "cubin" or "fatbin" and returns the bytes.

    `target_format` None: "ptx" with nvcc, "cubin" with NVRTC (TVM's defaults); `arch`: "sm_90"
    or a list of them (None: cuda:0's, or the compiler's default); `options`: a string or a list;
    `path_target`: also write the result there; `compiler`: "nvcc" or "nvrtc".
    Raises ToolFailedError with the compiler's log, UnavailableError without a compiler.
    """
    library = require()
    if target_format is None:
        target_format = "cubin" if compiler == "nvrtc" else "ptx"
    archs = [] if arch is None else [arch] if isinstance(arch, str) else list(arch)
    flags = [] if options is None else options.split() if isinstance(options, str) else list(options)
    result = library.tc_compile_cuda(code, target_format, archs, flags, compiler)
    if path_target:
        with open(path_target, "wb") as out:
            out.write(result)
    return result


def find_cuda_path():
    """The CUDA toolkit's root ($CUDA_PATH, $CUDA_HOME, nvcc's parent, /usr/local/cuda).

    Raises UnavailableError (saying what was tried) when there is none."""
    return require().tc_find_cuda_path()


def get_cuda_version(cuda_path=None):
    """The toolkit version as a tuple of ints, (13, 0), comparable with (10, 0) (TVM's convention).

    Raises UnavailableError when no toolkit is found."""
    return require().tc_cuda_version(cuda_path or None)


def _target_arch(target):
    """The "arch" of a target given as a dict, a TVM-style object with .attrs, or a string such as
    "cuda -arch=sm_90a" or "nvidia/nvidia-h100"; "" when it names none."""
    if target is None:
        return ""
    if isinstance(target, str):
        for word in target.split():
            if word.startswith("-arch="):
                return word[len("-arch="):]
        if target.strip().startswith("{"):
            import json

            return str(json.loads(target).get("arch", ""))
        return ""
    attrs = getattr(target, "attrs", target)
    try:
        return str(attrs.get("arch", "") or "")
    except AttributeError:
        raise TypeError(f"nvcc: a target is a str, a dict or an object with .attrs, not {type(target).__name__}") from None


def get_target_compute_version(target=None):
    """The compute capability to compile for, as TVM writes it: "8.6", or "9.0.a" for an
    architecture-specific target.

    From the target's "arch" ("sm_86" -> "8.6", "sm_90a" -> "9.0.a", "sm_100a" -> "10.0.a") when it
    has one, else from cuda(0) (with ".a" on compute 9.0 and later, as TVM does); ValueError when
    there is neither."""
    arch = _target_arch(target)
    if arch:
        digits = arch.split("_", 1)[1] if "_" in arch else ""
        suffix = ""
        if digits and digits[-1].isalpha():
            digits, suffix = digits[:-1], digits[-1]
        if len(digits) < 2 or not digits.isdigit():
            raise ValueError(f"nvcc: the target's arch {arch!r} is not sm_XY[a]")
        version = f"{digits[:-1]}.{digits[-1]}"
        return f"{version}.{suffix}" if suffix else version
    from devrt import cuda

    device = cuda(0)
    if device.exist:
        version = device.compute_version
        major = version.split(".")[0]
        if major.isdigit() and int(major) >= 9:
            return version + ".a"
        return version
    raise ValueError("nvcc: no CUDA architecture was specified and no CUDA device is present; give a target "
                     "with an arch (\"cuda -arch=sm_90a\" or {\"arch\": \"sm_90a\"})")


def parse_compute_version(compute_version):
    """Every form get_target_compute_version returns or a target holds -> (major, minor): "8.6",
    "9.0.a", "10.0.a", "sm_86", "sm_90a", "compute_80". InvalidArgumentError (a ValueError and
    a RuntimeError, as TVM raises) otherwise."""
    if not isinstance(compute_version, str):
        raise TypeError(f"nvcc: a compute version is a str, not {type(compute_version).__name__}")
    return require().tc_parse_compute_version(compute_version)


def _has(feature, compute_version):
    parse_compute_version(compute_version)  # the type and form checks, with their messages
    return require().tc_cuda_has_feature(feature, compute_version)


def have_fp16(compute_version):
    """fp16 arithmetic: compute 5.3 and >= 6.0."""
    return _has("fp16", compute_version)


def have_int8(compute_version):
    """int8 dot products (dp4a): compute >= 6.1."""
    return _has("int8", compute_version)


def have_tensorcore(compute_version=None, target=None):
    """Tensor cores: compute >= 7.0. Without a compute version, TVM's order: cuda(0)'s when it is
    present, else the target's arch; False (with a warning) when there is neither."""
    if compute_version is None:
        from devrt import cuda

        if cuda(0).exist:
            compute_version = cuda(0).compute_version
        else:
            compute_version = _target_arch(target)
            if not compute_version:
                import warnings

                warnings.warn("nvcc: tensor cores disabled: no CUDA device and no arch in the target "
                              "(add -arch=sm_XY)", stacklevel=2)
                return False
    return _has("tensorcore", compute_version)


def have_bf16(compute_version):
    """bfloat16 arithmetic: compute >= 8.0."""
    return _has("bf16", compute_version)


def have_fp8(compute_version):
    """fp8 arithmetic: compute 8.9 (Ada) and later."""
    return _has("fp8", compute_version)


def have_fp4(compute_version):
    """fp4 arithmetic: compute 10.0 (Blackwell datacenter)."""
    return _has("fp4", compute_version)


def have_cudagraph():
    """True when the CUDA toolkit found supports CUDA graphs (>= 10.0)."""
    return require().tc_have_cudagraph()
