# SPDX-License-Identifier: Apache-2.0
"""A vector add on every OpenCL and Vulkan device present, from the installed devrt package:
load a module, take its kernel by name, call it on tensors and a scalar with a grid and a block.

    python3 examples/python/vadd.py          # prints one line per device, exits 1 on a wrong sum

Vulkan runs SPIR-V: vadd.comp beside this file, compiled here with glslc (Debian: glslc), the
same command a Meson custom_target runs (docs/python.md)."""
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import devrt

OPENCL_VADD = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""


def spirv_vadd():
    """vadd.comp compiled to SPIR-V words: glslc -O vadd.comp -o vadd.spv."""
    with tempfile.TemporaryDirectory() as scratch:
        output = pathlib.Path(scratch) / "vadd.spv"
        subprocess.run(["glslc", "-O", str(pathlib.Path(__file__).with_name("vadd.comp")), "-o", str(output)],
                       check=True)
        return output.read_bytes()


def vector_add(device, n=100_000):
    if device.type == "opencl":
        module, kernel, block = devrt.Module.load(device, "opencl_c", OPENCL_VADD), "vadd", 256
    else:
        module, kernel, block = devrt.Module.load(device, "spirv", spirv_vadd()), "main", 64  # entry point name
    a = devrt.tensor(np.arange(n, dtype=np.float32), device)
    b = devrt.tensor(np.full(n, 2.0, dtype=np.float32), device)
    c = devrt.empty((n,), "float32", device)
    module[kernel](a, b, c, n, grid=(n + block - 1) // block, block=block)
    result = np.from_dlpack(c.to(devrt.cpu(0)))  # waits for the launch
    return bool(np.array_equal(result, np.arange(n, dtype=np.float32) + 2.0))


def main():
    failed = 0
    ran = 0
    for kind in ("opencl", "vulkan"):
        reason = devrt.backend.availability(kind)
        if reason is not None:
            print(f"{kind}: skipped ({reason})")
            continue
        for index in range(devrt.device_count(kind)):
            device = devrt.device(kind, index)
            ok = vector_add(device)
            ran += 1
            failed += not ok
            print(f"{device} ({device.device_name}): vector add {'ok' if ok else 'WRONG'}")
    if ran == 0:
        print("no OpenCL or Vulkan device here")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
