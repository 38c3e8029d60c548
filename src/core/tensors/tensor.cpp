// SPDX-License-Identifier: Apache-2.0
// Tensor storage, views and copies. DLPack import/export lives in tensor_dlpack.cpp.
#include "core/execution/capture_hooks.hpp"
#include "core/tensors/tensor_internal.hpp"
#include "support/heap.hpp"

#include <devrt/backend/registry.hpp>
#include <devrt/workspace.hpp>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace devrt {

// ---- storage ---------------------------------------------------------------------------------

void detail::retain(TensorStorage* storage) noexcept { storage->refs.fetch_add(1, std::memory_order_relaxed); }

void detail::release(TensorStorage* storage) noexcept {
  if (storage->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
#if !DEVRT_BARE_METAL
  // A live graph that touches the memory keeps the storage, the producer's DLPack tensor included.
  if (storage->base != nullptr && graphs_touch_memory() && g_keep_alive_hooks.storage(storage)) [[unlikely]]
    return;
#endif
  if (storage->managed != nullptr && storage->managed->deleter != nullptr) storage->managed->deleter(storage->managed);
  if (storage->managed_versioned != nullptr && storage->managed_versioned->deleter != nullptr) {
    storage->managed_versioned->deleter(storage->managed_versioned);
  }
  if (storage->texture_backend != nullptr) free_texture(*storage);
  TensorStorage* over = storage->texture_over;
  delete storage; // Buffer and Workspace members give their memory back here
  if (over != nullptr) release(over);
}

// ---- layout checks ---------------------------------------------------------------------------

namespace detail {

Status check_layout(const char* call, DataType dtype, std::int32_t ndim, const std::int64_t* shape,
                    const std::int64_t* strides, std::uint64_t byte_offset, Layout* out) noexcept {
  if (ndim < 0 || ndim > Tensor::kMaxDims) {
    return make_error(ErrorCode::invalid_argument, call, ": ndim ", ndim, " is outside [0, ", Tensor::kMaxDims, "]");
  }
  if (ndim > 0 && shape == nullptr) return make_error(ErrorCode::invalid_argument, call, ": shape is null");
  Status type = check_data_type(dtype);
  if (!type.ok()) return make_error(type.code(), call, ": ", type.message());
  const std::int64_t itemsize = static_cast<std::int64_t>(dtype.size_bytes());

  std::int64_t numel = 1;
  bool overflow = false;
  for (std::int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      return make_error(ErrorCode::invalid_argument, call, ": dimension ", i, " is negative (", shape[i], ")");
    }
    overflow = overflow || __builtin_mul_overflow(numel, shape[i], &numel);
  }
  std::int64_t total = 0;
  if (overflow || __builtin_mul_overflow(numel, itemsize, &total)) {
    return make_error(ErrorCode::out_of_range, call, ": element count times element size (", itemsize,
                      " bytes) overflows 64 bits");
  }
  if (byte_offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return make_error(ErrorCode::out_of_range, call, ": byte_offset ", byte_offset, " is too large");
  }
  const auto offset = static_cast<std::int64_t>(byte_offset);
  out->numel = numel;
  out->begin = offset;
  out->end = offset;
  if (numel == 0) return Status();

  // Lowest and highest element index reachable through the strides.
  std::int64_t low = 0;
  std::int64_t high = 0;
  for (std::int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 1) continue;
    const std::int64_t stride = strides != nullptr ? strides[i] : 0;
    std::int64_t reach = 0;
    bool bad = __builtin_mul_overflow(shape[i] - 1, stride, &reach);
    bad = bad || (reach < 0 ? __builtin_add_overflow(low, reach, &low) : __builtin_add_overflow(high, reach, &high));
    if (bad) {
      return make_error(ErrorCode::out_of_range, call, ": stride ", stride, " of dimension ", i, " overflows 64 bits");
    }
  }
  std::int64_t low_bytes = 0;
  std::int64_t high_bytes = 0;
  if (__builtin_mul_overflow(low, itemsize, &low_bytes) || __builtin_add_overflow(high, 1, &high) ||
      __builtin_mul_overflow(high, itemsize, &high_bytes) || __builtin_add_overflow(offset, low_bytes, &out->begin) ||
      __builtin_add_overflow(offset, high_bytes, &out->end)) {
    return make_error(ErrorCode::out_of_range, call, ": the strides reach beyond 64-bit byte offsets");
  }
  return Status();
}

Status check_starts_inside(const char* call, const Layout& layout, const char* what) noexcept {
  if (layout.numel == 0 || layout.begin >= 0) return Status();
  return make_error(ErrorCode::out_of_range, call, ": strides reach ", -layout.begin, " bytes before the start of the ",
                    what);
}

bool is_compact(std::int32_t ndim, const std::int64_t* shape, const std::int64_t* strides) noexcept {
  // Wrapping arithmetic: with a 0 dimension further out (an empty tensor), the inner product may
  // exceed 64 bits before the loop reaches it.
  std::uint64_t expected = 1;
  for (std::int32_t i = ndim - 1; i >= 0; --i) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && static_cast<std::uint64_t>(strides[i]) != expected) return false;
    expected *= static_cast<std::uint64_t>(shape[i]);
  }
  return true;
}

void compact_strides(std::int32_t ndim, const std::int64_t* shape, std::int64_t* strides) noexcept {
  // Wrapping arithmetic: shapes whose product overflows are refused by check_layout anyway.
  std::uint64_t stride = 1;
  for (std::int32_t i = ndim - 1; i >= 0; --i) {
    strides[i] = static_cast<std::int64_t>(stride);
    if (shape[i] > 0) stride *= static_cast<std::uint64_t>(shape[i]);
  }
}

} // namespace detail

// ---- Tensor: value semantics -------------------------------------------------------------------

Tensor::Tensor(const Tensor& other) noexcept
    : storage_(other.storage_), base_(other.base_), byte_offset_(other.byte_offset_), device_(other.device_),
      dtype_(other.dtype_), read_only_(other.read_only_), copied_(other.copied_),
      host_accessible_(other.host_accessible_), contiguous_(other.contiguous_), scope_(other.scope_) {
  if (!resize_dims(other.ndim_)) detail::fatal_status("devrt::Tensor copy", Status(ErrorCode::out_of_memory, "dims"));
  std::memcpy(dims(), other.dims(), sizeof(std::int64_t) * 2 * static_cast<std::size_t>(ndim_));
  if (storage_ != nullptr) detail::retain(storage_);
}

Tensor::Tensor(Tensor&& other) noexcept { take(other); }

void Tensor::take(Tensor& other) noexcept {
  storage_ = std::exchange(other.storage_, nullptr);
  base_ = other.base_;
  byte_offset_ = other.byte_offset_;
  heap_dims_ = std::exchange(other.heap_dims_, nullptr);
  device_ = other.device_;
  dtype_ = other.dtype_;
  ndim_ = std::exchange(other.ndim_, 0);
  read_only_ = other.read_only_;
  copied_ = other.copied_;
  host_accessible_ = other.host_accessible_;
  contiguous_ = std::exchange(other.contiguous_, true);
  scope_ = std::exchange(other.scope_, MemoryScope::global);
  if (heap_dims_ == nullptr && ndim_ > 0) {
    std::memcpy(inline_dims_, other.inline_dims_, sizeof(std::int64_t) * 2 * static_cast<std::size_t>(ndim_));
  }
}

Tensor& Tensor::operator=(const Tensor& other) noexcept {
  if (this != &other) *this = Tensor(other);
  return *this;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    reset();
    take(other);
  }
  return *this;
}

Tensor::~Tensor() { reset(); }

void Tensor::reset() noexcept {
  if (storage_ != nullptr) detail::release(std::exchange(storage_, nullptr));
  if (heap_dims_ != nullptr) detail::heap_free(std::exchange(heap_dims_, nullptr));
  ndim_ = 0;
  contiguous_ = true;
  scope_ = MemoryScope::global;
}

bool Tensor::resize_dims(std::int32_t ndim) noexcept {
  if (heap_dims_ != nullptr) detail::heap_free(std::exchange(heap_dims_, nullptr));
  ndim_ = 0;
  if (ndim > kInlineDims) {
    heap_dims_ =
        static_cast<std::int64_t*>(detail::heap_allocate(sizeof(std::int64_t) * 2 * static_cast<std::size_t>(ndim)));
    if (heap_dims_ == nullptr) return false;
  }
  ndim_ = ndim;
  return true;
}

std::int64_t Tensor::numel() const noexcept {
  std::int64_t n = 1;
  for (std::int64_t d : shape()) n *= d;
  return n;
}

MemorySpan Tensor::storage_span() const noexcept {
  return MemorySpan{device_, base_, storage_ != nullptr ? storage_->bytes : 0};
}

// ---- construction ------------------------------------------------------------------------------

Status detail::TensorAccess::init(Tensor& t, TensorStorage* storage, DataType dtype, std::int32_t ndim,
                                  const std::int64_t* shape, const std::int64_t* strides,
                                  std::uint64_t byte_offset) noexcept {
  if (!t.resize_dims(ndim)) {
    release(storage);
    return make_error(ErrorCode::out_of_memory, "tensor: no memory for ", ndim, " dimensions");
  }
  t.storage_ = storage;
  t.base_ = storage->base;
  t.device_ = storage->device;
  t.host_accessible_ = storage->host_accessible;
  t.scope_ = storage->scope;
  t.dtype_ = dtype;
  t.byte_offset_ = byte_offset;
  std::int64_t* dims = t.dims();
  if (ndim > 0) std::memcpy(dims, shape, sizeof(std::int64_t) * static_cast<std::size_t>(ndim));
  if (strides != nullptr) {
    if (ndim > 0) std::memcpy(dims + ndim, strides, sizeof(std::int64_t) * static_cast<std::size_t>(ndim));
  } else {
    compact_strides(ndim, dims, dims + ndim);
  }
  t.contiguous_ = is_compact(ndim, dims, dims + ndim);
  return Status();
}

Result<Tensor> Tensor::empty(std::span<const std::int64_t> shape, DataType dtype, Device device,
                             TensorOptions options) noexcept {
  if (shape.size() > static_cast<std::size_t>(kMaxDims)) {
    return make_error(ErrorCode::invalid_argument, "Tensor::empty on ", device, ": ", shape.size(),
                      " dimensions (at most ", kMaxDims, ")");
  }
  const auto ndim = static_cast<std::int32_t>(shape.size());
  detail::Layout layout;
  DEVRT_RETURN_IF_ERROR(detail::check_layout("Tensor::empty", dtype, ndim, shape.data(), nullptr, 0, &layout));
  if (options.scope != MemoryScope::global) {
    const auto index = static_cast<std::int32_t>(options.scope);
    if (index < 0 || index >= kMemoryScopeCount) {
      return make_error(ErrorCode::invalid_argument, "Tensor::empty on ", device, ": memory scope ", index,
                        " does not exist");
    }
    if (options.from_workspace) {
      return make_error(ErrorCode::unsupported, "Tensor::empty on ", device, ": '", to_string(options.scope),
                        "' tensors do not come from workspace pools");
    }
    if (is_texture_scope(options.scope))
      return detail::empty_texture(shape, dtype, device, options.scope, options.texture_layout);
  }
  DEVRT_ASSIGN_OR_RETURN(BackendRef backend, backend_for(device));
  const auto nbytes = static_cast<std::size_t>(layout.numel) * dtype.size_bytes();

  auto* storage = new (std::nothrow) detail::TensorStorage();
  if (storage == nullptr) return make_error(ErrorCode::out_of_memory, "Tensor::empty on ", device, ": no memory");
  storage->device = device;
  storage->host_accessible = backend.host_accessible();
  if (options.from_workspace) {
    Result<Workspace> block = allocate_workspace(device, nbytes);
    if (!block.ok()) {
      delete storage;
      return std::move(block).status();
    }
    storage->workspace = std::move(block).value();
    storage->base = storage->workspace.data();
  } else {
    Result<Buffer> buffer = options.scope == MemoryScope::global
                                ? Buffer::allocate(device, nbytes, kDefaultAlignment)
                                : Buffer::allocate_scoped(device, options.scope, nbytes, kDefaultAlignment);
    if (!buffer.ok()) {
      delete storage;
      return std::move(buffer).status();
    }
    storage->buffer = std::move(buffer).value();
    storage->base = storage->buffer.data();
  }
  storage->bytes = nbytes;
  storage->scope = options.scope;
  Tensor tensor;
  DEVRT_RETURN_IF_ERROR(detail::TensorAccess::init(tensor, storage, dtype, ndim, shape.data(), nullptr, 0));
  return tensor;
}

// ---- views -------------------------------------------------------------------------------------

Result<Tensor> Tensor::view(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides,
                            std::uint64_t byte_offset) const noexcept {
  return view_as("Tensor::view", dtype_, shape, strides, byte_offset);
}

Result<Tensor> Tensor::view_as(const char* call, DataType dtype, std::span<const std::int64_t> shape,
                               std::span<const std::int64_t> strides, std::uint64_t byte_offset) const noexcept {
  if (!defined()) return make_error(ErrorCode::invalid_argument, call, ": undefined tensor");
  if (textured()) {
    return make_error(ErrorCode::unsupported, call, " on ", device_, ": a '", to_string(scope_),
                      "' tensor is an image without byte addresses; copy it into a global tensor first");
  }
  if (shape.size() > static_cast<std::size_t>(kMaxDims) || (!strides.empty() && strides.size() != shape.size())) {
    return make_error(ErrorCode::invalid_argument, call, " on ", device_, ": ", shape.size(), " dimensions with ",
                      strides.size(), " strides");
  }
  const auto ndim = static_cast<std::int32_t>(shape.size());
  std::int64_t compact[kMaxDims];
  const std::int64_t* stride_data = strides.data();
  if (strides.empty()) {
    detail::compact_strides(ndim, shape.data(), compact);
    stride_data = compact;
  }
  detail::Layout layout;
  DEVRT_RETURN_IF_ERROR(detail::check_layout(call, dtype, ndim, shape.data(), stride_data, byte_offset, &layout));
  DEVRT_RETURN_IF_ERROR(detail::check_starts_inside(call, layout, "storage"));
  if (layout.numel > 0 && static_cast<std::uint64_t>(layout.end) > storage_->bytes) {
    return make_error(ErrorCode::out_of_range, call, " on ", device_, ": reaches byte ", layout.end, " of a ",
                      storage_->bytes, "-byte storage");
  }
  if (byte_offset % dtype.alignment() != 0) {
    return make_error(ErrorCode::invalid_argument, call, " on ", device_, ": byte offset ", byte_offset,
                      " is not aligned for ", dtype);
  }
  detail::retain(storage_);
  Tensor tensor;
  DEVRT_RETURN_IF_ERROR(
      detail::TensorAccess::init(tensor, storage_, dtype, ndim, shape.data(), stride_data, byte_offset));
  tensor.read_only_ = read_only_;
  tensor.copied_ = copied_;
  return tensor;
}

Result<Tensor> Tensor::create_view(std::span<const std::int64_t> shape, DataType dtype,
                                   std::uint64_t relative_byte_offset) const noexcept {
  if (!defined()) return make_error(ErrorCode::invalid_argument, "Tensor::create_view: undefined tensor");
  if (!is_contiguous()) {
    return make_error(ErrorCode::unsupported, "Tensor::create_view on ", device_, ": the tensor is not contiguous");
  }
  DEVRT_RETURN_IF_ERROR(check_data_type(dtype));
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) {
      return make_error(ErrorCode::invalid_argument, "Tensor::create_view on ", device_, ": bad dimension ", d);
    }
  }
  std::uint64_t view_bytes = 0;
  std::uint64_t end = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(count), dtype.size_bytes(), &view_bytes) ||
      __builtin_add_overflow(view_bytes, relative_byte_offset, &end) || end > nbytes()) {
    return make_error(ErrorCode::out_of_range, "Tensor::create_view on ", device_, ": ", count, " elements of ", dtype,
                      " at byte ", relative_byte_offset, " pass the end of the tensor's ", nbytes(), " bytes");
  }
  return view_as("Tensor::create_view", dtype, shape, {}, byte_offset_ + relative_byte_offset);
}

Result<Tensor> Tensor::reshape(std::span<const std::int64_t> shape) const noexcept {
  if (!defined()) return make_error(ErrorCode::invalid_argument, "Tensor::reshape: undefined tensor");
  if (!is_contiguous()) {
    return make_error(ErrorCode::unsupported, "Tensor::reshape on ", device_, ": the tensor is not contiguous");
  }
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) {
      return make_error(ErrorCode::invalid_argument, "Tensor::reshape on ", device_, ": bad dimension ", d);
    }
  }
  if (count != numel()) {
    return make_error(ErrorCode::invalid_argument, "Tensor::reshape on ", device_, ": ", count,
                      " elements requested, the tensor has ", numel());
  }
  return view(shape, {}, byte_offset_);
}

Result<Tensor> Tensor::slice(std::int32_t dim, std::int64_t begin, std::int64_t end) const noexcept {
  if (!defined()) return make_error(ErrorCode::invalid_argument, "Tensor::slice: undefined tensor");
  if (dim < 0 || dim >= ndim_) {
    return make_error(ErrorCode::out_of_range, "Tensor::slice on ", device_, ": dimension ", dim, " of ", ndim_);
  }
  const std::int64_t extent = shape()[static_cast<std::size_t>(dim)];
  if (begin < 0 || end < begin || end > extent) {
    return make_error(ErrorCode::out_of_range, "Tensor::slice on ", device_, ": [", begin, ", ", end,
                      ") of a dimension of ", extent);
  }
  std::int64_t new_shape[kMaxDims];
  std::memcpy(new_shape, dims(), sizeof(std::int64_t) * static_cast<std::size_t>(ndim_));
  new_shape[dim] = end - begin;
  const std::int64_t stride = strides()[static_cast<std::size_t>(dim)];
  std::int64_t offset = static_cast<std::int64_t>(byte_offset_);
  if (end > begin) offset += begin * stride * static_cast<std::int64_t>(dtype_.size_bytes());
  if (offset < 0) return make_error(ErrorCode::out_of_range, "Tensor::slice on ", device_, ": negative offset");
  return view(std::span<const std::int64_t>(new_shape, static_cast<std::size_t>(ndim_)), strides(),
              static_cast<std::uint64_t>(offset));
}

// ---- copies ------------------------------------------------------------------------------------

namespace {

// Element-wise copy between host-accessible tensors of the same shape, innermost rows at a time.
void copy_strided_host(const Tensor& src, const Tensor& dst) noexcept {
  const std::int32_t ndim = src.ndim();
  const auto itemsize = static_cast<std::int64_t>(src.dtype().size_bytes());
  auto* src_base = src.host_data<const std::byte>();
  auto* dst_base = dst.host_data<std::byte>();
  if (ndim == 0) {
    std::memcpy(dst_base, src_base, static_cast<std::size_t>(itemsize));
    return;
  }
  const std::int64_t inner = src.shape()[static_cast<std::size_t>(ndim - 1)];
  const std::int64_t src_inner = src.strides()[static_cast<std::size_t>(ndim - 1)];
  const std::int64_t dst_inner = dst.strides()[static_cast<std::size_t>(ndim - 1)];
  const bool rows_contiguous = (src_inner == 1 && dst_inner == 1) || inner == 1;
  std::int64_t index[Tensor::kMaxDims] = {};
  for (;;) {
    std::int64_t src_offset = 0;
    std::int64_t dst_offset = 0;
    for (std::int32_t i = 0; i < ndim - 1; ++i) {
      src_offset += index[i] * src.strides()[static_cast<std::size_t>(i)];
      dst_offset += index[i] * dst.strides()[static_cast<std::size_t>(i)];
    }
    if (rows_contiguous) {
      std::memcpy(dst_base + dst_offset * itemsize, src_base + src_offset * itemsize,
                  static_cast<std::size_t>(inner * itemsize));
    } else {
      for (std::int64_t j = 0; j < inner; ++j) {
        std::memcpy(dst_base + (dst_offset + j * dst_inner) * itemsize,
                    src_base + (src_offset + j * src_inner) * itemsize, static_cast<std::size_t>(itemsize));
      }
    }
    std::int32_t d = ndim - 2;
    for (; d >= 0; --d) {
      if (++index[d] < src.shape()[static_cast<std::size_t>(d)]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

} // namespace

Status Tensor::copy_from_checked(const Tensor& src, StreamRef stream) const noexcept {
  if (!defined() || !src.defined())
    return make_error(ErrorCode::invalid_argument, "Tensor::copy_from: undefined tensor");
  if (read_only_) {
    return make_error(ErrorCode::invalid_argument, "Tensor::copy_from ", src.device_, " -> ", device_,
                      ": the destination is read-only");
  }
  if (src.dtype_ != dtype_) {
    return make_error(ErrorCode::invalid_argument, "Tensor::copy_from ", src.device_, " -> ", device_, ": dtype ",
                      src.dtype_, " differs from ", dtype_);
  }
  bool same_shape = src.ndim_ == ndim_;
  for (std::int32_t i = 0; same_shape && i < ndim_; ++i) same_shape = src.dims()[i] == dims()[i];
  if (!same_shape) {
    return make_error(ErrorCode::invalid_argument, "Tensor::copy_from ", src.device_, " -> ", device_,
                      ": shapes differ (", detail::ShapeText{src.dims(), static_cast<std::size_t>(src.ndim_)}, " and ",
                      detail::ShapeText{dims(), static_cast<std::size_t>(ndim_)}, ")");
  }
  const std::size_t bytes = nbytes();
  if (bytes == 0) return Status();
  if (textured() || src.textured()) return detail::copy_texture(src, *this, stream);
  if (src.is_contiguous() && is_contiguous()) {
    return copy(src.storage_span(), src.byte_offset_, storage_span(), byte_offset_, bytes, stream);
  }
  if (!src.host_accessible_ || !host_accessible_) {
    return make_error(ErrorCode::unsupported, "Tensor::copy_from ", src.device_, " -> ", device_,
                      ": strided copies need host-accessible memory on both sides; make the tensors contiguous "
                      "(Tensor::to) first");
  }
  if (src.storage_ == storage_) {
    detail::Layout a;
    detail::Layout b;
    DEVRT_RETURN_IF_ERROR(
        detail::check_layout("Tensor::copy_from", dtype_, ndim_, src.dims(), src.dims() + ndim_, src.byte_offset_, &a));
    DEVRT_RETURN_IF_ERROR(
        detail::check_layout("Tensor::copy_from", dtype_, ndim_, dims(), dims() + ndim_, byte_offset_, &b));
    if (a.begin < b.end && b.begin < a.end) {
      return make_error(ErrorCode::invalid_argument, "Tensor::copy_from on ", device_,
                        ": source and destination overlap in the same storage");
    }
  }
  DEVRT_RETURN_IF_ERROR(synchronize(stream.handle != nullptr ? stream : current_stream(src.device_)));
  DEVRT_RETURN_IF_ERROR(synchronize(stream.handle != nullptr ? stream : current_stream(device_)));
  copy_strided_host(src, *this);
  return Status();
}

Status Tensor::copy_from(const Tensor& src, StreamRef stream) const noexcept {
  // The common case, decided with a few compares: both defined, writable, the same dtype and
  // shape, both contiguous. One devrt::copy of the bytes. Everything else, errors included, takes
  // copy_from_checked, out of line so that this stays a short function with a small frame.
  if (storage_ != nullptr && src.storage_ != nullptr && !read_only_ && contiguous_ && src.contiguous_ &&
      src.dtype_ == dtype_ && src.ndim_ == ndim_ && !textured() && !src.textured()) [[likely]] {
    const std::int64_t* a = src.dims();
    const std::int64_t* b = dims();
    std::int32_t i = 0;
    while (i < ndim_ && a[i] == b[i]) ++i;
    if (i == ndim_) [[likely]] {
      const std::size_t bytes = nbytes();
      if (bytes == 0) return Status();
      return copy(MemorySpan{src.device_, src.base_, src.storage_->bytes}, src.byte_offset_,
                  MemorySpan{device_, base_, storage_->bytes}, byte_offset_, bytes, stream);
    }
  }
  return copy_from_checked(src, stream);
}

Status Tensor::copy_from_host(const void* src, std::size_t nbytes_in, StreamRef stream) const noexcept {
  if (!defined()) return make_error(ErrorCode::invalid_argument, "Tensor::copy_from_host: undefined tensor");
  if (read_only_) {
    return make_error(ErrorCode::invalid_argument, "Tensor::copy_from_host on ", device_, ": the tensor is read-only");
  }
  if (!is_contiguous() || nbytes_in != nbytes()) {
    return make_error(ErrorCode::invalid_argument, "Tensor::copy_from_host on ", device_, ": ", nbytes_in,
                      " bytes for a ", is_contiguous() ? "" : "non-contiguous ", "tensor of ", nbytes(), " bytes");
  }
  if (textured()) return detail::copy_texture_host(*this, const_cast<void*>(src), true, stream);
  return copy(host_span(src, nbytes_in), 0, storage_span(), byte_offset_, nbytes_in, stream);
}

Status Tensor::copy_to_host(void* dst, std::size_t nbytes_out, StreamRef stream) const noexcept {
  if (!defined()) return make_error(ErrorCode::invalid_argument, "Tensor::copy_to_host: undefined tensor");
  if (!is_contiguous() || nbytes_out != nbytes()) {
    return make_error(ErrorCode::invalid_argument, "Tensor::copy_to_host on ", device_, ": ", nbytes_out,
                      " bytes for a ", is_contiguous() ? "" : "non-contiguous ", "tensor of ", nbytes(), " bytes");
  }
  if (textured()) return detail::copy_texture_host(*this, dst, false, stream);
  return copy(storage_span(), byte_offset_, MemorySpan{kHostDevice, dst, nbytes_out}, 0, nbytes_out, stream);
}

Result<Tensor> Tensor::to(Device device, StreamRef stream) const noexcept {
  if (!defined()) return make_error(ErrorCode::invalid_argument, "Tensor::to: undefined tensor");
  if (!is_contiguous() && !host_accessible_) {
    return make_error(ErrorCode::unsupported, "Tensor::to ", device_, " -> ", device,
                      ": the source is strided and not host-accessible");
  }
  DEVRT_ASSIGN_OR_RETURN(Tensor result, Tensor::empty(shape(), dtype_, device));
  if (!is_contiguous() && !result.host_accessible_) {
    // Compact it on the host first, then move it in one transfer.
    DEVRT_ASSIGN_OR_RETURN(Tensor staged, Tensor::empty(shape(), dtype_, kHostDevice));
    DEVRT_RETURN_IF_ERROR(staged.copy_from(*this, stream));
    DEVRT_RETURN_IF_ERROR(result.copy_from(staged, stream));
    DEVRT_RETURN_IF_ERROR(synchronize(stream.handle != nullptr ? stream : current_stream(device)));
    return result;
  }
  DEVRT_RETURN_IF_ERROR(result.copy_from(*this, stream));
  if (result.host_accessible_) {
    // The copy may be a DMA on the source device's stream (cuda -> cuda_host): wait for it, so
    // that the host can read the result at once.
    if (stream.handle == nullptr) {
      DEVRT_ASSIGN_OR_RETURN(Device runs_on, copy_device(device_, device));
      stream = current_stream(runs_on);
    }
    DEVRT_RETURN_IF_ERROR(synchronize(stream));
  }
  return result;
}

} // namespace devrt
