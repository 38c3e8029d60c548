// SPDX-License-Identifier: Apache-2.0
// Tensors: owning n-d arrays on any device, views of them, copies between devices, and DLPack
// exchange (unversioned DLManagedTensor and versioned DLManagedTensorVersioned).
#ifndef DEVRT_TENSOR_HPP
#define DEVRT_TENSOR_HPP

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

#include <dlpack/dlpack.h>

#include <devrt/device.hpp>
#include <devrt/dlpack.hpp>
#include <devrt/dtype.hpp>
#include <devrt/memory.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>

namespace devrt {

namespace detail {
// Reference-counted owner of a tensor's memory: a Buffer, a Workspace block, or a DLPack
// producer's tensor whose deleter runs when the last reference goes. Defined in src/core.
struct TensorStorage;
struct TensorAccess;
void retain(TensorStorage* storage) noexcept;
void release(TensorStorage* storage) noexcept;
} // namespace detail

struct TensorOptions {
  // Take the memory from the device's workspace pool instead of a fresh backend allocation.
  bool from_workspace = false;
  // The memory scope (devrt/device.hpp). A texture-scoped tensor is an image of the device:
  // its shape follows TVM's texture rule (`texture_layout`), it is copied whole with copy_from/to
  // and to(), and it has no byte addresses: no views, no host data, no DLPack export.
  MemoryScope scope = MemoryScope::global;
  // For a texture scope: TVM >= 0.23's image arrays (the default) or TVM <= 0.22's 2-D images.
  TextureLayout texture_layout = TextureLayout::image_array;
};

struct ImportOptions {
  // Size in bytes of the memory behind DLTensor::data when the caller knows it (0: unknown).
  // When known, import also refuses strides that reach past its end.
  std::size_t allocation_bytes = 0;
};

// An n-d array: shape, strides (in elements), element type and byte offset over shared storage.
// Copying a Tensor shares the storage (like TVM's NDArray); the storage lives until the last
// Tensor and the last exported DLPack tensor that use it are gone. A default-constructed Tensor is
// undefined (defined() is false). Const member functions are thread-safe; the storage refcount is
// atomic, so copies may be made and dropped on any thread.
class Tensor {
public:
  // The most dimensions a tensor may have (NumPy 2 allows 64).
  static constexpr std::int32_t kMaxDims = 64;

  Tensor() noexcept = default;
  Tensor(const Tensor& other) noexcept;
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor();

  // A new compact (row-major) tensor on `device`, contents uninitialised. Errors: invalid_argument
  // (negative dimension, too many dimensions, bad dtype, no such device), out_of_range (byte size
  // overflows), out_of_memory, unavailable. Thread-safe.
  static Result<Tensor> empty(std::span<const std::int64_t> shape, DataType dtype, Device device = kHostDevice,
                              TensorOptions options = {}) noexcept;
  static Result<Tensor> empty(std::initializer_list<std::int64_t> shape, DataType dtype, Device device = kHostDevice,
                              TensorOptions options = {}) noexcept {
    return empty(std::span<const std::int64_t>(shape.begin(), shape.size()), dtype, device, options);
  }

  // Takes ownership of a DLPack producer's tensor: validates every field before trusting it and
  // calls `managed->deleter` exactly once — when the last Tensor using it dies, or before
  // returning an error. A null `managed` is invalid_argument (nothing to call). Thread-safe.
  static Result<Tensor> from_dlpack(DLManagedTensor* managed, ImportOptions options = {}) noexcept;

  // A texture of `shape` and `dtype` in options.scope (a texture scope; options.texture_layout)
  // over this tensor's memory, as TVM's OpenCL allocator makes images over pooled buffers: the two
  // share their bytes — the texture's rows and layers texture_pitch() apart from this tensor's
  // first byte — so that a memory planner can use one buffer as several textures in turn. This tensor must be
  // a compact global tensor over a Buffer of a device whose backend makes such images (OpenCL with
  // cl_khr_image2d_from_buffer, Vulkan where the format has linear-tiling storage images); the
  // texture keeps its memory alive. Errors: invalid_argument (an undefined, strided, imported,
  // workspace or texture tensor, a scope that is no texture, fewer bytes than the image needs at
  // its row pitch, an offset the device cannot start an image at), unsupported naming what the
  // device lacks, and Tensor::empty's for the shape. Writes through either are ordered by streams
  // as any two tensors' are. Thread-safe.
  Result<Tensor> as_texture(std::span<const std::int64_t> shape, DataType dtype, TensorOptions options) const noexcept;
  Result<Tensor> as_texture(std::initializer_list<std::int64_t> shape, DataType dtype,
                            TensorOptions options) const noexcept {
    return as_texture(std::span<const std::int64_t>(shape.begin(), shape.size()), dtype, options);
  }
  // A texture made by as_texture: the bytes from one of its rows to the next, and from one layer
  // to the next, in the memory it is over (the backend's choice); zeros for any other tensor.
  struct TexturePitch {
    std::size_t row = 0;
    std::size_t layer = 0;
  };
  TexturePitch texture_pitch() const noexcept;
  // The same for the versioned struct: the major version must be 1 (else unsupported), and the
  // read-only and is-copied flags are kept.
  static Result<Tensor> from_dlpack(dlpack::ManagedTensorVersioned* managed, ImportOptions options = {}) noexcept;

  // Exports a new reference to this tensor's storage. The consumer owns the result and must call
  // its deleter exactly once; the storage stays alive until then. A read-only tensor cannot be
  // exported unversioned (the struct has no read-only flag): invalid_argument. Thread-safe.
  Result<DLManagedTensor*> to_dlpack() const noexcept;
  Result<dlpack::ManagedTensorVersioned*> to_dlpack_versioned() const noexcept;

  bool defined() const noexcept { return storage_ != nullptr; }
  MemoryScope scope() const noexcept { return scope_; }
  Device device() const noexcept { return device_; }
  DataType dtype() const noexcept { return dtype_; }
  std::int32_t ndim() const noexcept { return ndim_; }
  std::span<const std::int64_t> shape() const noexcept { return {dims(), static_cast<std::size_t>(ndim_)}; }
  // Strides in elements, always explicit.
  std::span<const std::int64_t> strides() const noexcept { return {dims() + ndim_, static_cast<std::size_t>(ndim_)}; }
  std::uint64_t byte_offset() const noexcept { return byte_offset_; }
  std::int64_t numel() const noexcept;
  // numel() * dtype().size_bytes().
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(numel()) * dtype_.size_bytes(); }
  // Row-major compact (size-1 dimensions may have any stride).
  bool is_contiguous() const noexcept { return contiguous_; }
  bool read_only() const noexcept { return read_only_; }
  // The producer marked the data as a copy (versioned DLPack's IS_COPIED flag).
  bool is_copied() const noexcept { return copied_; }

  // DLTensor::data: the storage's base address (a handle for backends whose memory is not
  // addressable, such as OpenCL); elements start byte_offset() bytes after it.
  void* data() const noexcept { return base_; }
  // Host pointer to the first element, or nullptr when the memory is not host-accessible.
  template <class T = void>
  T* host_data() const noexcept {
    return host_accessible_ ? reinterpret_cast<T*>(static_cast<std::byte*>(base_) + byte_offset_) : nullptr;
  }
  // The whole storage as a span (offsets in copies are relative to data()).
  MemorySpan storage_span() const noexcept;

  // A view over the same storage. Empty strides mean compact. The view must lie inside the
  // storage: out_of_range otherwise. Thread-safe.
  Result<Tensor> view(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides,
                      std::uint64_t byte_offset) const noexcept;
  // TVM's CreateView: a compact view of this contiguous tensor's bytes with another shape and
  // element type, starting `relative_byte_offset` bytes after this tensor's first element. It
  // must lie inside this tensor's nbytes() (out_of_range) and start aligned for `dtype`
  // (invalid_argument); a strided tensor is unsupported. Thread-safe.
  Result<Tensor> create_view(std::span<const std::int64_t> shape, DataType dtype,
                             std::uint64_t relative_byte_offset = 0) const noexcept;
  // The same elements with another shape; only for contiguous tensors (else unsupported).
  Result<Tensor> reshape(std::span<const std::int64_t> shape) const noexcept;
  Result<Tensor> reshape(std::initializer_list<std::int64_t> shape) const noexcept {
    return reshape(std::span<const std::int64_t>(shape.begin(), shape.size()));
  }
  // Elements [begin, end) of dimension `dim`.
  Result<Tensor> slice(std::int32_t dim, std::int64_t begin, std::int64_t end) const noexcept;

  // Copies `src`'s elements into this tensor (same shape and dtype; any two devices). Contiguous
  // tensors copy in one transfer ordered on `stream`, which belongs to
  // devrt::copy_device(src.device(), device()) and is complete once that stream is synchronized
  // (the rule at devrt::copy); strided tensors are copied
  // element-wise when both are host-accessible and are `unsupported` otherwise. A read-only
  // destination is invalid_argument. Thread-safe for distinct destinations.
  Status copy_from(const Tensor& src, StreamRef stream = {}) const noexcept;
  Status copy_to(const Tensor& dst, StreamRef stream = {}) const noexcept { return dst.copy_from(*this, stream); }
  // Contiguous tensors only: copy nbytes() bytes from / to host memory.
  Status copy_from_host(const void* src, std::size_t nbytes, StreamRef stream = {}) const noexcept;
  Status copy_to_host(void* dst, std::size_t nbytes, StreamRef stream = {}) const noexcept;
  // A compact copy of this tensor on `device`. When the result is host-accessible (cpu,
  // cuda_host) it is complete on return: its bytes may be read at once. Otherwise the copy is
  // ordered on `stream` (default: the current stream of `device`, which runs it), so work queued
  // there after it sees the data. Thread-safe.
  Result<Tensor> to(Device device, StreamRef stream = {}) const noexcept;

private:
  friend struct detail::TensorAccess;
  static constexpr std::int32_t kInlineDims = 6;

  const std::int64_t* dims() const noexcept { return heap_dims_ != nullptr ? heap_dims_ : inline_dims_; }
  std::int64_t* dims() noexcept { return heap_dims_ != nullptr ? heap_dims_ : inline_dims_; }
  // Sets ndim and makes room for 2 * ndim dimension values; false when the heap is exhausted.
  bool resize_dims(std::int32_t ndim) noexcept;
  void reset() noexcept;
  // Takes other's storage and layout, leaving it empty. Assumes this holds nothing.
  void take(Tensor& other) noexcept;
  // view() with another element type; `call` names the public call in errors.
  Result<Tensor> view_as(const char* call, DataType dtype, std::span<const std::int64_t> shape,
                         std::span<const std::int64_t> strides, std::uint64_t byte_offset) const noexcept;
  bool textured() const noexcept { return is_texture_scope(scope_); }
  // copy_from's every check and every case (strided, errors).
  [[gnu::noinline]] Status copy_from_checked(const Tensor& src, StreamRef stream) const noexcept;

  detail::TensorStorage* storage_ = nullptr;
  void* base_ = nullptr;
  std::uint64_t byte_offset_ = 0;
  std::int64_t* heap_dims_ = nullptr;
  Device device_;
  DataType dtype_;
  std::int32_t ndim_ = 0;
  bool read_only_ = false;
  bool copied_ = false;
  bool host_accessible_ = false;
  bool contiguous_ = true; // is_compact(shape, strides), kept in step with the dimensions
  MemoryScope scope_ = MemoryScope::global;
  std::int64_t inline_dims_[2 * kInlineDims] = {};
};

} // namespace devrt

#endif // DEVRT_TENSOR_HPP
