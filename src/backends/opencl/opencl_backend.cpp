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

#include "dynamic_library.hpp"
#include "kernel_signature.hpp"
#include "lazy_runtime.hpp"
#include "opencl_api.hpp"

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

namespace {

// ---- Runtime state: loaded once, never torn down (drivers outlive static destructors) --------

struct ClDevice {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr; // the default stream
  std::string name, version, driver_version, c_version, extensions, platform_name;
  cl_device_type type = 0;
  std::size_t max_work_group_size = 0;
  std::size_t max_work_item_sizes[3] = {0, 0, 0};
  cl_ulong local_memory = 0;
  cl_ulong global_memory = 0;
  cl_ulong max_allocation = 0;
  cl_ulong global_cache = 0;
  cl_uint compute_units = 0;
  cl_uint clock_mhz = 0;
  cl_uint base_address_align_bits = 0;
  cl_uint image_pitch_alignment = 0;
  std::size_t preferred_multiple = 0;
};

struct Runtime {
  Status status;
  Api api;
  detail::DynamicLibrary library;
  std::vector<ClDevice> devices;
};

[[gnu::cold]] Status cl_error(const char* call, cl_int code) {
  return make_error(code == CL_OUT_OF_HOST_MEMORY || code == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                            code == CL_OUT_OF_RESOURCES
                        ? ErrorCode::out_of_memory
                        : ErrorCode::driver_error,
                    call, " failed: ", error_name(code), " (", code, ")");
}

#define DEVRT_CL_CHECK(call_text, expr)                                                                                \
  do {                                                                                                                 \
    cl_int devrt_cl_code = (expr);                                                                                     \
    if (devrt_cl_code != CL_SUCCESS) [[unlikely]]                                                                      \
      return cl_error(call_text, devrt_cl_code);                                                                       \
  } while (0)

std::string device_string(const Api& api, cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (api.clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (api.clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  text.resize(std::strlen(text.c_str()));
  return text;
}

template <class T>
T device_value(const Api& api, cl_device_id device, cl_device_info what) {
  T value{};
  if (api.clGetDeviceInfo(device, what, sizeof value, &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

Status discover(Runtime& rt) {
  std::string reason;
  if (!rt.library.open({"libOpenCL.so.1", "libOpenCL.so"}, reason)) {
    return make_error(ErrorCode::unavailable, "no OpenCL loader: ", reason);
  }
#define DEVRT_OPENCL_RESOLVE(name)                                                                                     \
  if (!rt.library.resolve(#name, rt.api.name)) {                                                                       \
    return make_error(ErrorCode::unavailable, rt.library.path(), " lacks ", #name,                                     \
                      " (an OpenCL 1.2 loader is needed)");                                                            \
  }
  DEVRT_OPENCL_SYMBOLS(DEVRT_OPENCL_RESOLVE)
#undef DEVRT_OPENCL_RESOLVE
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
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> ids(count);
    if (api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) continue;
    char platform_name[256] = {};
    static_cast<void>(
        api.clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name - 1, platform_name, nullptr));
    for (cl_device_id id : ids) {
      ClDevice d;
      d.platform = platform;
      d.id = id;
      d.platform_name = platform_name;
      cl_int err = CL_SUCCESS;
      d.context = api.clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
      if (err != CL_SUCCESS) continue;
      d.queue = api.clCreateCommandQueue(d.context, id, 0, &err);
      if (err != CL_SUCCESS) continue;
      d.name = device_string(api, id, CL_DEVICE_NAME);
      d.version = device_string(api, id, CL_DEVICE_VERSION);
      d.driver_version = device_string(api, id, CL_DRIVER_VERSION);
      d.c_version = device_string(api, id, CL_DEVICE_OPENCL_C_VERSION);
      d.extensions = device_string(api, id, CL_DEVICE_EXTENSIONS);
      d.type = device_value<cl_device_type>(api, id, CL_DEVICE_TYPE);
      d.max_work_group_size = device_value<std::size_t>(api, id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      static_cast<void>(api.clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof d.max_work_item_sizes,
                                            d.max_work_item_sizes, nullptr));
      d.local_memory = device_value<cl_ulong>(api, id, CL_DEVICE_LOCAL_MEM_SIZE);
      d.global_memory = device_value<cl_ulong>(api, id, CL_DEVICE_GLOBAL_MEM_SIZE);
      d.max_allocation = device_value<cl_ulong>(api, id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      d.global_cache = device_value<cl_ulong>(api, id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
      d.compute_units = device_value<cl_uint>(api, id, CL_DEVICE_MAX_COMPUTE_UNITS);
      d.clock_mhz = device_value<cl_uint>(api, id, CL_DEVICE_MAX_CLOCK_FREQUENCY);
      d.base_address_align_bits = device_value<cl_uint>(api, id, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
      d.image_pitch_alignment = device_value<cl_uint>(api, id, CL_DEVICE_IMAGE_PITCH_ALIGNMENT);
      // OpenCL 3.0's device-wide figure; older devices only report it per kernel.
      d.preferred_multiple = device_value<std::size_t>(api, id, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE);
      rt.devices.push_back(std::move(d));
    }
  }
  if (rt.devices.empty()) {
    return make_error(ErrorCode::unavailable, platform_count, " OpenCL platform(s) found but no usable device");
  }
  return Status();
}

Runtime& runtime() noexcept { return detail::lazy_runtime<Runtime, discover>(); }

ClDevice& device_of(std::int32_t id) noexcept { return runtime().devices[static_cast<std::size_t>(id)]; }

cl_command_queue queue_of(std::int32_t device, void* stream) noexcept {
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : device_of(device).queue;
}

// An event handle: the marker of the latest record(), replaced by the next one.
struct ClEvent {
  std::mutex mutex;
  cl_event marker = nullptr;
};

// A reference to the event's latest marker (nullptr when never recorded); release it after use.
cl_event retain_marker(const Api& api, ClEvent& event) {
  std::lock_guard<std::mutex> lock(event.mutex);
  if (event.marker != nullptr) static_cast<void>(api.clRetainEvent(event.marker));
  return event.marker;
}

// ---- Modules -------------------------------------------------------------------------------

struct ClFunction {
  cl_kernel kernel = nullptr;
  std::string name;
  detail::KernelSignature signature; // user-visible parameters (the __local one excluded)
  cl_uint total_args = 0;
  std::int32_t local_arg = -1; // index of the __local pointer parameter, if any
  std::size_t work_group_limit = 0;
  std::mutex mutex; // clSetKernelArg + enqueue are not thread-safe on one cl_kernel
};

struct ClModule {
  cl_program program = nullptr;
  std::mutex mutex;
  std::vector<std::unique_ptr<ClFunction>> functions;
};

// The DLPack scalar an OpenCL C type name stands for; false for vectors, structs and the like.
bool scalar_of(std::string_view type, detail::KernelParam& out) {
  struct Entry {
    std::string_view name;
    DataTypeCode code;
    std::uint8_t bits;
  };
  static constexpr Entry kTypes[] = {
      {"char", DataTypeCode::signed_int, 8},
      {"uchar", DataTypeCode::unsigned_int, 8},
      {"short", DataTypeCode::signed_int, 16},
      {"ushort", DataTypeCode::unsigned_int, 16},
      {"int", DataTypeCode::signed_int, 32},
      {"uint", DataTypeCode::unsigned_int, 32},
      {"long", DataTypeCode::signed_int, 64},
      {"ulong", DataTypeCode::unsigned_int, 64},
      {"half", DataTypeCode::floating, 16},
      {"float", DataTypeCode::floating, 32},
      {"double", DataTypeCode::floating, 64},
      {"unsigned char", DataTypeCode::unsigned_int, 8},
      {"unsigned short", DataTypeCode::unsigned_int, 16},
      {"unsigned int", DataTypeCode::unsigned_int, 32},
      {"unsigned long", DataTypeCode::unsigned_int, 64},
  };
  for (const Entry& e : kTypes) {
    if (e.name == type) {
      out = detail::KernelParam{detail::KernelParam::Kind::scalar, static_cast<std::uint8_t>(e.code), e.bits};
      return true;
    }
  }
  return false;
}

// Reads the kernel's parameters from clGetKernelArgInfo (available for programs built with
// -cl-kernel-arg-info; binaries may lack it).
void describe_kernel(const Api& api, ClFunction& f) {
  f.signature.known = true;
  for (cl_uint i = 0; i < f.total_args; ++i) {
    cl_kernel_arg_address_qualifier address = 0;
    if (api.clGetKernelArgInfo(f.kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address, nullptr) !=
        CL_SUCCESS) {
      f.signature = detail::KernelSignature();
      f.local_arg = -1;
      return;
    }
    if (address == CL_KERNEL_ARG_ADDRESS_LOCAL) {
      f.local_arg = static_cast<std::int32_t>(i);
      continue;
    }
    if (address == CL_KERNEL_ARG_ADDRESS_GLOBAL || address == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
      f.signature.add(detail::KernelParam{detail::KernelParam::Kind::buffer, 0, 0});
      continue;
    }
    char type[128] = {};
    static_cast<void>(api.clGetKernelArgInfo(f.kernel, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, nullptr));
    detail::KernelParam param;
    if (!scalar_of(type, param)) param = detail::KernelParam{detail::KernelParam::Kind::any_scalar, 0, 0};
    f.signature.add(param);
  }
}

void append_build_log(const Api& api, cl_program program, cl_device_id device, BuildLog& log) {
  std::size_t size = 0;
  if (api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return;
  std::string text(size, '\0');
  if (api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr) != CL_SUCCESS) {
    return;
  }
  text.resize(std::strlen(text.c_str()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  log.append(text);
}

// Sub-buffer origins must be multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN (given in bits).
std::size_t buffer_offset_alignment(const ClDevice& device) noexcept {
  return std::max<std::size_t>(device.base_address_align_bits / 8, 1);
}

// A buffer argument as a cl_mem: the allocation itself, or a sub-buffer for a non-zero offset
// (released by the caller once enqueued).
Status buffer_argument(const Api& api, const ClDevice& device, const devrt_kernel_arg& arg, std::uint32_t index,
                       cl_mem& out, bool& owned) {
  owned = false;
  out = static_cast<cl_mem>(arg.buffer);
  if (arg.offset == 0) return Status();
  const std::size_t align = buffer_offset_alignment(device);
  if (arg.offset % align != 0 || arg.size == 0) {
    return make_error(ErrorCode::invalid_argument, "argument ", index, ": offset ", arg.offset,
                      arg.size == 0 ? " leaves no bytes" : " is not a multiple of the device's ",
                      arg.size == 0 ? 0 : align,
                      arg.size == 0 ? "" : "-byte base address alignment (CL_DEVICE_MEM_BASE_ADDR_ALIGN)");
  }
  cl_buffer_region region{arg.offset, arg.size};
  cl_int err = CL_SUCCESS;
  out = api.clCreateSubBuffer(static_cast<cl_mem>(arg.buffer), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region,
                              &err);
  if (err != CL_SUCCESS) return cl_error("clCreateSubBuffer", err);
  owned = true;
  return Status();
}

} // namespace

// ---- Discovery -------------------------------------------------------------------------------

Status OpenclBackend::availability() noexcept { return runtime().status; }

Result<std::int32_t> OpenclBackend::device_count() noexcept {
  const Runtime& rt = runtime();
  return rt.status.ok() ? static_cast<std::int32_t>(rt.devices.size()) : 0;
}

Result<AttributeValue> OpenclBackend::get_attribute(std::int32_t device, Attribute attribute) noexcept {
  const ClDevice& d = device_of(device);
  auto integer = [](auto value) { return AttributeValue(static_cast<std::int64_t>(value)); };
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_threads_per_block: return integer(d.max_work_group_size);
  case Attribute::warp_size: return integer(d.preferred_multiple != 0 ? d.preferred_multiple : 1);
  case Attribute::max_shared_memory_per_block: return integer(d.local_memory);
  case Attribute::device_name: return AttributeValue(d.name);
  case Attribute::max_clock_rate: return integer(std::int64_t{d.clock_mhz} * 1000);
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
  case Attribute::image_pitch_alignment: return integer(d.image_pitch_alignment);
  case Attribute::buffer_offset_alignment: return integer(buffer_offset_alignment(d));
  default: return AttributeValue();
  }
}

Result<Target> OpenclBackend::detect_target(std::int32_t device) noexcept {
  const ClDevice& d = device_of(device);
  auto has_extension = [&](std::string_view name) {
    std::string_view all = d.extensions;
    std::size_t pos = 0;
    while ((pos = all.find(name, pos)) != std::string_view::npos) {
      bool starts = pos == 0 || all[pos - 1] == ' ';
      bool ends = pos + name.size() == all.size() || all[pos + name.size()] == ' ';
      if (starts && ends) return true;
      pos += name.size();
    }
    return false;
  };
  std::vector<std::string> extensions;
  std::string_view all = d.extensions;
  while (!all.empty()) {
    std::size_t space = all.find(' ');
    std::string_view item = all.substr(0, space);
    if (!item.empty()) extensions.emplace_back(item);
    if (space == std::string_view::npos) break;
    all.remove_prefix(space + 1);
  }
  std::string c_version = d.c_version;
  int major = 0, minor = 0;
  if (std::sscanf(d.c_version.c_str(), "OpenCL C %d.%d", &major, &minor) == 2) {
    c_version = std::to_string(major) + "." + std::to_string(minor);
  }
  const char* type = (d.type & CL_DEVICE_TYPE_GPU) != 0           ? "gpu"
                     : (d.type & CL_DEVICE_TYPE_ACCELERATOR) != 0 ? "accelerator"
                     : (d.type & CL_DEVICE_TYPE_CPU) != 0         ? "cpu"
                                                                  : "other";
  Target target("opencl");
  target.set("keys", std::vector<std::string>{"opencl", "gpu"});
  target.set("device", std::string(type));
  target.set("device_name", d.name);
  target.set("max_threads_per_block", static_cast<std::int64_t>(d.max_work_group_size));
  target.set("max_num_threads", static_cast<std::int64_t>(d.max_work_group_size));
  target.set("max_shared_memory_per_block", static_cast<std::int64_t>(d.local_memory));
  target.set("thread_warp_size", static_cast<std::int64_t>(d.preferred_multiple != 0 ? d.preferred_multiple : 1));
  target.set("max_block_size_x", static_cast<std::int64_t>(d.max_work_item_sizes[0]));
  target.set("max_block_size_y", static_cast<std::int64_t>(d.max_work_item_sizes[1]));
  target.set("max_block_size_z", static_cast<std::int64_t>(d.max_work_item_sizes[2]));
  target.set("opencl_c_version", c_version);
  target.set("supports_float16", has_extension("cl_khr_fp16"));
  target.set("supports_float64", has_extension("cl_khr_fp64"));
  target.set("supports_subgroups", has_extension("cl_khr_subgroups") || has_extension("cl_intel_subgroups"));
  target.set("supports_int64_atomics", has_extension("cl_khr_int64_base_atomics"));
  target.set("extensions", std::move(extensions));
  return target;
}

// ---- Memory ----------------------------------------------------------------------------------

Result<void*> OpenclBackend::allocate(std::int32_t device, std::size_t nbytes, std::size_t) noexcept {
  const Runtime& rt = runtime();
  const ClDevice& d = device_of(device);
  if (nbytes > d.max_allocation) {
    return make_error(ErrorCode::out_of_memory, "exceeds the device's largest allocation of ", d.max_allocation,
                      " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  cl_int err = CL_SUCCESS;
  cl_mem mem = rt.api.clCreateBuffer(d.context, CL_MEM_READ_WRITE, nbytes, nullptr, &err);
  if (err != CL_SUCCESS) return cl_error("clCreateBuffer", err);
  return static_cast<void*>(mem);
}

Status OpenclBackend::free(std::int32_t, void* ptr) noexcept {
  DEVRT_CL_CHECK("clReleaseMemObject", runtime().api.clReleaseMemObject(static_cast<cl_mem>(ptr)));
  return Status();
}

Status OpenclBackend::copy(const CopyDesc& desc) noexcept {
  const Api& api = runtime().api;
  const auto kind = static_cast<std::int32_t>(DeviceKind::opencl);
  if (desc.src_kind != kind) { // host -> device
    cl_command_queue queue = queue_of(desc.dst_device_id, desc.stream);
    DEVRT_CL_CHECK("clEnqueueWriteBuffer",
                   api.clEnqueueWriteBuffer(queue, static_cast<cl_mem>(desc.dst), CL_FALSE, desc.dst_offset,
                                            desc.nbytes, static_cast<const std::byte*>(desc.src) + desc.src_offset, 0,
                                            nullptr, nullptr));
    return Status();
  }
  if (desc.dst_kind != kind) { // device -> host: blocking, so the bytes are there on return
    cl_command_queue queue = queue_of(desc.src_device_id, desc.stream);
    DEVRT_CL_CHECK("clEnqueueReadBuffer",
                   api.clEnqueueReadBuffer(queue, static_cast<cl_mem>(const_cast<void*>(desc.src)), CL_TRUE,
                                           desc.src_offset, desc.nbytes,
                                           static_cast<std::byte*>(desc.dst) + desc.dst_offset, 0, nullptr, nullptr));
    return Status();
  }
  if (desc.src_device_id == desc.dst_device_id) {
    cl_command_queue queue = queue_of(desc.dst_device_id, desc.stream);
    DEVRT_CL_CHECK("clEnqueueCopyBuffer",
                   api.clEnqueueCopyBuffer(queue, static_cast<cl_mem>(const_cast<void*>(desc.src)),
                                           static_cast<cl_mem>(desc.dst), desc.src_offset, desc.dst_offset, desc.nbytes,
                                           0, nullptr, nullptr));
    return Status();
  }
  // Two devices, two contexts: through the host, after the source's default stream.
  void* bounce = std::malloc(desc.nbytes);
  if (bounce == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for a bounce buffer");
  cl_int code =
      api.clEnqueueReadBuffer(device_of(desc.src_device_id).queue, static_cast<cl_mem>(const_cast<void*>(desc.src)),
                              CL_TRUE, desc.src_offset, desc.nbytes, bounce, 0, nullptr, nullptr);
  if (code == CL_SUCCESS) {
    code = api.clEnqueueWriteBuffer(queue_of(desc.dst_device_id, desc.stream), static_cast<cl_mem>(desc.dst), CL_TRUE,
                                    desc.dst_offset, desc.nbytes, bounce, 0, nullptr, nullptr);
  }
  std::free(bounce);
  DEVRT_CL_CHECK("cross-device copy", code);
  return Status();
}

// ---- Streams and events ----------------------------------------------------------------------

Result<void*> OpenclBackend::stream_create(std::int32_t device) noexcept {
  const ClDevice& d = device_of(device);
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = runtime().api.clCreateCommandQueue(d.context, d.id, 0, &err);
  if (err != CL_SUCCESS) return cl_error("clCreateCommandQueue", err);
  return static_cast<void*>(queue);
}

Status OpenclBackend::stream_destroy(std::int32_t, void* stream) noexcept {
  const Api& api = runtime().api;
  auto queue = static_cast<cl_command_queue>(stream);
  DEVRT_CL_CHECK("clFinish", api.clFinish(queue));
  DEVRT_CL_CHECK("clReleaseCommandQueue", api.clReleaseCommandQueue(queue));
  return Status();
}

Status OpenclBackend::stream_synchronize(std::int32_t device, void* stream) noexcept {
  DEVRT_CL_CHECK("clFinish", runtime().api.clFinish(queue_of(device, stream)));
  return Status();
}

Result<void*> OpenclBackend::event_create(std::int32_t) noexcept {
  auto* event = new (std::nothrow) ClEvent();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no memory for an event");
  return static_cast<void*>(event);
}

Status OpenclBackend::event_destroy(std::int32_t, void* handle) noexcept {
  auto* event = static_cast<ClEvent*>(handle);
  if (event->marker != nullptr) static_cast<void>(runtime().api.clReleaseEvent(event->marker));
  delete event;
  return Status();
}

Status OpenclBackend::event_record(std::int32_t device, void* handle, void* stream) noexcept {
  const Api& api = runtime().api;
  auto* event = static_cast<ClEvent*>(handle);
  cl_event marker = nullptr;
  DEVRT_CL_CHECK("clEnqueueMarkerWithWaitList",
                 api.clEnqueueMarkerWithWaitList(queue_of(device, stream), 0, nullptr, &marker));
  // Markers are only waited on after a flush has sent them to the device.
  DEVRT_CL_CHECK("clFlush", api.clFlush(queue_of(device, stream)));
  cl_event old = nullptr;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    old = event->marker;
    event->marker = marker;
  }
  if (old != nullptr) static_cast<void>(api.clReleaseEvent(old));
  return Status();
}

Status OpenclBackend::event_synchronize(std::int32_t, void* handle) noexcept {
  const Api& api = runtime().api;
  cl_event marker = retain_marker(api, *static_cast<ClEvent*>(handle));
  if (marker == nullptr) return Status();
  cl_int code = api.clWaitForEvents(1, &marker);
  static_cast<void>(api.clReleaseEvent(marker));
  DEVRT_CL_CHECK("clWaitForEvents", code);
  return Status();
}

Result<bool> OpenclBackend::event_query(std::int32_t, void* handle) noexcept {
  const Api& api = runtime().api;
  cl_event marker = retain_marker(api, *static_cast<ClEvent*>(handle));
  if (marker == nullptr) return true;
  cl_int state = CL_QUEUED;
  cl_int code = api.clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr);
  static_cast<void>(api.clReleaseEvent(marker));
  DEVRT_CL_CHECK("clGetEventInfo", code);
  if (state < 0) return cl_error("the recorded work", state);
  return state == CL_COMPLETE;
}

Status OpenclBackend::stream_wait_event(std::int32_t device, void* stream, void* handle) noexcept {
  const Api& api = runtime().api;
  cl_event marker = retain_marker(api, *static_cast<ClEvent*>(handle));
  if (marker == nullptr) return Status();
  cl_int code = api.clEnqueueBarrierWithWaitList(queue_of(device, stream), 1, &marker, nullptr);
  static_cast<void>(api.clReleaseEvent(marker));
  DEVRT_CL_CHECK("clEnqueueBarrierWithWaitList", code);
  return Status();
}

// ---- Modules ---------------------------------------------------------------------------------

Result<void*> OpenclBackend::module_load(std::int32_t device, ModuleFormat format, std::span<const std::byte> data,
                                         const char* options, BuildLog& log) noexcept {
  const Api& api = runtime().api;
  const ClDevice& d = device_of(device);
  cl_int err = CL_SUCCESS;
  cl_program program = nullptr;
  std::string build_options = options;
  if (format == ModuleFormat::opencl_c) {
    const char* source = reinterpret_cast<const char*>(data.data());
    std::size_t length = data.size();
    program = api.clCreateProgramWithSource(d.context, 1, &source, &length, &err);
    if (err != CL_SUCCESS) return cl_error("clCreateProgramWithSource", err);
    // Parameter names and qualifiers, so that launches can be checked and __local found.
    build_options += " -cl-kernel-arg-info";
  } else if (format == ModuleFormat::opencl_binary) {
    const auto* binary = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t length = data.size();
    cl_int binary_status = CL_SUCCESS;
    program = api.clCreateProgramWithBinary(d.context, 1, &d.id, &length, &binary, &binary_status, &err);
    if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
      if (program != nullptr) static_cast<void>(api.clReleaseProgram(program));
      return make_error(ErrorCode::invalid_argument, "clCreateProgramWithBinary refused the ", data.size(),
                        "-byte binary: ", error_name(err != CL_SUCCESS ? err : binary_status));
    }
  } else {
    return make_error(ErrorCode::unsupported, "the opencl backend loads opencl_c and opencl_binary modules, not ",
                      module_format_name(format));
  }
  err = api.clBuildProgram(program, 1, &d.id, build_options.c_str(), nullptr, nullptr);
  append_build_log(api, program, d.id, log);
  if (err != CL_SUCCESS) {
    static_cast<void>(api.clReleaseProgram(program));
    return cl_error("clBuildProgram", err);
  }
  auto* module = new (std::nothrow) ClModule();
  if (module == nullptr) {
    static_cast<void>(api.clReleaseProgram(program));
    return make_error(ErrorCode::out_of_memory, "no memory for a module");
  }
  module->program = program;
  return static_cast<void*>(module);
}

Status OpenclBackend::module_unload(std::int32_t, void* handle) noexcept {
  const Api& api = runtime().api;
  auto* module = static_cast<ClModule*>(handle);
  for (const auto& function : module->functions) static_cast<void>(api.clReleaseKernel(function->kernel));
  cl_int code = api.clReleaseProgram(module->program);
  delete module;
  DEVRT_CL_CHECK("clReleaseProgram", code);
  return Status();
}

Result<void*> OpenclBackend::module_function(std::int32_t device, void* handle, const char* name) noexcept {
  const Api& api = runtime().api;
  auto* module = static_cast<ClModule*>(handle);
  std::lock_guard<std::mutex> lock(module->mutex);
  for (const auto& function : module->functions) {
    if (function->name == name) return static_cast<void*>(function.get());
  }
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = api.clCreateKernel(module->program, name, &err);
  if (err == CL_INVALID_KERNEL_NAME) {
    return make_error(ErrorCode::not_found, "the program has no kernel '", name, "'");
  }
  if (err != CL_SUCCESS) return cl_error("clCreateKernel", err);
  auto function = std::make_unique<ClFunction>();
  function->kernel = kernel;
  function->name = name;
  static_cast<void>(
      api.clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof function->total_args, &function->total_args, nullptr));
  static_cast<void>(api.clGetKernelWorkGroupInfo(kernel, device_of(device).id, CL_KERNEL_WORK_GROUP_SIZE,
                                                 sizeof function->work_group_limit, &function->work_group_limit,
                                                 nullptr));
  describe_kernel(api, *function);
  void* result = function.get();
  module->functions.push_back(std::move(function));
  return result;
}

Status OpenclBackend::launch(std::int32_t device, void* handle, const LaunchDesc& desc) noexcept {
  const Api& api = runtime().api;
  const ClDevice& d = device_of(device);
  auto& f = *static_cast<ClFunction*>(handle);
  DEVRT_RETURN_IF_ERROR(detail::check_kernel_args(f.name, f.signature, desc.args, desc.num_args));
  // Where the dynamic local memory goes: the __local parameter, or (no argument info) the one
  // parameter the launch did not fill.
  std::int32_t local_arg = f.local_arg;
  if (!f.signature.known && desc.dynamic_shared_bytes > 0 && f.total_args == desc.num_args + 1) {
    local_arg = static_cast<std::int32_t>(desc.num_args);
  }
  std::uint32_t expected = f.total_args - (local_arg >= 0 ? 1 : 0);
  if (desc.num_args != expected) {
    return make_error(ErrorCode::invalid_argument, "kernel '", f.name, "' takes ", expected,
                      " arguments but was given ", desc.num_args);
  }
  if (local_arg >= 0 && desc.dynamic_shared_bytes == 0) {
    return make_error(ErrorCode::invalid_argument, "kernel '", f.name,
                      "' has a __local pointer parameter: give dynamic_shared_bytes > 0");
  }
  if (local_arg < 0 && desc.dynamic_shared_bytes > 0) {
    return make_error(ErrorCode::invalid_argument, "kernel '", f.name,
                      "' has no __local pointer parameter to receive dynamic_shared_bytes");
  }
  if (desc.dynamic_shared_bytes > d.local_memory) {
    return make_error(ErrorCode::invalid_argument, desc.dynamic_shared_bytes,
                      " bytes of local memory exceed max_shared_memory_per_block ", d.local_memory);
  }
  std::uint64_t threads = std::uint64_t{desc.block[0]} * desc.block[1] * desc.block[2];
  std::size_t limit = f.work_group_limit != 0 ? f.work_group_limit : d.max_work_group_size;
  for (int i = 0; i < 3; ++i) {
    if (desc.block[i] > d.max_work_item_sizes[i]) {
      return make_error(ErrorCode::invalid_argument, "block dimension ", i, " of ", desc.block[i],
                        " exceeds max_thread_dimensions ", d.max_work_item_sizes[i]);
    }
  }
  if (threads > limit) {
    return make_error(ErrorCode::invalid_argument, "a block of ", threads, " threads exceeds max_threads_per_block ",
                      limit, " for this kernel");
  }
  std::lock_guard<std::mutex> lock(f.mutex);
  cl_mem owned[kMaxKernelArgs];
  std::uint32_t owned_count = 0;
  Status status;
  cl_uint index = 0;
  for (std::uint32_t i = 0; i < desc.num_args && status.ok(); ++i, ++index) {
    if (static_cast<std::int32_t>(index) == local_arg) {
      cl_int code = api.clSetKernelArg(f.kernel, index, desc.dynamic_shared_bytes, nullptr);
      if (code != CL_SUCCESS) status = cl_error("clSetKernelArg(__local)", code);
      ++index;
      if (!status.ok()) break;
    }
    const devrt_kernel_arg& arg = desc.args[i];
    cl_int code = CL_SUCCESS;
    if (arg.kind == DEVRT_ARG_BUFFER) {
      cl_mem mem = nullptr;
      bool is_owned = false;
      status = buffer_argument(api, d, arg, i, mem, is_owned);
      if (!status.ok()) break;
      if (is_owned) owned[owned_count++] = mem;
      code = api.clSetKernelArg(f.kernel, index, sizeof(cl_mem), &mem);
    } else {
      code = api.clSetKernelArg(f.kernel, index, arg.type_bits / 8u, arg.value.bytes);
    }
    if (code != CL_SUCCESS) {
      status = make_error(code == CL_INVALID_ARG_SIZE ? ErrorCode::invalid_argument : ErrorCode::driver_error,
                          "clSetKernelArg(argument ", i, ") failed: ", error_name(code), " (", code, ")");
    }
  }
  if (status.ok() && static_cast<std::int32_t>(index) == local_arg) {
    cl_int code = api.clSetKernelArg(f.kernel, index, desc.dynamic_shared_bytes, nullptr);
    if (code != CL_SUCCESS) status = cl_error("clSetKernelArg(__local)", code);
  }
  if (status.ok()) {
    std::size_t global[3], local[3];
    for (int i = 0; i < 3; ++i) {
      global[i] = std::size_t{desc.grid[i]} * desc.block[i];
      local[i] = desc.block[i];
    }
    cl_uint dims = desc.grid[2] * desc.block[2] > 1 ? 3 : desc.grid[1] * desc.block[1] > 1 ? 2 : 1;
    cl_int code = api.clEnqueueNDRangeKernel(queue_of(device, desc.stream), f.kernel, dims, nullptr, global, local, 0,
                                             nullptr, nullptr);
    if (code != CL_SUCCESS) status = cl_error("clEnqueueNDRangeKernel", code);
  }
  for (std::uint32_t i = 0; i < owned_count; ++i) static_cast<void>(api.clReleaseMemObject(owned[i]));
  return status;
}

Result<ModuleBinary> OpenclBackend::module_binary(std::int32_t, void* handle) noexcept {
  const Api& api = runtime().api;
  auto* module = static_cast<ClModule*>(handle);
  std::size_t size = 0;
  DEVRT_CL_CHECK("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)",
                 api.clGetProgramInfo(module->program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
  if (size == 0) return make_error(ErrorCode::unsupported, "the driver returned an empty program binary");
  ModuleBinary binary;
  binary.format = ModuleFormat::opencl_binary;
  binary.bytes.resize(size);
  unsigned char* pointer = binary.bytes.data();
  DEVRT_CL_CHECK("clGetProgramInfo(CL_PROGRAM_BINARIES)",
                 api.clGetProgramInfo(module->program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr));
  return binary;
}

} // namespace devrt::opencl

DEVRT_REGISTER_BACKEND(opencl, devrt::opencl::OpenclBackend)
