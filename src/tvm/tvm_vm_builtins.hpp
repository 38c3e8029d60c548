// SPDX-License-Identifier: Apache-2.0
// What the Relax VM's builtins share (tvm_vm_builtins.cpp, tvm_vm_kv_cache.cpp): argument checks
// that name the builtin, and the KV cache's entries. Not public API.
#ifndef DEVRT_SRC_TVM_TVM_VM_BUILTINS_HPP
#define DEVRT_SRC_TVM_TVM_VM_BUILTINS_HPP

#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "tvm/tvm_vm_state.hpp"

namespace devrt::tvm::detail {

inline Status exactly(std::span<const Value> args, std::size_t n, std::string_view builtin) {
  if (args.size() == n) return Status();
  return make_error(ErrorCode::invalid_argument, "vm.builtin.", builtin, " takes ", n, " arguments, got ", args.size());
}

inline Status at_least(std::span<const Value> args, std::size_t n, std::string_view builtin) {
  if (args.size() >= n) return Status();
  return make_error(ErrorCode::invalid_argument, "vm.builtin.", builtin, " takes at least ", n, " arguments, got ",
                    args.size());
}

// TVM's type key of a value, as its messages name what they got.
inline std::string type_key_of(const Value& v) {
  const std::string_view key = v.type_key();
  return std::string(key.empty() ? Value::kind_name(v.kind()) : key);
}

inline Status wrong_kind(std::span<const Value> args, std::size_t i, std::string_view builtin, const char* wanted) {
  return make_error(ErrorCode::invalid_argument, "vm.builtin.", builtin, ": argument ", i, " is a ",
                    type_key_of(args[i]), ", not a ", wanted);
}

inline Result<std::int64_t> int_arg(std::span<const Value> args, std::size_t i, std::string_view builtin) {
  if (args[i].kind() != Value::Kind::integer) return wrong_kind(args, i, builtin, "int");
  return args[i].integer();
}

inline Result<std::span<const std::int64_t>> shape_arg(std::span<const Value> args, std::size_t i,
                                                       std::string_view builtin) {
  if (args[i].kind() != Value::Kind::shape) return wrong_kind(args, i, builtin, "Shape");
  return args[i].shape();
}

inline Result<const Tensor*> tensor_arg(std::span<const Value> args, std::size_t i, std::string_view builtin) {
  if (args[i].kind() != Value::Kind::tensor) return wrong_kind(args, i, builtin, "Tensor");
  return &args[i].tensor();
}

inline Status context_arg(std::span<const Value> args, std::size_t i, std::string_view builtin) {
  if (args[i].kind() != Value::Kind::context) return wrong_kind(args, i, builtin, "VirtualMachine (%vm)");
  return Status();
}

// The error context string at `i` (TVM's Optional<String>: absent or null is "").
inline std::string_view error_context(std::span<const Value> args, std::size_t i) {
  return i < args.size() ? args[i].string() : std::string_view();
}

// A boxed result that came out null: the host ran out of memory.
inline Status boxed(const Value& result, std::string_view builtin) {
  if (!result.is_null()) return Status();
  return make_error(ErrorCode::out_of_memory, "vm.builtin.", builtin, ": no host memory");
}

template <class T>
T load_as(const unsigned char* bytes) noexcept {
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

// If's condition and read_if_cond's: an int, or a scalar integer tensor read on the host (after the
// work queued before it); invalid_argument naming `what` for anything else.
Result<bool> read_condition(const Value& cond, std::string_view what);

// lm_support.cc's legacy attention KV cache (tvm_vm_kv_cache.cpp).
Status kv_cache_create(VmState& vm, std::span<const Value> args, Value& result);
Status kv_cache_append(VmState& vm, std::span<const Value> args, Value& result);
Status kv_cache_update(VmState& vm, std::span<const Value> args, Value& result);
Status kv_cache_view(VmState& vm, std::span<const Value> args, Value& result);
Status kv_cache_array_popn(VmState& vm, std::span<const Value> args, Value& result);
Status kv_cache_array_clear(VmState& vm, std::span<const Value> args, Value& result);

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_VM_BUILTINS_HPP
