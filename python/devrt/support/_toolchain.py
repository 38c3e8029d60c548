# SPDX-License-Identifier: Apache-2.0
"""The devrt_toolchain functions of libdevrt_c.so, for the support modules."""
from devrt import _capi
from devrt._capi import UnsupportedError, lib


def require():
    """The library, or UnsupportedError when it was built without devrt_toolchain."""
    if not _capi.HAS_TOOLCHAIN:
        raise UnsupportedError("unsupported", "devrt.support: this libdevrt_c.so was built without devrt_toolchain "
                               "(-Dtoolchain=disabled or libarchive missing)")
    return lib
