// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Relax VM executable parser (devrt::tvm::VirtualMachine::create's first
// step) over arbitrary bytes, which a model library of unknown origin carries. A refusal is
// invalid_argument or unsupported with a reason; an accepted program's every decoded instruction
// has its operands inside the function's registers, the pool and the function table, and every
// jump stays inside its function.
#include <cstdint>
#include <span>

#include "fuzz_check.hpp"
#include "tvm/tvm_vm_executable.hpp"

namespace {

using devrt::tvm::detail::VmArgKind;
using devrt::tvm::detail::VmExecutable;
using devrt::tvm::detail::VmFunction;
using devrt::tvm::detail::VmFunctionKind;
using devrt::tvm::detail::VmInstruction;
using devrt::tvm::detail::VmLayout;
using devrt::tvm::detail::VmOpcode;

void check_function(const VmExecutable& exe, const VmFunction& f) {
  if (f.start < 0 || f.end < f.start || static_cast<std::uint64_t>(f.end) > exe.code.size()) broken("function range");
  for (std::int64_t pc = f.start; pc < f.end; ++pc) {
    const VmInstruction& in = exe.code[static_cast<std::size_t>(pc)];
    // A call may write the void register; Ret and If read a register; Goto has none.
    const bool reg_ok =
        in.op == VmOpcode::jump ||
        (in.reg == VmInstruction::kNoRegister ? in.op == VmOpcode::call : in.reg >= 0 && in.reg < f.registers);
    if (!reg_ok) broken("register");
    if (in.op == VmOpcode::jump || in.op == VmOpcode::branch) {
      if (pc + in.offset < f.start || pc + in.offset >= f.end) broken("jump inside the function");
    }
    if (in.op != VmOpcode::call) continue;
    if (in.target < 0 || static_cast<std::uint64_t>(in.target) >= exe.functions.size()) broken("callee");
    if (static_cast<std::size_t>(in.first_arg) + in.num_args > exe.args.size()) broken("arguments");
    for (std::uint32_t i = 0; i < in.num_args; ++i) {
      const auto& a = exe.args[in.first_arg + i];
      const auto value = static_cast<std::uint64_t>(a.value);
      if (a.kind == VmArgKind::reg && (a.value < 0 || a.value >= f.registers)) broken("register argument");
      if (a.kind == VmArgKind::constant && value >= exe.constants.size()) broken("constant argument");
      if (a.kind == VmArgKind::function && value >= exe.functions.size()) broken("function argument");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  // The same bytes as each TVM's executable: each era numbers the constants its own way, and
  // TVM main's adds a memory-scope section.
  for (const VmLayout layout : {VmLayout::packed, VmLayout::ffi_0_21, VmLayout::ffi}) {
    devrt::Result<VmExecutable> exe = devrt::tvm::detail::parse_vm_executable(bytes, "relax.VMExecutable", layout);
    if (!exe.ok()) {
      const devrt::ErrorCode code = exe.status().code();
      if (code != devrt::ErrorCode::invalid_argument && code != devrt::ErrorCode::unsupported) broken("error code");
      if (exe.status().message().empty()) broken("a reason");
      continue;
    }
    if (exe->constant_scopes.size() != exe->constants.size()) broken("a scope per constant");
    for (const VmFunction& f : exe->functions) {
      if (f.kind == VmFunctionKind::bytecode) check_function(*exe, f);
    }
  }
  return 0;
}
