#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora in test/fuzz/corpus/ (committed; rerun after changing an input format).

dlpack_import inputs follow LLVMFuzzerTestOneInput in dlpack_import_fuzz.cpp: flags u16, ndim i8,
dtype (code u8, bits u8, lanes u16), device type (u8, or i32 with the raw-device flag), device id
i8, buffer size u16, byte offset (u8 * 4, or u64 with the raw-offset flag), data offset u16, then
per dimension a shape and a stride (i8 each, or i64 each with the raw-values flag).

remote_commands inputs follow remote_commands_fuzz.cpp: a byte (1: a correct hello first; 2: a keyed
server), then per message a u8 header size, the header (op u32, device u32, sequence u64, stream u64,
then the op's request as src/remote/protocol.hpp lays it out), a u16 payload length and the
payload; a sequence with its top bit set gives its low 16 bits, else the messages go in order.
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
    remote_commands_seeds()
    tvm_vm_seeds()


def tvm_vm_seeds():
    """Relax VM programs as the test libraries carry them (test/tvm/tvm_vm_fixture.py)."""
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "tvm"))
    import tvm_vm_fixture

    target = HERE / "tvm_vm"
    target.mkdir(parents=True, exist_ok=True)
    for name, (device, variant) in {"cpu": ("cpu", None), "vulkan": ("vulkan", None),
                                    "missing": ("cpu", "missing"), "tir": ("cpu", "tir")}.items():
        (target / f"{name}.program").write_bytes(tvm_vm_fixture.model(device, variant))
    for layout in ("ffi-0.21", "ffi", "main"):  # each TVM's tags; main's memory-scope section
        (target / f"cpu-{layout}.program").write_bytes(tvm_vm_fixture.model("cpu", None, layout))
    # The JSON devrt::tvm reads: MLC's weight index (test/tvm/params/) and a model's _metadata.
    target = HERE / "tvm_json"
    target.mkdir(parents=True, exist_ok=True)
    index = pathlib.Path(__file__).parents[1] / "tvm" / "params" / "ndarray-cache.json"
    (target / "ndarray-cache.json").write_bytes(index.read_bytes())
    metadata = {"model_type": "gpt2", "context_window_size": 1024,
                "params": [{"name": "w", "shape": [50257, 768], "dtype": "float16", "preprocs": []}],
                "memory_usage": {"decode": 1.5e6, "prefill": -2e-3}}
    (target / "metadata.json").write_text(json.dumps(metadata))


# The protocol's command numbers and requests (src/remote/protocol.hpp: enum class Op, and the
# request struct of each, field by field).
(HELLO, ALLOCATE, FREE, WRITE, READ, COPY, STREAM_CREATE, STREAM_DESTROY, STREAM_SYNCHRONIZE, EVENT_CREATE,
 EVENT_DESTROY, EVENT_RECORD, EVENT_SYNCHRONIZE, EVENT_QUERY, STREAM_WAIT_EVENT, EVENT_ELAPSED, MODULE_LOAD,
 MODULE_UNLOAD, MODULE_FUNCTION, LAUNCH, DEVICE_SYNCHRONIZE, SERVER_STATS, AUTHENTICATE, PING, GRAPH_CREATE, GRAPH_LAUNCH,
 GRAPH_DESTROY) = range(1, 28)
REQUEST = {HELLO: "Q", ALLOCATE: "QQ", FREE: "Q", WRITE: "QQ", READ: "QQQ", COPY: "5QII", STREAM_CREATE: "",
           STREAM_DESTROY: "Q", STREAM_SYNCHRONIZE: "", EVENT_CREATE: "Q", EVENT_DESTROY: "Q", EVENT_RECORD: "Q",
           EVENT_SYNCHRONIZE: "Q", EVENT_QUERY: "Q", STREAM_WAIT_EVENT: "Q", EVENT_ELAPSED: "QQ", MODULE_LOAD: "IIQ",
           MODULE_UNLOAD: "Q", MODULE_FUNCTION: "Q", LAUNCH: "Q3I3IQII", DEVICE_SYNCHRONIZE: "", SERVER_STATS: "",
           AUTHENTICATE: "", PING: "", GRAPH_CREATE: "Q", GRAPH_LAUNCH: "Q", GRAPH_DESTROY: "Q"}
VERSION = 3
GRAPH_NODE_LAUNCH, GRAPH_NODE_COPY = 1, 2


def graph_node(kind, arguments=0, function=0, grid=(0, 0, 0), block=(0, 0, 0), shared=0, copy=(0, 0, 0, 0, 0)):
    return struct.pack("<IIQ3I3IQ5Q", kind, arguments, function, *grid, *block, shared, *copy)


def command(op, *fields, stream=0, device=0, payload=b""):
    layout = "<" + REQUEST[op]
    field_count = len(struct.unpack(layout, bytes(struct.calcsize(layout))))
    header = struct.pack("<IIQQ", op, device, 0, stream) + struct.pack(layout, *fields, *[0] * (field_count - len(fields)))
    return message(header, payload)


def message(header, payload=b""):
    return struct.pack("<B", len(header)) + header + struct.pack("<H", len(payload)) + payload


def remote_commands_seeds():
    seeds = {
        # Handles count from 1 per client: the buffer is 1, the stream 2, the events 3 and 4.
        "session": b"\x01" + command(ALLOCATE, 4096, 64) + command(WRITE, 1, 0, payload=bytes(range(16)))
        + command(READ, 1, 0, 16) + command(STREAM_CREATE) + command(EVENT_CREATE, 1) + command(EVENT_CREATE, 1)
        + command(EVENT_RECORD, 3, stream=2) + command(COPY, 1, 0, 1, 64, 16, 0, stream=2)
        + command(EVENT_RECORD, 4, stream=2) + command(EVENT_SYNCHRONIZE, 4) + command(EVENT_ELAPSED, 3, 4)
        + command(STREAM_WAIT_EVENT, 4) + command(STREAM_SYNCHRONIZE, stream=2) + command(EVENT_QUERY, 3)
        + command(FREE, 1) + command(DEVICE_SYNCHRONIZE) + command(SERVER_STATS) + command(PING),
        "before_hello": b"\x00" + command(ALLOCATE, 64, 8),
        "wrong_version": b"\x00" + command(HELLO, 2, payload=bytes(32)),
        "host_code": b"\x01" + command(MODULE_LOAD, 1, 0, payload=b"conformance")
        + command(MODULE_FUNCTION, 5, payload=b"vadd"),
        "launch": b"\x01" + command(LAUNCH, 1, 1, 1, 1, 1, 1, 1, 0, 1, payload=bytes(40)),
        "foreign": b"\x01" + command(FREE, 9) + command(PING),
        # A graph of one copy inside the buffer (handle 1), then the graph (handle 2) replayed.
        "graph": b"\x01" + command(ALLOCATE, 4096, 64)
        + command(GRAPH_CREATE, 1, payload=graph_node(GRAPH_NODE_COPY, copy=(1, 0, 1, 64, 16)))
        + command(GRAPH_LAUNCH, 2) + command(GRAPH_LAUNCH, 2) + command(STREAM_SYNCHRONIZE) + command(GRAPH_DESTROY, 2),
        "keyed": b"\x02" + command(HELLO, VERSION, payload=bytes(32)) + command(AUTHENTICATE, payload=bytes(32))
        + command(ALLOCATE, 64, 8),
        # The handshake inside the input, as the UCX thread admits it, then a command on the
        # client's thread; and a hello with a payload it does not take.
        "admitted": b"\x00" + command(HELLO, VERSION, payload=bytes(32)) + command(ALLOCATE, 4096, 64)
        + command(READ, 1, 0, 16) + command(PING),
        "hello_oversized": b"\x00" + command(HELLO, VERSION, payload=bytes(300)),
        # A header one byte short of its request, then one of an unknown command.
        "short_header": b"\x01" + message(struct.pack("<IIQQQ", ALLOCATE, 0, 0, 0, 64)),
        "unknown_op": b"\x01" + message(struct.pack("<IIQQ", 99, 0, 0, 0)),
    }
    target = HERE / "remote_commands"
    target.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (target / name).write_bytes(data)


if __name__ == "__main__":
    main()
