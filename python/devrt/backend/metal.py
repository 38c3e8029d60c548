# SPDX-License-Identifier: Apache-2.0
"""The metal backend's Python hooks: its native library (none is built yet) and TVM's Metal target
detector."""
from devrt.backend import native_backend_hooks


def _detect_target_from_device(device):
    # TVM's Metal target: Metal guarantees 32 KiB of threadgroup memory on every Apple GPU.
    return {"kind": "metal", "max_shared_memory_per_block": 32768,
            "max_threads_per_block": device.max_threads_per_block, "thread_warp_size": device.warp_size}


register_backend = native_backend_hooks("metal", _detect_target_from_device)
