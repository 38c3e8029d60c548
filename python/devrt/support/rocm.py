# SPDX-License-Identifier: Apache-2.0
"""ROCm linking (TVM's tvm.contrib.rocm), over devrt_toolchain."""

from devrt import _capi
from devrt.support._toolchain import require


def find_lld(required=True):
    """[path of ld.lld] (devrt's search: ld.lld-<clang major>, ld.lld, /opt/rocm/llvm/bin/ld.lld, ...).

    An empty list when none is found and `required` is False; else UnavailableError."""
    try:
        return [require().tc_find_lld(0)]
    except _capi.UnavailableError:
        if required:
            raise
        return []


def rocm_link(in_file, out_file, lld=None):
    """Links a relocatable AMDGPU object into a code object (`ld.lld -shared`), which hipModuleLoad takes."""
    require().tc_rocm_link(in_file, out_file, lld or None)
