// SPDX-License-Identifier: Apache-2.0
// DLPack exchange: export a Tensor as DLManagedTensor(Versioned), import one after validating it.
#include "core/tensors/tensor_internal.hpp"
#include "support/heap.hpp"

#include <devrt/backend/registry.hpp>

#include <cstdlib>
#include <cstring>
#include <new>

namespace devrt {
namespace {

using detail::TensorStorage;
using ManagedVersioned = dlpack::ManagedTensorVersioned;

// ---- export ------------------------------------------------------------------------------------

// One malloc'd block per export: the managed struct followed by shape and strides. A compact tensor
// exported unversioned has strides = NULL, as DLPack before 1.2 defines compact and as older
// consumers (PyTorch 1.13) expect; versioned exports always carry strides (DLPack 1.2 requires
// them).
template <class Managed>
void exported_deleter(Managed* self) noexcept {
  if (self == nullptr) return;
  detail::release(static_cast<TensorStorage*>(self->manager_ctx));
  detail::heap_free(self);
}

template <class Managed>
Result<Managed*> export_tensor(const Tensor& tensor, const char* call) noexcept {
  TensorStorage* storage = detail::TensorAccess::storage(tensor);
  if (storage == nullptr) return make_error(ErrorCode::invalid_argument, call, ": undefined tensor");
#if !DEVRT_BARE_METAL // remote devices need an operating system
  if (tensor.device().kind == DeviceKind::remote) [[unlikely]] {
    return make_error(ErrorCode::unsupported, call, " on ", tensor.device(),
                      ": a remote tensor's memory is its server's, which no DLPack consumer in this process can "
                      "reach (copy it to a local device first)");
  }
#endif
  if (tensor.scope() != MemoryScope::global) {
    return make_error(ErrorCode::unsupported, call, " on ", tensor.device(), ": a '", to_string(tensor.scope()),
                      "' tensor cannot be exported: DLPack has no memory scopes (copy it into a global tensor first)");
  }
  static_assert(sizeof(Managed) % alignof(std::int64_t) == 0);
  const auto ndim = static_cast<std::size_t>(tensor.ndim());
  void* block = detail::heap_allocate(sizeof(Managed) + 2 * ndim * sizeof(std::int64_t));
  if (block == nullptr) return make_error(ErrorCode::out_of_memory, call, " on ", tensor.device(), ": no memory");
  auto* managed = ::new (block) Managed{};
  auto* dims = reinterpret_cast<std::int64_t*>(static_cast<std::byte*>(block) + sizeof(Managed));
  if (ndim > 0) {
    std::memcpy(dims, tensor.shape().data(), ndim * sizeof(std::int64_t));
    std::memcpy(dims + ndim, tensor.strides().data(), ndim * sizeof(std::int64_t));
  }
  DLTensor& dl = managed->dl_tensor;
  dl.data = tensor.data();
  dl.device = tensor.device().to_dlpack();
  dl.ndim = tensor.ndim();
  dl.dtype = tensor.dtype().to_dlpack();
  dl.shape = dims;
  constexpr bool kUnversioned = std::is_same_v<Managed, DLManagedTensor>;
  dl.strides = kUnversioned && tensor.is_contiguous() ? nullptr : dims + ndim;
  dl.byte_offset = tensor.byte_offset();
  detail::retain(storage);
  managed->manager_ctx = storage;
  managed->deleter = &exported_deleter<Managed>;
  return managed;
}

// ---- import ------------------------------------------------------------------------------------

struct Validated {
  Device device;
  BackendRef backend;
  DataType dtype;
  detail::Layout layout;
  const std::int64_t* strides = nullptr; // null: compact
  bool addressable = false;
};

[[gnu::cold]] Status import_error(const char* call, const Status& status) noexcept {
  return make_error(status.code(), call, ": ", status.message());
}

Status validate(const DLTensor& dl, const ImportOptions& options, const char* call, Validated* v) noexcept {
  v->device = Device::from_dlpack(dl.device);
  if (device_kind_name(v->device.kind).empty()) {
    return make_error(ErrorCode::invalid_argument, call, ": unknown device kind ",
                      static_cast<std::int32_t>(v->device.kind));
  }
  v->backend = Registry::global().find(v->device.kind);
  if (!v->backend) {
    return make_error(ErrorCode::unavailable, call, ": no ", v->device.kind,
                      " backend is registered (devrt was built without it)");
  }
  if (Status device = v->backend.check_device(v->device.id); !device.ok()) return import_error(call, device);
  v->dtype = DataType::from_dlpack(dl.dtype);
  v->strides = dl.strides;
  std::int64_t compact[Tensor::kMaxDims];
  const std::int64_t* strides = dl.strides;
  if (strides == nullptr) {
    // Compact strides come from the shape, so check the shape first.
    DEVRT_RETURN_IF_ERROR(detail::check_layout(call, v->dtype, dl.ndim, dl.shape, nullptr, 0, &v->layout));
    detail::compact_strides(dl.ndim, dl.shape, compact);
    strides = compact;
  }
  DEVRT_RETURN_IF_ERROR(detail::check_layout(call, v->dtype, dl.ndim, dl.shape, strides, dl.byte_offset, &v->layout));
  const detail::Layout& layout = v->layout;
  if (dl.data == nullptr && layout.numel > 0) {
    return make_error(ErrorCode::invalid_argument, call, ": data is null for ", layout.numel, " elements on ",
                      v->device);
  }
  const bool addressable = v->backend.spans_are_addresses();
  v->addressable = addressable;
  const std::size_t alignment = v->dtype.alignment();
  const std::uintptr_t first =
      (addressable ? reinterpret_cast<std::uintptr_t>(dl.data) : 0) + static_cast<std::uintptr_t>(dl.byte_offset);
  if (dl.data != nullptr && first % alignment != 0) {
    return make_error(ErrorCode::invalid_argument, call, ": data ", dl.data, " + byte_offset ", dl.byte_offset,
                      " is not aligned to ", alignment, " bytes for ", v->dtype);
  }
  if (layout.numel == 0) return Status();
  // DLTensor::data need not be the allocation's start: NumPy exports a row-reversed array with
  // data at its first element and negative strides. Only a known allocation, or a handle (offsets
  // count from the buffer's start), fixes where the memory begins.
  if (options.allocation_bytes != 0 || !addressable) {
    DEVRT_RETURN_IF_ERROR(detail::check_starts_inside(call, layout, "allocation"));
  } else if (reinterpret_cast<std::uintptr_t>(dl.data) < static_cast<std::uint64_t>(-layout.begin) &&
             layout.begin < 0) {
    return make_error(ErrorCode::out_of_range, call, ": data ", dl.data, " - ", -layout.begin,
                      " bytes wraps around the address space");
  }
  if (options.allocation_bytes != 0 && static_cast<std::uint64_t>(layout.end) > options.allocation_bytes) {
    return make_error(ErrorCode::out_of_range, call, ": strides reach byte ", layout.end, " of a ",
                      options.allocation_bytes, "-byte allocation");
  }
  if (addressable && reinterpret_cast<std::uintptr_t>(dl.data) + static_cast<std::uint64_t>(layout.end) <
                         reinterpret_cast<std::uintptr_t>(dl.data)) {
    return make_error(ErrorCode::out_of_range, call, ": data ", dl.data, " + ", layout.end,
                      " bytes wraps around the address space");
  }
  return Status();
}

template <class Managed>
void call_deleter(Managed* managed) noexcept {
  if (managed->deleter != nullptr) managed->deleter(managed);
}

template <class Managed>
void set_owner(TensorStorage* storage, Managed* managed) noexcept {
  if constexpr (std::is_same_v<Managed, DLManagedTensor>) {
    storage->managed = managed;
  } else {
    storage->managed_versioned = managed;
  }
}

template <class Managed>
Result<Tensor> import_tensor(Managed* managed, const ImportOptions& options, const char* call, bool read_only,
                             bool copied) noexcept {
  const DLTensor& dl = managed->dl_tensor;
  Validated v;
  if (Status status = validate(dl, options, call, &v); !status.ok()) {
    call_deleter(managed);
    return status;
  }
  TensorStorage* storage = nullptr;
  std::uint64_t byte_offset = dl.byte_offset;
  auto* ours = static_cast<TensorStorage*>(managed->manager_ctx);
  if (managed->deleter == &exported_deleter<Managed> && ours != nullptr && ours->base == dl.data) {
    // Our own export coming back: share its storage and let the export go.
    if (v.layout.numel > 0 && (v.layout.begin < 0 || static_cast<std::uint64_t>(v.layout.end) > ours->bytes)) {
      call_deleter(managed);
      return make_error(ErrorCode::out_of_range, call, ": strides reach byte ", v.layout.end, " of a ", ours->bytes,
                        "-byte storage");
    }
    // Take over the export's reference instead of adding one and dropping it in the deleter;
    // what remains of the deleter's work is freeing the block, after init() below.
    storage = ours;
  } else {
    storage = new (std::nothrow) TensorStorage();
    if (storage == nullptr) {
      call_deleter(managed);
      return make_error(ErrorCode::out_of_memory, call, " on ", v.device, ": no memory");
    }
    storage->device = v.device;
    storage->base = dl.data;
    storage->bytes = options.allocation_bytes != 0 ? options.allocation_bytes : static_cast<std::size_t>(v.layout.end);
    if (v.layout.begin < 0) {
      // Start the storage at the lowest byte the strides reach, so offsets into it stay >= 0.
      storage->base = static_cast<std::byte*>(dl.data) + v.layout.begin;
      storage->bytes = static_cast<std::size_t>(v.layout.end - v.layout.begin);
      byte_offset = dl.byte_offset + static_cast<std::uint64_t>(-v.layout.begin);
    }
    storage->host_accessible = v.backend.host_accessible();
    set_owner(storage, managed);
    managed = nullptr; // the storage owns it now
  }
  Tensor tensor;
  Status init = detail::TensorAccess::init(tensor, storage, v.dtype, dl.ndim, dl.shape, v.strides, byte_offset);
  if (managed != nullptr) detail::heap_free(managed); // our own export's block; dl points into it, so after init
  if (!init.ok()) return init;
  detail::TensorAccess::set_flags(tensor, read_only, copied);
  return tensor;
}

} // namespace

Result<DLManagedTensor*> Tensor::to_dlpack() const noexcept {
  if (read_only_) {
    return make_error(ErrorCode::invalid_argument, "Tensor::to_dlpack on ", device_,
                      ": a read-only tensor needs the versioned struct (to_dlpack_versioned) to say so");
  }
  return export_tensor<DLManagedTensor>(*this, "Tensor::to_dlpack");
}

Result<dlpack::ManagedTensorVersioned*> Tensor::to_dlpack_versioned() const noexcept {
  Result<ManagedVersioned*> managed = export_tensor<ManagedVersioned>(*this, "Tensor::to_dlpack_versioned");
  if (managed.ok()) {
    (*managed)->version = dlpack::PackVersion{dlpack::kMajorVersion, dlpack::kMinorVersion};
    (*managed)->flags = (read_only_ ? dlpack::kFlagReadOnly : 0) | (copied_ ? dlpack::kFlagIsCopied : 0);
  }
  return managed;
}

Result<Tensor> Tensor::from_dlpack(DLManagedTensor* managed, ImportOptions options) noexcept {
  if (managed == nullptr) return make_error(ErrorCode::invalid_argument, "Tensor::from_dlpack: null DLManagedTensor");
  return import_tensor(managed, options, "Tensor::from_dlpack", false, false);
}

Result<Tensor> Tensor::from_dlpack(dlpack::ManagedTensorVersioned* managed, ImportOptions options) noexcept {
  if (managed == nullptr) {
    return make_error(ErrorCode::invalid_argument, "Tensor::from_dlpack: null DLManagedTensorVersioned");
  }
  if (managed->version.major != dlpack::kMajorVersion) {
    const std::uint32_t major = managed->version.major;
    call_deleter(managed);
    return make_error(ErrorCode::unsupported, "Tensor::from_dlpack: DLPack major version ", major,
                      " (devrt understands ", dlpack::kMajorVersion, ")");
  }
  return import_tensor(managed, options, "Tensor::from_dlpack", (managed->flags & dlpack::kFlagReadOnly) != 0,
                       (managed->flags & dlpack::kFlagIsCopied) != 0);
}

} // namespace devrt
