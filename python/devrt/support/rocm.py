# SPDX-License-Identifier: Apache-2.0
"""ROCm linking (TVM's tvm.contrib.rocm), over devrt_toolchain."""
import os

from devrt import _capi
from devrt._capi import check
from devrt.support._toolchain import require


def find_lld(required=True):
    """[path of ld.lld] (devrt's search: ld.lld-<clang major>, ld.lld, /opt/rocm/llvm/bin/ld.lld, ...).

    An empty list when none is found and `required` is False; else UnavailableError."""
    try:
        return [_capi.call_string(require().devrt_tc_find_lld, 0)]
    except _capi.UnavailableError:
        if required:
            raise
        return []


def rocm_link(in_file, out_file, lld=None):
    """Links a relocatable AMDGPU object into a code object (`ld.lld -shared`), which hipModuleLoad takes."""
    check(require().devrt_tc_rocm_link(os.fsencode(in_file), os.fsencode(out_file),
                                       os.fsencode(lld) if lld else None))
