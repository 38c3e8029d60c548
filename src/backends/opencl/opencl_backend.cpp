// SPDX-License-Identifier: Apache-2.0
#include "opencl_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <devrt/log.hpp>

#include "opencl_state.hpp"
#include "support/fault_injection.hpp"
#include "support/lazy_runtime.hpp"

namespace devrt::opencl {

std::string_view error_name(cl_int code) noexcept {
  switch (code) {
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
  case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
  case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
  case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
  case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
  case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
  case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
  case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
  case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
  case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
  case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
  case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
  case CL_KERNEL_ARG_INFO_NOT_AVAILABLE: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "an unlisted OpenCL error";
  }
}

Status cl_error(const char* call, cl_int code) {
  return make_error(code == CL_OUT_OF_HOST_MEMORY || code == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                            code == CL_OUT_OF_RESOURCES
                        ? ErrorCode::out_of_memory
                        : ErrorCode::driver_error,
                    call, " failed: ", error_name(code), " (", code, ")");
}

namespace {

// clGetDeviceInfo's text for `what`, or the call's error.
Status device_string(const Api& api, cl_device_id device, cl_device_info what, const char* call, std::string& out) {
  std::size_t size = 0;
  DEVRT_CL_CHECK(call, api.clGetDeviceInfo(device, what, 0, nullptr, &size));
  out.assign(size, '\0');
  if (size != 0) DEVRT_CL_CHECK(call, api.clGetDeviceInfo(device, what, size, out.data(), nullptr));
  out.resize(std::strlen(out.c_str()));
  return Status();
}

template <class T>
Status device_value(const Api& api, cl_device_id device, cl_device_info what, const char* call, T& out) {
  DEVRT_CL_CHECK(call, api.clGetDeviceInfo(device, what, sizeof out, &out, nullptr));
  return Status();
}

// The name of a clGetDeviceInfo query in messages: "clGetDeviceInfo(CL_DEVICE_NAME)".
#define DEVRT_CL_INFO(what) CL_##what, "clGetDeviceInfo(CL_" #what ")"

// Every property devrt reports or checks against. A query that fails fails the device (a limit
// read as zero would refuse every allocation or launch); the optional ones (a figure for
// attributes only, or one OpenCL 1.2 lacks) stay 0, which the attributes report as absent.
Status describe_device(const Api& api, ClDevice& d) {
  cl_device_id id = d.id;
  DEVRT_RETURN_IF_ERROR(device_string(api, id, DEVRT_CL_INFO(DEVICE_NAME), d.name));
  DEVRT_RETURN_IF_ERROR(device_string(api, id, DEVRT_CL_INFO(DEVICE_VERSION), d.version));
  DEVRT_RETURN_IF_ERROR(device_string(api, id, DEVRT_CL_INFO(DRIVER_VERSION), d.driver_version));
  DEVRT_RETURN_IF_ERROR(device_string(api, id, DEVRT_CL_INFO(DEVICE_OPENCL_C_VERSION), d.c_version));
  DEVRT_RETURN_IF_ERROR(device_string(api, id, DEVRT_CL_INFO(DEVICE_EXTENSIONS), d.extensions));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_TYPE), d.type));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_MAX_WORK_GROUP_SIZE), d.max_work_group_size));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_MAX_WORK_ITEM_SIZES), d.max_work_item_sizes));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_LOCAL_MEM_SIZE), d.local_memory));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_GLOBAL_MEM_SIZE), d.global_memory));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_MAX_MEM_ALLOC_SIZE), d.max_allocation));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_MEM_BASE_ADDR_ALIGN), d.base_address_align_bits));
  DEVRT_RETURN_IF_ERROR(device_value(api, id, DEVRT_CL_INFO(DEVICE_MAX_COMPUTE_UNITS), d.compute_units));
  static_cast<void>(device_value(api, id, DEVRT_CL_INFO(DEVICE_GLOBAL_MEM_CACHE_SIZE), d.global_cache));
  static_cast<void>(device_value(api, id, DEVRT_CL_INFO(DEVICE_MAX_CLOCK_FREQUENCY), d.clock_mhz));
  static_cast<void>(device_value(api, id, DEVRT_CL_INFO(DEVICE_IMAGE_PITCH_ALIGNMENT), d.image_pitch_alignment));
  // Textures: without these figures the device has no texture scopes.
  static_cast<void>(device_value(api, id, DEVRT_CL_INFO(DEVICE_IMAGE_SUPPORT), d.image_support));
  static_cast<void>(device_value(api, id, DEVRT_CL_INFO(DEVICE_IMAGE2D_MAX_WIDTH), d.image2d_max_width));
  static_cast<void>(device_value(api, id, DEVRT_CL_INFO(DEVICE_IMAGE2D_MAX_HEIGHT), d.image2d_max_height));
  static_cast<void>(device_value(api, id, DEVRT_CL_INFO(DEVICE_IMAGE_MAX_ARRAY_SIZE), d.image_max_array_size));
  static_cast<void>(device_string(api, id, DEVRT_CL_INFO(DEVICE_VENDOR), d.vendor));
  if (d.image_support == CL_TRUE) d.half_texels = rgba_image_supported(api, d, CL_HALF_FLOAT).value_or(false);
  // OpenCL 3.0's device-wide figure; older devices only report it per kernel.
  static_cast<void>(
      device_value(api, id, DEVRT_CL_INFO(DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE), d.preferred_multiple));
  if (d.max_allocation == 0 || d.max_work_group_size == 0 || d.max_work_item_sizes[0] == 0) {
    return make_error(ErrorCode::driver_error, "the driver reports a zero allocation or work-group limit");
  }
  return Status();
}
#undef DEVRT_CL_INFO

void release_device(const Api& api, ClDevice& d) {
  if (d.queue != nullptr) static_cast<void>(api.clReleaseCommandQueue(d.queue));
  if (d.context != nullptr) static_cast<void>(api.clReleaseContext(d.context));
  d.queue = nullptr;
  d.context = nullptr;
}

// A context and a default queue for one device.
Status create_context(const Api& api, ClDevice& d) {
  cl_int err = CL_SUCCESS;
  d.context = api.clCreateContext(nullptr, 1, &d.id, nullptr, nullptr, &err);
  if (d.context == nullptr || err != CL_SUCCESS) {
    d.context = nullptr;
    return cl_error("clCreateContext", err != CL_SUCCESS ? err : CL_INVALID_CONTEXT);
  }
  d.queue = api.clCreateCommandQueue(d.context, d.id, 0, &err);
  if (d.queue == nullptr || err != CL_SUCCESS) {
    d.queue = nullptr;
    return cl_error("clCreateCommandQueue", err != CL_SUCCESS ? err : CL_INVALID_COMMAND_QUEUE);
  }
  return Status();
}

// The device's properties, read through a context made for the purpose and released afterwards
// (open_device makes the device's own).
Status describe_with_context(const Api& api, ClDevice& d) {
  Status described = create_context(api, d);
  if (described.ok()) described = describe_device(api, d);
  release_device(api, d);
  return described;
}

// The devices of one platform; a device that cannot be opened is skipped with its reason kept in
// `failure` (the first one).
Status open_platform(const Api& api, cl_platform_id platform, std::vector<ClDevice>& devices, Status& failure) {
  cl_uint count = 0;
  cl_int code = api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (code == CL_DEVICE_NOT_FOUND || (code == CL_SUCCESS && count == 0)) return Status();
  DEVRT_CL_CHECK("clGetDeviceIDs", code);
  std::vector<cl_device_id> ids(count);
  DEVRT_CL_CHECK("clGetDeviceIDs", api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr));
  char platform_name[256] = {};
  DEVRT_CL_CHECK("clGetPlatformInfo(CL_PLATFORM_NAME)",
                 api.clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name - 1, platform_name, nullptr));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ClDevice d;
    d.platform = platform;
    d.id = ids[i];
    d.platform_name = platform_name;
    Status s = describe_with_context(api, d);
    if (!s.ok()) {
      if (failure.ok()) failure = make_error(s.code(), "platform '", platform_name, "' device ", i, ": ", s.message());
      continue;
    }
    devices.push_back(std::move(d));
  }
  return Status();
}

Status discover(Runtime& rt) {
  DEVRT_RETURN_IF_ERROR(rt.library.open(kLoader));
  DEVRT_RESOLVE_SYMBOLS(rt.library, rt.api, DEVRT_OPENCL_SYMBOLS, " (an OpenCL 1.2 loader is needed)");
  DEVRT_FAULT_WRAP_SYMBOLS("opencl", rt.api, DEVRT_OPENCL_SYMBOLS);
  const Api& api = rt.api;
  cl_uint platform_count = 0;
  cl_int code = api.clGetPlatformIDs(0, nullptr, &platform_count);
  if (code == -1001 || (code == CL_SUCCESS && platform_count == 0)) {
    return make_error(ErrorCode::unavailable,
                      "no OpenCL platform: the ICD loader found no driver (looked in OCL_ICD_VENDORS or "
                      "/etc/OpenCL/vendors)");
  }
  DEVRT_CL_CHECK("clGetPlatformIDs", code);
  std::vector<cl_platform_id> platforms(platform_count);
  DEVRT_CL_CHECK("clGetPlatformIDs", api.clGetPlatformIDs(platform_count, platforms.data(), nullptr));
  Status failure;
  for (cl_platform_id platform : platforms) {
    Status s = open_platform(api, platform, rt.devices, failure);
    if (!s.ok() && failure.ok()) failure = std::move(s);
  }
  if (rt.devices.empty()) {
    // Nothing usable: why, if a driver call said so (discovery is then tried again), else final.
    if (!failure.ok()) {
      return make_error(failure.code(), platform_count,
                        " OpenCL platform(s) found but no usable device: ", failure.message());
    }
    return make_error(ErrorCode::unavailable, platform_count, " OpenCL platform(s) found but no device");
  }
  if (!failure.ok()) DEVRT_LOG(warning, "opencl: a device was skipped: ", failure.message());
  return Status();
}

// An event handle: the marker of the latest record(), replaced by the next one. A timed event's
// marker is on the device's profiling queue, after a marker of the stream.
struct ClEvent {
  std::mutex mutex;
  cl_event marker = nullptr;
  bool timed = false;
  cl_event stream_marker = nullptr; // a timed event's marker on the stream itself
};

// A reference to the event's latest marker (nullptr when never recorded), to release after use;
// an error when the driver refused the reference (the event keeps its own). With `stream_marker`,
// a reference to a timed event's marker on the stream as well, taken under the same lock.
Result<cl_event> retain_marker(const Api& api, ClEvent& event, cl_event* stream_marker = nullptr) {
  std::lock_guard<std::mutex> lock(event.mutex);
  if (event.marker == nullptr) return event.marker;
  DEVRT_CL_CHECK("clRetainEvent", api.clRetainEvent(event.marker));
  if (stream_marker != nullptr) {
    if (cl_int code = api.clRetainEvent(event.stream_marker); code != CL_SUCCESS) {
      static_cast<void>(api.clReleaseEvent(event.marker));
      return cl_error("clRetainEvent", code);
    }
    *stream_marker = event.stream_marker;
  }
  return event.marker;
}

using Discovery = detail::LazyRuntime<Runtime, discover>;

// The device's profiling queue, made at the first timed event (ordinary streams are made without
// CL_QUEUE_PROFILING_ENABLE and pay nothing for it), kept until the device is closed.
Result<cl_command_queue> profiling_queue(ClDevice& d) {
  std::lock_guard<std::mutex> lock(*d.profiling_mutex);
  if (d.profiling_queue != nullptr) return d.profiling_queue;
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = Discovery::get().api.clCreateCommandQueue(d.context, d.id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) return cl_error("clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)", err);
  d.profiling_queue = queue;
  return queue;
}

// A timed event's marker: on the profiling queue, after `stream_marker`, sent to the device. Its
// end is the time the stream reached the record.
Result<cl_event> timed_marker(const Api& api, ClDevice& d, cl_event stream_marker) {
  DEVRT_ASSIGN_OR_RETURN(cl_command_queue queue, profiling_queue(d));
  cl_event timed = nullptr;
  DEVRT_CL_CHECK("clEnqueueMarkerWithWaitList", api.clEnqueueMarkerWithWaitList(queue, 1, &stream_marker, &timed));
  if (cl_int flushed = api.clFlush(queue); flushed != CL_SUCCESS) {
    static_cast<void>(api.clReleaseEvent(timed));
    return cl_error("clFlush", flushed);
  }
  return timed;
}

// Whether a marker has completed; the error of the work before it when that failed.
Result<bool> marker_complete(const Api& api, cl_event marker) {
  cl_int state = CL_QUEUED;
  DEVRT_CL_CHECK("clGetEventInfo",
                 api.clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr));
  if (state < 0) return cl_error("the recorded work", state);
  return state == CL_COMPLETE;
}

// CL_PROFILING_COMMAND_END of a timed event's marker. Once the stream has reached the record
// (a synchronized stream has), the profiling queue's marker is waited for: it follows at once.
// `unavailable` while the stream has not.
Status marker_end(const Api& api, cl_event marker, cl_event reached, const char* which, cl_ulong& out) {
  DEVRT_ASSIGN_OR_RETURN(bool complete, marker_complete(api, marker));
  if (!complete) {
    DEVRT_ASSIGN_OR_RETURN(bool stream_reached, marker_complete(api, reached));
    if (!stream_reached) {
      return make_error(ErrorCode::unavailable, "the ", which, " event has not completed (synchronize it first)");
    }
    DEVRT_CL_CHECK("clWaitForEvents", api.clWaitForEvents(1, &marker));
  }
  DEVRT_CL_CHECK("clGetEventProfilingInfo",
                 api.clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof out, &out, nullptr));
  return Status();
}
} // namespace

Runtime& runtime() noexcept { return Discovery::get(); }

detail::FreedBuffers& freed_buffers() noexcept {
  static detail::NoDestroy<detail::FreedBuffers> buffers; // used by frees during exit
  return buffers.get();
}

// ---- Discovery -------------------------------------------------------------------------------

Status OpenclBackend::availability() noexcept { return Discovery::get_retrying().status; }

Result<std::int32_t> OpenclBackend::device_count() noexcept {
  return detail::discovered_device_count(Discovery::get_retrying());
}

Status OpenclBackend::open_device(BackendDevice& device) noexcept {
  ClDevice& d = device_of(device.index);
  const Api& api = runtime().api;
  if (Status created = create_context(api, d); !created.ok()) {
    release_device(api, d);
    return created;
  }
  device.state = &d;
  return Status();
}

Status OpenclBackend::close_device(BackendDevice& device) noexcept {
  ClDevice& d = state_of(device);
  device.state = nullptr;
  const Api& api = runtime().api;
  {
    std::lock_guard<std::mutex> lock(*d.profiling_mutex);
    if (d.profiling_queue != nullptr) {
      static_cast<void>(api.clFinish(d.profiling_queue));
      static_cast<void>(api.clReleaseCommandQueue(d.profiling_queue));
      d.profiling_queue = nullptr;
    }
  }
  cl_int finished = api.clFinish(d.queue);
  release_device(api, d);
  DEVRT_CL_CHECK("clFinish", finished);
  return Status();
}

Result<AttributeValue> OpenclBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  const ClDevice& d = state_of(device);
  auto integer = [](auto value) { return AttributeValue(static_cast<std::int64_t>(value)); };
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_threads_per_block: return integer(d.max_work_group_size);
  case Attribute::warp_size: return integer(d.preferred_multiple != 0 ? d.preferred_multiple : 1);
  case Attribute::max_shared_memory_per_block: return integer(d.local_memory);
  case Attribute::device_name: return AttributeValue(d.name);
  case Attribute::max_clock_rate:
    return d.clock_mhz != 0 ? integer(std::int64_t{d.clock_mhz} * 1000) : AttributeValue();
  case Attribute::multi_processor_count: return integer(d.compute_units);
  case Attribute::max_thread_dimensions:
    return AttributeValue(Dim3{static_cast<std::int64_t>(d.max_work_item_sizes[0]),
                               static_cast<std::int64_t>(d.max_work_item_sizes[1]),
                               static_cast<std::int64_t>(d.max_work_item_sizes[2])});
  case Attribute::api_version: {
    // "OpenCL 3.0 <vendor>" -> 300, as CL_TARGET_OPENCL_VERSION spells versions.
    int major = 0, minor = 0;
    if (std::sscanf(d.version.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return AttributeValue();
    return integer(major * 100 + minor * 10);
  }
  case Attribute::driver_version: return AttributeValue(d.driver_version);
  case Attribute::l2_cache_size_bytes: return d.global_cache != 0 ? integer(d.global_cache) : AttributeValue();
  case Attribute::total_global_memory: return integer(d.global_memory);
  case Attribute::image_pitch_alignment:
    return d.image_pitch_alignment != 0 ? integer(d.image_pitch_alignment) : AttributeValue();
  case Attribute::buffer_offset_alignment: return integer(buffer_offset_alignment(d));
  default: return AttributeValue();
  }
}

Result<Target> OpenclBackend::detect_target(const BackendDevice& device) noexcept {
  return describe_target(state_of(device));
}

// ---- Memory ----------------------------------------------------------------------------------

Result<void*> OpenclBackend::allocate(const BackendDevice& device, std::size_t nbytes, std::size_t) noexcept {
  const Runtime& rt = runtime();
  const ClDevice& d = state_of(device);
  if (nbytes > d.max_allocation) {
    return make_error(ErrorCode::out_of_memory, "exceeds the device's largest allocation of ", d.max_allocation,
                      " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  cl_int err = CL_SUCCESS;
  // A CPU device's memory is the host's: asking for host memory makes the driver allocate it
  // now, so that exhaustion is this call's error (PoCL otherwise allocates at first use, and
  // aborts there when it cannot).
  cl_mem_flags flags = CL_MEM_READ_WRITE | ((d.type & CL_DEVICE_TYPE_CPU) != 0 ? CL_MEM_ALLOC_HOST_PTR : 0);
  cl_mem mem = rt.api.clCreateBuffer(d.context, flags, nbytes, nullptr, &err);
  if (err != CL_SUCCESS) return cl_error("clCreateBuffer", err);
  freed_buffers().allocated(mem);
  return static_cast<void*>(mem);
}

Status OpenclBackend::free(const BackendDevice&, void* ptr) noexcept {
  // Marked first: once released, another thread's clCreateBuffer may return the same address,
  // which a later mark would then refuse.
  freed_buffers().freed(ptr);
  DEVRT_CL_CHECK("clReleaseMemObject", runtime().api.clReleaseMemObject(static_cast<cl_mem>(ptr)));
  return Status();
}

Status OpenclBackend::copy(const CopyDesc& desc) noexcept {
  const Api& api = runtime().api;
  const auto kind = static_cast<std::int32_t>(OpenclBackend::kind);
  if (desc.src_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.src, "the source"));
  if (desc.dst_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.dst, "the destination"));
  if (desc.src_kind != kind) { // host -> device
    cl_command_queue queue = queue_of(state_of(*desc.dst_device), desc.stream);
    DEVRT_CL_CHECK("clEnqueueWriteBuffer",
                   api.clEnqueueWriteBuffer(queue, static_cast<cl_mem>(desc.dst), CL_FALSE, desc.dst_offset,
                                            desc.nbytes, static_cast<const std::byte*>(desc.src) + desc.src_offset, 0,
                                            nullptr, nullptr));
    return Status();
  }
  if (desc.dst_kind != kind) { // device -> host: blocking, so the bytes are there on return
    cl_command_queue queue = queue_of(state_of(*desc.src_device), desc.stream);
    DEVRT_CL_CHECK("clEnqueueReadBuffer",
                   api.clEnqueueReadBuffer(queue, static_cast<cl_mem>(const_cast<void*>(desc.src)), CL_TRUE,
                                           desc.src_offset, desc.nbytes,
                                           static_cast<std::byte*>(desc.dst) + desc.dst_offset, 0, nullptr, nullptr));
    return Status();
  }
  if (desc.src_device == desc.dst_device) {
    cl_command_queue queue = queue_of(state_of(*desc.dst_device), desc.stream);
    DEVRT_CL_CHECK("clEnqueueCopyBuffer",
                   api.clEnqueueCopyBuffer(queue, static_cast<cl_mem>(const_cast<void*>(desc.src)),
                                           static_cast<cl_mem>(desc.dst), desc.src_offset, desc.dst_offset, desc.nbytes,
                                           0, nullptr, nullptr));
    return Status();
  }
  // Two devices, two contexts: through the host, after the source's default stream.
  void* bounce = std::malloc(desc.nbytes);
  if (bounce == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for a bounce buffer");
  const char* call = "clEnqueueReadBuffer";
  cl_int code =
      api.clEnqueueReadBuffer(state_of(*desc.src_device).queue, static_cast<cl_mem>(const_cast<void*>(desc.src)),
                              CL_TRUE, desc.src_offset, desc.nbytes, bounce, 0, nullptr, nullptr);
  if (code == CL_SUCCESS) {
    call = "clEnqueueWriteBuffer";
    code = api.clEnqueueWriteBuffer(queue_of(state_of(*desc.dst_device), desc.stream), static_cast<cl_mem>(desc.dst),
                                    CL_TRUE, desc.dst_offset, desc.nbytes, bounce, 0, nullptr, nullptr);
  }
  std::free(bounce);
  DEVRT_CL_CHECK(call, code);
  return Status();
}

// ---- Streams and events ----------------------------------------------------------------------

Result<void*> OpenclBackend::stream_create(const BackendDevice& device) noexcept {
  const ClDevice& d = state_of(device);
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = runtime().api.clCreateCommandQueue(d.context, d.id, 0, &err);
  if (err != CL_SUCCESS) return cl_error("clCreateCommandQueue", err);
  return static_cast<void*>(queue);
}

Status OpenclBackend::stream_destroy(const BackendDevice&, void* stream) noexcept {
  const Api& api = runtime().api;
  auto queue = static_cast<cl_command_queue>(stream);
  // The queue is released even when its work failed: clReleaseCommandQueue waits for it.
  cl_int finished = api.clFinish(queue);
  DEVRT_CL_CHECK("clReleaseCommandQueue", api.clReleaseCommandQueue(queue));
  DEVRT_CL_CHECK("clFinish", finished);
  return Status();
}

Status OpenclBackend::stream_synchronize(const BackendDevice& device, void* stream) noexcept {
  DEVRT_CL_CHECK("clFinish", runtime().api.clFinish(queue_of(state_of(device), stream)));
  return Status();
}

Result<void*> OpenclBackend::event_create(const BackendDevice&) noexcept {
  auto* event = new (std::nothrow) ClEvent();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no memory for an event");
  return static_cast<void*>(event);
}

Status OpenclBackend::event_destroy(const BackendDevice&, void* handle) noexcept {
  auto* event = static_cast<ClEvent*>(handle);
  if (event->marker != nullptr) static_cast<void>(runtime().api.clReleaseEvent(event->marker));
  if (event->stream_marker != nullptr) static_cast<void>(runtime().api.clReleaseEvent(event->stream_marker));
  delete event;
  return Status();
}

Status OpenclBackend::event_record(const BackendDevice& device, void* handle, void* stream) noexcept {
  const Api& api = runtime().api;
  auto* event = static_cast<ClEvent*>(handle);
  cl_event marker = nullptr;
  DEVRT_CL_CHECK("clEnqueueMarkerWithWaitList",
                 api.clEnqueueMarkerWithWaitList(queue_of(state_of(device), stream), 0, nullptr, &marker));
  // Markers are only waited on after a flush has sent them to the device; one that was not sent
  // is not recorded (the event keeps its previous marker).
  cl_int flushed = api.clFlush(queue_of(state_of(device), stream));
  if (flushed != CL_SUCCESS) {
    static_cast<void>(api.clReleaseEvent(marker));
    return cl_error("clFlush", flushed);
  }
  cl_event stream_marker = nullptr;
  if (event->timed) {
    Result<cl_event> timed = timed_marker(api, state_of(device), marker);
    if (!timed.ok()) {
      static_cast<void>(api.clReleaseEvent(marker));
      return std::move(timed).status();
    }
    stream_marker = marker;
    marker = *timed;
  }
  cl_event old = nullptr, old_stream_marker = nullptr;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    old = event->marker;
    old_stream_marker = event->stream_marker;
    event->marker = marker;
    event->stream_marker = stream_marker;
  }
  if (old != nullptr) static_cast<void>(api.clReleaseEvent(old));
  if (old_stream_marker != nullptr) static_cast<void>(api.clReleaseEvent(old_stream_marker));
  return Status();
}

Result<void*> OpenclBackend::event_create_timed(const BackendDevice& device) noexcept {
  DEVRT_RETURN_IF_ERROR(profiling_queue(state_of(device)).status());
  auto* event = new (std::nothrow) ClEvent();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no memory for an event");
  event->timed = true;
  return static_cast<void*>(event);
}

Result<std::int64_t> OpenclBackend::event_elapsed(const BackendDevice&, void* start, void* end) noexcept {
  const Api& api = runtime().api;
  cl_ulong ends[2] = {0, 0};
  void* events[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    auto& event = *static_cast<ClEvent*>(events[i]);
    const char* which = i == 0 ? "start" : "end";
    if (!event.timed) return make_error(ErrorCode::invalid_argument, "the ", which, " event is not timed");
    cl_event reached = nullptr;
    DEVRT_ASSIGN_OR_RETURN(cl_event marker, retain_marker(api, event, &reached));
    if (marker == nullptr) return make_error(ErrorCode::invalid_argument, "the ", which, " event was never recorded");
    Status read = marker_end(api, marker, reached, which, ends[i]);
    static_cast<void>(api.clReleaseEvent(marker));
    static_cast<void>(api.clReleaseEvent(reached));
    DEVRT_RETURN_IF_ERROR(read);
  }
  return static_cast<std::int64_t>(ends[1] - ends[0]);
}

Status OpenclBackend::event_synchronize(const BackendDevice&, void* handle) noexcept {
  const Api& api = runtime().api;
  DEVRT_ASSIGN_OR_RETURN(cl_event marker, retain_marker(api, *static_cast<ClEvent*>(handle)));
  if (marker == nullptr) return Status();
  cl_int code = api.clWaitForEvents(1, &marker);
  static_cast<void>(api.clReleaseEvent(marker));
  DEVRT_CL_CHECK("clWaitForEvents", code);
  return Status();
}

Result<bool> OpenclBackend::event_query(const BackendDevice&, void* handle) noexcept {
  const Api& api = runtime().api;
  DEVRT_ASSIGN_OR_RETURN(cl_event marker, retain_marker(api, *static_cast<ClEvent*>(handle)));
  if (marker == nullptr) return true;
  cl_int state = CL_QUEUED;
  cl_int code = api.clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr);
  static_cast<void>(api.clReleaseEvent(marker));
  DEVRT_CL_CHECK("clGetEventInfo", code);
  if (state < 0) return cl_error("the recorded work", state);
  return state == CL_COMPLETE;
}

Status OpenclBackend::stream_wait_event(const BackendDevice& device, void* stream, void* handle) noexcept {
  const Api& api = runtime().api;
  DEVRT_ASSIGN_OR_RETURN(cl_event marker, retain_marker(api, *static_cast<ClEvent*>(handle)));
  if (marker == nullptr) return Status();
  cl_int code = api.clEnqueueBarrierWithWaitList(queue_of(state_of(device), stream), 1, &marker, nullptr);
  static_cast<void>(api.clReleaseEvent(marker));
  DEVRT_CL_CHECK("clEnqueueBarrierWithWaitList", code);
  return Status();
}

} // namespace devrt::opencl

DEVRT_REGISTER_BACKEND(opencl, devrt::opencl::OpenclBackend)
