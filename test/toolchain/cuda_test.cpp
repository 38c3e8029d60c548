// SPDX-License-Identifier: Apache-2.0
#include <devrt/backend/module_image.hpp>
#include <devrt/devrt.hpp>
#include <devrt/nvrtc.hpp>
#include <devrt/toolchain/cuda.hpp>
#include <devrt/toolchain/process.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "toolchain_test_util.hpp"

using devrt::ErrorCode;
using devrt::ModuleFormat;
using namespace devrt::toolchain;

namespace {

constexpr const char* kSource = R"(extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

// The reason CUDA compile tests cannot run here, or "" when they can.
std::string nvcc_missing() {
  devrt::Result<std::string> path = find_cuda_path();
  if (!path.ok()) return std::string(path.status().message());
  return find_program("nvcc").ok() || std::filesystem::exists(*path + "/bin/nvcc") ? "" : "no nvcc in " + *path;
}

devrt::ModuleImageInfo inspect(const std::vector<std::byte>& bytes) {
  devrt::Result<devrt::ModuleImageInfo> info = devrt::inspect_module_image(bytes);
  REQUIRE(info.ok());
  return *info;
}

bool has_arch(const devrt::ModuleImageInfo& info, const std::string& arch) {
  return std::find(info.architectures.begin(), info.architectures.end(), arch) != info.architectures.end();
}

// Loads and checks the module on cuda:0 when a GPU is present (the GPU suite's machine).
void load_if_gpu(ModuleFormat format, const std::vector<std::byte>& bytes) {
  if (devrt::device_count(devrt::DeviceKind::cuda) == 0) return;
  devrt::Result<devrt::Module> module = devrt::Module::load(devrt::Device{devrt::DeviceKind::cuda, 0}, format, bytes);
  if (!module.ok() && module.status().code() == ErrorCode::invalid_argument) return; // another architecture
  REQUIRE(module.ok());
  CHECK(module->function("axpy").ok());
}

} // namespace

TEST_CASE("compute versions parse and follow TVM's capability rules", "[cuda]") {
  devrt::Result<ComputeVersion> v = parse_compute_version("8.6");
  REQUIRE(v.ok());
  CHECK(v->major == 8);
  CHECK(v->minor == 6);
  CHECK(parse_compute_version("sm_90")->major == 9);
  CHECK(parse_compute_version("compute_75")->minor == 5);
  CHECK(parse_compute_version("sm_100")->major == 10);
  CHECK(parse_compute_version("sm_90a")->major == 9);
  // The forms TVM's get_target_compute_version returns: an arch-specific variant after a dot.
  for (auto [text, major, minor] : {std::tuple{"9.0.a", 9, 0}, std::tuple{"10.0.a", 10, 0}, std::tuple{"12.0.f", 12, 0},
                                    std::tuple{"sm_100a", 10, 0}, std::tuple{"sm_120f", 12, 0}}) {
    INFO(text);
    REQUIRE(parse_compute_version(text).ok());
    CHECK(parse_compute_version(text)->major == major);
    CHECK(parse_compute_version(text)->minor == minor);
  }
  for (const char* bad : {"8", "8.", ".6", "x.y", "8.6.1", "8.6.", "8.6.ab", "9.0a", "", "sm_", "sm_x0", "sm_90aa",
                          "86", "sm_9", "-8.6", "8.-6", "99999.0"}) {
    INFO(bad);
    CHECK(parse_compute_version(bad).status().code() == ErrorCode::invalid_argument);
  }
  CHECK(contains(parse_compute_version("8").status().message(), "'8' is malformed"));
  CHECK(*have_fp16("5.3"));
  CHECK(!*have_fp16("5.2"));
  CHECK(*have_fp16("6.0"));
  CHECK(!*have_int8("5.3"));
  CHECK(*have_int8("6.1"));
  CHECK(!*have_tensorcore("6.1"));
  CHECK(*have_tensorcore("7.0"));
  CHECK(*have_tensorcore("sm_90"));
  CHECK(!*have_bf16("7.5"));
  CHECK(*have_bf16("8.0"));
  CHECK(!*have_fp8("8.6"));
  CHECK(*have_fp8("8.9"));
  CHECK(*have_fp8("9.0.a"));
  CHECK(*have_fp4("10.0.a"));
  CHECK(!*have_fp4("9.0"));
  CHECK(!*have_fp4("12.0"));
  CHECK(have_tensorcore("seven").status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("the CUDA toolkit is found with its version", "[cuda]") {
  devrt::Result<std::string> path = find_cuda_path();
  if (!path.ok()) {
    WARN("skipped: " << path.status().message());
    CHECK(path.status().code() == ErrorCode::unavailable);
    CHECK(!have_cudagraph());
    return;
  }
  devrt::Result<CudaVersion> version = cuda_version(*path);
  REQUIRE(version.ok());
  CHECK(version->major >= 10);
  CHECK(have_cudagraph() == (*version >= CudaVersion{10, 0}));
  CHECK(cuda_version("/devrt/no/cuda").status().code() == ErrorCode::not_found);
  devrt::Result<NvshmemPaths> nvshmem = find_nvshmem();
  if (nvshmem.ok()) {
    CHECK(std::filesystem::exists(nvshmem->include_dir + "/nvshmem.h"));
  } else {
    CHECK(nvshmem.status().code() == ErrorCode::unavailable);
    CHECK(contains(nvshmem.status().message(), "NVSHMEM_HOME"));
  }
}

TEST_CASE("nvcc builds PTX, cubins and fatbins for the requested architectures", "[cuda]") {
  std::string missing = nvcc_missing();
  if (!missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  CudaCompileOptions options;
  options.output = CudaOutput::ptx;
  options.arch = {"compute_80"};
  devrt::Result<std::vector<std::byte>> ptx = compile_cuda(kSource, options);
  REQUIRE(ptx.ok());
  CHECK(inspect(*ptx).format == ModuleFormat::ptx);
  load_if_gpu(ModuleFormat::ptx, *ptx);

  options.output = CudaOutput::cubin;
  options.arch = {"sm_90"};
  devrt::Result<std::vector<std::byte>> cubin = compile_cuda(kSource, options);
  REQUIRE(cubin.ok());
  devrt::ModuleImageInfo cubin_info = inspect(*cubin);
  CHECK(cubin_info.format == ModuleFormat::cubin);
  CHECK(has_arch(cubin_info, "sm_90"));
  load_if_gpu(ModuleFormat::cubin, *cubin);

  options.output = CudaOutput::fatbin;
  options.arch = {"sm_80", "sm_90", "compute_90"};
  devrt::Result<std::vector<std::byte>> fatbin = compile_cuda(kSource, options);
  REQUIRE(fatbin.ok());
  devrt::ModuleImageInfo fatbin_info = inspect(*fatbin);
  CHECK(fatbin_info.format == ModuleFormat::fatbin);
  CHECK(has_arch(fatbin_info, "sm_80"));
  CHECK(has_arch(fatbin_info, "sm_90"));
  load_if_gpu(ModuleFormat::fatbin, *fatbin);

  options.output = CudaOutput::ptx;
  options.arch = {"compute_80"};
  devrt::Result<std::vector<std::byte>> broken = compile_cuda("__global__ void f() { undeclared_name; }", options);
  CHECK(broken.status().code() == ErrorCode::tool_failed);
  CHECK(contains(broken.status().message(), "undeclared_name"));
  options.arch = {"gfx90a"};
  CHECK(compile_cuda(kSource, options).status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("NVRTC builds PTX and cubins and refuses fatbins", "[cuda]") {
  if (!devrt::nvrtc::availability().ok()) {
    WARN("skipped: " << devrt::nvrtc::availability().message());
    return;
  }
  CudaCompileOptions options;
  options.compiler = CudaCompiler::nvrtc;
  options.output = CudaOutput::ptx;
  options.arch = {"compute_80"};
  devrt::Result<std::vector<std::byte>> ptx = compile_cuda(kSource, options);
  REQUIRE(ptx.ok());
  CHECK(inspect(*ptx).format == ModuleFormat::ptx);
  options.output = CudaOutput::cubin;
  options.arch = {"sm_90"};
  devrt::Result<std::vector<std::byte>> cubin = compile_cuda(kSource, options);
  REQUIRE(cubin.ok());
  CHECK(inspect(*cubin).format == ModuleFormat::cubin);
  load_if_gpu(ModuleFormat::cubin, *cubin);
  options.output = CudaOutput::fatbin;
  CHECK(compile_cuda(kSource, options).status().code() == ErrorCode::unsupported);
  options.output = CudaOutput::ptx;
  options.arch = {"compute_80"};
  devrt::Result<std::vector<std::byte>> broken = compile_cuda("__global__ void f() { undeclared_name; }", options);
  CHECK(broken.status().code() == ErrorCode::tool_failed);
  CHECK(contains(broken.status().message(), "undeclared_name"));
}
