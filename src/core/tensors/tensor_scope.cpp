// SPDX-License-Identifier: Apache-2.0
// Texture-scoped tensors: allocation through the backend's texture functions, and copies between a
// texture and any tensor of any device. Because TVM's flattening keeps the shape's row-major order,
// a compact tensor's bytes are the texture's rows: a copy is the backend's whole-texture copy
// against compact linear memory, with a host bounce where the other side is neither host memory
// nor on the texture's device. And KernelArg::texture, here so that programs without tensors do not
// link them (firmware launches kernels).
#include "core/devices/device_record.hpp"
#include "core/memory/memory_records.hpp"
#include "core/memory/memory_scope.hpp"
#include "core/tensors/tensor_internal.hpp"

#include <devrt/backend/registry.hpp>
#include <devrt/log.hpp>
#include <devrt/module.hpp>

#include <new>

namespace devrt::detail {
namespace {

// The stream a texture copy runs on: `stream` when it belongs to the texture's device, else that
// device's current stream.
StreamRef texture_stream(Device texture_device, StreamRef stream) noexcept {
  return stream.handle != nullptr && stream.device == texture_device ? stream : current_stream(texture_device);
}

// One backend copy between `texture` and linear memory: `linear` + `offset`, host memory or an
// allocation on the texture's device (`on_device`).
Status copy_direct(const Tensor& texture, void* linear, std::size_t offset, bool on_device, bool to_texture,
                   StreamRef stream) noexcept {
  TensorStorage& storage = *TensorAccess::storage(texture);
  devrt_texture_copy_desc desc{};
  desc.texture = texture.data();
  desc.to_texture = to_texture ? 1 : 0;
  desc.desc = &storage.texture;
  desc.linear = linear;
  desc.linear_offset = offset;
  desc.linear_kind = on_device ? storage.texture_backend->device_kind : static_cast<std::int32_t>(DeviceKind::cpu);
  desc.stream = texture_stream(texture.device(), stream).handle;
  return BackendRef(storage.texture_backend).texture_copy(texture.device().id, desc);
}

// The same with a compact global tensor that is host memory or lives on the texture's device.
Status copy_direct(const Tensor& texture, const Tensor& linear, bool to_texture, StreamRef stream) noexcept {
  return copy_direct(texture, linear.data(), static_cast<std::size_t>(linear.byte_offset()),
                     linear.device() == texture.device(), to_texture, stream);
}

bool textured(const Tensor& tensor) noexcept { return is_texture_scope(tensor.scope()); }

// Whether `linear` can be the linear side of one backend copy with `texture`.
bool reachable(const Tensor& texture, const Tensor& linear) noexcept {
  if (textured(linear) || !linear.is_contiguous()) return false;
  return linear.host_data() != nullptr || linear.device() == texture.device();
}

} // namespace

namespace {

// Where a texture of `shape` goes on `device` (its backend and placement), named for `call`.
struct PlacedTexture {
  BackendRef backend;
  TexturePlacement placement;
  devrt_texture_desc desc{};
};

Result<PlacedTexture> place_on(const char* call, std::span<const std::int64_t> shape, DataType dtype, Device device,
                               MemoryScope scope, TextureLayout layout) noexcept {
  DEVRT_ASSIGN_OR_RETURN(BackendRef backend, backend_for(device));
  DEVRT_ASSIGN_OR_RETURN(ScopeLimits limits, backend.scope_limits(device.id, scope));
  Result<TexturePlacement> placed = place_texture(limits, dtype, shape, layout);
  if (!placed.ok()) return make_error(placed.status().code(), call, " on ", device, ": ", placed.status().message());
  PlacedTexture out{backend, *placed, {}};
  out.desc.scope = static_cast<std::int32_t>(scope);
  out.desc.type_code = static_cast<std::uint8_t>(placed->channel.code);
  out.desc.type_bits = placed->channel.bits;
  out.desc.image_array = placed->image_array ? 1 : 0;
  out.desc.width = placed->extent.width;
  out.desc.height = placed->extent.height;
  out.desc.layers = placed->extent.layers;
  return out;
}

// A tensor of `shape` over a new texture storage of `texture` (freed with the storage).
Result<Tensor> texture_tensor(const PlacedTexture& placed, void* texture, Device device,
                              std::span<const std::int64_t> shape, DataType dtype, TensorStorage* storage) noexcept {
  const TextureExtent extent = placed.placement.extent;
  storage->device = device;
  storage->base = texture;
  storage->scope = static_cast<MemoryScope>(placed.desc.scope);
  storage->texture_backend = placed.backend.table();
  storage->texture = placed.desc;
  if (storage->texture_over == nullptr) { // a view's bytes are its buffer's, counted there
    storage->bytes =
        extent.width * extent.height * extent.layers * kTextureChannels * placed.placement.channel.size_bytes();
    storage->texture_ledger = detail::ledger_allocated(device, storage->scope, storage->base, storage->bytes);
  }
  Tensor tensor;
  DEVRT_RETURN_IF_ERROR(
      TensorAccess::init(tensor, storage, dtype, static_cast<std::int32_t>(shape.size()), shape.data(), nullptr, 0));
  return tensor;
}

} // namespace

Result<Tensor> empty_texture(std::span<const std::int64_t> shape, DataType dtype, Device device, MemoryScope scope,
                             TextureLayout layout) noexcept {
  DEVRT_ASSIGN_OR_RETURN(PlacedTexture placed, place_on("Tensor::empty", shape, dtype, device, scope, layout));
  auto* storage = new (std::nothrow) TensorStorage();
  if (storage == nullptr) return make_error(ErrorCode::out_of_memory, "Tensor::empty on ", device, ": no memory");
  Result<void*> texture = placed.backend.texture_allocate(device.id, placed.desc);
  if (!texture.ok()) {
    delete storage;
    return std::move(texture).status();
  }
  return texture_tensor(placed, *texture, device, shape, dtype, storage);
}

Result<Tensor> texture_over(const Tensor& linear, std::span<const std::int64_t> shape, DataType dtype,
                            TensorOptions options) noexcept {
  constexpr const char* kCall = "Tensor::as_texture";
  if (!linear.defined()) return make_error(ErrorCode::invalid_argument, kCall, ": undefined tensor");
  const Device device = linear.device();
  TensorStorage* owner = TensorAccess::storage(linear);
  const char* refusal = linear.scope() != MemoryScope::global ? "is not in global memory"
                        : owner->buffer.empty()               ? "is not over a Buffer (imported or a workspace block)"
                        : !linear.is_contiguous()             ? "is not compact"
                                                              : nullptr;
  if (refusal != nullptr) {
    return make_error(ErrorCode::invalid_argument, kCall, " on ", device, ": the tensor ", refusal,
                      "; a texture goes over a compact global tensor of a Buffer");
  }
  if (!is_texture_scope(options.scope)) {
    return make_error(ErrorCode::invalid_argument, kCall, " on ", device, ": '", to_string(options.scope),
                      "' is not a texture scope");
  }
  DEVRT_ASSIGN_OR_RETURN(PlacedTexture placed,
                         place_on(kCall, shape, dtype, device, options.scope, options.texture_layout));
  devrt_texture_view_desc view{};
  view.texture = &placed.desc;
  view.buffer = owner->base;
  view.offset = static_cast<std::size_t>(linear.byte_offset());
  view.available = linear.nbytes();
  auto* storage = new (std::nothrow) TensorStorage();
  if (storage == nullptr) return make_error(ErrorCode::out_of_memory, kCall, " on ", device, ": no memory");
  Result<void*> texture = placed.backend.texture_view(device.id, view);
  if (!texture.ok()) {
    delete storage;
    return make_error(texture.status().code(), kCall, ": ", texture.status().message());
  }
  // No memory of its own: the bytes are the Buffer's, counted there.
  storage->bytes = view.bytes;
  storage->texture_row_pitch = view.row_pitch;
  storage->texture_layer_pitch = view.layer_pitch;
  retain(owner);
  storage->texture_over = owner;
  return texture_tensor(placed, *texture, device, shape, dtype, storage);
}

Status copy_texture_host(const Tensor& texture, void* host, bool to_texture, StreamRef stream) noexcept {
  if (host == nullptr) {
    return make_error(ErrorCode::invalid_argument, to_texture ? "Tensor::copy_from_host" : "Tensor::copy_to_host",
                      " on ", texture.device(), ": the host memory is null");
  }
  return copy_direct(texture, host, 0, false, to_texture, stream);
}

void free_texture(TensorStorage& storage) noexcept {
  Status freed = BackendRef(storage.texture_backend).texture_free(storage.device.id, storage.base);
  detail::ledger_freed(storage.device, storage.texture_ledger, storage.base, storage.bytes);
  if (!freed.ok()) DEVRT_LOG(error, "Tensor: ", freed.message());
}

Status copy_texture(const Tensor& src, const Tensor& dst, StreamRef stream) noexcept {
  if (textured(dst) && reachable(dst, src)) return copy_direct(dst, src, true, stream);
  if (textured(src) && reachable(src, dst)) {
    DEVRT_RETURN_IF_ERROR(copy_direct(src, dst, false, stream));
    // Into host memory the backend has finished; into the device's own memory the copy is ordered
    // on the texture's stream, as a copy between two of its buffers would be.
    return Status();
  }
  // Through a compact host tensor, each leg on its own device's stream and waited for: `host`
  // dies here.
  DEVRT_ASSIGN_OR_RETURN(Tensor host, Tensor::empty(src.shape(), src.dtype(), kHostDevice));
  StreamRef src_stream = texture_stream(src.device(), textured(src) ? stream : StreamRef{});
  DEVRT_RETURN_IF_ERROR(host.copy_from(src, src_stream));
  DEVRT_RETURN_IF_ERROR(synchronize(src_stream));
  StreamRef dst_stream = texture_stream(dst.device(), textured(dst) ? stream : StreamRef{});
  DEVRT_RETURN_IF_ERROR(dst.copy_from(host, dst_stream));
  return synchronize(dst_stream);
}

} // namespace devrt::detail

namespace devrt {

Result<Tensor> Tensor::as_texture(std::span<const std::int64_t> shape, DataType dtype,
                                  TensorOptions options) const noexcept {
  return detail::texture_over(*this, shape, dtype, options);
}

Tensor::TexturePitch Tensor::texture_pitch() const noexcept {
  if (!defined() || storage_->texture_over == nullptr) return {};
  return {storage_->texture_row_pitch, storage_->texture_layer_pitch};
}

KernelArg KernelArg::texture(const Tensor& texture) noexcept {
  KernelArg arg;
  arg.arg_.kind = DEVRT_ARG_TEXTURE;
  arg.arg_.device_kind = static_cast<std::int32_t>(texture.device().kind);
  arg.arg_.device_id = texture.device().id;
  // Not a texture (a global tensor, an undefined one): null, which the launch check refuses.
  arg.arg_.buffer = is_texture_scope(texture.scope()) ? texture.data() : nullptr;
  arg.arg_.size = texture.storage_span().size;
  return arg;
}

} // namespace devrt
