// SPDX-License-Identifier: Apache-2.0
// NVRTC compiles without a GPU: PTX and cubin output, compile errors with the log, and the
// on-disk cache (hit, miss on any key change, corrupt entries ignored).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <devrt/backend/module_image.hpp>
#include <devrt/config.hpp>
#include <devrt/nvrtc.hpp>

using devrt::ErrorCode;
using devrt::ModuleFormat;

namespace {

constexpr std::string_view kSaxpy = R"(
extern "C" __global__ void saxpy(const float* x, float* y, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}
)";

// A fresh cache directory for this test run.
std::string fresh_cache() {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("devrt-nvrtc-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("DEVRT_CACHE_DIR", dir.c_str(), 1);
  return (dir / "nvrtc").string();
}

devrt::nvrtc::CompileOptions options_for(std::string arch, ModuleFormat output = ModuleFormat::ptx,
                                         std::vector<std::string> flags = {}, bool use_cache = true) {
  devrt::nvrtc::CompileOptions options;
  options.arch = std::move(arch);
  options.output = output;
  options.flags = std::move(flags);
  options.use_cache = use_cache;
  return options;
}

bool nvrtc_present() {
  devrt::Status status = devrt::nvrtc::availability();
  if (!status.ok()) WARN("skip: " << status.message());
  return status.ok();
}

} // namespace

TEST_CASE("nvrtc compiles CUDA C++ to PTX and cubin without a GPU", "[nvrtc]") {
  if (!nvrtc_present()) return;
  std::string cache = fresh_cache();
  devrt::Result<int> version = devrt::nvrtc::version();
  REQUIRE(version.ok());
  CHECK(*version >= 11000);

  devrt::nvrtc::CompileOptions ptx_options = options_for("compute_75", ModuleFormat::ptx, {}, false);
  devrt::Result<devrt::nvrtc::Program> ptx = devrt::nvrtc::compile(kSaxpy, ptx_options);
  INFO(ptx.status().message());
  REQUIRE(ptx.ok());
  CHECK(ptx->format == ModuleFormat::ptx);
  CHECK_FALSE(ptx->from_cache);
  devrt::Result<devrt::ModuleImageInfo> ptx_image = devrt::inspect_module_image(ptx->bytes);
  REQUIRE(ptx_image.ok());
  CHECK(ptx_image->format == ModuleFormat::ptx);
  CHECK(ptx_image->architectures == std::vector<std::string>{"compute_75"});

  devrt::nvrtc::CompileOptions cubin_options = options_for("sm_90", ModuleFormat::cubin, {}, false);
  devrt::Result<devrt::nvrtc::Program> cubin = devrt::nvrtc::compile(kSaxpy, cubin_options);
  REQUIRE(cubin.ok());
  devrt::Result<devrt::ModuleImageInfo> cubin_image = devrt::inspect_module_image(cubin->bytes);
  REQUIRE(cubin_image.ok());
  CHECK(cubin_image->format == ModuleFormat::cubin);
  CHECK(cubin_image->architectures == std::vector<std::string>{"sm_90"});
  CHECK_FALSE(std::filesystem::exists(cache)); // use_cache = false wrote nothing
}

TEST_CASE("nvrtc reports compile errors with the log and refuses bad requests", "[nvrtc]") {
  if (!nvrtc_present()) return;
  fresh_cache();
  devrt::Result<devrt::nvrtc::Program> broken =
      devrt::nvrtc::compile("extern \"C\" __global__ void k(float* p) { p[0] = ; }", options_for("compute_75"));
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(broken.status().message()),
             Catch::Contains("nvrtcCompileProgram") && Catch::Contains("build log") && Catch::Contains("error"));
  // Options reach the compiler: the macro is defined.
  CHECK(devrt::nvrtc::compile("extern \"C\" __global__ void k(float* p) { p[0] = VALUE; }",
                              options_for("compute_75", ModuleFormat::ptx, {"-DVALUE=2.0f"}))
            .ok());
  CHECK(devrt::nvrtc::compile(kSaxpy, options_for("", ModuleFormat::spirv)).status().code() ==
        ErrorCode::invalid_argument);
  devrt::Result<devrt::nvrtc::Program> no_arch =
      devrt::nvrtc::compile(kSaxpy, options_for("compute_90", ModuleFormat::cubin));
  CHECK(no_arch.status().code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(no_arch.status().message()), Catch::Contains("sm_XY"));
  CHECK(devrt::nvrtc::compile(std::string_view("k\0x", 3), {}).status().code() == ErrorCode::invalid_argument);
  CHECK(devrt::nvrtc::compile(kSaxpy, options_for("compute_75", ModuleFormat::ptx, {"--no-such-option"}))
            .status()
            .code() == ErrorCode::invalid_argument);
}

TEST_CASE("nvrtc caches by source, options and version", "[nvrtc][cache]") {
  if (!nvrtc_present()) return;
  std::string cache = fresh_cache();
  CHECK(devrt::nvrtc::cache_directory() == cache);
  devrt::nvrtc::CompileOptions options = options_for("compute_75");
  devrt::Result<devrt::nvrtc::Program> cold = devrt::nvrtc::compile(kSaxpy, options);
  REQUIRE(cold.ok());
  CHECK_FALSE(cold->from_cache);
  devrt::Result<devrt::nvrtc::Program> warm = devrt::nvrtc::compile(kSaxpy, options);
  REQUIRE(warm.ok());
  CHECK(warm->from_cache);
  CHECK(warm->bytes == cold->bytes);
  CHECK(warm->format == ModuleFormat::ptx);

  // Any change of the key misses: flags, architecture, output, source.
  devrt::nvrtc::CompileOptions fast = options;
  fast.flags = {"--use_fast_math"};
  CHECK_FALSE(devrt::nvrtc::compile(kSaxpy, fast)->from_cache);
  devrt::nvrtc::CompileOptions newer = options;
  newer.arch = "compute_80";
  CHECK_FALSE(devrt::nvrtc::compile(kSaxpy, newer)->from_cache);
  CHECK_FALSE(devrt::nvrtc::compile(std::string(kSaxpy) + "\n// changed\n", options)->from_cache);
  CHECK(devrt::nvrtc::compile(kSaxpy, fast)->from_cache);

  // A damaged entry is ignored and rewritten, never returned.
  std::size_t damaged = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache)) {
    std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << "garbage";
    ++damaged;
  }
  CHECK(damaged == 4);
  devrt::Result<devrt::nvrtc::Program> rebuilt = devrt::nvrtc::compile(kSaxpy, options);
  REQUIRE(rebuilt.ok());
  CHECK_FALSE(rebuilt->from_cache);
  CHECK(rebuilt->bytes == cold->bytes);
  CHECK(devrt::nvrtc::compile(kSaxpy, options)->from_cache);
  std::filesystem::remove_all(std::filesystem::path(cache).parent_path());
}

TEST_CASE("nvrtc in a build without CUDA says so", "[nvrtc]") {
#if !DEVRT_WITH_CUDA
  CHECK(devrt::nvrtc::availability().code() == ErrorCode::unavailable);
  CHECK(devrt::nvrtc::compile(kSaxpy).status().code() == ErrorCode::unavailable);
#else
  SUCCEED("built with CUDA");
#endif
}
