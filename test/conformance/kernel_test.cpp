// SPDX-License-Identifier: Apache-2.0
// Kernel modules and launches, the same tests on every backend with modules: each backend gets
// its kernels in its own format (a CPU kernel table, OpenCL C, SPIR-V from glslc) with the same
// semantics (test/kernels/).
#include "conformance.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/nvrtc.hpp>

#include "../kernels/cpu_kernels.hpp"

using conformance::contains;
using devrt::Buffer;
using devrt::Device;
using devrt::ErrorCode;
using devrt::Function;
using devrt::KernelArg;
using devrt::LaunchConfig;
using devrt::Module;
using devrt::ModuleFormat;

using namespace conformance_kernels; // NOLINT(google-build-using-namespace)

TEST_CASE("vector add over a 1-D grid with a partial last block", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    const std::size_t n = 1000;
    std::vector<float> a = iota_values(n, 1.0f, 0.5f), b = iota_values(n, -3.0f, 2.0f);
    Buffer da = upload_floats(device, a), db = upload_floats(device, b),
           dc = upload_floats(device, std::vector<float>(n));
    devrt::Status launched =
        vadd.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {da, db, dc, static_cast<std::int32_t>(n)});
    INFO(launched.message());
    REQUIRE(launched.ok());
    std::vector<float> c = download_floats(dc, n);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);
  }
}

TEST_CASE("saxpy with a float scalar argument", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel saxpy = load_kernel(device, "saxpy");
    const std::size_t n = 4096 + 3;
    std::vector<float> x = iota_values(n, 0.0f, 1.0f), y = iota_values(n, 10.0f, -0.25f);
    Buffer dx = upload_floats(device, x), dy = upload_floats(device, y);
    const float alpha = 2.5f;
    REQUIRE(saxpy.function
                .launch({.grid = {blocks_for(n, 128)}, .block = {128}}, {dx, dy, alpha, static_cast<std::int32_t>(n)})
                .ok());
    std::vector<float> out = download_floats(dy, n);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(out[i] == alpha * x[i] + y[i]);
  }
}

TEST_CASE("a 2-D grid covers every element once", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel fill = load_kernel(device, "fill2d");
    const std::uint32_t width = 37, height = 19;
    Buffer out = upload_floats(device, std::vector<float>(width * height, -1.0f));
    REQUIRE(fill.function
                .launch({.grid = {blocks_for(width, 8), blocks_for(height, 4)}, .block = {8, 4}},
                        {out, static_cast<std::int32_t>(width), static_cast<std::int32_t>(height)})
                .ok());
    std::vector<float> values = download_floats(out, width * height);
    for (std::uint32_t y = 0; y < height; ++y) {
      for (std::uint32_t x = 0; x < width; ++x) REQUIRE(values[y * width + x] == static_cast<float>(y * 1000 + x));
    }
  }
}

TEST_CASE("a reduction through shared memory and barriers", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel reduce = load_kernel(device, "reduce");
    for (std::uint32_t block : {64u, 256u}) {
      INFO("block " << block);
      const std::size_t n = 20 * block - 7;
      std::vector<float> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 17);
      Buffer in = upload_floats(device, values);
      Buffer partial = upload_floats(device, std::vector<float>(blocks_for(n, block), -1.0f));
      devrt::Status launched = reduce.function.launch(
          {.grid = {blocks_for(n, block)}, .block = {block}, .dynamic_shared_bytes = reduce_shared_bytes(block)},
          {in, partial, static_cast<std::int32_t>(n)});
      INFO(launched.message());
      REQUIRE(launched.ok());
      std::vector<float> sums = download_floats(partial, blocks_for(n, block));
      for (std::uint32_t b = 0; b < sums.size(); ++b) {
        float expected = 0;
        for (std::size_t i = b * block; i < std::min<std::size_t>(n, (b + 1) * block); ++i) expected += values[i];
        REQUIRE(sums[b] == expected);
      }
    }
  }
}

TEST_CASE("buffer arguments with offsets", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    devrt::Result<std::optional<std::int64_t>> reported =
        devrt::get_attribute<devrt::Attribute::buffer_offset_alignment>(device);
    REQUIRE(reported.ok());
    REQUIRE(reported->has_value()); // every backend with modules reports it
    const std::optional<std::int64_t> alignment = *reported;
    REQUIRE(*alignment >= 1);
    INFO("buffer_offset_alignment " << *alignment);
    Kernel vadd = load_kernel(device, "vadd");
    const std::size_t n = 200;
    // The smallest float-aligned offset the device takes, and twice that for the second input.
    const std::size_t offset = std::max<std::size_t>(static_cast<std::size_t>(*alignment), sizeof(float));
    std::vector<float> a = iota_values(n, 3.0f, 1.0f), b = iota_values(n, 0.0f, 3.0f);
    Buffer da = upload_floats(device, a, offset), db = upload_floats(device, b, offset * 2);
    Buffer dc = upload_floats(device, std::vector<float>(n), offset);
    REQUIRE(
        vadd.function
            .launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {KernelArg(da, offset), KernelArg(db, offset * 2),
                                                                   KernelArg(dc, offset), static_cast<std::int32_t>(n)})
            .ok());
    std::vector<float> c = download_floats(dc, n, offset);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);
    // The bytes before the offset are untouched.
    std::vector<float> front = download_floats(dc, offset / sizeof(float));
    for (float f : front) REQUIRE(f == 0.0f);
    // One element in: works where the alignment allows it, and is refused before launch where not.
    const std::size_t one = sizeof(float);
    devrt::Status odd = vadd.function.launch({.grid = {blocks_for(n - 1)}, .block = {kBlock}},
                                             {KernelArg(da, offset + one), KernelArg(db, offset * 2),
                                              KernelArg(dc, offset), static_cast<std::int32_t>(n - 1)});
    if (static_cast<std::size_t>(*alignment) <= one) {
      REQUIRE(odd.ok());
      c = download_floats(dc, n - 1, offset);
      for (std::size_t i = 0; i + 1 < n; ++i) REQUIRE(c[i] == a[i + 1] + b[i]);
    } else {
      CHECK(odd.code() == ErrorCode::invalid_argument);
      CHECK(contains(odd.message(), "offset"));
      CHECK(contains(odd.message(), std::to_string(*alignment)));
      // Nothing ran: the output still holds the first launch's sums.
      c = download_floats(dc, n, offset);
      for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);
    }
    REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
    // An offset past the end is refused before the backend sees it.
    devrt::Status past =
        vadd.function.launch({.grid = {1}, .block = {kBlock}}, {KernelArg(da, da.size() + 4), db, dc, std::int32_t{1}});
    CHECK(past.code() == ErrorCode::invalid_argument);
    CHECK(contains(past.message(), "past the end"));
  }
}

TEST_CASE("two dependent launches on one stream run in order", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    Kernel scale = load_kernel(device, "scale");
    devrt::Result<devrt::Stream> stream = devrt::Stream::create(device);
    REQUIRE(stream.ok());
    const std::size_t n = 3000;
    std::vector<float> a = iota_values(n, 1.0f, 1.0f), b = iota_values(n, 2.0f, 0.5f);
    Buffer da = upload_floats(device, a), db = upload_floats(device, b),
           dc = upload_floats(device, std::vector<float>(n));
    for (int round = 0; round < 3; ++round) {
      REQUIRE(vadd.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {da, db, dc, std::int32_t(n)}, *stream)
                  .ok());
      REQUIRE(scale.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {dc, 2.0f, std::int32_t(n)}, *stream)
                  .ok());
      REQUIRE(scale.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {dc, -1.0f, std::int32_t(n)}, *stream)
                  .ok());
    }
    std::vector<float> c = download_floats(dc, n, 0, *stream);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == -2.0f * (a[i] + b[i]));
    // The same scalars on another buffer, then the first launch again: each launch binds its own
    // buffers and scalars, whatever the launch before it bound (Vulkan skips unchanged pushes).
    const LaunchConfig config{.grid = {blocks_for(n)}, .block = {kBlock}};
    REQUIRE(scale.function.launch(config, {da, 2.0f, std::int32_t(n)}, *stream).ok());
    REQUIRE(scale.function.launch(config, {db, 2.0f, std::int32_t(n)}, *stream).ok());
    REQUIRE(scale.function.launch(config, {da, 2.0f, std::int32_t(n)}, *stream).ok());
    REQUIRE(scale.function.launch(config, {da, 2.0f, std::int32_t(n / 2)}, *stream).ok());
    std::vector<float> got_a = download_floats(da, n, 0, *stream), got_b = download_floats(db, n, 0, *stream);
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(got_a[i] == a[i] * (i < n / 2 ? 8.0f : 4.0f));
      REQUIRE(got_b[i] == b[i] * 2.0f);
    }
  }
}

TEST_CASE("launches on two streams joined by an event", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  if (!conformance::backend().has_events()) {
    CONFORMANCE_SKIP(conformance::backend().name() << " has no events");
    return;
  }
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    Kernel scale = load_kernel(device, "scale");
    devrt::Result<devrt::Stream> first = devrt::Stream::create(device);
    devrt::Result<devrt::Stream> second = devrt::Stream::create(device);
    devrt::Result<devrt::Event> done = devrt::Event::create(device);
    REQUIRE((first.ok() && second.ok() && done.ok()));
    const std::size_t n = 1 << 16;
    std::vector<float> a = iota_values(n, 0.0f, 1.0f), b = iota_values(n, 5.0f, 0.0f);
    Buffer da = upload_floats(device, a), db = upload_floats(device, b),
           dc = upload_floats(device, std::vector<float>(n));
    REQUIRE(
        vadd.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {da, db, dc, std::int32_t(n)}, *first).ok());
    REQUIRE(done->record(*first).ok());
    REQUIRE(done->wait_on(*second).ok());
    REQUIRE(
        scale.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {dc, 3.0f, std::int32_t(n)}, *second).ok());
    std::vector<float> c = download_floats(dc, n, 0, *second);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == 3.0f * (a[i] + b[i]));
    devrt::Result<bool> finished = done->query();
    REQUIRE(finished.ok());
    CHECK(*finished);
  }
}

TEST_CASE("wrong argument counts and types are refused with the kernel's signature", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  if (!conformance::backend().has_capability(DEVRT_CAP_CHECKED_LAUNCH_ARGUMENTS)) {
    CONFORMANCE_SKIP(conformance::backend().name() << " does not check launch arguments against the kernel's "
                                                      "parameters (it declares no checked_launch_arguments)");
    return;
  }
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel saxpy = load_kernel(device, "saxpy");
    Buffer x = upload_floats(device, std::vector<float>(64, 1.0f)), y = upload_floats(device, std::vector<float>(64));
    const LaunchConfig config{.grid = {1}, .block = {kBlock}};
    devrt::Status few = saxpy.function.launch(config, {x, y, 2.0f});
    CHECK(few.code() == ErrorCode::invalid_argument);
    CHECK(contains(few.message(), "takes 4 arguments"));
    CHECK(contains(few.message(), "given 3"));
    CHECK(contains(few.message(), "launch(" + std::string(saxpy.function.name())));
    devrt::Status many = saxpy.function.launch(config, {x, y, 2.0f, std::int32_t{64}, std::int32_t{0}});
    CHECK(many.code() == ErrorCode::invalid_argument);
    devrt::Status double_alpha = saxpy.function.launch(config, {x, y, 2.0, std::int32_t{64}});
    CHECK(double_alpha.code() == ErrorCode::invalid_argument);
    CHECK(contains(double_alpha.message(), "float64"));
    devrt::Status scalar_for_buffer = saxpy.function.launch(config, {x, 1.0f, 2.0f, std::int32_t{64}});
    CHECK(scalar_for_buffer.code() == ErrorCode::invalid_argument);
    // Memory of another device is caught before the backend sees it.
    std::vector<float> host(64);
    devrt::Status foreign =
        saxpy.function.launch(config, {devrt::host_span(host.data(), 256), y, 2.0f, std::int32_t{64}});
    if (device.kind != devrt::DeviceKind::cpu) {
      CHECK(foreign.code() == ErrorCode::invalid_argument);
      CHECK(contains(foreign.message(), "memory on cpu:0"));
    }
    // Nothing ran: y is still zero.
    REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
    for (float v : download_floats(y, 64)) REQUIRE(v == 0.0f);
  }
}

TEST_CASE("blocks beyond max_threads_per_block and empty extents are refused", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel saxpy = load_kernel(device, "saxpy");
    auto max_threads = devrt::get_attribute<devrt::Attribute::max_threads_per_block>(device);
    REQUIRE(max_threads.ok());
    REQUIRE(max_threads->has_value());
    auto limit = static_cast<std::uint32_t>(**max_threads);
    Buffer x = upload_floats(device, std::vector<float>(64)), y = upload_floats(device, std::vector<float>(64));
    devrt::Status big = saxpy.function.launch({.grid = {1}, .block = {limit, 2}}, {x, y, 1.0f, std::int32_t{64}});
    INFO(big.message());
    CHECK(big.code() == ErrorCode::invalid_argument);
    CHECK(contains(big.message(), "max_threads_per_block"));
    CHECK(contains(big.message(), "block " + std::to_string(limit) + "x2x1"));
    devrt::Status empty = saxpy.function.launch({.grid = {0}, .block = {kBlock}}, {x, y, 1.0f, std::int32_t{64}});
    CHECK(empty.code() == ErrorCode::invalid_argument);
    devrt::Status zero_block = saxpy.function.launch({.grid = {1}, .block = {1, 0}}, {x, y, 1.0f, std::int32_t{64}});
    CHECK(zero_block.code() == ErrorCode::invalid_argument);
  }
}

TEST_CASE("module load errors carry the reason and the build log", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  const std::string backend(conformance::backend().name());
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::string log;
    // A format the backend does not declare is refused before it sees the bytes, naming what it loads.
    for (std::int32_t value = 1; value < DEVRT_MODULE_FORMAT_COUNT; ++value) {
      const auto format = static_cast<ModuleFormat>(value);
      if (loads(format)) continue;
      devrt::Status refused = Module::load(device, format, std::string_view(".version 8.0"), {}, &log).status();
      CHECK(refused.code() == ErrorCode::unsupported);
      CHECK(contains(refused.message(), "the " + backend + " backend loads "));
      CHECK(contains(refused.message(), "not " + std::string(devrt::module_format_name(format))));
    }
    CHECK(Module::load(device, ModuleFormat::spirv, std::string_view()).status().code() == ErrorCode::invalid_argument);
    if (loads(ModuleFormat::opencl_c)) {
      devrt::Result<Module> broken =
          Module::load(device, ModuleFormat::opencl_c,
                       std::string_view("__kernel void k(__global float* p) { p[0] = ; }"), {}, &log);
      REQUIRE_FALSE(broken.ok());
      CHECK(broken.status().code() == ErrorCode::driver_error);
      CHECK(contains(broken.status().message(), "CL_BUILD_PROGRAM_FAILURE"));
      CHECK(contains(broken.status().message(), "build log"));
      CHECK_FALSE(log.empty());
      // Options reach the compiler: an undefined macro becomes defined.
      devrt::Result<Module> defined = Module::load(
          device, ModuleFormat::opencl_c,
          std::string_view("__kernel void k(__global float* p) { p[0] = DEVRT_VALUE; }"), "-DDEVRT_VALUE=2.0f");
      CHECK(defined.ok());
    } else if (loads(ModuleFormat::spirv)) {
      devrt::Result<Module> odd = Module::load(device, ModuleFormat::spirv, std::string_view("1234567"), {}, &log);
      CHECK(odd.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(odd.status().message(), "multiple of 4"));
      devrt::Result<Module> magic =
          Module::load(device, ModuleFormat::spirv, std::string_view("not spirv words!!!!!"), {}, &log);
      CHECK(magic.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(magic.status().message(), "magic"));
      CHECK(contains(log, "magic"));
    } else if (loads(ModuleFormat::ptx)) {
      devrt::Result<Module> broken =
          Module::load(device, ModuleFormat::ptx,
                       std::string_view(".version 7.0\n.target sm_75\n.address_size 64\n.entry k( {"), {}, &log);
      REQUIRE_FALSE(broken.ok());
      CHECK(broken.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(broken.status().message(), "cuModuleLoadDataEx"));
      CHECK_FALSE(log.empty());
      devrt::Result<Module> mislabelled =
          Module::load(device, ModuleFormat::cubin, std::string_view(".version 7.0\n.target sm_75\n"));
      CHECK(mislabelled.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(mislabelled.status().message(), "not a cubin"));
      CHECK(Module::load(device, ModuleFormat::ptx, std::string_view(".version 7.0\n.target sm_75\n"), "-O3")
                .status()
                .code() == ErrorCode::invalid_argument);
    } else if (loads(ModuleFormat::wgsl)) {
      devrt::Result<Module> broken = Module::load(
          device, ModuleFormat::wgsl, std::string_view("@compute @workgroup_size(1) fn k() { let x = ; }"), {}, &log);
      REQUIRE_FALSE(broken.ok());
      CHECK(broken.status().code() == ErrorCode::driver_error);
      CHECK(contains(broken.status().message(), "build log"));
      CHECK_FALSE(log.empty());
      CHECK(Module::load(device, ModuleFormat::wgsl, std::string_view("@group(1) @binding(0) var<storage> x : f32;"))
                .status()
                .code() == ErrorCode::invalid_argument);
    } else if (loads(ModuleFormat::hsaco)) {
      devrt::Result<Module> junk = Module::load(device, ModuleFormat::hsaco, std::string_view("not a code object"));
      CHECK(junk.status().code() == ErrorCode::invalid_argument);
    } else if (loads(ModuleFormat::host_table)) {
      CHECK(Module::load(device, ModuleFormat::host_table, "no-such-table").status().code() == ErrorCode::not_found);
      devrt::Result<Module> junk =
          Module::load(device, ModuleFormat::shared_object, std::string_view("definitely not an ELF file at all"));
      CHECK(junk.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(junk.status().message(), "ELF"));
    }
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Result<Function> missing = vadd.module.function("no_such_kernel");
    CHECK(missing.status().code() == ErrorCode::not_found);
    CHECK(contains(missing.status().message(), "no_such_kernel"));
  }
}

TEST_CASE("a module's binary loads again and runs", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Result<devrt::ModuleBinary> binary = vadd.module.binary();
    if (!binary.ok()) {
      CHECK(binary.status().code() == ErrorCode::unsupported);
      CONFORMANCE_SKIP(binary.status().message());
      continue;
    }
    CHECK_FALSE(binary->bytes.empty());
    devrt::Result<Module> again = Module::load(device, binary->format, std::as_bytes(std::span(binary->bytes)));
    INFO(again.status().message());
    REQUIRE(again.ok());
    devrt::Result<Function> function = again->function("vadd");
    REQUIRE(function.ok());
    const std::size_t n = 130;
    std::vector<float> a = iota_values(n, 1.0f, 1.0f);
    Buffer da = upload_floats(device, a), dc = upload_floats(device, std::vector<float>(n));
    REQUIRE(function->launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {da, da, dc, std::int32_t(n)}).ok());
    std::vector<float> c = download_floats(dc, n);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == 2.0f * a[i]);
  }
}

TEST_CASE("backend specifics: fixed SPIR-V local sizes, CPU shared objects", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  std::string_view backend = conformance::backend().name();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    if (backend == "cuda") {
      // More than 48 KiB of dynamic shared memory opts the function in; beyond the device's
      // opt-in limit is refused before the driver sees it.
      Kernel reduce = load_kernel(device, "reduce");
      const std::uint32_t block = 256;
      std::vector<float> values = iota_values(block, 1.0f, 1.0f);
      Buffer input = upload_floats(device, values), partial = upload_floats(device, std::vector<float>(1));
      devrt::Status big = reduce.function.launch({.grid = {1}, .block = {block}, .dynamic_shared_bytes = 96 * 1024},
                                                 {input, partial, static_cast<std::int32_t>(block)});
      INFO(big.message());
      CHECK(big.ok());
      CHECK(download_floats(partial, 1)[0] == std::accumulate(values.begin(), values.end(), 0.0f));
      devrt::Status huge = reduce.function.launch({.grid = {1}, .block = {block}, .dynamic_shared_bytes = 4 << 20},
                                                  {input, partial, static_cast<std::int32_t>(block)});
      CHECK(huge.code() == ErrorCode::invalid_argument);
      CHECK(contains(huge.message(), "opt-in"));
      // nvcc's cubin and fatbin load where they fit and say why where they do not.
      if (!std::string(DEVRT_TEST_CUDA_FATBIN).empty()) {
        auto cc = devrt::get_attribute<devrt::Attribute::compute_version>(device);
        REQUIRE(cc.ok());
        std::string version = cc->value_or("0.0");
        int arch = std::atoi(version.c_str()) * 10 + std::atoi(version.c_str() + version.find('.') + 1);
        bool hopper = arch == 90;
        devrt::Result<Module> cubin = Module::load_file(device, ModuleFormat::cubin, DEVRT_TEST_CUDA_CUBIN);
        CHECK(cubin.ok() == hopper);
        if (!hopper) CHECK(contains(cubin.status().message(), "none of which runs"));
        devrt::Result<Module> fatbin = Module::load_file(device, ModuleFormat::fatbin, DEVRT_TEST_CUDA_FATBIN);
        INFO(fatbin.status().message());
        CHECK(fatbin.ok() == (arch / 10 == 8 || arch >= 90)); // sm_80 cubin, or compute_90 PTX
      }
    }
    if (backend == "vulkan") {
      Kernel vadd = load_kernel(device, "vadd");
      Buffer x = upload_floats(device, std::vector<float>(256));
      devrt::Status other = vadd.function.launch({.grid = {1}, .block = {128}}, {x, x, x, std::int32_t{1}});
      CHECK(other.code() == ErrorCode::invalid_argument);
      CHECK(contains(other.message(), "fixed local size 64x1x1"));
      devrt::Status shared =
          vadd.function.launch({.grid = {1}, .block = {64}, .dynamic_shared_bytes = 16}, {x, x, x, std::int32_t{1}});
      CHECK(shared.code() == ErrorCode::unsupported);
    } else if (backend == "cpu") {
      devrt::Result<Module> so = Module::load_file(device, ModuleFormat::shared_object, DEVRT_TEST_CPU_KERNELS_SO);
      INFO(so.status().message());
      REQUIRE(so.ok());
      devrt::Result<Function> vadd = so->function("vadd");
      REQUIRE(vadd.ok());
      const std::size_t n = 100;
      std::vector<float> a = iota_values(n, 1.0f, 2.0f), b = iota_values(n, 0.5f, 0.0f), c(n);
      REQUIRE(vadd->launch({.grid = {blocks_for(n)}, .block = {kBlock}},
                           {devrt::host_span(a.data(), n * 4), devrt::host_span(b.data(), n * 4),
                            devrt::MemorySpan{devrt::kHostDevice, c.data(), n * 4}, std::int32_t(n)})
                  .ok());
      for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);
      // The signature exported next to the kernel is enforced.
      CHECK(vadd->launch({.grid = {1}, .block = {kBlock}}, {std::int32_t(n)}).code() == ErrorCode::invalid_argument);
      CHECK(so->function("vadd_devrt_signature_missing").status().code() == ErrorCode::not_found);
    } else {
      CONFORMANCE_SKIP("nothing specific to " << backend);
    }
  }
}

// Its size is known only to the driver: clSetKernelArg checks it where the driver does (PoCL
// does not), so only the good launch is tested.
TEST_CASE("a scalar parameter declared through a typedef launches", "[conformance][kernel]") {
  if (!loads(ModuleFormat::opencl_c)) {
    CONFORMANCE_SKIP("typedef parameters are an OpenCL C case (the other formats carry no type names)");
    return;
  }
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel scale = load_kernel(device, "scale_counted");
    const std::size_t n = 100;
    std::vector<float> values = iota_values(n, 1.0f, 1.0f);
    Buffer data = upload_floats(device, values);
    devrt::Status launched =
        scale.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}}, {data, 2.0f, static_cast<std::int32_t>(n)});
    INFO(launched.message());
    REQUIRE(launched.ok());
    std::vector<float> out = download_floats(data, n);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(out[i] == 2.0f * values[i]);
  }
}

// ---- Timed events ------------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

double host_ns_since(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// The spin kernel on one work item, 1024 * `rounds` steps, on `stream`.
devrt::Status spin(const Kernel& kernel, const Buffer& value, std::int32_t rounds, devrt::StreamRef stream) {
  if (stream.handle == nullptr) stream = devrt::current_stream(value.device());
  return kernel.function.launch({.grid = {1}, .block = {1}}, {value, rounds}, stream);
}

// Rounds of `spin` whose launch and synchronization take at least `ns` on the host, and that
// time. Enough only when the kernel makes the time, not the launch: doubling the rounds must
// have nearly doubled it, which a loaded machine's stalls of a short launch do not do.
std::pair<std::int32_t, double> calibrate_spin(const Kernel& kernel, const Buffer& value, double ns) {
  std::int32_t rounds = 4;
  double previous = 0;
  for (;;) {
    double fastest = 1e18;
    for (int run = 0; run < 3; ++run) {
      const auto start = Clock::now();
      REQUIRE(spin(kernel, value, rounds, {}).ok());
      REQUIRE(devrt::synchronize(devrt::current_stream(value.device())).ok());
      fastest = std::min(fastest, host_ns_since(start));
    }
    const bool kernel_bound = previous > 0 && fastest >= 1.6 * previous;
    if ((fastest >= ns && kernel_bound) || rounds >= 32768) return {rounds, fastest};
    previous = fastest;
    rounds *= 2;
  }
}

// A timed event of `device`, or the reason its backend cannot make one (skipped).
std::optional<devrt::Event> timed_event(Device device) {
  devrt::Result<devrt::Event> event = devrt::Event::create(device, {.timing = true});
  if (!conformance::backend().has_event_timing()) {
    CHECK(event.status().code() == ErrorCode::unsupported);
    CONFORMANCE_SKIP("no timed events: " << event.status().message());
    return std::nullopt;
  }
  INFO(event.status().message());
  REQUIRE(event.ok());
  CHECK(event->timed());
  return std::move(event).value();
}

} // namespace

TEST_CASE("timed events measure a kernel on the device, not the host's wait", "[conformance][event][timing]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::optional<devrt::Event> start = timed_event(device);
    if (!start) return;
    std::optional<devrt::Event> end = timed_event(device);
    Kernel kernel = load_kernel(device, "spin");
    Buffer value = upload_floats(device, {1.0f});
    const auto [rounds, calibrated] = calibrate_spin(kernel, value, 20e6);
    INFO("spin rounds " << rounds << ", " << calibrated / 1e6 << " ms launched and synchronized");
    devrt::Stream stream = std::move(devrt::Stream::create(device)).value();
    // Every run lies inside the host's interval. One of five tries must also leave out the host's
    // 400 ms sleep and count the kernel: four times the rounds read at least twice as long (a
    // clock that counted the sleep would read it in every try; one that read the host's enqueueing
    // would not grow). A loaded machine may stall a CPU driver's run, and PoCL's scheduler thread
    // that stamps its markers, for tens of milliseconds: the kernel is calibrated to 20 ms to stay
    // longer than such a stall. Not against the host's calibration: on a remote device under
    // contention its launch and synchronize round trips are most of it (7.4 ms calibrated, 1.1 ms
    // on the device). No upper bound near the calibration either: under CPU contention a CPU
    // driver (lavapipe, PoCL) runs the kernel itself several times slower, which says nothing
    // about the clock.
    bool measures_the_kernel = false;
    for (int attempt = 0; attempt < 5 && !measures_the_kernel; ++attempt) {
      const auto host_start = Clock::now();
      REQUIRE(start->record(stream).ok());
      REQUIRE(spin(kernel, value, rounds, stream).ok());
      REQUIRE(end->record(stream).ok());
      // A host sleep between enqueueing and synchronizing: a host clock would count it.
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      REQUIRE(end->synchronize().ok());
      const double host = host_ns_since(host_start);
      devrt::Result<std::int64_t> elapsed = devrt::Event::elapsed_ns(*start, *end);
      INFO(elapsed.status().message());
      REQUIRE(elapsed.ok());
      UNSCOPED_INFO("try " << attempt << ": device " << *elapsed / 1e6 << " ms, host " << host / 1e6 << " ms");
      CHECK(*elapsed > 0);
      CHECK(static_cast<double>(*elapsed) <= host);
      // The sleep is not in it. (An asynchronous device runs the kernel during the sleep, so the
      // host's interval is the sleep, not the kernel plus the sleep: the bound is the sleep.)
      const bool leaves_out_the_sleep = static_cast<double>(*elapsed) < 300e6;
      REQUIRE(start->record(stream).ok());
      REQUIRE(spin(kernel, value, 4 * rounds, stream).ok());
      REQUIRE(end->record(stream).ok());
      REQUIRE(end->synchronize().ok());
      devrt::Result<std::int64_t> longer = devrt::Event::elapsed_ns(*start, *end);
      REQUIRE(longer.ok());
      UNSCOPED_INFO("try " << attempt << ": four times the rounds " << *longer / 1e6 << " ms");
      const bool counts_the_kernel = *longer >= 2 * *elapsed && *longer >= 100'000;
      measures_the_kernel = leaves_out_the_sleep && counts_the_kernel;
    }
    CHECK(measures_the_kernel);
  }
}

TEST_CASE("timed events of two streams do not see each other's work", "[conformance][event][timing]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::optional<devrt::Event> long_start = timed_event(device);
    if (!long_start) return;
    std::optional<devrt::Event> long_end = timed_event(device), short_start = timed_event(device),
                                short_end = timed_event(device);
    Kernel kernel = load_kernel(device, "spin");
    Buffer value = upload_floats(device, {1.0f}), other = upload_floats(device, {2.0f});
    std::int32_t rounds = calibrate_spin(kernel, value, 4e6).first;
    devrt::Stream busy = std::move(devrt::Stream::create(device)).value();
    devrt::Stream idle = std::move(devrt::Stream::create(device)).value();
    // The idle stream's one-round launch must not count the busy stream's long one. A loaded
    // machine can stall any launch of a CPU driver (lavapipe, PoCL) or make the calibration too
    // short, so each of four tries doubles the busy stream's work, and one of them must hold.
    bool separate = false;
    for (int attempt = 0; attempt < 4 && !separate; ++attempt, rounds *= 2) {
      REQUIRE(long_start->record(busy).ok());
      REQUIRE(spin(kernel, value, rounds, busy).ok());
      REQUIRE(long_end->record(busy).ok());
      REQUIRE(short_start->record(idle).ok());
      REQUIRE(spin(kernel, other, 1, idle).ok());
      REQUIRE(short_end->record(idle).ok());
      REQUIRE(busy.synchronize().ok());
      REQUIRE(idle.synchronize().ok());
      devrt::Result<std::int64_t> busy_ns = devrt::Event::elapsed_ns(*long_start, *long_end);
      devrt::Result<std::int64_t> idle_ns = devrt::Event::elapsed_ns(*short_start, *short_end);
      REQUIRE(busy_ns.ok());
      REQUIRE(idle_ns.ok());
      UNSCOPED_INFO("try " << attempt << ": " << rounds << " rounds, busy stream " << *busy_ns / 1e6
                           << " ms, idle stream " << *idle_ns / 1e6 << " ms");
      separate = *idle_ns < *busy_ns / 2;
    }
    CHECK(separate);
  }
}

TEST_CASE("elapsed time is refused with the reason when it cannot be known", "[conformance][event][timing]") {
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::optional<devrt::Event> start = timed_event(device);
    if (!start) return;
    std::optional<devrt::Event> end = timed_event(device);
    devrt::Result<std::int64_t> unrecorded = devrt::Event::elapsed_ns(*start, *end);
    CHECK(unrecorded.status().code() == ErrorCode::invalid_argument);
    CHECK(contains(unrecorded.status().message(), "never recorded"));
    devrt::Event untimed = std::move(devrt::Event::create(device)).value();
    CHECK_FALSE(untimed.timed());
    REQUIRE(untimed.record(devrt::current_stream(device)).ok());
    REQUIRE(start->record(devrt::current_stream(device)).ok());
    devrt::Result<std::int64_t> mixed = devrt::Event::elapsed_ns(*start, untimed);
    CHECK(mixed.status().code() == ErrorCode::invalid_argument);
    CHECK(contains(mixed.status().message(), "without EventOptions::timing"));
    CHECK(devrt::Event::elapsed_ns(*start, devrt::Event()).status().code() == ErrorCode::invalid_argument);
    if (conformance::backend().kind() != devrt::DeviceKind::cpu) {
      devrt::Event host = std::move(devrt::Event::create(devrt::kHostDevice, {.timing = true})).value();
      CHECK(devrt::Event::elapsed_ns(*start, host).status().code() == ErrorCode::invalid_argument);
    }
    // Complete or `unavailable`, never a guess; after synchronizing, a value of zero or more.
    REQUIRE(end->record(devrt::current_stream(device)).ok());
    devrt::Result<std::int64_t> early = devrt::Event::elapsed_ns(*start, *end);
    CHECK((early.ok() || early.status().code() == ErrorCode::unavailable));
    REQUIRE(end->synchronize().ok());
    devrt::Result<std::int64_t> later = devrt::Event::elapsed_ns(*start, *end);
    INFO(later.status().message());
    REQUIRE(later.ok());
    CHECK(*later >= 0);
  }
}
