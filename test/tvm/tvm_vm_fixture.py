# SPDX-License-Identifier: Apache-2.0
"""Relax VM programs for the test libraries (test/tvm/tvm_fixture.py --vm), written as TVM's
Executable::SaveToBinary writes them (src/runtime/relax_vm/executable.cc of the unity era, which
MLC's libraries carry): the magic 0xD225DE2F4214151D and a version string; the global section, a
vector of VMFuncInfo (kind int32: 0 packed, 1 VM function, 2 VM TIR function; name; start_instr,
end_instr, num_args, register_file_size as int64; param_names); the constant pool (a uint64 count,
then per constant an int32 tag and its value: 0 NDArray as NDArray::Save writes it, 1 DLDataType,
2 ShapeTuple, 3 String as a uint64 size then the bytes, 4 Int); the code section (instr_offset
and instr_data, vectors of int64). Instructions follow bytecode.h: Call = 1, dst, func_idx,
num_args, args; Ret = 2, result; Goto = 3, pc_offset; If = 4, cond, false_offset; an argument is
its kind (0 register, 1 immediate, 2 constant, 3 function) in the top 8 bits and a sign-extended
56-bit value; the void register is 1 << 54, the VM register 1 << 54 | 1.

The programs cover every instruction, argument kind, special register and builtin devrt provides
over the library's own operators (vadd, or cpu_vadd in the CPU library; scale on GPUs).
"""
import json
import struct

# Each TVM's header magic and constant tags, by the pre-0.20 tag (0 NDArray, 1 DLDataType,
# 2 ShapeTuple, 3 String, 4 Int, 5 Float): TVM <= 0.20 (relax_vm/executable.cc's ConstantType);
# 0.21 (src/runtime/vm/executable.cc: tvm-ffi's TypeIndex of then, kTVMFFINDArray 72, kTVMFFIShape
# 71, kTVMFFIStr 65, kTVMFFIInt 1, kTVMFFIFloat 3, kTVMFFIDataType 5); 0.22 (kTVMFFITensor 70,
# kTVMFFIShape 69); main (0.22's tags, the magic ...1E and a memory-scope section).
LAYOUTS = {
    "packed": (0xD225DE2F4214151D, {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5}),
    "ffi-0.21": (0xD225DE2F4214151D, {0: 72, 1: 5, 2: 71, 3: 65, 4: 1, 5: 3}),
    "ffi": (0xD225DE2F4214151D, {0: 70, 1: 5, 2: 69, 3: 65, 4: 1, 5: 3}),
    "main": (0xD225DE2F4214151E, {0: 70, 1: 5, 2: 69, 3: 65, 4: 1, 5: 3}),
}

VOID_REGISTER = 1 << 54
VM_REGISTER = VOID_REGISTER + 1
NDARRAY_MAGIC = 0xDD5E40F096B4A13F
FLOAT32 = (2, 32, 1)


def arg(kind, value):
    return struct.unpack("<q", struct.pack("<Q", (kind << 56) | (value & ((1 << 56) - 1))))[0]


def R(n):  # noqa: N802 -- the assembler's operand names
    return arg(0, n)


def I(n):  # noqa: N802,E743
    return arg(1, n)


VOID = arg(0, VOID_REGISTER)
VM = arg(0, VM_REGISTER)


class Program:
    """An executable being assembled: packed functions by name, constants, VM functions."""

    def __init__(self, version="0.14"):
        self.version = version
        self.functions = []  # (kind, name, start, end, num_args, registers, params)
        self.constants = []  # (tag, bytes)
        self.instr_offset = []
        self.instr_data = []

    def function_index(self, name, kind=0, num_args=0):
        for i, f in enumerate(self.functions):
            if f[1] == name:
                return i
        self.functions.append([kind, name, 0, 0, num_args, 0, []])
        return len(self.functions) - 1

    def F(self, name):  # noqa: N802
        return arg(3, self.function_index(name))

    def _constant(self, tag, payload):
        for i, c in enumerate(self.constants):
            if c == (tag, payload):
                return arg(2, i)
        self.constants.append((tag, payload))
        return arg(2, len(self.constants) - 1)

    def dtype(self, code, bits, lanes=1):
        return self._constant(1, struct.pack("<BBH", code, bits, lanes))

    def shape(self, *dims):
        return self._constant(2, struct.pack("<Q", len(dims)) + b"".join(struct.pack("<q", d) for d in dims))

    def string(self, text):
        raw = text.encode()
        return self._constant(3, struct.pack("<Q", len(raw)) + raw)

    def integer(self, value):
        return self._constant(4, struct.pack("<q", value))

    def real(self, value):
        return self._constant(5, struct.pack("<d", value))

    def ndarray(self, shape, values, dtype=FLOAT32):  # NDArray::Save: a CPU tensor
        data = b"".join(struct.pack("<f" if dtype[0] == 2 else "<i", v) for v in values)
        payload = struct.pack("<QQiiI", NDARRAY_MAGIC, 0, 1, 0, len(shape)) + struct.pack("<BBH", *dtype)
        payload += b"".join(struct.pack("<q", d) for d in shape) + struct.pack("<q", len(data)) + data
        return self._constant(0, payload)

    def vm_function(self, name, params, registers, body):
        """body(emit): emit(op, *words) appends an instruction; returns nothing."""
        index = self.function_index(name, 1, len(params))
        start = len(self.instr_offset)

        def emit(*words):
            self.instr_offset.append(len(self.instr_data))
            self.instr_data.extend(words)

        body(emit)
        self.functions[index] = [1, name, start, len(self.instr_offset), len(params), registers, params]

    def call(self, emit, function, args, dst=VOID_REGISTER):
        emit(1, dst, self.function_index(function), len(args), *args)

    def save(self, kinds=None, layout="packed", scopes=None):
        """Executable::SaveToBinary's bytes (the one string the blob holds them in excluded), as
        TVM of `layout` writes them (LAYOUTS); "main" also writes `scopes` ({constant index: memory
        scope}) in its memory-scope section, after the global section."""
        magic, tags = LAYOUTS[layout]
        out = bytearray(struct.pack("<Q", magic))
        version = self.version.encode()
        out += struct.pack("<Q", len(version)) + version
        out += struct.pack("<Q", len(self.functions))
        for kind, name, start, end, num_args, registers, params in self.functions:
            raw = name.encode()
            out += struct.pack("<i", kinds.get(name, kind) if kinds else kind)
            out += struct.pack("<Q", len(raw)) + raw + struct.pack("<qqqq", start, end, num_args, registers)
            out += struct.pack("<Q", len(params))
            for p in params:
                out += struct.pack("<Q", len(p.encode())) + p.encode()
        if layout == "main":
            out += struct.pack("<Q", len(scopes or {}))
            for index, scope in (scopes or {}).items():
                out += struct.pack("<q", index) + struct.pack("<Q", len(scope)) + scope.encode()
        out += struct.pack("<Q", len(self.constants))
        for tag, payload in self.constants:
            out += struct.pack("<i", tags[tag]) + payload
        for words in (self.instr_offset, self.instr_data):
            out += struct.pack("<Q", len(words)) + b"".join(struct.pack("<q", w) for w in words)
        return bytes(out)


def context(fn, loc, param, annotation):
    return f"ErrorContext(fn={fn}, loc={loc}, param={param}, annotation={annotation}) "


def model(device, variant=None, layout="packed"):
    """The fixture model for `device` (its library's operators) as TVM of `layout` writes it;
    `variant`: "missing" calls names nobody provides, "tir" has a kVMTIRFunc function."""
    p = Program()
    op = "cpu_vadd" if device == "cpu" else "vadd"
    f32 = p.dtype(*FLOAT32)
    ctx_x = p.string(context("main", "param[0]", "x", 'R.Tensor((n,), dtype="float32")'))
    ctx_y = p.string(context("main", "param[1]", "y", 'R.Tensor((n,), dtype="float32")'))

    def main(emit):
        c = p.call
        c(emit, "vm.builtin.alloc_shape_heap", [VM, I(1)], 2)
        c(emit, "vm.builtin.check_tensor_info", [R(0), I(1), f32, ctx_x])
        c(emit, "vm.builtin.check_tensor_info", [R(1), I(1), f32, ctx_y])
        c(emit, "vm.builtin.match_shape", [R(0), R(2), I(1), I(1), I(0), ctx_x])  # n -> heap[0]
        c(emit, "vm.builtin.match_shape", [R(1), R(2), I(1), I(3), I(0), ctx_y])  # == heap[0]
        c(emit, "vm.builtin.make_shape", [R(2), I(1), I(1), I(0)], 3)            # (n,)
        c(emit, "vm.builtin.alloc_storage", [VM, p.shape(4096), I(0), f32, p.string("global")], 4)
        c(emit, "vm.builtin.alloc_tensor", [R(4), I(0), R(3), f32], 5)
        c(emit, op, [R(0), R(1), R(5)])                                          # x + y
        # A second storage: TVM's host code asserts byte_offset 0, so operands start their storage
        # (Relax's memory planner gives every tensor offset 0 of a storage of its own size class).
        c(emit, "vm.builtin.alloc_storage", [VM, p.shape(4096), I(0), f32, p.string("global")], 6)
        c(emit, "vm.builtin.alloc_tensor", [R(6), I(0), R(3), f32], 6)
        c(emit, "vm.builtin.call_tir_dyn", [p.F(op), R(5), R(1), R(6), p.shape()])  # x + 2y
        c(emit, "vm.builtin.make_closure", [p.F("add"), R(1)], 7)
        c(emit, "vm.builtin.invoke_closure", [VM, R(7), R(6)], 8)                # x + 3y
        c(emit, "vm.builtin.null_value", [], 4)  # the storage lives on in its tensors
        c(emit, "vm.builtin.copy", [I(1)], 9)
        emit(4, 9, 3)                                                            # If %9 else +3
        c(emit, "vm.builtin.make_tuple", [R(8), R(3), R(5)], 10)
        emit(2, 10)
        c(emit, "vm.builtin.make_tuple", [], 10)
        emit(3, -2)

    def add(emit):  # add(a, b): a + b in new storage (alloc_storage's 4-argument form)
        p.call(emit, "vm.builtin.shape_of", [R(0)], 2)
        p.call(emit, "vm.builtin.alloc_storage", [VM, p.shape(4096), I(-1 if device == "cpu" else 0), f32], 3)
        p.call(emit, "vm.builtin.alloc_tensor", [R(3), I(0), R(2), f32], 4)
        p.call(emit, op, [R(0), R(1), R(4)])
        emit(2, 4)

    def choose(emit):  # If on a scalar tensor: its value picks a or b
        emit(4, 0, 2)
        emit(2, 1)
        emit(2, 2)

    def kv_init(emit):
        p.call(emit, "vm.builtin.attention_kv_cache_create", [p.ndarray([2, 4], [0.0] * 8), p.shape(2, 4), I(0)], 0)
        emit(2, 0)

    def kv_step(emit):  # (cache, row (1, 4)) -> (cache, the filled rows, the first row)
        p.call(emit, "vm.builtin.attention_kv_cache_append", [R(0), R(1)], 2)
        p.call(emit, "vm.builtin.attention_kv_cache_view", [R(2)], 3)
        p.call(emit, "vm.builtin.make_shape", [VOID, I(2), I(0), I(1), I(0), I(4)], 4)
        p.call(emit, "vm.builtin.reshape", [R(3), R(4)], 5)
        p.call(emit, "vm.builtin.make_tuple", [R(2), R(3), R(5)], 6)
        emit(2, 6)

    def kv_pop(emit):  # (cache, n): pops n rows, returns the view of the rest and the first row
        p.call(emit, "vm.builtin.make_tuple", [R(0)], 2)
        p.call(emit, "vm.builtin.attention_kv_cache_array_popn", [R(2), R(1)])
        p.call(emit, "vm.builtin.check_tuple_info", [R(2), I(1), VOID])
        p.call(emit, "vm.builtin.tuple_getitem", [R(2), I(0)], 3)
        p.call(emit, "vm.builtin.attention_kv_cache_view", [R(3)], 4)
        emit(2, 4)

    def shapes(emit):  # (s: Shape(2)) -> (read_if_cond of an Int constant, a view at offset 32, a Float)
        p.call(emit, "vm.builtin.check_shape_info", [R(0), I(2), p.string("shapes: s")])
        p.call(emit, "vm.builtin.check_func_info", [p.F("add"), VOID])
        p.call(emit, "vm.builtin.read_if_cond", [p.integer(7)], 1)
        p.call(emit, "vm.builtin.alloc_storage", [VM, p.shape(64), I(0), f32], 2)
        p.call(emit, "vm.builtin.alloc_tensor", [R(2), I(32), p.shape(8), f32], 3)
        p.call(emit, "vm.builtin.copy", [p.real(2.5)], 2)
        p.call(emit, "vm.builtin.make_tuple", [R(1), R(3), R(2)], 4)
        emit(2, 4)

    def overhead(emit):  # (x, t: 4 tensors): builtins alone, in GPT-2's mix, for the interpreter's cost
        p.call(emit, "vm.builtin.alloc_shape_heap", [VM, I(1)], 2)
        p.call(emit, "vm.builtin.match_shape", [R(0), R(2), I(1), I(1), I(0), VOID])
        p.call(emit, "vm.builtin.alloc_storage", [VM, p.shape(4096), I(0), f32], 3)
        for i in range(8):
            p.call(emit, "vm.builtin.make_shape", [R(2), I(1), I(1), I(0)], 4)
            p.call(emit, "vm.builtin.alloc_tensor", [R(3), I(0), R(4), f32], 5)
            p.call(emit, "vm.builtin.tuple_getitem", [R(1), I(i % 4)], 6)
            p.call(emit, "vm.builtin.check_tensor_info", [R(6), I(1), f32, VOID])
            p.call(emit, "vm.builtin.null_value", [], 5)
            p.call(emit, "vm.builtin.null_value", [], 6)
            p.call(emit, "vm.builtin.copy", [R(4)], 7)
        emit(2, 7)

    def metadata(emit):  # as MLC's `_metadata`: the parameters test/tvm/params/ holds, in another order
        params = [{"name": "c", "shape": [2], "dtype": "float32"}, {"name": "a", "shape": ["n"], "dtype": "float32"},
                  {"name": "b", "shape": [3], "dtype": "int32"}]
        text = json.dumps({"model_type": "fixture", "params": params, "memory_usage": {"main": 8192}})
        p.call(emit, "vm.builtin.copy", [p.string(text)], 0)
        emit(2, 0)

    p.vm_function("main", ["x", "y"], 11, main)
    p.vm_function("overhead", ["x", "t"], 8, overhead)
    p.vm_function("add", ["a", "b"], 5, add)
    p.vm_function("choose", ["cond", "a", "b"], 3, choose)
    p.vm_function("kv_init", [], 1, kv_init)
    p.vm_function("kv_step", ["cache", "row"], 7, kv_step)
    p.vm_function("kv_pop", ["cache", "n"], 5, kv_pop)
    p.vm_function("shapes", ["s"], 5, shapes)
    if device != "cpu":
        def scaled(emit):  # (x, s: float): x *= s in place, returns x
            p.call(emit, "scale", [R(0), R(1)])
            emit(2, 0)

        p.vm_function("scaled", ["x", "s"], 2, scaled)
    p.vm_function("_metadata", [], 1, metadata)
    kinds = None
    if variant == "missing":
        p.function_index("vm.builtin.not_provided_by_devrt")
        p.function_index("no_such_operator")
    elif variant == "tir":
        p.function_index("compiled_main", 2)
    # TVM main places kv_init's NDArray in the scope its executable names: "global" here.
    scopes = {i: "global" for i, (tag, _) in enumerate(p.constants) if tag == 0}
    return p.save(kinds, layout, scopes)


BIGRAM_VOCAB = 16
BIGRAM_CONTEXT = 64


def bigram_lm():
    """A language model in MLC's GPT-2 calling convention over the CPU library's bigram operators
    (the generate example's fixture): `_initialize_effect` -> (cache,); `prefill` and `decode`
    (ids (1, n) int32, total length Shape([t]), caches, params (table,)) -> (logits (1, 1, vocab),
    caches), the next token's logits the table's row of the last id; the cache keeps every id seen
    and the total length is checked against it, as a model's KV cache is; `softmax_with_temperature`
    (logits, temperature: a float32 0-d tensor) -> probabilities; `_metadata` as MLC's."""
    p = Program()
    vocab = BIGRAM_VOCAB
    f32, i32 = p.dtype(*FLOAT32), p.dtype(0, 32)
    names = ["input_ids", "total_seq_len", "kv_cache", "params"]

    def forward(name):
        ctx = [p.string(context(name, f"param[{i}]", n, "")) for i, n in enumerate(names)]

        def body(emit):
            c = p.call
            c(emit, "vm.builtin.alloc_shape_heap", [VM, I(2)], 4)
            c(emit, "vm.builtin.check_tensor_info", [R(0), I(2), i32, ctx[0]])
            c(emit, "vm.builtin.match_shape", [R(0), R(4), I(2), I(0), I(1), I(1), I(0), ctx[0]])  # (1, n)
            c(emit, "vm.builtin.check_shape_info", [R(1), I(1), ctx[1]])
            c(emit, "vm.builtin.match_shape", [R(1), R(4), I(1), I(1), I(1), ctx[1]])  # total -> heap[1]
            c(emit, "vm.builtin.check_tuple_info", [R(2), I(1), ctx[2]])
            c(emit, "vm.builtin.check_tuple_info", [R(3), I(1), ctx[3]])
            c(emit, "vm.builtin.tuple_getitem", [R(3), I(0)], 5)
            c(emit, "vm.builtin.check_tensor_info", [R(5), I(2), f32, ctx[3]])
            c(emit, "vm.builtin.match_shape", [R(5), R(4), I(2), I(0), I(vocab), I(0), I(vocab), ctx[3]])
            c(emit, "vm.builtin.alloc_storage", [VM, p.shape(vocab * 4), I(0), f32, p.string("global")], 6)
            c(emit, "vm.builtin.alloc_tensor", [R(6), I(0), p.shape(1, 1, vocab), f32], 7)
            c(emit, "cpu_bigram_logits", [R(0), R(5), R(7)])
            c(emit, "vm.builtin.tuple_getitem", [R(2), I(0)], 8)
            c(emit, "vm.builtin.make_shape", [R(4), I(2), I(1), I(0), I(0), I(1)], 9)  # (n, 1)
            c(emit, "vm.builtin.reshape", [R(0), R(9)], 9)
            c(emit, "vm.builtin.attention_kv_cache_append", [R(8), R(9)], 8)
            c(emit, "vm.builtin.attention_kv_cache_view", [R(8)], 10)
            c(emit, "vm.builtin.match_shape", [R(10), R(4), I(2), I(3), I(1), I(0), I(1), ctx[1]])  # == total
            c(emit, "vm.builtin.make_tuple", [R(8)], 9)
            c(emit, "vm.builtin.make_tuple", [R(7), R(9)], 10)
            emit(2, 10)

        p.vm_function(name, names, 11, body)

    def initialize(emit):
        p.call(emit, "vm.builtin.attention_kv_cache_create", [p.ndarray([4, 1], [0] * 4, (0, 32, 1)), p.shape(4, 1),
                                                              I(0)], 0)
        p.call(emit, "vm.builtin.make_tuple", [R(0)], 0)
        emit(2, 0)

    def softmax(emit):
        ctx = p.string(context("softmax_with_temperature", "param[0]", "logits", ""))
        p.call(emit, "vm.builtin.check_tensor_info", [R(0), I(3), f32, ctx])
        p.call(emit, "vm.builtin.check_tensor_info", [R(1), I(0), f32, VOID])
        p.call(emit, "vm.builtin.alloc_storage", [VM, p.shape(vocab * 4), I(0), f32, p.string("global")], 2)
        p.call(emit, "vm.builtin.alloc_tensor", [R(2), I(0), p.shape(1, 1, vocab), f32], 3)
        p.call(emit, "cpu_softmax_temperature", [R(0), R(1), R(3)])
        emit(2, 3)

    def metadata(emit):
        text = json.dumps({"model_type": "fixture-bigram", "quantization": "q0f32",
                           "context_window_size": BIGRAM_CONTEXT, "prefill_chunk_size": BIGRAM_CONTEXT,
                           "params": [{"name": "table", "shape": [vocab, vocab], "dtype": "float32",
                                       "preprocs": []}],
                           "memory_usage": {"prefill": vocab * 4, "decode": vocab * 4}})
        p.call(emit, "vm.builtin.copy", [p.string(text)], 0)
        emit(2, 0)

    p.vm_function("_initialize_effect", [], 1, initialize)
    forward("prefill")
    forward("decode")
    p.vm_function("softmax_with_temperature", ["logits", "temperature"], 4, softmax)
    p.vm_function("_metadata", [], 1, metadata)
    return p.save()
