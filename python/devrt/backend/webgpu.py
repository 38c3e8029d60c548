# SPDX-License-Identifier: Apache-2.0
"""The webgpu backend's Python hooks: its native library (devrt's WebGPU backend over a dlopened webgpu.h
implementation, docs/webgpu.md) and devrt's target detector for webgpu devices."""
from devrt.backend import native_backend_hooks

register_backend = native_backend_hooks("webgpu")
