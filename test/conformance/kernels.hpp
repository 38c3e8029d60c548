// SPDX-License-Identifier: Apache-2.0
// The conformance kernels (test/kernels/) loaded in the format the backend under test takes, and
// the small helpers the kernel and graph cases share.
#ifndef DEVRT_TEST_CONFORMANCE_KERNELS_HPP
#define DEVRT_TEST_CONFORMANCE_KERNELS_HPP

#include "conformance.hpp"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/nvrtc.hpp>

#include "../kernels/cpu_kernels.hpp"

namespace conformance_kernels {

using devrt::Buffer;
using devrt::Device;
using devrt::Function;
using devrt::Module;
using devrt::ModuleFormat;

inline std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

inline void register_cpu_kernels() {
  std::size_t count = 0;
  const devrt_cpu_kernel_entry* entries = conformance_cpu_kernels(&count);
  REQUIRE(devrt::cpu::register_kernel_table("conformance", {entries, count}).ok());
}

// A kernel of the conformance set, loaded for one device, with what launching it needs.
struct Kernel {
  Module module;
  Function function;
};

// Whether the devices under test load `format`: a backend whose devices differ (remote) says per
// device, and each run of the suite serves it devices of one kind, so the first device speaks for all.
inline bool loads(ModuleFormat format) {
  std::uint32_t formats = conformance::backend().module_formats();
  if (std::vector<Device> devices = conformance::devices(); !devices.empty()) {
    formats = conformance::backend().device_module_formats(devices.front().id).value_or(0);
  }
  return (formats & DEVRT_MODULE_FORMAT_BIT(static_cast<std::uint32_t>(format))) != 0;
}

// The conformance kernels exist in these formats, each built when its compiler was found at build
// time: the first one the backend declares that it loads is used. host_table names kernels
// registered in this process, so devices in another process load the same kernels as a shared object.
enum class KernelSource { host_table, shared_object, opencl_c, spirv, cuda, hsaco, wgsl };

// The kernels' source for this backend, or why it cannot run the kernel tests here.
inline std::variant<KernelSource, std::string> kernel_source() {
  const std::string name(conformance::backend().name());
  if (!conformance::backend().has_modules()) return name + " has no kernel modules";
  std::string missing;
  const bool in_process = !conformance::backend().has_capability(DEVRT_CAP_OUT_OF_PROCESS);
  if (in_process && loads(ModuleFormat::host_table)) return KernelSource::host_table;
  if (!in_process && loads(ModuleFormat::shared_object)) return KernelSource::shared_object;
  if (loads(ModuleFormat::opencl_c)) return KernelSource::opencl_c;
  if (loads(ModuleFormat::spirv)) {
    if (!std::string(DEVRT_TEST_SPIRV_DIR).empty()) return KernelSource::spirv;
    missing += "; spirv: glslc was not found at build time, so there are no SPIR-V test shaders";
  }
  if (loads(ModuleFormat::ptx)) {
    if (!std::string(DEVRT_TEST_CUDA_PTX).empty() || devrt::nvrtc::availability().ok()) return KernelSource::cuda;
    missing += "; ptx: nvcc was not found at build time and NVRTC is missing here";
  }
  if (loads(ModuleFormat::wgsl)) return KernelSource::wgsl;
  if (loads(ModuleFormat::hsaco)) {
    if (!std::string(DEVRT_TEST_HSACO).empty()) return KernelSource::hsaco;
    missing += "; hsaco: hipcc was not found at build time, so there are no code objects";
  }
  return "no conformance kernels in a format " + name + " loads" + missing;
}

#define SKIP_WITHOUT_KERNELS()                                                                                         \
  if (auto source = kernel_source(); std::holds_alternative<std::string>(source)) {                                    \
    CONFORMANCE_SKIP(std::get<std::string>(source));                                                                   \
    return;                                                                                                            \
  }

inline devrt::Result<Module> load_module(Device device, std::string_view kernel) {
  switch (std::get<KernelSource>(kernel_source())) {
  case KernelSource::host_table:
    register_cpu_kernels();
    return Module::load(device, ModuleFormat::host_table, "conformance");
  case KernelSource::shared_object:
    return Module::load_file(device, ModuleFormat::shared_object, DEVRT_TEST_CPU_KERNELS_SO);
  case KernelSource::opencl_c: return Module::load(device, ModuleFormat::opencl_c, read_text(DEVRT_TEST_OPENCL_SOURCE));
  case KernelSource::cuda: {
    if (!std::string(DEVRT_TEST_CUDA_PTX).empty())
      return Module::load_file(device, ModuleFormat::ptx, DEVRT_TEST_CUDA_PTX);
    devrt::nvrtc::CompileOptions options; // for the device's own architecture
    devrt::Result<devrt::nvrtc::Program> program = devrt::nvrtc::compile(read_text(DEVRT_TEST_CUDA_SOURCE), options);
    if (!program.ok()) return std::move(program).status();
    return Module::load(device, program->format, program->bytes);
  }
  case KernelSource::hsaco: return Module::load_file(device, ModuleFormat::hsaco, DEVRT_TEST_HSACO);
  case KernelSource::wgsl:
    return Module::load(device, ModuleFormat::wgsl,
                        read_text((std::string(DEVRT_TEST_WGSL_DIR) + "/" + std::string(kernel) + ".wgsl").c_str()));
  case KernelSource::spirv: break;
  }
  std::string path = std::string(DEVRT_TEST_SPIRV_DIR) + "/" + std::string(kernel) + ".spv";
  return Module::load_file(device, ModuleFormat::spirv, path.c_str());
}

// SPIR-V compiled from GLSL names its entry point "main", and declares its shared memory itself.
inline bool glsl_kernels() { return std::get<KernelSource>(kernel_source()) == KernelSource::spirv; }

inline Kernel load_kernel(Device device, std::string_view name) {
  devrt::Result<Module> module = load_module(device, name);
  INFO(module.status().message());
  REQUIRE(module.ok());
  std::string_view entry = glsl_kernels() ? "main" : name;
  devrt::Result<Function> function = module->function(entry);
  INFO(function.status().message());
  REQUIRE(function.ok());
  return Kernel{std::move(module).value(), std::move(function).value()};
}

// Shared bytes the reduce kernel needs for a block of `block` threads (GLSL and WGSL declare their
// own).
inline std::size_t reduce_shared_bytes(std::uint32_t block) {
  const KernelSource source = std::get<KernelSource>(kernel_source());
  return source == KernelSource::spirv || source == KernelSource::wgsl ? 0 : block * sizeof(float);
}

inline std::vector<float> iota_values(std::size_t n, float start, float step) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

inline Buffer upload_floats(Device device, const std::vector<float>& values, std::size_t extra_front = 0) {
  devrt::Result<Buffer> buffer = Buffer::allocate(device, extra_front + values.size() * sizeof(float));
  REQUIRE(buffer.ok());
  if (extra_front > 0) {
    std::vector<unsigned char> zeros(extra_front);
    REQUIRE(devrt::copy(devrt::host_span(zeros.data(), extra_front), 0, *buffer, 0, extra_front).ok());
    REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  }
  REQUIRE(devrt::copy(devrt::host_span(values.data(), values.size() * sizeof(float)), 0, *buffer, extra_front,
                      values.size() * sizeof(float))
              .ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  return std::move(buffer).value();
}

inline std::vector<float> download_floats(const Buffer& buffer, std::size_t count, std::size_t offset = 0,
                                          devrt::StreamRef stream = {}) {
  std::vector<float> values(count);
  REQUIRE(devrt::copy(buffer, offset, devrt::host_span(values.data(), count * sizeof(float)), 0, count * sizeof(float),
                      stream)
              .ok());
  REQUIRE(devrt::synchronize(stream.handle != nullptr ? stream : devrt::current_stream(buffer.device())).ok());
  return values;
}

inline constexpr std::uint32_t kBlock = 64;

inline std::uint32_t blocks_for(std::size_t n, std::uint32_t block = kBlock) {
  return static_cast<std::uint32_t>((n + block - 1) / block);
}

} // namespace conformance_kernels

#endif // DEVRT_TEST_CONFORMANCE_KERNELS_HPP
