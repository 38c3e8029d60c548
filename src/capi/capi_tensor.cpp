// SPDX-License-Identifier: Apache-2.0
// The C API: tensors, DLPack import and export, data types.
#include "capi/capi_internal.hpp"

#include <new>
#include <span>
#include <utility>

using namespace devrt;
using namespace devrt::capi;

namespace {

devrt_status give_tensor(Result<Tensor> tensor, devrt_tensor* out, const char* call) noexcept {
  if (!tensor.ok()) return fail(tensor.status());
  return give_handle(out, call, std::move(*tensor));
}

// A shape or strides array from C: ndim values, or empty when ndim is 0.
Result<std::span<const std::int64_t>> dims(const int64_t* values, int32_t ndim, const char* call,
                                           const char* parameter) noexcept {
  if (ndim < 0 || ndim > Tensor::kMaxDims) {
    return make_error(ErrorCode::invalid_argument, call, ": ndim ", ndim, " (0 to ", Tensor::kMaxDims, ")");
  }
  if (ndim > 0 && values == nullptr) return make_error(ErrorCode::invalid_argument, call, ": ", parameter, " is NULL");
  return std::span<const std::int64_t>(values, static_cast<std::size_t>(ndim));
}

// A host copy queued on the default stream is complete once the current stream of the device doing
// it (devrt::copy_device) is: the C API's host copies return complete.
Status finish_host_copy(Status queued, Device src, Device dst) noexcept {
  if (!queued.ok()) return queued;
  return synchronize(current_stream(copy_device(src, dst).value_or(kHostDevice)));
}

// The options a scope name and a texture layout name (null: the default) give, for `call`.
Result<TensorOptions> scope_options(const char* call, const char* scope, const char* layout) noexcept {
  TensorOptions options;
  if (scope != nullptr) {
    Result<MemoryScope> parsed = parse_memory_scope(scope);
    if (!parsed.ok()) return make_error(parsed.status().code(), call, ": ", parsed.status().message());
    options.scope = *parsed;
  }
  if (layout != nullptr) {
    Result<TextureLayout> parsed = parse_texture_layout(layout);
    if (!parsed.ok()) return make_error(parsed.status().code(), call, ": ", parsed.status().message());
    if (!is_texture_scope(options.scope)) {
      return make_error(ErrorCode::invalid_argument, call, ": a texture layout ('", layout, "') for scope '",
                        to_string(options.scope), "', which is no texture");
    }
    options.texture_layout = *parsed;
  }
  return options;
}

// devrt_tensor_empty and devrt_tensor_empty_texture: `layout` (null for the first) names the
// images of a texture scope.
devrt_status empty_in_scope(const char* call, const int64_t* shape, int32_t ndim, DLDataType dtype, devrt_device device,
                            const char* scope, const char* layout, devrt_tensor* out) {
  if (out == nullptr) return null_argument(call, "out");
  Result<std::span<const std::int64_t>> extents = dims(shape, ndim, call, "shape");
  if (!extents.ok()) return fail(extents.status());
  Result<TensorOptions> options = scope_options(call, scope, layout);
  if (!options.ok()) return fail(options.status());
  return give_tensor(Tensor::empty(*extents, to_cpp(dtype), to_cpp(device), *options), out, call);
}

} // namespace

extern "C" {

devrt_status devrt_tensor_empty(const int64_t* shape, int32_t ndim, DLDataType dtype, devrt_device device,
                                const char* scope, devrt_tensor* out) {
  return empty_in_scope("devrt_tensor_empty", shape, ndim, dtype, device, scope, nullptr, out);
}

devrt_status devrt_tensor_empty_texture(const int64_t* shape, int32_t ndim, DLDataType dtype, devrt_device device,
                                        const char* scope, const char* layout, devrt_tensor* out) {
  return empty_in_scope("devrt_tensor_empty_texture", shape, ndim, dtype, device, scope, layout, out);
}

devrt_status devrt_tensor_as_texture(devrt_tensor tensor, const int64_t* shape, int32_t ndim, DLDataType dtype,
                                     const char* scope, const char* layout, devrt_tensor* out) {
  constexpr const char* kCall = "devrt_tensor_as_texture";
  if (out == nullptr) return null_argument(kCall, "out");
  if ((tensor = resolve(tensor, kCall)) == nullptr) return devrt_last_error_code();
  Result<std::span<const std::int64_t>> extents = dims(shape, ndim, kCall, "shape");
  if (!extents.ok()) return fail(extents.status());
  Result<TensorOptions> options = scope_options(kCall, scope == nullptr ? "global.texture" : scope, layout);
  if (!options.ok()) return fail(options.status());
  return give_tensor(tensor->tensor.as_texture(*extents, to_cpp(dtype), *options), out, kCall);
}

devrt_status devrt_tensor_texture_pitch(devrt_tensor tensor, size_t* row, size_t* layer) {
  if (row == nullptr || layer == nullptr)
    return null_argument("devrt_tensor_texture_pitch", row == nullptr ? "row" : "layer");
  if ((tensor = resolve(tensor, "devrt_tensor_texture_pitch")) == nullptr) return devrt_last_error_code();
  const Tensor::TexturePitch pitch = tensor->tensor.texture_pitch();
  *row = pitch.row;
  *layer = pitch.layer;
  return DEVRT_STATUS_OK;
}

const char* devrt_tensor_scope(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_scope")) != nullptr ? to_string(tensor->tensor.scope()).data()
                                                                     : nullptr;
}

devrt_status devrt_tensor_share(devrt_tensor tensor, devrt_tensor* out) {
  if ((tensor = resolve(tensor, "devrt_tensor_share")) == nullptr) return devrt_last_error_code();
  if (out == nullptr) return null_argument("devrt_tensor_share", "out");
  return give_tensor(Tensor(tensor->tensor), out, "devrt_tensor_share");
}

void devrt_tensor_release(devrt_tensor tensor) { delete retire(tensor, "devrt_tensor_release"); }

int32_t devrt_tensor_ndim(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_ndim")) != nullptr ? tensor->tensor.ndim() : 0;
}
const int64_t* devrt_tensor_shape(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_shape")) != nullptr ? tensor->tensor.shape().data() : nullptr;
}
const int64_t* devrt_tensor_strides(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_strides")) != nullptr ? tensor->tensor.strides().data() : nullptr;
}
DLDataType devrt_tensor_dtype(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_dtype")) != nullptr ? to_c(tensor->tensor.dtype()) : DLDataType{};
}
devrt_device devrt_tensor_device(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_device")) != nullptr ? to_c(tensor->tensor.device()) : devrt_device{};
}
void* devrt_tensor_data(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_data")) != nullptr ? tensor->tensor.data() : nullptr;
}
uint64_t devrt_tensor_byte_offset(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_byte_offset")) != nullptr ? tensor->tensor.byte_offset() : 0;
}
size_t devrt_tensor_nbytes(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_nbytes")) != nullptr ? tensor->tensor.nbytes() : 0;
}
int devrt_tensor_is_contiguous(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_is_contiguous")) != nullptr && tensor->tensor.is_contiguous() ? 1 : 0;
}
int devrt_tensor_read_only(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_read_only")) != nullptr && tensor->tensor.read_only() ? 1 : 0;
}
int devrt_tensor_is_copied(devrt_tensor tensor) {
  return (tensor = resolve(tensor, "devrt_tensor_is_copied")) != nullptr && tensor->tensor.is_copied() ? 1 : 0;
}

devrt_status devrt_tensor_from_dlpack(DLManagedTensor* managed, size_t allocation_bytes, devrt_tensor* out) {
  if (out == nullptr) {
    // Ownership was handed over: honour it even though the call cannot succeed.
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
    return null_argument("devrt_tensor_from_dlpack", "out");
  }
  return give_tensor(Tensor::from_dlpack(managed, ImportOptions{allocation_bytes}), out, "devrt_tensor_from_dlpack");
}

devrt_status devrt_tensor_from_dlpack_versioned(void* managed_versioned, size_t allocation_bytes, devrt_tensor* out) {
  auto* managed = static_cast<dlpack::ManagedTensorVersioned*>(managed_versioned);
  if (out == nullptr) {
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
    return null_argument("devrt_tensor_from_dlpack_versioned", "out");
  }
  return give_tensor(Tensor::from_dlpack(managed, ImportOptions{allocation_bytes}), out,
                     "devrt_tensor_from_dlpack_versioned");
}

devrt_status devrt_tensor_to_dlpack(devrt_tensor tensor, DLManagedTensor** out) {
  if ((tensor = resolve(tensor, "devrt_tensor_to_dlpack")) == nullptr) return devrt_last_error_code();
  if (out == nullptr) return null_argument("devrt_tensor_to_dlpack", "out");
  Result<DLManagedTensor*> managed = tensor->tensor.to_dlpack();
  if (!managed.ok()) return fail(managed.status());
  *out = *managed;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tensor_to_dlpack_versioned(devrt_tensor tensor, void** out) {
  if ((tensor = resolve(tensor, "devrt_tensor_to_dlpack_versioned")) == nullptr) return devrt_last_error_code();
  if (out == nullptr) return null_argument("devrt_tensor_to_dlpack_versioned", "out");
  Result<dlpack::ManagedTensorVersioned*> managed = tensor->tensor.to_dlpack_versioned();
  if (!managed.ok()) return fail(managed.status());
  *out = *managed;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tensor_copy(devrt_tensor dst, devrt_tensor src, const devrt_stream_ref* stream) {
  if ((dst = resolve(dst, "devrt_tensor_copy")) == nullptr) return devrt_last_error_code();
  if ((src = resolve(src, "devrt_tensor_copy")) == nullptr) return devrt_last_error_code();
  DEVRT_CAPI_RETURN_IF_ERROR(
      check_copy_stream("devrt_tensor_copy", src->tensor.device(), dst->tensor.device(), stream));
  return to_status(dst->tensor.copy_from(src->tensor, to_cpp(stream)));
}

devrt_status devrt_tensor_to(devrt_tensor tensor, devrt_device device, const devrt_stream_ref* stream,
                             devrt_tensor* out) {
  if ((tensor = resolve(tensor, "devrt_tensor_to")) == nullptr) return devrt_last_error_code();
  DEVRT_CAPI_RETURN_IF_ERROR(check_copy_stream("devrt_tensor_to", tensor->tensor.device(), to_cpp(device), stream));
  if (out == nullptr) return null_argument("devrt_tensor_to", "out");
  return give_tensor(tensor->tensor.to(to_cpp(device), to_cpp(stream)), out, "devrt_tensor_to");
}

devrt_status devrt_tensor_copy_from_host(devrt_tensor tensor, const void* data, size_t nbytes) {
  if ((tensor = resolve(tensor, "devrt_tensor_copy_from_host")) == nullptr) return devrt_last_error_code();
  return to_status(finish_host_copy(tensor->tensor.copy_from_host(data, nbytes), kHostDevice, tensor->tensor.device()));
}

devrt_status devrt_tensor_copy_to_host(devrt_tensor tensor, void* data, size_t nbytes) {
  if ((tensor = resolve(tensor, "devrt_tensor_copy_to_host")) == nullptr) return devrt_last_error_code();
  return to_status(finish_host_copy(tensor->tensor.copy_to_host(data, nbytes), tensor->tensor.device(), kHostDevice));
}

devrt_status devrt_tensor_view(devrt_tensor tensor, const int64_t* shape, const int64_t* strides, int32_t ndim,
                               uint64_t byte_offset, devrt_tensor* out) {
  if ((tensor = resolve(tensor, "devrt_tensor_view")) == nullptr) return devrt_last_error_code();
  if (out == nullptr) return null_argument("devrt_tensor_view", "out");
  Result<std::span<const std::int64_t>> extents = dims(shape, ndim, "devrt_tensor_view", "shape");
  if (!extents.ok()) return fail(extents.status());
  std::span<const std::int64_t> steps;
  if (strides != nullptr) steps = std::span<const std::int64_t>(strides, extents->size());
  return give_tensor(tensor->tensor.view(*extents, steps, byte_offset), out, "devrt_tensor_view");
}

devrt_status devrt_tensor_create_view(devrt_tensor tensor, const int64_t* shape, int32_t ndim, DLDataType dtype,
                                      uint64_t relative_byte_offset, devrt_tensor* out) {
  if ((tensor = resolve(tensor, "devrt_tensor_create_view")) == nullptr) return devrt_last_error_code();
  if (out == nullptr) return null_argument("devrt_tensor_create_view", "out");
  Result<std::span<const std::int64_t>> extents = dims(shape, ndim, "devrt_tensor_create_view", "shape");
  if (!extents.ok()) return fail(extents.status());
  return give_tensor(tensor->tensor.create_view(*extents, to_cpp(dtype), relative_byte_offset), out,
                     "devrt_tensor_create_view");
}

devrt_status devrt_dtype_parse(const char* text, DLDataType* out) {
  if (text == nullptr) return null_argument("devrt_dtype_parse", "text");
  if (out == nullptr) return null_argument("devrt_dtype_parse", "out");
  Result<DataType> type = parse_data_type(text);
  if (!type.ok()) return fail(type.status());
  *out = to_c(*type);
  return DEVRT_STATUS_OK;
}

devrt_status devrt_dtype_to_string(DLDataType dtype, char* text, size_t capacity) {
  if (text == nullptr || capacity == 0) return null_argument("devrt_dtype_to_string", "text");
  copy_out(to_string(to_cpp(dtype)), text, capacity, nullptr);
  return DEVRT_STATUS_OK;
}

} // extern "C"
