# SPDX-License-Identifier: Apache-2.0
"""tar archives (TVM's tvm.contrib.tar), over devrt_toolchain (libarchive)."""
import os

from devrt.support._toolchain import require


def tar(output, files):
    """Writes a tar archive at `output` holding each file under its base name."""
    require().tc_tar_create(output, [files] if isinstance(files, (str, os.PathLike)) else files)


tar.output_format = "tar"


def untar(tar_file, directory):
    """Extracts `tar_file` into the existing `directory`; returns the extracted files' paths.

    Entries that would leave the directory (absolute paths, "..", escaping links) are refused and
    nothing is extracted."""
    text = require().tc_tar_extract(tar_file, directory)
    return text.split("\n") if text else []
