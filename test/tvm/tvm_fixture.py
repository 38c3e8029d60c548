#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the device blob of a TVM-layout test library, as TVM <= 0.20 writes it, and the C file
TVM's PackImportsToC makes of it (`const unsigned char __tvm_dev_mblob[N] = {...}`).

TVM cannot be installed here and MLC's libraries carry no licence, so the tests build their own
libraries: this writer, and test/tvm/tvm_host.c shaped as TVM's host code generator emits it.
The writer follows TVM's writer code, not devrt's reader: dmlc::Stream's serialisation (a string
or vector is a uint64 count then its bytes or elements; a map a count then key/value pairs; a
DLDataType its 4 bytes), FunctionInfo::Save (name, arg_types, launch_param_tags), each module's
SaveToBinary (VulkanModuleNode: fmt, fmap, smap of SPIRVShader{flag, words}; OpenCLModuleNode: fmt,
fmap, data; WebGPUModuleNode: fmap, smap of WGSL, in main()), ModuleSerializer::SerializeModuleToBytes
(module count incl. the tree, each group's type key and SaveToBinary, "_lib" where the host
module stands, then "_import_tree" with its CSR rows), and PackImportsToBytes (a uint64 byte
count first). SPIR-V entry points are renamed to the kernel's name, as TVM's code generator
names them, and WGSL entry points likewise.

TVM >= 0.21 (tvm-ffi, --abi ffi-0.21 / ffi) differs in three ways, followed from its writer code:
FunctionInfo also saves arg_extra_tags (a vector of int32; 0 for a plain argument); the symbol is
`__tvm_ffi_library_bin` (0.21) or `__tvm_ffi__library_bin` (0.22 on); and from 0.22 the layout is
framed (ModuleSerializer::SerializeModuleToBytes in src/target/codegen.cc: the import tree's two
vectors first, then per module its kind and, but for "_lib", its SaveToBytes as one string).
CUDA and ROCm modules (CUDAModuleNode / ROCMModuleNode::SaveToBinary: fmt, fmap, data) carry the
test's PTX (entry points renamed as TVM names them) or code object.

usage: tvm_fixture.py {vulkan,opencl,webgpu,cuda,rocm,cpu} OUT.c [--raw OUT.bin] [--abi packed|ffi-0.21|ffi]
                      [--spirv NAME=FILE[:ubo] ...] [--opencl FILE] [--wgsl NAME=FILE ...]
                      [--ptx FILE] [--hsaco FILE]
(--raw: the blob's bytes as the blob symbol holds them, for the parser's tests)
"""
import argparse
import re
import struct
import sys

import tvm_vm_fixture

# The fixture kernels and TVM's FunctionInfo for each: argument types (DLDataType code, bits,
# lanes: handle = (3, 64, 1)) and launch parameter tags.
HANDLE = (3, 64, 1)
INT32 = (0, 32, 1)
FLOAT32 = (2, 32, 1)
KERNELS = {
    "vadd_kernel": ([HANDLE, HANDLE, HANDLE, INT32], ["blockIdx.x", "threadIdx.x"]),
    # The conformance suite's CUDA/HIP reduce: the block's sum in dynamic shared memory.
    "vadd": ([HANDLE, HANDLE, HANDLE, INT32], ["blockIdx.x", "threadIdx.x"]),  # a ROCm code object's name
    "reduce_kernel": ([HANDLE, HANDLE, INT32], ["blockIdx.x", "threadIdx.x", "tir.use_dyn_shared_memory"]),
    "scale_kernel": ([HANDLE, FLOAT32, INT32], ["blockIdx.x", "threadIdx.x"]),
    "sum_scalars_kernel": ([HANDLE] + [INT32] * 17 + [INT32], ["blockIdx.x", "threadIdx.x"]),
    # The conformance suite's pow kernel: in the Vulkan library, one GLSL.std.450 Pow.
    "power_kernel": ([HANDLE, HANDLE, HANDLE, INT32], ["blockIdx.x", "threadIdx.x"]),
}


class Stream:
    """dmlc::Stream's Write for the types TVM's modules save (support::Stream's from 0.23: the same
    bytes). `extra_tags`: FunctionInfo saves arg_extra_tags (TVM >= 0.21)."""

    extra_tags = False

    def __init__(self):
        self.data = bytearray()

    def u64(self, value):
        self.data += struct.pack("<Q", value)

    def u32(self, value):
        self.data += struct.pack("<I", value)

    def string(self, value):
        raw = value.encode() if isinstance(value, str) else bytes(value)
        self.u64(len(raw))
        self.data += raw

    def strings(self, values):
        self.u64(len(values))
        for value in values:
            self.string(value)

    def function_info(self, arg_types, tags):  # FunctionInfo::Save(dmlc::Stream*)
        self.string("")  # TVM's code generators leave the name empty: the fmap key names it
        self.u64(len(arg_types))
        for code, bits, lanes in arg_types:
            self.data += struct.pack("<BBH", code, bits, lanes)
        self.strings(tags)
        if Stream.extra_tags:
            self.u64(len(arg_types))
            self.data += struct.pack(f"<{len(arg_types)}i", *([0] * len(arg_types)))

    def fmap(self, names):
        self.u64(len(names))
        for name in names:
            self.string(name)
            self.function_info(*KERNELS[name])


def rename_entry_point(words, name):
    """SPIR-V words with its one OpEntryPoint named `name` (and the matching OpName)."""
    out = list(words[:5])
    i = 5
    target = None
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        instruction = words[i:i + count]
        if opcode == 15:  # OpEntryPoint model, function id, name literal, interface ids
            target = instruction[2]
            literal_words = 0
            while True:
                word = instruction[3 + literal_words]
                literal_words += 1
                if any(((word >> shift) & 0xFF) == 0 for shift in (0, 8, 16, 24)):
                    break
            instruction = instruction[:3] + literal(name) + instruction[3 + literal_words:]
        elif opcode == 5 and target is not None and instruction[1] == target:  # OpName of the function
            instruction = instruction[:2] + literal(name)
        out += [(len(instruction) << 16) | opcode] + instruction[1:]
        i += count
    return out


def literal(text):
    raw = text.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def save_vulkan(stream, shaders):  # VulkanModuleNode::SaveToBinary
    stream.string("vulkan")
    stream.fmap(list(shaders))
    stream.u64(len(shaders))
    for name, (words, flag) in shaders.items():
        stream.string(name)
        stream.u32(flag)  # SPIRVShader::Save: flag, then the words
        stream.u64(len(words))
        stream.data += struct.pack(f"<{len(words)}I", *words)


def save_opencl(stream, source, names):  # OpenCLModuleNode::SaveToBinary
    stream.string("cl")
    stream.fmap(names)
    stream.string(source)


def write_import_tree(stream, rows, children):
    """The "_import_tree" entry: import_tree_row_ptr and import_tree_child_indices (CSR)."""
    stream.string("_import_tree")
    for values in (rows, children):
        stream.u64(len(values))
        for value in values:
            stream.u64(value)


def save_const_loader(stream):
    """ConstLoaderModuleNode::SaveToBinary (type key "metadata"): variables, NDArrays (SaveDLTensor),
    symbols and the variables each needs."""
    stream.strings(["w0"])
    stream.u64(1)
    stream.u64(0xDD5E40F096B4A13F)  # kTVMNDArrayMagic
    stream.u64(0)                   # reserved
    stream.data += struct.pack("<ii", 1, 0)  # DLDevice: always saved as cpu:0
    stream.data += struct.pack("<i", 2)      # ndim
    stream.data += struct.pack("<BBH", 2, 32, 1)
    stream.data += struct.pack("<qq", 2, 3)  # shape
    values = struct.pack("<6f", *range(6))
    stream.data += struct.pack("<q", len(values)) + values
    stream.strings(["tvmgen_default_byoc_main_0"])
    stream.u64(1)
    stream.strings(["w0"])


def serialize_with_metadata(device_key, save):
    """A root DSO (_lib, index 3) importing a constant loader (0), an AOT metadata module (1, which
    saves nothing) and the device module (2)."""
    stream = Stream()
    stream.u64(4 + 1)
    stream.string("metadata")
    save_const_loader(stream)
    stream.string("metadata_module")
    stream.string(device_key)
    save(stream)
    stream.string("_lib")
    write_import_tree(stream, [0, 0, 0, 0, 3], [0, 1, 2])
    return bytes(stream.data)


def serialize_cpu_vm(program, key="relax.Executable", framed=False):
    """A CPU model's module tree: the VM's program (the root) importing the DSO; no device
    module. Framed (TVM >= 0.22): the import tree first, each module's bytes one string."""
    stream = Stream()
    if framed:
        for values in ([0, 1, 1], [1]):
            stream.u64(len(values))
            for value in values:
                stream.u64(value)
        stream.string(key)
        stream.string(program)  # SaveToBytes: the program's bytes are the module's
        stream.string("_lib")
        return bytes(stream.data)
    stream.u64(2 + 1)
    stream.string(key)
    stream.string(program)
    stream.string("_lib")
    write_import_tree(stream, [0, 1, 1], [1])
    return bytes(stream.data)


def serialize(device_key, save, relax=False, program=None, key="relax.Executable"):
    """ModuleSerializer with export_dso: the DSO module (root) imports one device module; groups
    in its DFS order: the device module (index 0), then the DSO's group ("_lib", index 1). With
    `relax`, a relax.Executable (a Relax VM program, the root, importing the DSO) comes first, as
    in MLC's libraries; Executable::SaveToBinary writes its sections as one string (`program`'s, or
    a stand-in the parser only skips)."""
    stream = Stream()
    stream.u64(2 + 1 + (1 if relax else 0))
    if relax:
        stream.string(key)
        stream.string(program or struct.pack("<Q", 0xD225DE2F4214151D) + b"the VM's sections")
    stream.string(device_key)
    save(stream)
    stream.string("_lib")
    # The DSO imports the device module (and the VM's program imports the DSO).
    write_import_tree(stream, *(([0, 1, 1, 2], [2, 1]) if relax else ([0, 0, 1], [0])))
    return bytes(stream.data)


def serialize_framed(device_key, save, relax=False, program=None):
    """TVM >= 0.22's SerializeModuleToBytes: the same module tree, the import tree first, each
    module's bytes one string. Other module kinds (here "relax.VMExecutable": `program`, or a
    stand-in) are framed too."""
    groups = ([("relax.VMExecutable", lambda s: s.data.extend(program or b"the VM's program"))] if relax else []) + \
        [(device_key, save), ("_lib", None)]
    stream = Stream()
    rows, children = ([0, 1, 1, 2], [2, 1]) if relax else ([0, 0, 1], [0])
    for values in (rows, children):
        stream.u64(len(values))
        for value in values:
            stream.u64(value)
    for kind, write in groups:
        stream.string(kind)
        if write is not None:
            inner = Stream()
            write(inner)
            stream.string(bytes(inner.data))
    return bytes(stream.data)


def save_gpu(stream, fmt, code, names):  # CUDAModuleNode / ROCMModuleNode::SaveToBinary
    stream.string(fmt)
    stream.fmap(names)
    stream.string(code)


def pack_imports_to_c(blob, symbol="__tvm_dev_mblob"):
    """PackImportsToBytes (a uint64 byte count first) as PackImportsToC writes it."""
    data = struct.pack("<Q", len(blob)) + blob
    lines = ["#define TVM_EXPORT", f"TVM_EXPORT extern const unsigned char {symbol}[];",
             f"const unsigned char {symbol}[{len(data)}] = {{"]
    for i in range(0, len(data), 20):
        lines.append("  " + "".join(f"0x{b:02x}," for b in data[i:i + 20]))
    lines.append("};")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("device", choices=["vulkan", "opencl", "webgpu", "cuda", "rocm", "cpu"])
    parser.add_argument("--abi", choices=["packed", "ffi-0.21", "ffi"], default="packed")
    parser.add_argument("--ptx")
    parser.add_argument("--hsaco")
    parser.add_argument("out")
    parser.add_argument("--spirv", action="append", default=[], help="KERNEL=FILE[:ubo]")
    parser.add_argument("--opencl")
    parser.add_argument("--wgsl", action="append", default=[], help="KERNEL=FILE")
    parser.add_argument("--raw", help="also write the blob's bytes here")
    parser.add_argument("--vm", choices=["model", "missing", "tir", "lm"],
                        help="a Relax VM program first (test/tvm/tvm_vm_fixture.py): the fixture model over the "
                             "library's operators, or it calling names nobody provides, or with a kVMTIRFunc; lm: "
                             "the generate example's bigram language model (CPU)")
    parser.add_argument("--vm-raw", help="also write the program's bytes (Executable::SaveToBinary's) here")
    parser.add_argument("--vm-layout", choices=["packed", "packed-0.20", "ffi-0.21", "ffi", "main"],
                        help="the program as which TVM writes it (default: as --abi's: TVM <= 0.19's relax.Executable "
                             "for packed); packed-0.20: TVM 0.20's relax.VMExecutable; main: TVM main's")
    parser.add_argument("--variant", choices=["missing-code", "relax", "metal", "metadata"],
                        help="a blob for the parser's refusals: a kernel's code left out, a relax.Executable "
                             "module before the device module (as MLC's libraries have), the device module "
                             "saved under the type key metal, a constant loader and an AOT metadata module "
                             "before it (as Relay's BYOC and AOT builds have)")
    args = parser.parse_args()
    Stream.extra_tags = args.abi != "packed"
    framed = args.abi == "ffi"
    serialize_as = serialize_framed if framed else serialize
    program = None
    vm_key = "relax.Executable"
    if args.vm:
        layout = args.vm_layout or args.abi
        vm_key = "relax.Executable" if layout == "packed" else "relax.VMExecutable"
        layout = "packed" if layout == "packed-0.20" else layout
        program = (tvm_vm_fixture.bigram_lm() if args.vm == "lm" else
                   tvm_vm_fixture.model(args.device, None if args.vm == "model" else args.vm, layout))
        if framed:
            serialize_as = lambda key, save: serialize_framed(key, save, relax=True, program=program)  # noqa: E731
        else:
            serialize_as = lambda key, save: serialize(key, save, relax=True, program=program,  # noqa: E731
                                                       key=vm_key)
    symbol = {"packed": "__tvm_dev_mblob", "ffi-0.21": "__tvm_ffi_library_bin", "ffi": "__tvm_ffi__library_bin"}[args.abi]
    if args.device == "vulkan":
        shaders = {}
        for item in args.spirv:
            name, spec = item.split("=", 1)
            path, _, form = spec.partition(":")
            raw = open(path, "rb").read()
            words = rename_entry_point(list(struct.unpack(f"<{len(raw) // 4}I", raw)), name)
            shaders[name] = (words, 1 if form == "ubo" else 0)  # bit 0: kUseUBO
        blob = serialize_as("vulkan", lambda s: save_vulkan(s, shaders))
    elif args.device == "opencl":
        source = open(args.opencl).read()
        blob = serialize_as("opencl", lambda s: save_opencl(s, source, [k for k in KERNELS if k + "(" in source]))
    elif args.device == "cuda":
        # TVM names a kernel after its function plus "_kernel"; the PTX's entries are renamed so.
        ptx = open(args.ptx).read()
        names = [k for k in KERNELS if re.search(rf"\.entry {k[:-7]}\(", ptx)]
        for name in names:
            ptx = re.sub(rf"\b{name[:-7]}(_param_\d+)?\b", lambda m: name + (m.group(1) or ""), ptx)
        blob = serialize_as("cuda", lambda s: save_gpu(s, "ptx", ptx, names))
    elif args.device == "rocm":  # a code object keeps its symbols' names: the fmap names them so
        code = open(args.hsaco, "rb").read()
        blob = serialize_as("hip", lambda s: save_gpu(s, "hsaco", code, ["vadd"]))
    elif args.device == "webgpu":
        shaders = {}
        for item in args.wgsl:
            name, path = item.split("=", 1)
            # TVM's WebGPU code generator names the entry point after the kernel.
            shaders[name] = re.sub(r"\bfn\s+\w+\s*\(", f"fn {name}(", open(path).read(), count=1)
        names = list(shaders)
        if args.variant == "missing-code":
            del shaders[names[-1]]

        def save(stream):
            stream.fmap(names)
            stream.u64(len(shaders))
            for name, text in shaders.items():
                stream.string(name)
                stream.string(text)

        if args.variant == "metadata":
            blob = serialize_with_metadata("webgpu", save)
        else:
            blob = serialize_as("metal" if args.variant == "metal" else "webgpu", save, relax=args.variant == "relax")
    elif program is not None:
        blob = serialize_cpu_vm(program, vm_key, framed)  # a CPU model: its program and host code
    else:
        blob = None  # a CPU library: host code only, no device blob
    with open(args.out, "w") as out:
        out.write("/* Generated by test/tvm/tvm_fixture.py: a TVM-layout device blob. */\n")
        if blob is not None:
            out.write(pack_imports_to_c(blob, symbol))
    if args.vm_raw:
        with open(args.vm_raw, "wb") as raw:
            raw.write(program)
    if args.raw:
        with open(args.raw, "wb") as raw:
            raw.write(struct.pack("<Q", len(blob)) + blob if blob is not None else b"")
    return 0


if __name__ == "__main__":
    sys.exit(main())
