// SPDX-License-Identifier: Apache-2.0
// The boxed values of the Relax VM (devrt/tvm_vm.hpp's Value), and the VM's state shared by the
// interpreter (tvm_vm.cpp) and its builtins (tvm_vm_builtins.cpp). Not public API.
#ifndef DEVRT_SRC_TVM_TVM_VM_VALUE_HPP
#define DEVRT_SRC_TVM_TVM_VM_VALUE_HPP

#include <atomic>
#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/tvm_vm.hpp>

namespace devrt::tvm::detail {

// A boxed value; the Value's kind says which derived type it is (no RTTI in the core). Made
// with one reference, which the Value made of it takes over.
struct VmBox {
  std::atomic<std::int32_t> references{1};
  virtual ~VmBox() = default;
};

struct StringBox final : VmBox {
  std::string text;
};

struct ShapeBox final : VmBox {
  std::vector<std::int64_t> dims;
};

struct TensorBox final : VmBox {
  Tensor tensor;
};

struct TupleBox final : VmBox {
  std::vector<Value> items;
};

// A function of the VM's function table, with the arguments make_closure bound (appended after
// the caller's, as TVM's VMClosure::BindLastArgs does).
struct FunctionBox final : VmBox {
  std::int64_t index = 0;
  std::vector<Value> bound;
};

// An object of the builtins: its TVM type key, and what it is.
struct ObjectBox : VmBox {
  virtual std::string_view type_key() const noexcept = 0;
};

// relax.Storage: an allocation alloc_tensor makes views of (a uint8 tensor of its bytes).
struct StorageBox final : ObjectBox {
  Tensor bytes;
  std::string_view type_key() const noexcept override { return "relax.Storage"; }
};

// TVM's legacy attention KV cache (lm_support.cc's AttentionKVCacheObj): `data` holds the reserved
// rows, the first `fill_count` of them filled; appends past the reservation double it.
struct KvCacheBox final : ObjectBox {
  Tensor data;
  std::int64_t fill_count = 0;
  std::int64_t window_position = 0;
  std::string_view type_key() const noexcept override { return "relax.vm.AttentionKVCache"; }
};

// A new box of type T held by `out` (a Value of `kind`), or null (and `out` null) when the host
// is out of memory. Fill it through the pointer: `out` owns it from here, on every path.
template <class T>
T* new_box(Value& out, Value::Kind kind) noexcept {
  T* box = new (std::nothrow) T();
  out = box != nullptr ? Value(kind, box) : Value();
  return box;
}

// The bytes `shape` elements of `dtype` take; invalid_argument naming `what` for a negative extent
// or a count past 64 bits. Checked before anything of that size is allocated.
inline Result<std::uint64_t> shape_bytes(std::span<const std::int64_t> shape, DataType dtype, std::string_view what) {
  std::uint64_t bytes = dtype.size_bytes();
  for (const std::int64_t extent : shape) {
    if (extent < 0 || (extent != 0 && bytes > UINT64_MAX / static_cast<std::uint64_t>(extent))) {
      return make_error(ErrorCode::invalid_argument, what, ": shape dimension ", extent);
    }
    bytes *= static_cast<std::uint64_t>(extent);
  }
  return bytes;
}

template <class T>
T* unbox(const Value& value) noexcept {
  return static_cast<T*>(value.box());
}

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_VM_VALUE_HPP
