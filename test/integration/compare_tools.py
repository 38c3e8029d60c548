#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""devrt-info's figures must agree with the vendors' own tools: clinfo for OpenCL and vulkaninfo
for Vulkan (device name, work-group limit, local/shared memory, the alignment of buffer offsets). Exits 77 (skip) when neither
tool or backend is present. Usage: compare_tools.py <devrt-info>"""
import json
import re
import shutil
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout


def devrt_devices(info, backend):
    data = json.loads(run([info, "--json"]))
    for b in data["backends"]:
        if b["name"] == backend and b["available"]:
            return [d["attributes"] for d in b["devices"]]
    return []


def clinfo_devices():
    devices = {}
    for line in run(["clinfo", "--raw"]).splitlines():
        m = re.match(r"\[(\S+)/(\d+)\]\s+(CL_DEVICE_\w+)\s+(.*)", line)
        if m:
            devices.setdefault((m.group(1), m.group(2)), {})[m.group(3)] = m.group(4).strip()
    return list(devices.values())


def vulkaninfo_devices():
    devices, current = [], None
    for line in run(["vulkaninfo"]).splitlines():
        if re.match(r"^GPU\d+:", line.strip()) and line.startswith("GPU"):
            current = {}
            devices.append(current)
        m = re.match(r"^\s*(deviceName|maxComputeWorkGroupInvocations|maxComputeSharedMemorySize|"
                     r"minStorageBufferOffsetAlignment)\s*=\s*(.*)$", line)
        if m and current is not None and m.group(1) not in current:
            current[m.group(1)] = m.group(2).strip()
    return devices


def main():
    info = sys.argv[1]
    checked, failures = 0, 0

    def expect(what, ours, theirs):
        nonlocal checked, failures
        checked += 1
        if str(ours) != str(theirs):
            failures += 1
            print(f"FAIL: {what}: devrt-info says {ours!r}, the vendor tool {theirs!r}")
        else:
            print(f"ok: {what} = {ours}")

    ours = devrt_devices(info, "opencl")
    if ours and shutil.which("clinfo"):
        theirs = clinfo_devices()
        expect("OpenCL device count", len(ours), len(theirs))
        for a, t in zip(ours, theirs):
            expect("OpenCL device_name", a["device_name"], t.get("CL_DEVICE_NAME"))
            expect("OpenCL max_threads_per_block", a["max_threads_per_block"], t.get("CL_DEVICE_MAX_WORK_GROUP_SIZE"))
            expect("OpenCL max_shared_memory_per_block", a["max_shared_memory_per_block"], t.get("CL_DEVICE_LOCAL_MEM_SIZE"))
            expect("OpenCL multi_processor_count", a["multi_processor_count"], t.get("CL_DEVICE_MAX_COMPUTE_UNITS"))
            bits = t.get("CL_DEVICE_MEM_BASE_ADDR_ALIGN")
            expect("OpenCL buffer_offset_alignment (bytes)", a["buffer_offset_alignment"],
                   int(bits) // 8 if bits and bits.isdigit() else bits)
    else:
        print("skip: OpenCL (no device or no clinfo)")
    ours = devrt_devices(info, "vulkan")
    if ours and shutil.which("vulkaninfo"):
        theirs = vulkaninfo_devices()
        expect("Vulkan device count", len(ours), len(theirs))
        for a, t in zip(ours, theirs):
            expect("Vulkan device_name", a["device_name"], t.get("deviceName"))
            expect("Vulkan max_threads_per_block", a["max_threads_per_block"], t.get("maxComputeWorkGroupInvocations"))
            expect("Vulkan max_shared_memory_per_block", a["max_shared_memory_per_block"], t.get("maxComputeSharedMemorySize"))
            align = t.get("minStorageBufferOffsetAlignment")
            expect("Vulkan buffer_offset_alignment", a["buffer_offset_alignment"], int(align, 0) if align else align)
    else:
        print("skip: Vulkan (no device or no vulkaninfo)")
    if checked == 0:
        sys.exit(77)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
