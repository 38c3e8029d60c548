# SPDX-License-Identifier: Apache-2.0
"""The hexagon backend's Python hooks: its native library, Hexagon (built for the DSP only; a host has no library), and devrt's target
detector for hexagon devices."""
from devrt.backend import native_backend_hooks

register_backend = native_backend_hooks("hexagon")
