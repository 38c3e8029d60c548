# SPDX-License-Identifier: Apache-2.0
"""tar archives (TVM's tvm.contrib.tar), over devrt_toolchain (libarchive)."""
import ctypes
import os

from devrt import _capi
from devrt._capi import check
from devrt.support._toolchain import require


def tar(output, files):
    """Writes a tar archive at `output` holding each file under its base name."""
    names, count = _capi.string_list([files] if isinstance(files, (str, os.PathLike)) else files)
    check(require().devrt_tc_tar_create(os.fsencode(output), names, count))


tar.output_format = "tar"


def untar(tar_file, directory):
    """Extracts `tar_file` into the existing `directory`; returns the extracted files' paths.

    Entries that would leave the directory (absolute paths, "..", escaping links) are refused and
    nothing is extracted."""
    names = ctypes.c_void_p()
    check(require().devrt_tc_tar_extract(os.fsencode(tar_file), os.fsencode(directory), ctypes.byref(names)))
    text = _capi.take_string(names)
    return text.split("\n") if text else []
