// SPDX-License-Identifier: Apache-2.0
// What the C API's files share: the handle structs behind the opaque pointers, the thread-local
// last error, and conversions between the C and C++ types.
#ifndef DEVRT_CAPI_CAPI_INTERNAL_HPP
#define DEVRT_CAPI_CAPI_INTERNAL_HPP

#include <devrt/backend/attribute_value.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/backend/workspace_pool.hpp>
#include <devrt/build_info.hpp>
#include <devrt/devrt.h>
#include <devrt/devrt.hpp>
#include <devrt/graph.hpp>
#include <devrt/memory_stats.hpp>
#include <devrt/plugin.hpp>
#include <devrt/timing.hpp>
#if DEVRT_WITH_TVM
#include <devrt/tvm_vm.hpp>
#endif

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
struct devrt_time_evaluator_t {
  devrt::TimeEvaluator evaluator;
};
struct devrt_graph_t {
  devrt::Graph graph;
};
#if DEVRT_WITH_TVM
struct devrt_tvm_library_t {
  devrt::tvm::Library library;
};
struct devrt_tvm_vm_t {
  devrt::tvm::VirtualMachine vm;
  std::vector<std::string> functions;
};
struct devrt_tvm_value_t {
  devrt::tvm::Value value;
};
#else
struct devrt_tvm_library_t {};
struct devrt_tvm_vm_t {};
struct devrt_tvm_value_t {};
#endif

namespace devrt::capi {

// Records `status` as this thread's last error and returns its code (DEVRT_STATUS_OK for ok).
devrt_status fail(const Status& status) noexcept;
// The same for a failure the C layer itself finds (a null handle or out parameter).
devrt_status fail(ErrorCode code, std::string_view message) noexcept;

// `status` as a devrt_status, recording it when it is an error.
inline devrt_status to_status(const Status& status) noexcept { return status.ok() ? DEVRT_STATUS_OK : fail(status); }

// Returns a C status from the enclosing function when `expression` (a devrt_status) failed.
#define DEVRT_CAPI_RETURN_IF_ERROR(expression)                                                                         \
  do {                                                                                                                 \
    if (devrt_status capi_status_ = (expression); capi_status_ != DEVRT_STATUS_OK) return capi_status_;                \
  } while (false)

// A stream the caller named for a copy between src and dst must belong to the device that runs
// that copy (devrt::copy_device); NULL means that device's current stream. C++'s default
// StreamRef cannot tell "none" from "the CPU's default stream", so the C API checks here.
devrt_status check_copy_stream(const char* call, Device src, Device dst, const devrt_stream_ref* stream) noexcept;

// unsupported naming the call, in builds without -Dtvm.
inline devrt_status without_tvm(const char* call) noexcept {
  return fail(make_error(ErrorCode::unsupported, call, ": this devrt was built without TVM libraries (-Dtvm)"));
}

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

// The C++ arguments behind a C argument array (a buffer's span and offset, or a scalar's bits);
// invalid_argument naming `call` for more than kMaxKernelArgs, a NULL array or an unknown kind.
Result<std::vector<KernelArg>> to_kernel_args(const devrt_kernel_arg* args, size_t num_args, const char* call) noexcept;

// Copies `text` into the caller's buffer (NUL-terminated, truncated to fit) and reports its full
// length through `length` when that is not null.
void copy_out(std::string_view text, char* buffer, std::size_t capacity, std::size_t* length) noexcept;
// A malloc'ed copy for a char** out parameter (freed by devrt_string_free); null when out of memory.
char* duplicate(std::string_view text) noexcept;
// Hands `text` to a char** out parameter; out_of_memory when the copy fails.
devrt_status give_string(std::string_view text, char** out, const char* call) noexcept;

// ---- Handles and the validation mode -----------------------------------------------------------
// A handle is the pointer to its object, unless the validation mode is on (DEVRT_VALIDATE=1 in the
// environment when the library first looks): then it is a slot number with a generation and a
// type, so that a released handle, a handle released twice and a handle of another type are
// invalid_argument naming the call instead of a crash.

// What each handle type is, for the validation mode's messages and checks.
template <class Object>
struct HandleKind;
#define DEVRT_CAPI_HANDLE_KIND(type, number)                                                                           \
  template <>                                                                                                          \
  struct HandleKind<type##_t> {                                                                                        \
    static constexpr std::uint8_t value = number;                                                                      \
    static constexpr const char* name = #type;                                                                         \
  }
DEVRT_CAPI_HANDLE_KIND(devrt_buffer, 1);
DEVRT_CAPI_HANDLE_KIND(devrt_stream, 2);
DEVRT_CAPI_HANDLE_KIND(devrt_event, 3);
DEVRT_CAPI_HANDLE_KIND(devrt_workspace, 4);
DEVRT_CAPI_HANDLE_KIND(devrt_module, 5);
DEVRT_CAPI_HANDLE_KIND(devrt_function, 6);
DEVRT_CAPI_HANDLE_KIND(devrt_tensor, 7);
DEVRT_CAPI_HANDLE_KIND(devrt_time_evaluator, 8);
DEVRT_CAPI_HANDLE_KIND(devrt_graph, 9);
DEVRT_CAPI_HANDLE_KIND(devrt_tvm_library, 10);
DEVRT_CAPI_HANDLE_KIND(devrt_tvm_vm, 11);
DEVRT_CAPI_HANDLE_KIND(devrt_tvm_value, 12);
#undef DEVRT_CAPI_HANDLE_KIND

// True in the validation mode. Decided once per process. Thread-safe.
bool validating() noexcept;

namespace handles {
// The validation mode's table: registers an object and returns its handle value (0 when out of
// memory); finds (retire: and removes) the object behind a value, or records the error naming
// `call` and returns nullptr.
std::uintptr_t register_handle(void* object, std::uint8_t kind) noexcept;
void* find_handle(std::uintptr_t value, std::uint8_t kind, const char* kind_name, const char* call,
                  bool retire) noexcept;
} // namespace handles

// The object behind a handle argument; nullptr, with the last error recorded, for NULL and, in
// the validation mode, for a handle that is released or of another type.
template <class Object>
Object* resolve(Object* handle, const char* call) noexcept {
  if (handle == nullptr) {
    null_argument(call, HandleKind<Object>::name);
    return nullptr;
  }
  if (!validating()) [[likely]]
    return handle;
  return static_cast<Object*>(handles::find_handle(reinterpret_cast<std::uintptr_t>(handle), HandleKind<Object>::value,
                                                   HandleKind<Object>::name, call, false));
}

// The object a *_release call deletes: NULL is a no-op (nullptr, nothing recorded); in the
// validation mode a released or foreign handle is recorded as an error and nothing is deleted.
template <class Object>
Object* retire(Object* handle, const char* call) noexcept {
  if (handle == nullptr || !validating()) return handle;
  return static_cast<Object*>(handles::find_handle(reinterpret_cast<std::uintptr_t>(handle), HandleKind<Object>::value,
                                                   HandleKind<Object>::name, call, true));
}

// A new Handle{values...} for an out parameter, or out_of_memory naming `call`.
template <class Handle, class... Values>
devrt_status give_handle(Handle** out, const char* call, Values&&... values) noexcept {
  auto* handle = new (std::nothrow) Handle{std::forward<Values>(values)...};
  if (handle == nullptr) return fail(make_error(ErrorCode::out_of_memory, call, ": no memory for the handle"));
  if (validating()) {
    std::uintptr_t value = handles::register_handle(handle, HandleKind<Handle>::value);
    if (value == 0) {
      delete handle;
      return fail(make_error(ErrorCode::out_of_memory, call, ": no memory for the handle table"));
    }
    *out = reinterpret_cast<Handle*>(value); // NOLINT(performance-no-int-to-ptr): an opaque handle
    return DEVRT_STATUS_OK;
  }
  *out = handle;
  return DEVRT_STATUS_OK;
}

} // namespace devrt::capi

#endif // DEVRT_CAPI_CAPI_INTERNAL_HPP
