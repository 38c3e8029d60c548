// SPDX-License-Identifier: Apache-2.0
// What Tensor's storage is and the layout arithmetic shared by tensor.cpp and dlpack.cpp.
#ifndef DEVRT_SRC_CORE_TENSORS_TENSOR_INTERNAL_HPP
#define DEVRT_SRC_CORE_TENSORS_TENSOR_INTERNAL_HPP

#include <devrt/backend/backend_abi.h>
#include <devrt/memory.hpp>
#include <devrt/tensor.hpp>
#include <devrt/workspace.hpp>

#include <atomic>
#include <cstdint>
#include <utility>

namespace devrt::detail {

struct TensorStorage {
  std::atomic<std::uint32_t> refs{1};
  Device device;
  void* base = nullptr;
  // Bytes reachable from base: the allocation's size, or for an imported tensor whose producer
  // did not say, the extent its layout reaches.
  std::size_t bytes = 0;
  bool host_accessible = false;
  // Exactly one owner is set (none for a zero-byte tensor).
  Buffer buffer;
  Workspace workspace;
  DLManagedTensor* managed = nullptr;
  dlpack::ManagedTensorVersioned* managed_versioned = nullptr;
  // A texture (scope global.texture*): base is its handle, freed through `texture_backend`.
  MemoryScope scope = MemoryScope::global;
  const devrt_backend_table* texture_backend = nullptr;
  devrt_texture_desc texture{};
  std::uint32_t texture_ledger = 0; // the device ledger's tag (core/devices/device_record.hpp)
  // A texture over a Buffer tensor's memory (Tensor::as_texture): that tensor's storage, kept
  // (one reference) until the texture is freed, and the image's row and layer pitches in it.
  TensorStorage* texture_over = nullptr;
  std::size_t texture_row_pitch = 0;
  std::size_t texture_layer_pitch = 0;
};

// Tensor::empty in a texture scope (tensor_scope.cpp).
Result<Tensor> empty_texture(std::span<const std::int64_t> shape, DataType dtype, Device device, MemoryScope scope,
                             TextureLayout layout) noexcept;
// Tensor::as_texture (tensor_scope.cpp).
Result<Tensor> texture_over(const Tensor& linear, std::span<const std::int64_t> shape, DataType dtype,
                            TensorOptions options) noexcept;
// Tensor::copy_from where either side is a texture: same dtype and shape, checked by the caller.
Status copy_texture(const Tensor& src, const Tensor& dst, StreamRef stream) noexcept;
// Tensor::copy_from_host / copy_to_host for a texture: `host` holds its compact bytes.
Status copy_texture_host(const Tensor& texture, void* host, bool to_texture, StreamRef stream) noexcept;
// Frees a texture storage's texture (logged on failure).
void free_texture(TensorStorage& storage) noexcept;

// The byte range [begin, end) a layout reaches, relative to DLTensor::data.
struct Layout {
  std::int64_t numel = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// Checks ndim, shape, dtype, byte_offset and strides (null: compact) and computes the reach,
// without overflow; the reach may start below 0 (negative strides). Errors name `call`.
Status check_layout(const char* call, DataType dtype, std::int32_t ndim, const std::int64_t* shape,
                    const std::int64_t* strides, std::uint64_t byte_offset, Layout* out) noexcept;
// out_of_range when the layout reaches below byte 0 of its `what` ("allocation", "storage").
Status check_starts_inside(const char* call, const Layout& layout, const char* what) noexcept;
bool is_compact(std::int32_t ndim, const std::int64_t* shape, const std::int64_t* strides) noexcept;
void compact_strides(std::int32_t ndim, const std::int64_t* shape, std::int64_t* strides) noexcept;

struct TensorAccess {
  // Points `t` at `storage` (taking over one reference, released on failure) with this layout;
  // null strides mean compact.
  static Status init(Tensor& t, TensorStorage* storage, DataType dtype, std::int32_t ndim, const std::int64_t* shape,
                     const std::int64_t* strides, std::uint64_t byte_offset) noexcept;
  static void set_flags(Tensor& t, bool read_only, bool copied) noexcept {
    t.read_only_ = read_only;
    t.copied_ = copied;
  }
  static TensorStorage* storage(const Tensor& t) noexcept { return t.storage_; }
};

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_TENSORS_TENSOR_INTERNAL_HPP
