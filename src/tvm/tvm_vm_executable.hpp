// SPDX-License-Identifier: Apache-2.0
// The Relax VM's program as devrt runs it (devrt/tvm_vm.hpp): `relax.Executable` parsed from the
// bytes TVM's Executable::SaveToBinary wrote, checked, and decoded into instructions whose every
// operand is known to be in range. Not public API.
#ifndef DEVRT_SRC_TVM_TVM_VM_EXECUTABLE_HPP
#define DEVRT_SRC_TVM_TVM_VM_EXECUTABLE_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <devrt/status.hpp>
#include <devrt/tvm_vm.hpp>

namespace devrt::tvm::detail {

// VMFuncInfo::FuncKind.
enum class VmFunctionKind : std::int32_t { packed = 0, bytecode = 1, tir = 2 };

// VMFuncInfo: one entry of the function table.
struct VmFunction {
  VmFunctionKind kind = VmFunctionKind::packed;
  std::string name;
  std::int64_t start = 0; // first instruction (bytecode functions)
  std::int64_t end = 0;   // one past the last
  std::int64_t num_args = 0;
  std::int64_t registers = 0;
  std::vector<std::string> params;
};

// Instruction::ArgKind, with the special registers decoded.
enum class VmArgKind : std::uint8_t { reg, immediate, constant, function, void_reg, vm_reg };

struct VmArg {
  VmArgKind kind = VmArgKind::reg;
  std::int64_t value = 0;
};

enum class VmOpcode : std::uint8_t { call = 1, ret = 2, jump = 3, branch = 4 };

// A decoded instruction. call: `target` the function index, `reg` the destination (kNoRegister:
// the void register), args[first_arg, first_arg + num_args). ret: `reg` the result register.
// jump: `offset` the pc offset. branch: `reg` the condition, `offset` the false branch's offset.
struct VmInstruction {
  static constexpr std::int64_t kNoRegister = -1;
  VmOpcode op = VmOpcode::ret;
  std::int64_t reg = kNoRegister;
  std::int64_t target = 0;
  std::int64_t offset = 0;
  std::uint32_t first_arg = 0;
  std::uint32_t num_args = 0;
};

struct VmExecutable {
  std::string version;
  std::vector<VmFunction> functions;
  std::vector<Value> constants;             // tensors on the host (the VM copies them to its device)
  std::vector<std::string> constant_scopes; // per constant, the memory scope TVM main names ("": none)
  std::vector<VmInstruction> code;
  std::vector<VmArg> args;
};

// Which TVM wrote an executable, as its library's ABI tells (the version string stays "0.14"):
//  - packed: TVM <= 0.20 (relax.Executable; 0.20 renamed the module relax.VMExecutable), constants
//    tagged NDArray 0, DLDataType 1, ShapeTuple 2, String 3, Int 4, Float 5;
//  - ffi_0_21: TVM 0.21, the tags tvm-ffi's type indices of then: Int 1, Float 3, DataType 5,
//    Str 65, Shape 71, NDArray 72;
//  - ffi: TVM >= 0.22, today's indices (Shape 69, Tensor 70); from TVM main on also the header
//    magic 0xD225DE2F4214151E and a memory-scope section after the global section (a uint64
//    count, then per entry a constant's index as int64 and its scope as a string).
enum class VmLayout { packed, ffi_0_21, ffi };

// The executable in `bytes` (TVM's Executable::SaveToBinary / SaveToBytes), its module `module_key`
// ("relax.Executable" or "relax.VMExecutable") in a library of `layout`. Every count, length,
// index, register, jump and memory scope is checked against the bytes and the tables; errors are
// invalid_argument (malformed, naming the section and byte) or unsupported (a kind devrt does
// not know). Thread-safe.
Result<VmExecutable> parse_vm_executable(std::span<const std::byte> bytes, std::string_view module_key,
                                         VmLayout layout = VmLayout::packed) noexcept;

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_VM_EXECUTABLE_HPP
