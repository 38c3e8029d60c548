// SPDX-License-Identifier: Apache-2.0
// OpenCL programs, kernels and launches.
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/gpu_launch.hpp"
#include "core/kernel_signature.hpp"
#include "opencl_backend.hpp"
#include "opencl_state.hpp"
#include "support/fault_injection.hpp"

namespace devrt::opencl {
namespace {

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

// Reads the kernel's parameters from clGetKernelArgInfo. A program without argument information
// (a binary built without -cl-kernel-arg-info) leaves the signature unknown; any other failure is
// the call's error, and nothing is cached.
Status describe_kernel(const Api& api, ClFunction& f) {
  f.signature.known = true;
  for (cl_uint i = 0; i < f.total_args; ++i) {
    cl_kernel_arg_address_qualifier address = 0;
    cl_int code =
        api.clGetKernelArgInfo(f.kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address, nullptr);
    if (code == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) {
      f.signature = detail::KernelSignature();
      f.local_arg = -1;
      return Status();
    }
    DEVRT_CL_CHECK("clGetKernelArgInfo(CL_KERNEL_ARG_ADDRESS_QUALIFIER)", code);
    if (address == CL_KERNEL_ARG_ADDRESS_LOCAL) {
      f.local_arg = static_cast<std::int32_t>(i);
      continue;
    }
    char type[128] = {};
    DEVRT_CL_CHECK("clGetKernelArgInfo(CL_KERNEL_ARG_TYPE_NAME)",
                   api.clGetKernelArgInfo(f.kernel, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, nullptr));
    // Images are global objects too: image2d_t and its kin take a texture.
    if (std::string_view(type).starts_with("image")) {
      f.signature.add(detail::KernelParam{detail::KernelParam::Kind::texture, 0, 0});
      continue;
    }
    if (address == CL_KERNEL_ARG_ADDRESS_GLOBAL || address == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
      f.signature.add(detail::KernelParam{detail::KernelParam::Kind::buffer, 0, 0});
      continue;
    }
    // A typedef or a vector: a scalar argument of a size only clSetKernelArg can check.
    detail::KernelParam param;
    if (!scalar_of(type, param)) param = detail::KernelParam{detail::KernelParam::Kind::any_scalar, 0, 0};
    f.signature.add(param);
  }
  return Status();
}

Status describe_function(const Api& api, const ClDevice& device, ClFunction& f) {
  DEVRT_CL_CHECK("clGetKernelInfo(CL_KERNEL_NUM_ARGS)",
                 api.clGetKernelInfo(f.kernel, CL_KERNEL_NUM_ARGS, sizeof f.total_args, &f.total_args, nullptr));
  DEVRT_CL_CHECK("clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)",
                 api.clGetKernelWorkGroupInfo(f.kernel, device.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof f.work_group_limit,
                                              &f.work_group_limit, nullptr));
  return describe_kernel(api, f);
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

// A buffer argument as a cl_mem: the allocation itself, or a sub-buffer for a non-zero offset
// (released by the caller once enqueued).
Status buffer_argument(const Api& api, const ClDevice& device, const devrt_kernel_arg& arg, std::uint32_t index,
                       cl_mem& out, bool& owned) {
  owned = false;
  out = static_cast<cl_mem>(arg.buffer);
  DEVRT_RETURN_IF_ERROR(freed_buffers().check(arg.buffer, "", index));
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

// ---- Modules ---------------------------------------------------------------------------------

Result<void*> OpenclBackend::module_load(const BackendDevice& device, ModuleFormat format,
                                         std::span<const std::byte> data, const char* options, BuildLog& log) noexcept {
  const Api& api = runtime().api;
  const ClDevice& d = state_of(device);
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
      cl_int code = err != CL_SUCCESS ? err : binary_status;
      // A binary the device cannot take is the caller's; anything else is the driver's.
      if (code != CL_INVALID_BINARY && code != CL_INVALID_VALUE) return cl_error("clCreateProgramWithBinary", code);
      return make_error(ErrorCode::invalid_argument, "clCreateProgramWithBinary refused the ", data.size(),
                        "-byte binary: ", error_name(code), " (", code, ")");
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

Status OpenclBackend::module_unload(const BackendDevice&, void* handle) noexcept {
  const Api& api = runtime().api;
  auto* module = static_cast<ClModule*>(handle);
  for (const auto& function : module->functions) static_cast<void>(api.clReleaseKernel(function->kernel));
  cl_int code = api.clReleaseProgram(module->program);
  delete module;
  DEVRT_CL_CHECK("clReleaseProgram", code);
  return Status();
}

Result<void*> OpenclBackend::module_function(const BackendDevice& device, void* handle, const char* name) noexcept {
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
  auto function = std::unique_ptr<ClFunction>(new (std::nothrow) ClFunction());
  if (function == nullptr) {
    static_cast<void>(api.clReleaseKernel(kernel));
    return make_error(ErrorCode::out_of_memory, "no memory for a kernel");
  }
  function->kernel = kernel;
  function->name = name;
  // A kernel is cached only once everything about it is known.
  Status described = describe_function(api, state_of(device), *function);
  if (!described.ok()) {
    static_cast<void>(api.clReleaseKernel(kernel));
    return described;
  }
  void* result = function.get();
  module->functions.push_back(std::move(function));
  return result;
}

namespace {

// Checks a launch against the kernel and the device, and says which parameter receives the
// dynamic local memory: the __local one, or (without argument info) the one the launch did not
// fill; -1 for none.
Result<std::int32_t> check_launch(const ClFunction& f, const ClDevice& d, const LaunchDesc& desc) {
  DEVRT_RETURN_IF_ERROR(detail::check_kernel_args(f.name, f.signature, desc.args, desc.num_args));
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
  // OpenCL bounds the global size by size_t only: no grid limit of its own.
  constexpr std::uint32_t kNoGridLimit[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  DEVRT_RETURN_IF_ERROR(detail::check_gpu_extents(
      desc, detail::GpuLimits::from(d.max_work_item_sizes, kNoGridLimit,
                                    f.work_group_limit != 0 ? f.work_group_limit : d.max_work_group_size)));
  return local_arg;
}

// The sub-buffers a launch created for offset arguments, released once it is enqueued.
struct OwnedBuffers {
  explicit OwnedBuffers(const Api& library) noexcept : api(library) {}
  OwnedBuffers(const OwnedBuffers&) = delete;
  OwnedBuffers& operator=(const OwnedBuffers&) = delete;
  const Api& api;
  cl_mem buffers[kMaxKernelArgs];
  std::uint32_t count = 0;
  ~OwnedBuffers() {
    for (std::uint32_t i = 0; i < count; ++i) static_cast<void>(api.clReleaseMemObject(buffers[i]));
  }
};

// Sets every argument of `kernel` (a function's, or a graph's copy of it), the __local one at
// `local_arg`. Caller holds the function's mutex when it is the function's.
Status set_arguments(cl_kernel kernel, const ClDevice& d, const LaunchDesc& desc, std::int32_t local_arg,
                     OwnedBuffers& owned) {
  const Api& api = owned.api;
  cl_uint index = 0;
  for (std::uint32_t i = 0; i <= desc.num_args; ++i, ++index) {
    if (static_cast<std::int32_t>(index) == local_arg) {
      DEVRT_CL_CHECK("clSetKernelArg(__local)", api.clSetKernelArg(kernel, index, desc.dynamic_shared_bytes, nullptr));
      ++index;
    }
    if (i == desc.num_args) break;
    const devrt_kernel_arg& arg = desc.args[i];
    cl_int code = CL_SUCCESS;
    if (arg.kind == DEVRT_ARG_BUFFER) {
      cl_mem mem = nullptr;
      bool is_owned = false;
      DEVRT_RETURN_IF_ERROR(buffer_argument(api, d, arg, i, mem, is_owned));
      if (is_owned) owned.buffers[owned.count++] = mem;
      code = api.clSetKernelArg(kernel, index, sizeof(cl_mem), &mem);
    } else if (arg.kind == DEVRT_ARG_TEXTURE) {
      auto* image = static_cast<cl_mem>(arg.buffer);
      code = api.clSetKernelArg(kernel, index, sizeof(cl_mem), &image);
    } else {
      code = api.clSetKernelArg(kernel, index, arg.type_bits / 8u, arg.value.bytes);
    }
    if (code != CL_SUCCESS) {
      return make_error(code == CL_INVALID_ARG_SIZE ? ErrorCode::invalid_argument : ErrorCode::driver_error,
                        "clSetKernelArg(argument ", i, ") failed: ", error_name(code), " (", code, ")");
    }
  }
  return Status();
}

} // namespace

Status OpenclBackend::launch(const BackendDevice& device, void* handle, const LaunchDesc& desc) noexcept {
  const Api& api = runtime().api;
  const ClDevice& d = state_of(device);
  auto& f = *static_cast<ClFunction*>(handle);
  DEVRT_ASSIGN_OR_RETURN(std::int32_t local_arg, check_launch(f, d, desc));
  std::lock_guard<std::mutex> lock(f.mutex);
  OwnedBuffers owned(api);
  DEVRT_RETURN_IF_ERROR(set_arguments(f.kernel, d, desc, local_arg, owned));
  std::size_t global[3], local[3];
  for (int i = 0; i < 3; ++i) {
    global[i] = std::size_t{desc.grid[i]} * desc.block[i];
    local[i] = desc.block[i];
  }
  cl_uint dims = desc.grid[2] * desc.block[2] > 1 ? 3 : desc.grid[1] * desc.block[1] > 1 ? 2 : 1;
  DEVRT_CL_CHECK("clEnqueueNDRangeKernel",
                 api.clEnqueueNDRangeKernel(queue_of(state_of(device), desc.stream), f.kernel, dims, nullptr, global,
                                            local, 0, nullptr, nullptr));
  return Status();
}

Result<ModuleBinary> OpenclBackend::module_binary(const BackendDevice&, void* handle) noexcept {
  const Api& api = runtime().api;
  auto* module = static_cast<ClModule*>(handle);
  std::size_t size = 0;
  DEVRT_CL_CHECK("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)",
                 api.clGetProgramInfo(module->program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
  if (size == 0) return make_error(ErrorCode::unsupported, "the driver returned an empty program binary");
  ModuleBinary binary;
  binary.format = ModuleFormat::opencl_binary;
  binary.bytes.resize(size);
  auto* pointer = reinterpret_cast<unsigned char*>(binary.bytes.data());
  DEVRT_CL_CHECK("clGetProgramInfo(CL_PROGRAM_BINARIES)",
                 api.clGetProgramInfo(module->program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr));
  return binary;
}

// ---- Graphs: cl_khr_command_buffer ------------------------------------------------------------

namespace {

struct ClGraph {
  const CommandBufferApi* api = nullptr; // the device's
  cl_command_buffer_khr commands = nullptr;
  std::vector<cl_mem> sub_buffers; // offset arguments, released with the graph
  std::vector<cl_kernel> kernels;  // one per launch, armed once
  std::mutex mutex;
  std::vector<std::pair<cl_command_queue, cl_event>> last_replay; // per queue, when sub_buffers exist
};

// Whether the device bakes graphs: the extension, replays that may overlap (simultaneous use),
// and no queue property required that devrt's in-order queues lack; `out` its functions.
Status resolve_command_buffers(const Api& api, ClDevice& d) {
  if (d.extensions.find("cl_khr_command_buffer") == std::string::npos) {
    return make_error(ErrorCode::unsupported, "the device lacks cl_khr_command_buffer");
  }
  cl_device_command_buffer_capabilities_khr capabilities = 0;
  cl_command_queue_properties required = 0;
  DEVRT_CL_CHECK("clGetDeviceInfo(CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR)",
                 api.clGetDeviceInfo(d.id, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof capabilities,
                                     &capabilities, nullptr));
  DEVRT_CL_CHECK("clGetDeviceInfo(CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR)",
                 api.clGetDeviceInfo(d.id, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof required,
                                     &required, nullptr));
  if ((capabilities & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) == 0 || required != 0) {
    return make_error(ErrorCode::unsupported, "the device's command buffers cannot overlap replays");
  }
  using GetAddress = void* (*)(cl_platform_id, const char*);
  GetAddress get = nullptr;
  if (!runtime().library.resolve("clGetExtensionFunctionAddressForPlatform", get) || get == nullptr) {
    return make_error(ErrorCode::unsupported, "clGetExtensionFunctionAddressForPlatform is missing");
  }
  CommandBufferApi& out = d.command_buffers;
  bool complete = true;
#define DEVRT_OPENCL_TAKE(name)                                                                                        \
  {                                                                                                                    \
    void* address = get(d.platform, #name);                                                                            \
    std::memcpy(&out.name, &address, sizeof address);                                                                  \
    complete = complete && address != nullptr;                                                                         \
  }
  DEVRT_OPENCL_COMMAND_BUFFER_SYMBOLS(DEVRT_OPENCL_TAKE)
#undef DEVRT_OPENCL_TAKE
  if (!complete) {
    return make_error(ErrorCode::unsupported, "the platform does not resolve cl_khr_command_buffer's functions");
  }
  DEVRT_FAULT_WRAP_SYMBOLS("opencl", out, DEVRT_OPENCL_COMMAND_BUFFER_SYMBOLS);
  return Status();
}

// The device's command-buffer functions, resolved once; unsupported (kept) where it has none, a
// driver error (tried again at the next graph) where a query failed.
Result<const CommandBufferApi*> command_buffer_api(const Api& api, ClDevice& d) {
  std::lock_guard<std::mutex> lock(*d.graph_mutex);
  if (d.graph_support < 0) {
    Status resolved = resolve_command_buffers(api, d);
    if (resolved.code() == ErrorCode::unsupported) {
      d.graph_support = 0;
      d.graph_unsupported.assign(resolved.message());
    } else if (!resolved.ok()) {
      return resolved;
    } else {
      d.graph_support = 1;
    }
  }
  if (d.graph_support == 0) return make_error(ErrorCode::unsupported, d.graph_unsupported);
  return &d.command_buffers;
}

// Records one launch into the command buffer after `*point`, which becomes the launch's.
Status record_kernel(const Api& api, const ClDevice& d, ClGraph& g, const devrt_graph_node& node,
                     cl_sync_point_khr* point, bool first) {
  auto& f = *static_cast<ClFunction*>(node.function);
  DEVRT_ASSIGN_OR_RETURN(std::int32_t local_arg, check_launch(f, d, node.launch));
  // A kernel object of the graph's own: PoCL 3.1's command buffers read a kernel's arguments when
  // they run, not when recorded, so f's kernel, re-armed by every later launch, would change them.
  cl_program program = nullptr;
  DEVRT_CL_CHECK("clGetKernelInfo(CL_KERNEL_PROGRAM)",
                 api.clGetKernelInfo(f.kernel, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr));
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = api.clCreateKernel(program, f.name.c_str(), &err);
  if (err != CL_SUCCESS) return cl_error("clCreateKernel", err);
  g.kernels.push_back(kernel);
  OwnedBuffers owned(api);
  DEVRT_RETURN_IF_ERROR(set_arguments(kernel, d, node.launch, local_arg, owned));
  g.sub_buffers.insert(g.sub_buffers.end(), owned.buffers, owned.buffers + owned.count);
  owned.count = 0;
  std::size_t global[3], local[3];
  for (int i = 0; i < 3; ++i) {
    global[i] = std::size_t{node.launch.grid[i]} * node.launch.block[i];
    local[i] = node.launch.block[i];
  }
  const cl_uint dims = global[2] > 1 ? 3 : global[1] > 1 ? 2 : 1;
  const cl_sync_point_khr after = *point;
  DEVRT_CL_CHECK("clCommandNDRangeKernelKHR",
                 g.api->clCommandNDRangeKernelKHR(g.commands, nullptr, nullptr, kernel, dims, nullptr, global, local,
                                                  first ? 0 : 1, first ? nullptr : &after, point, nullptr));
  return Status();
}

void release_graph(const Api& api, ClGraph* g) {
  if (g->commands != nullptr) static_cast<void>(g->api->clReleaseCommandBufferKHR(g->commands));
  for (cl_mem mem : g->sub_buffers) static_cast<void>(api.clReleaseMemObject(mem));
  for (cl_kernel kernel : g->kernels) static_cast<void>(api.clReleaseKernel(kernel));
  for (auto& [queue, event] : g->last_replay) static_cast<void>(api.clReleaseEvent(event));
  delete g;
}

Status record_graph(const Api& api, const ClDevice& d, ClGraph& g, std::span<const devrt_graph_node> nodes) {
  cl_sync_point_khr point = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const devrt_graph_node& node = nodes[i];
    if (node.type == DEVRT_GRAPH_NODE_LAUNCH) {
      DEVRT_RETURN_IF_ERROR(record_kernel(api, d, g, node, &point, i == 0));
      continue;
    }
    const cl_sync_point_khr after = point;
    DEVRT_RETURN_IF_ERROR(freed_buffers().check(node.copy.src, "the source"));
    DEVRT_RETURN_IF_ERROR(freed_buffers().check(node.copy.dst, "the destination"));
    DEVRT_CL_CHECK(
        "clCommandCopyBufferKHR",
        g.api->clCommandCopyBufferKHR(g.commands, nullptr, static_cast<cl_mem>(const_cast<void*>(node.copy.src)),
                                      static_cast<cl_mem>(node.copy.dst), node.copy.src_offset, node.copy.dst_offset,
                                      node.copy.nbytes, i == 0 ? 0 : 1, i == 0 ? nullptr : &after, &point, nullptr));
  }
  DEVRT_CL_CHECK("clFinalizeCommandBufferKHR", g.api->clFinalizeCommandBufferKHR(g.commands));
  return Status();
}

} // namespace

Result<void*> OpenclBackend::graph_create(const BackendDevice& device, void*,
                                          std::span<const devrt_graph_node> nodes) noexcept {
  const Api& api = runtime().api;
  ClDevice& d = state_of(device);
  DEVRT_ASSIGN_OR_RETURN(const CommandBufferApi* functions, command_buffer_api(api, d));
  std::unique_ptr<ClGraph> g(new (std::nothrow) ClGraph());
  if (!g) return make_error(ErrorCode::out_of_memory, "no host memory for a graph");
  g->api = functions;
  const cl_command_buffer_properties_khr properties[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                         CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  cl_command_queue queue = d.queue;
  cl_int err = CL_SUCCESS;
  g->commands = g->api->clCreateCommandBufferKHR(1, &queue, properties, &err);
  if (err != CL_SUCCESS) {
    g->commands = nullptr;
    return cl_error("clCreateCommandBufferKHR", err);
  }
  Status recorded = record_graph(api, d, *g, nodes);
  if (!recorded.ok()) {
    release_graph(api, g.release());
    return recorded;
  }
  return static_cast<void*>(g.release());
}

Status OpenclBackend::graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept {
  const Api& api = runtime().api;
  auto& g = *static_cast<ClGraph*>(graph);
  cl_command_queue queue = queue_of(state_of(device), stream);
  if (g.sub_buffers.empty()) {
    DEVRT_CL_CHECK("clEnqueueCommandBufferKHR",
                   g.api->clEnqueueCommandBufferKHR(1, &queue, g.commands, 0, nullptr, nullptr));
    return Status();
  }
  // Sub-buffers are released with the graph: it keeps each queue's last replay to wait for then.
  cl_event event = nullptr;
  DEVRT_CL_CHECK("clEnqueueCommandBufferKHR",
                 g.api->clEnqueueCommandBufferKHR(1, &queue, g.commands, 0, nullptr, &event));
  std::lock_guard<std::mutex> lock(g.mutex);
  for (auto& [q, last] : g.last_replay) {
    if (q != queue) continue;
    static_cast<void>(api.clReleaseEvent(last));
    last = event;
    return Status();
  }
  g.last_replay.emplace_back(queue, event);
  return Status();
}

Status OpenclBackend::graph_destroy(const BackendDevice&, void* graph) noexcept {
  const Api& api = runtime().api;
  auto* g = static_cast<ClGraph*>(graph);
  // The command buffer itself lives until its pending replays end (the extension's reference
  // count); the sub-buffers it reads are released after the last replay on each queue.
  Status status;
  for (auto& [queue, event] : g->last_replay) {
    cl_int code = api.clWaitForEvents(1, &event);
    if (code != CL_SUCCESS && status.ok()) status = cl_error("clWaitForEvents", code);
  }
  release_graph(api, g);
  return status;
}

} // namespace devrt::opencl
