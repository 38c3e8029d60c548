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

#include "backend_support/gpu_launch.hpp"
#include "backend_support/kernel_signature.hpp"
#include "opencl_backend.hpp"
#include "opencl_kernel.hpp"
#include "opencl_state.hpp"
#include "support/fault_injection.hpp"

namespace devrt::opencl {
namespace {

// ---- Modules -------------------------------------------------------------------------------

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

} // namespace devrt::opencl
