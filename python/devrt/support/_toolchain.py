# SPDX-License-Identifier: Apache-2.0
"""The devrt_toolchain functions of libdevrt_c.so (devrt._ext's tc_*), for the support modules."""
from devrt import _capi, _ext
from devrt._capi import UnsupportedError


def require():
    """devrt._ext, or UnsupportedError when libdevrt_c.so was built without devrt_toolchain."""
    if not _capi.HAS_TOOLCHAIN:
        raise UnsupportedError("unsupported", "devrt.support: this libdevrt_c.so was built without devrt_toolchain "
                               "(-Dtoolchain=disabled or libarchive missing)")
    return _ext
