# SPDX-License-Identifier: Apache-2.0
"""The cuda backend's Python hooks: its native library, CUDA (libdevrt_cuda.so, which also brings cuda_host), and devrt's target
detector for cuda devices."""
from devrt.backend import native_backend_hooks

register_backend = native_backend_hooks("cuda")
