# SPDX-License-Identifier: Apache-2.0
"""The vulkan backend's Python hooks: its native library, Vulkan (libdevrt_vulkan.so), and devrt's target
detector for vulkan devices."""
from devrt.backend import native_backend_hooks

register_backend = native_backend_hooks("vulkan")
