// SPDX-License-Identifier: Apache-2.0
// relax.Executable as TVM's Executable::SaveToBinary writes it (src/runtime/relax_vm/
// executable.cc; src/runtime/vm/ from 0.21, SaveToBytes from 0.22): the magic 0xD225DE2F4214151D
// (...1E from TVM main) and TVM's version string, the global section (a vector of VMFuncInfo: kind
// int32, name, start_instr, end_instr, num_args, register_file_size as int64, param_names), from
// TVM main the memory-scope section, the constant pool (a uint64 count, then per constant an int32
// tag, whose values each era numbers its own way (VmLayout), and its value), and the code section
// (instr_offset and instr_data, vectors of int64). An instruction is its opcode then its operands; a call's arguments
// are one word each, the kind in the top 8 bits and a sign-extended 56-bit value below (bytecode.h).
#include "tvm/tvm_vm_executable.hpp"

#include <cstring>
#include <limits>
#include <utility>

#include <devrt/device.hpp>

#include "tvm/tvm_reader.hpp"
#include "tvm/tvm_vm_value.hpp"

namespace devrt::tvm::detail {
namespace {

using Reader = ByteReader<VmLayout>;

constexpr std::uint64_t kMagic = 0xD225DE2F4214151Dull;
constexpr std::uint64_t kMagicWithScopes = 0xD225DE2F4214151Eull; // TVM main: a memory-scope section
constexpr std::uint64_t kNDArrayMagic = 0xDD5E40F096B4A13Full;
constexpr std::int64_t kBeginSpecialRegister = std::int64_t{1} << 54;
constexpr int kValueBits = 56;
constexpr const char* kPrefix = "Relax VM executable";

bool i64(Reader& in, std::int64_t& out, const char* what) {
  std::uint64_t raw = 0;
  if (!in.u64(raw, what)) return false;
  std::memcpy(&out, &raw, sizeof out);
  return true;
}

bool i32(Reader& in, std::int32_t& out, const char* what) {
  std::uint32_t raw = 0;
  if (!in.u32(raw, what)) return false;
  std::memcpy(&out, &raw, sizeof out);
  return true;
}

bool fail(Reader& in, ErrorCode code, auto&&... parts) { return in.fail(make_error(code, kPrefix, ": ", parts...)); }

bool read_function(Reader& in, VmFunction& f) {
  std::int32_t kind = 0;
  std::uint64_t params = 0;
  if (!i32(in, kind, "VMFuncInfo.kind") || !in.string(f.name, "VMFuncInfo.name") ||
      !i64(in, f.start, "VMFuncInfo.start_instr") || !i64(in, f.end, "VMFuncInfo.end_instr") ||
      !i64(in, f.num_args, "VMFuncInfo.num_args") || !i64(in, f.registers, "VMFuncInfo.register_file_size") ||
      !in.count(params, 8, "VMFuncInfo.param_names")) {
    return false;
  }
  if (kind < 0 || kind > 2) {
    return fail(in, ErrorCode::unsupported, "function '", f.name, "' has kind ", kind,
                " (TVM's are 0 packed, 1 VM function, 2 VM TIR function)");
  }
  f.kind = static_cast<VmFunctionKind>(kind);
  f.params.resize(static_cast<std::size_t>(params));
  for (std::string& name : f.params) {
    if (!in.string(name, "VMFuncInfo.param_names")) return false;
  }
  return true;
}

// NDArray::Save (SaveDLTensor), into a host tensor.
bool read_ndarray(Reader& in, std::size_t index, Value& out) {
  std::uint64_t magic = 0, reserved = 0;
  std::int32_t device[2] = {};
  std::uint32_t ndim = 0;
  unsigned char dtype[4] = {};
  if (!in.u64(magic, "NDArray header") || !in.u64(reserved, "NDArray header") ||
      !i32(in, device[0], "NDArray device") || !i32(in, device[1], "NDArray device") || !in.u32(ndim, "NDArray ndim") ||
      !in.bytes(dtype, 4, "NDArray dtype")) {
    return false;
  }
  if (magic != kNDArrayMagic || ndim > static_cast<std::uint32_t>(Tensor::kMaxDims)) {
    return fail(in, ErrorCode::invalid_argument, "constant ", index, " is not an NDArray (magic ", magic, ", ndim ",
                ndim, ")");
  }
  std::vector<std::int64_t> shape(ndim);
  for (std::int64_t& extent : shape) {
    if (!i64(in, extent, "NDArray shape")) return false;
  }
  const DataType type{static_cast<DataTypeCode>(dtype[0]), dtype[1],
                      static_cast<std::uint16_t>(dtype[2] | dtype[3] << 8)};
  // The byte count the shape and dtype need, checked against the recorded one and the bytes left
  // before anything is allocated: a corrupt shape is an error, never an allocation.
  Result<std::uint64_t> size = shape_bytes(shape, type, "NDArray");
  if (!size.ok()) return fail(in, ErrorCode::invalid_argument, "constant ", index, ": ", size.status().message());
  const std::uint64_t needed = *size;
  std::int64_t nbytes = 0;
  if (!i64(in, nbytes, "NDArray data size")) return false;
  if (nbytes < 0 || static_cast<std::uint64_t>(nbytes) != needed) {
    return fail(in, ErrorCode::invalid_argument, "constant ", index, " holds ", nbytes, " bytes, its shape and dtype ",
                needed);
  }
  if (needed > in.left()) return in.truncated("NDArray data", static_cast<std::size_t>(needed));
  Result<Tensor> tensor = Tensor::empty(shape, type, kHostDevice);
  if (!tensor.ok()) {
    return fail(in, ErrorCode::invalid_argument, "constant ", index, ": ", tensor.status().message());
  }
  if (!in.bytes(tensor->host_data(), static_cast<std::size_t>(nbytes), "NDArray data")) return false;
  out = Value(*tensor);
  return true;
}

enum class ConstantKind { ndarray, dtype, shape, string, integer, real, unknown };

// What constant tag `tag` is in `layout`'s numbering.
ConstantKind constant_kind(VmLayout layout, std::int32_t tag) {
  switch (layout) {
  case VmLayout::packed: // ConstantType: kNDArray 0, kDLDataType 1, kShapeTuple 2, kString 3, kInt 4, kFloat 5
    return tag >= 0 && tag <= 5 ? static_cast<ConstantKind>(tag) : ConstantKind::unknown;
  case VmLayout::ffi_0_21: // TVMFFITypeIndex of TVM 0.21
  case VmLayout::ffi:      // TVMFFITypeIndex from TVM 0.22 on
    switch (tag) {
    case 1: return ConstantKind::integer;
    case 3: return ConstantKind::real;
    case 5: return ConstantKind::dtype;
    case 65: return ConstantKind::string;
    default: break;
    }
    if (tag == (layout == VmLayout::ffi ? 69 : 71)) return ConstantKind::shape;
    if (tag == (layout == VmLayout::ffi ? 70 : 72)) return ConstantKind::ndarray;
    return ConstantKind::unknown;
  }
  return ConstantKind::unknown;
}

const char* tag_names(VmLayout layout) {
  switch (layout) {
  case VmLayout::packed: return "0 NDArray, 1 DLDataType, 2 ShapeTuple, 3 String, 4 Int, 5 Float";
  case VmLayout::ffi_0_21: return "TVM 0.21's 1 Int, 3 Float, 5 DataType, 65 Str, 71 Shape, 72 NDArray";
  case VmLayout::ffi: return "TVM 0.22's 1 Int, 3 Float, 5 DataType, 65 Str, 69 Shape, 70 Tensor";
  }
  return "";
}

bool read_constant(Reader& in, std::size_t index, Value& out) {
  std::int32_t tag = 0;
  if (!i32(in, tag, "constant tag")) return false;
  switch (constant_kind(in.abi(), tag)) {
  case ConstantKind::ndarray: return read_ndarray(in, index, out);
  case ConstantKind::dtype: {
    unsigned char raw[4] = {};
    if (!in.bytes(raw, 4, "DLDataType constant")) return false;
    out = Value(DataType{static_cast<DataTypeCode>(raw[0]), raw[1], static_cast<std::uint16_t>(raw[2] | raw[3] << 8)});
    return true;
  }
  case ConstantKind::shape: {
    std::uint64_t n = 0;
    if (!in.count(n, 8, "ShapeTuple constant")) return false;
    std::vector<std::int64_t> dims(static_cast<std::size_t>(n));
    for (std::int64_t& d : dims) {
      if (!i64(in, d, "ShapeTuple constant")) return false;
    }
    out = Value::shape(dims);
    return true;
  }
  case ConstantKind::string: {
    std::string text;
    if (!in.string(text, "String constant")) return false;
    out = Value::string(text);
    return true;
  }
  case ConstantKind::integer: {
    std::int64_t v = 0;
    if (!i64(in, v, "Int constant")) return false;
    out = Value(v);
    return true;
  }
  case ConstantKind::real: {
    std::uint64_t bits = 0;
    if (!in.u64(bits, "Float constant")) return false;
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    out = Value(v);
    return true;
  }
  case ConstantKind::unknown: break;
  }
  return fail(in, ErrorCode::unsupported, "constant ", index, " has tag ", tag, " (devrt reads ", tag_names(in.abi()),
              ")");
}

// TVM main's memory-scope section: (constant index, scope) pairs, checked once the pool is read.
bool read_scopes(Reader& in, std::vector<std::pair<std::int64_t, std::string>>& scopes) {
  std::uint64_t n = 0;
  if (!in.count(n, 8 + 8, "memory-scope section")) return false;
  scopes.resize(static_cast<std::size_t>(n));
  for (auto& [index, scope] : scopes) {
    if (!i64(in, index, "memory-scope section") || !in.string(scope, "memory-scope section")) return false;
  }
  return true;
}

bool apply_scopes(Reader& in, const std::vector<std::pair<std::int64_t, std::string>>& scopes, VmExecutable& exe) {
  exe.constant_scopes.assign(exe.constants.size(), std::string());
  for (const auto& [index, scope] : scopes) {
    if (index < 0 || static_cast<std::uint64_t>(index) >= exe.constants.size()) {
      return fail(in, ErrorCode::invalid_argument, "memory scope '", scope, "' of constant ", index,
                  ", past the pool's ", exe.constants.size());
    }
    if (!parse_memory_scope(scope).ok()) {
      return fail(in, ErrorCode::unsupported, "constant ", index, " in memory scope '", scope,
                  "', which devrt does not know");
    }
    exe.constant_scopes[static_cast<std::size_t>(index)] = scope;
  }
  return true;
}

bool read_words(Reader& in, std::vector<std::int64_t>& out, const char* what) {
  std::uint64_t n = 0;
  if (!in.count(n, 8, what)) return false;
  out.resize(static_cast<std::size_t>(n));
  for (std::int64_t& w : out) {
    if (!i64(in, w, what)) return false;
  }
  return true;
}

// Checks and decodes the instructions of one bytecode function.
class Decoder {
public:
  Decoder(Reader& in, VmExecutable& exe, const std::vector<std::int64_t>& offsets,
          const std::vector<std::int64_t>& data)
      : in_(in), exe_(exe), offsets_(offsets), data_(data) {}

  bool function(const VmFunction& f) {
    for (std::int64_t pc = f.start; pc < f.end; ++pc) {
      if (!instruction(f, pc)) return false;
    }
    return true;
  }

private:
  bool bad(const VmFunction& f, std::int64_t pc, auto&&... parts) {
    return fail(in_, ErrorCode::invalid_argument, "function '", f.name, "', instruction ", pc, ": ", parts...);
  }
  // The word `i` of the instruction at `at`, or false when it lies past instr_data.
  bool word(const VmFunction& f, std::int64_t pc, std::size_t at, std::size_t i, std::int64_t& out) {
    if (at + i >= data_.size()) return bad(f, pc, "its operands run past the code (", data_.size(), " words)");
    out = data_[at + i];
    return true;
  }
  bool reg(const VmFunction& f, std::int64_t pc, std::int64_t r, bool void_ok, std::int64_t& out) {
    if (r == kBeginSpecialRegister && void_ok) {
      out = VmInstruction::kNoRegister;
      return true;
    }
    if (r < 0 || r >= f.registers) {
      return bad(f, pc, "register ", r, " is outside its ", f.registers, " registers");
    }
    out = r;
    return true;
  }
  bool target(const VmFunction& f, std::int64_t pc, std::int64_t offset) {
    // Compared as offsets from pc (both bounds are small): pc + offset may overflow.
    if (offset == 0 || offset < f.start - pc || offset >= f.end - pc) {
      return bad(f, pc, "jumps by ", offset, ", outside the function's instructions [", f.start, ", ", f.end, ")");
    }
    return true;
  }
  bool argument(const VmFunction& f, std::int64_t pc, std::int64_t word, VmArg& out);
  bool instruction(const VmFunction& f, std::int64_t pc);

  Reader& in_;
  VmExecutable& exe_;
  const std::vector<std::int64_t>& offsets_;
  const std::vector<std::int64_t>& data_;
};

bool Decoder::argument(const VmFunction& f, std::int64_t pc, std::int64_t word, VmArg& out) {
  const auto kind = static_cast<std::uint8_t>(static_cast<std::uint64_t>(word) >> kValueBits);
  const auto shifted = static_cast<std::uint64_t>(word) << (64 - kValueBits);
  std::int64_t value = 0;
  std::memcpy(&value, &shifted, sizeof value);
  value >>= 64 - kValueBits; // sign-extends the 56-bit value
  out.value = value;
  switch (kind) {
  case 0:
    if (value == kBeginSpecialRegister || value == kBeginSpecialRegister + 1) {
      out.kind = value == kBeginSpecialRegister ? VmArgKind::void_reg : VmArgKind::vm_reg;
      return true;
    }
    out.kind = VmArgKind::reg;
    return reg(f, pc, value, false, out.value);
  case 1: out.kind = VmArgKind::immediate; return true;
  case 2:
    out.kind = VmArgKind::constant;
    if (value < 0 || static_cast<std::uint64_t>(value) >= exe_.constants.size()) {
      return bad(f, pc, "constant ", value, " is outside the pool of ", exe_.constants.size());
    }
    return true;
  case 3:
    out.kind = VmArgKind::function;
    if (value < 0 || static_cast<std::uint64_t>(value) >= exe_.functions.size()) {
      return bad(f, pc, "function ", value, " is outside the table of ", exe_.functions.size());
    }
    return true;
  default:
    return fail(in_, ErrorCode::unsupported, "function '", f.name, "', instruction ", pc, ": argument kind ",
                static_cast<int>(kind), " (TVM's are 0 register, 1 immediate, 2 constant, 3 function)");
  }
}

bool Decoder::instruction(const VmFunction& f, std::int64_t pc) {
  const std::int64_t at_word = offsets_[static_cast<std::size_t>(pc)];
  if (at_word < 0 || static_cast<std::uint64_t>(at_word) >= data_.size()) {
    return bad(f, pc, "its offset ", at_word, " is outside the code's ", data_.size(), " words");
  }
  const auto at = static_cast<std::size_t>(at_word);
  VmInstruction& out = exe_.code[static_cast<std::size_t>(pc)];
  std::int64_t a = 0, b = 0, n = 0;
  switch (data_[at]) {
  case 1: { // Call: dst, func_idx, num_args, args
    if (!word(f, pc, at, 1, a) || !word(f, pc, at, 2, b) || !word(f, pc, at, 3, n)) return false;
    if (!reg(f, pc, a, true, out.reg)) return false;
    if (b < 0 || static_cast<std::uint64_t>(b) >= exe_.functions.size()) {
      return bad(f, pc, "calls function ", b, ", outside the table of ", exe_.functions.size());
    }
    if (n < 0 || static_cast<std::uint64_t>(n) > data_.size() - at - 4) {
      return bad(f, pc, "has ", n, " arguments, past the code's end");
    }
    out.op = VmOpcode::call;
    out.target = b;
    out.first_arg = static_cast<std::uint32_t>(exe_.args.size());
    out.num_args = static_cast<std::uint32_t>(n);
    for (std::int64_t i = 0; i < n; ++i) {
      VmArg arg;
      if (!argument(f, pc, data_[at + 4 + static_cast<std::size_t>(i)], arg)) return false;
      exe_.args.push_back(arg);
    }
    return true;
  }
  case 2: // Ret: result
    out.op = VmOpcode::ret;
    return word(f, pc, at, 1, a) && reg(f, pc, a, false, out.reg);
  case 3: // Goto: pc_offset
    out.op = VmOpcode::jump;
    if (!word(f, pc, at, 1, out.offset)) return false;
    return target(f, pc, out.offset);
  case 4: // If: cond, false_offset
    out.op = VmOpcode::branch;
    if (!word(f, pc, at, 1, a) || !word(f, pc, at, 2, out.offset) || !reg(f, pc, a, false, out.reg)) return false;
    return target(f, pc, out.offset) && target(f, pc, 1);
  default:
    return fail(in_, ErrorCode::unsupported, "function '", f.name, "', instruction ", pc, ": opcode ", data_[at],
                " (TVM's are 1 Call, 2 Ret, 3 Goto, 4 If)");
  }
}

bool read_functions(Reader& in, VmExecutable& exe) {
  std::uint64_t n = 0;
  if (!in.count(n, 4 + 8 + 8 * 5, "global section")) return false;
  exe.functions.resize(static_cast<std::size_t>(n));
  for (VmFunction& f : exe.functions) {
    if (!read_function(in, f)) return false;
  }
  return true;
}

bool read_constants(Reader& in, VmExecutable& exe) {
  std::uint64_t n = 0;
  if (!in.count(n, 4, "constant pool")) return false;
  exe.constants.resize(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < exe.constants.size(); ++i) {
    if (!read_constant(in, i, exe.constants[i])) return false;
  }
  return true;
}

// Each bytecode function's range inside the code, its arguments inside its registers; then its
// instructions decoded.
bool decode(Reader& in, VmExecutable& exe, const std::vector<std::int64_t>& offsets,
            const std::vector<std::int64_t>& data) {
  exe.code.resize(offsets.size());
  Decoder decoder(in, exe, offsets, data);
  for (const VmFunction& f : exe.functions) {
    if (f.kind != VmFunctionKind::bytecode) continue;
    if (f.start < 0 || f.end < f.start || static_cast<std::uint64_t>(f.end) > offsets.size()) {
      return fail(in, ErrorCode::invalid_argument, "function '", f.name, "' spans instructions [", f.start, ", ", f.end,
                  "), outside the code's ", offsets.size());
    }
    if (f.num_args < 0 || f.registers < f.num_args || f.registers > (std::int64_t{1} << 24)) {
      return fail(in, ErrorCode::invalid_argument, "function '", f.name, "' takes ", f.num_args, " arguments in ",
                  f.registers, " registers");
    }
    if (!f.params.empty() && f.params.size() != static_cast<std::size_t>(f.num_args)) {
      return fail(in, ErrorCode::invalid_argument, "function '", f.name, "' names ", f.params.size(),
                  " parameters for ", f.num_args, " arguments");
    }
    if (!decoder.function(f)) return false;
  }
  return true;
}

} // namespace

Result<VmExecutable> parse_vm_executable(std::span<const std::byte> bytes, std::string_view module_key,
                                         VmLayout layout) noexcept {
  if (module_key != "relax.VMExecutable" && (module_key != "relax.Executable" || layout != VmLayout::packed)) {
    return make_error(ErrorCode::unsupported, kPrefix, ": module '", module_key, "' in a library of TVM ",
                      layout == VmLayout::packed ? "<= 0.20" : ">= 0.21",
                      " (devrt reads relax.Executable to 0.20 and relax.VMExecutable from 0.20 on)");
  }
  Reader in(bytes, layout, kPrefix);
  VmExecutable exe;
  std::uint64_t magic = 0;
  if (!in.u64(magic, "header")) return in.error();
  const bool scoped = magic == kMagicWithScopes && layout == VmLayout::ffi;
  if (magic != kMagic && !scoped) {
    return make_error(ErrorCode::invalid_argument, kPrefix, ": no VM bytecode magic (", magic, ")");
  }
  if (!in.string(exe.version, "version")) return in.error();
  std::vector<std::int64_t> offsets, data;
  std::vector<std::pair<std::int64_t, std::string>> scopes;
  if (!read_functions(in, exe) || (scoped && !read_scopes(in, scopes)) || !read_constants(in, exe) ||
      !apply_scopes(in, scopes, exe) || !read_words(in, offsets, "instr_offset") ||
      !read_words(in, data, "instr_data") || !decode(in, exe, offsets, data)) {
    return in.error();
  }
  if (in.left() != 0) {
    return make_error(ErrorCode::invalid_argument, kPrefix, ": ", in.left(), " bytes after its code section (corrupt)");
  }
  return exe;
}

} // namespace devrt::tvm::detail
