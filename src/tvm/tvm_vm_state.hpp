// SPDX-License-Identifier: Apache-2.0
// The Relax VM's state (devrt/tvm_vm.hpp), shared by the interpreter (tvm_vm.cpp) and its
// builtins (tvm_vm_builtins.cpp, tvm_vm_kv_cache.cpp). Not public API.
#ifndef DEVRT_SRC_TVM_TVM_VM_STATE_HPP
#define DEVRT_SRC_TVM_TVM_VM_STATE_HPP

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <devrt/tvm_vm.hpp>

#include "tvm/tvm_state.hpp"
#include "tvm/tvm_vm_executable.hpp"
#include "tvm/tvm_vm_value.hpp"

namespace devrt::tvm::detail {

// A builtin (vm.builtin.*): `args` as the instruction passes them, `result` its return value (null
// when it returns nothing). Errors in TVM's words where TVM has words for them.
using Builtin = Status (*)(VmState& vm, std::span<const Value> args, Value& result);

struct BuiltinEntry {
  std::string_view name;
  Builtin function;
};

// Every builtin devrt provides, by TVM's name (tvm_vm_builtins.cpp).
std::span<const BuiltinEntry> vm_builtins() noexcept;

// What one entry of the function table calls.
struct PoolEntry {
  enum class Kind { bytecode, builtin, library } kind = Kind::builtin;
  Builtin builtin = nullptr;
  void* address = nullptr; // a library function's
};

struct VmState {
  SharedLibrary* shared = nullptr;
  DeviceKernels* kernels = nullptr;
  VmExecutable exe;
  std::vector<Device> devices;    // the library's device, then the CPU host
  std::vector<Value> constants;   // the pool, NDArrays on devices[0]
  std::vector<PoolEntry> pool;    // by function index
  std::vector<Value> functions;   // each function index as a first-class value
  int depth = 0;                  // nested VM function calls
  std::uint64_t instructions = 0; // run so far
};

// Calls function-table entry `index` (a VM function, builtin or library function) with `args`.
Status call_function(VmState& vm, std::int64_t index, std::span<const Value> args, Value& result) noexcept;

// Calls `function` (a function value: a table entry or a closure, its bound arguments after
// `args`) with `args`.
Status invoke_value(VmState& vm, const Value& function, std::span<const Value> args, Value& result) noexcept;

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_VM_STATE_HPP
