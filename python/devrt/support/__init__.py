# SPDX-License-Identifier: Apache-2.0
"""Compiler and tool helpers a JIT needs, with the names of TVM's tvm.support / tvm.contrib.

- libinfo(), describe(): what devrt was built with;
- cc: host compilers (get_cc, create_shared, create_staticlib, create_executable, cross_compiler,
  get_target_by_dump_machine, get_global_symbol_section_map);
- nvcc: CUDA (compile_cuda with nvcc or devrt's NVRTC, find_cuda_path, get_cuda_version,
  parse_compute_version, have_fp16/int8/tensorcore/bf16/cudagraph);
- rocm: find_lld, rocm_link;
- popen_pool: PopenPoolExecutor (Python callables in worker processes, with timeouts);
- utils: tempdir, FileLock;
- tar: tar, untar.

Everything but popen_pool runs devrt_toolchain's C++ through libdevrt_c.so; popen_pool runs
Python callables, which only Python worker processes can.
"""
import json

from devrt import _ext
from devrt.support import cc, nvcc, popen_pool, rocm, tar, utils  # noqa: F401


def libinfo():
    """devrt's build facts as a dict of str (TVM's libinfo): version, git_revision, compiler,
    build_type, sanitizers, backends, plugins, logging, dlpack, fmt and each backend's headers."""
    facts = {"version": _ext.version()}
    facts.update(json.loads(_ext.build_info_json()))
    return {key: (("ON" if value else "OFF") if isinstance(value, bool) else str(value)) for key, value in facts.items()}


def describe():
    """Prints the build facts and every backend's state, as `devrt-info --build` does."""
    print(_ext.describe(), end="")
