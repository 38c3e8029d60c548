#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora in test/fuzz/corpus/ (committed; rerun after changing an input format).

dlpack_import inputs follow LLVMFuzzerTestOneInput in dlpack_import_fuzz.cpp: flags u16, ndim i8,
dtype (code u8, bits u8, lanes u16), device type (u8, or i32 with the raw-device flag), device id
i8, buffer size u16, byte offset (u8 * 4, or u64 with the raw-offset flag), data offset u16, then
per dimension a shape and a stride (i8 each, or i64 each with the raw-values flag).
"""
import json
import pathlib
import struct

HERE = pathlib.Path(__file__).parent / "corpus"
DATA_BUFFER, DATA_MISALIGNED, DATA_OFFSET = 1, 2, 3
NULL_STRIDES, VERSIONED, READ_ONLY, KNOWN_SIZE, RAW_VALUES = 4, 8, 16, 32, 64


def dlpack(flags, ndim, code, bits, lanes, device, device_id, buffer, offset4, data_offset, dims):
    out = struct.pack("<HbBBHBbHBH", flags, ndim, code, bits, lanes, device, device_id, buffer, offset4, data_offset)
    for shape, stride in dims:
        out += struct.pack("<bb", shape, stride)
    return out


def main():
    seeds = {
        "compact_f32_2x3": dlpack(DATA_BUFFER | KNOWN_SIZE, 2, 2, 32, 1, 1, 0, 24, 0, 0, [(2, 3), (3, 1)]),
        "null_strides": dlpack(DATA_BUFFER | NULL_STRIDES | KNOWN_SIZE, 2, 0, 8, 1, 1, 0, 64, 0, 0, [(4, 0), (8, 0)]),
        "reversed_rows": dlpack(DATA_OFFSET | KNOWN_SIZE, 2, 2, 32, 1, 1, 0, 48, 0, 24, [(2, -3), (3, 1)]),
        "reversed_unknown": dlpack(DATA_OFFSET, 2, 2, 32, 1, 1, 0, 48, 0, 24, [(2, -3), (3, 1)]),
        "broadcast": dlpack(DATA_BUFFER | KNOWN_SIZE, 2, 2, 32, 1, 1, 0, 16, 0, 0, [(5, 0), (4, 1)]),
        "transposed": dlpack(DATA_BUFFER | KNOWN_SIZE, 2, 1, 16, 1, 1, 0, 24, 0, 0, [(3, 1), (4, 3)]),
        "versioned_read_only": dlpack(DATA_BUFFER | VERSIONED | READ_ONLY | KNOWN_SIZE, 1, 2, 64, 1, 1, 0, 64, 0, 0,
                                      [(8, 1)]),
        "vector_lanes": dlpack(DATA_BUFFER | KNOWN_SIZE, 1, 2, 32, 4, 1, 0, 128, 0, 0, [(8, 1)]),
        "byte_offset": dlpack(DATA_BUFFER | KNOWN_SIZE, 1, 0, 32, 1, 1, 0, 64, 2, 0, [(8, 1)]),
        "misaligned": dlpack(DATA_MISALIGNED | KNOWN_SIZE, 1, 2, 32, 1, 1, 0, 64, 0, 0, [(4, 1)]),
        "null_data_empty": dlpack(NULL_STRIDES, 2, 2, 32, 1, 1, 0, 0, 0, 0, [(0, 0), (3, 0)]),
        "scalar": dlpack(DATA_BUFFER | KNOWN_SIZE, 0, 2, 64, 1, 1, 0, 8, 0, 0, []),
        "bad_device": dlpack(DATA_BUFFER, 1, 2, 32, 1, 2, 0, 16, 0, 0, [(4, 1)]),
        "negative_ndim": dlpack(DATA_BUFFER, -1, 2, 32, 1, 1, 0, 16, 0, 0, []),
        "raw_huge_shape": struct.pack("<HbBBHBbHBH", DATA_BUFFER | RAW_VALUES | KNOWN_SIZE, 2, 2, 32, 1, 1, 0, 64, 0, 0)
        + struct.pack("<qqqq", 1 << 40, 1, 1 << 40, 1 << 20),
    }
    target = HERE / "dlpack_import"
    target.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (target / name).write_bytes(data)

    json_seeds = {
        "cpu": {"kind": "llvm", "keys": ["cpu"], "mtriple": "x86_64-pc-linux-gnu", "mcpu": "icelake-server",
                "mattr": ["+avx2", "+avx512f"], "num-cores": 2, "simd-32bit-lanes": 16},
        "cuda": {"kind": "cuda", "arch": "sm_90", "max_threads_per_block": 1024, "thread_warp_size": 32,
                 "max_shared_memory_per_block": 49152, "supports_float16": True},
        "escapes": {"kind": "vulkan", "model": "lava\"pipe\\ \u00e9 \U0001F600 \t\n", "empty": []},
        "negative": {"kind": "opencl", "min": -9223372036854775808, "max": 9223372036854775807},
    }
    target = HERE / "target_json"
    target.mkdir(parents=True, exist_ok=True)
    for name, value in json_seeds.items():
        (target / name).write_text(json.dumps(value, ensure_ascii=name != "escapes"))
    (target / "pretty").write_text(json.dumps(json_seeds["cpu"], indent=2))


if __name__ == "__main__":
    main()
