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
  std::vector<Value> constants; // tensors on the host (the VM copies them to its device)
  std::vector<VmInstruction> code;
  std::vector<VmArg> args;
};

// The layouts devrt reads: TVM's relax.Executable as written before the 0.20 rename (unity branch
// 2023 to release 0.19: constants tagged NDArray 0, DLDataType 1, ShapeTuple 2, String 3, Int 4).
// `module_key` is the blob's key for the module ("relax.Executable"; "relax.VMExecutable" is
// TVM >= 0.20's, refused as unsupported naming it). Every count, length, index, register and
// jump is checked against the bytes and the tables; errors are invalid_argument (malformed,
// naming the section and byte) or unsupported (a kind devrt does not know). Thread-safe.
Result<VmExecutable> parse_vm_executable(std::span<const std::byte> bytes, std::string_view module_key) noexcept;

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_VM_EXECUTABLE_HPP
