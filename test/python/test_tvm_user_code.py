# SPDX-License-Identifier: Apache-2.0
"""TVM-style user code (tvm_user_code.py) runs unchanged against devrt with one changed import."""
import os
import subprocess
import sys

import pytest

import devrt


@pytest.mark.skipif(not devrt._capi.HAS_TOOLCHAIN, reason="the code calls devrt.support.nvcc and cc: this build has no "
                    "devrt_toolchain")
def test_tvm_user_code_runs_with_an_import_alias():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tvm_user_code.py")
    # As a user runs it: a script, so its functions live in __main__ and travel with cloudpickle.
    result = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("all TVM-style checks passed")
