// SPDX-License-Identifier: Apache-2.0
// What the C API's files share: the handle structs behind the opaque pointers, the thread-local
// last error, and conversions between the C and C++ types.
#ifndef DEVRT_CAPI_CAPI_INTERNAL_HPP
#define DEVRT_CAPI_CAPI_INTERNAL_HPP

#include <devrt/devrt.h>
#include <devrt/devrt.hpp>

#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>

struct devrt_buffer_t {
  devrt::Buffer buffer;
};
struct devrt_stream_t {
  devrt::Stream stream;
};
struct devrt_event_t {
  devrt::Event event;
};
struct devrt_workspace_t {
  devrt::Workspace workspace;
  devrt::Device device;
};
struct devrt_module_t {
  devrt::Module module;
};
struct devrt_function_t {
  devrt::Function function;
};
struct devrt_tensor_t {
  devrt::Tensor tensor;
};

namespace devrt::capi {

// Records `status` as this thread's last error and returns its code (DEVRT_STATUS_OK for ok).
devrt_status fail(const Status& status) noexcept;
// The same for a failure the C layer itself finds (a null handle or out parameter).
devrt_status fail(ErrorCode code, std::string_view message) noexcept;

// `status` as a devrt_status, recording it when it is an error.
inline devrt_status to_status(const Status& status) noexcept { return status.ok() ? DEVRT_STATUS_OK : fail(status); }

// invalid_argument naming the call and the parameter that was NULL.
devrt_status null_argument(const char* call, const char* parameter) noexcept;

inline Device to_cpp(devrt_device device) noexcept { return Device{static_cast<DeviceKind>(device.kind), device.id}; }
inline devrt_device to_c(Device device) noexcept {
  return devrt_device{static_cast<std::int32_t>(device.kind), device.id};
}
inline MemorySpan to_cpp(const devrt_span& span) noexcept {
  return MemorySpan{to_cpp(span.device), span.data, span.size};
}
inline devrt_span to_c(const MemorySpan& span) noexcept { return devrt_span{to_c(span.device), span.data, span.size}; }
// A stream given by pointer: NULL is the default ({}), which devrt resolves per call.
inline StreamRef to_cpp(const devrt_stream_ref* stream) noexcept {
  return stream != nullptr ? StreamRef{to_cpp(stream->device), stream->handle} : StreamRef{};
}
inline devrt_stream_ref to_c(StreamRef stream) noexcept { return devrt_stream_ref{to_c(stream.device), stream.handle}; }
inline DataType to_cpp(DLDataType type) noexcept {
  return DataType{static_cast<DataTypeCode>(type.code), type.bits, type.lanes};
}
inline DLDataType to_c(DataType type) noexcept {
  return DLDataType{static_cast<std::uint8_t>(type.code), type.bits, type.lanes};
}

// Copies `text` into the caller's buffer (NUL-terminated, truncated to fit) and reports its full
// length through `length` when that is not null.
void copy_out(std::string_view text, char* buffer, std::size_t capacity, std::size_t* length) noexcept;
// A malloc'ed copy for a char** out parameter (freed by devrt_string_free); null when out of memory.
char* duplicate(std::string_view text) noexcept;
// Hands `text` to a char** out parameter; out_of_memory when the copy fails.
devrt_status give_string(std::string_view text, char** out, const char* call) noexcept;

// A new Handle{values...} for an out parameter, or out_of_memory naming `call`.
template <class Handle, class... Values>
devrt_status give_handle(Handle** out, const char* call, Values&&... values) noexcept {
  auto* handle = new (std::nothrow) Handle{std::forward<Values>(values)...};
  if (handle == nullptr) return fail(make_error(ErrorCode::out_of_memory, call, ": no memory for the handle"));
  *out = handle;
  return DEVRT_STATUS_OK;
}

} // namespace devrt::capi

#endif // DEVRT_CAPI_CAPI_INTERNAL_HPP
