# SPDX-License-Identifier: Apache-2.0
"""The opencl backend's Python hooks: its native library, OpenCL (libdevrt_opencl.so), and devrt's target
detector for opencl devices."""
from devrt.backend import native_backend_hooks

register_backend = native_backend_hooks("opencl")
