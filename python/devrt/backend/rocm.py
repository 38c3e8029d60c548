# SPDX-License-Identifier: Apache-2.0
"""The rocm backend's Python hooks: its native library, ROCm/HIP (libdevrt_rocm.so), and devrt's target
detector for rocm devices."""
from devrt.backend import native_backend_hooks

register_backend = native_backend_hooks("rocm")
