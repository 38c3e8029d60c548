// SPDX-License-Identifier: Apache-2.0
// What defining GLSL.std.450 Pow costs (the Vulkan backend's rewrite at SPIR-V load, issue 71),
// each row against the same work without it, same run, same device, interleaved:
//   define_pow/<module>                 the rewrite alone, on the host (words in, words out);
//   load/<module>/{rewritten,as_written} Module::load and the kernel's pipeline (the driver's
//                                       compile), DEVRT_VULKAN_SPIRV_REWRITE=1 against =0;
//   power_1M/{rewritten,as_written}     the conformance suite's pow kernel over 2^20 positive
//                                       bases, launched and waited for.
// Modules: the test build's power.spv and pow_forms.spv; DEVRT_BENCH_SPIRV_DIR adds every .spv of a
// directory (the kernels of a TVM library, say). bench/bench_tvm_library.py times a whole TVM
// library's load both ways.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <devrt/devrt.hpp>

#include "backends/vulkan/vulkan_spirv.hpp"

namespace {

constexpr std::uint32_t kElements = 1u << 20;
constexpr std::uint32_t kBlock = 64;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::vector<std::uint32_t> words_of(const std::string& bytes) {
  std::vector<std::uint32_t> words(bytes.size() / 4);
  std::copy_n(bytes.data(), words.size() * 4, reinterpret_cast<char*>(words.data()));
  return words;
}

// The SPIR-V entry point of a module (GLSL's "main", TVM's kernel name).
std::string entry_of(const std::string& bytes) {
  devrt::Result<devrt::vulkan::SpirvModuleInfo> info = devrt::vulkan::reflect_spirv(words_of(bytes));
  return info.ok() && !info->entry_points.empty() ? info->entry_points[0].name : "main";
}

void set_rewrite(bool on) { ::setenv("DEVRT_VULKAN_SPIRV_REWRITE", on ? "1" : "0", 1); }

void define_pow_only(benchmark::State& state, const std::string& bytes) {
  const std::vector<std::uint32_t> words = words_of(bytes);
  std::uint32_t rewritten = 0;
  for (auto _ : state) {
    devrt::Result<devrt::vulkan::SpirvPowRewrite> rewrite = devrt::vulkan::define_pow(words);
    if (!rewrite.ok()) return state.SkipWithError(std::string(rewrite.status().message()).c_str());
    rewritten = rewrite->rewritten;
    benchmark::DoNotOptimize(rewrite->words.data());
  }
  state.counters["rewritten"] = rewritten;
  state.counters["words"] = static_cast<double>(words.size());
}

void load(benchmark::State& state, devrt::Device device, const std::string& bytes, bool rewrite) {
  const std::string entry = entry_of(bytes);
  std::uint32_t rewritten = 0;
  for (auto _ : state) {
    set_rewrite(rewrite);
    devrt::Result<devrt::Module> module = devrt::Module::load(device, devrt::ModuleFormat::spirv, bytes);
    devrt::Result<devrt::Function> function =
        module.ok() ? module->function(entry) : devrt::Result<devrt::Function>(module.status());
    if (!function.ok()) return state.SkipWithError(std::string(function.status().message()).c_str());
    rewritten = module->rewritten_instructions().value_or(0);
  }
  set_rewrite(true);
  state.counters["rewritten"] = rewritten;
}

// The power kernel over kElements positive bases and exponents, loaded either way.
struct PowerLaunch {
  devrt::Module module;
  devrt::Function function;
  devrt::Buffer base, exponent, result;
  std::string error;

  PowerLaunch(devrt::Device device, const std::string& bytes, bool rewrite) {
    set_rewrite(rewrite);
    devrt::Result<devrt::Module> loaded = devrt::Module::load(device, devrt::ModuleFormat::spirv, bytes);
    set_rewrite(true);
    std::vector<float> values(kElements);
    for (std::uint32_t i = 0; i < kElements; ++i) values[i] = 0.5f + static_cast<float>(i % 1000) / 250.0f;
    devrt::Result<devrt::Function> f =
        loaded.ok() ? loaded->function("main") : devrt::Result<devrt::Function>(loaded.status());
    if (!f.ok()) {
      error = f.status().message();
      return;
    }
    module = std::move(loaded).value();
    function = *f;
    for (devrt::Buffer* buffer : {&base, &exponent, &result}) {
      devrt::Result<devrt::Buffer> made = devrt::Buffer::allocate(device, kElements * sizeof(float));
      if (!made.ok()) {
        error = made.status().message();
        return;
      }
      *buffer = std::move(made).value();
    }
    static_cast<void>(devrt::copy(devrt::host_span(values.data(), kElements * 4), 0, base, 0, kElements * 4));
    static_cast<void>(devrt::copy(devrt::host_span(values.data(), kElements * 4), 0, exponent, 0, kElements * 4));
    static_cast<void>(devrt::synchronize(device));
  }
};

void launch(benchmark::State& state, devrt::Device device, const std::string& bytes, bool rewrite) {
  PowerLaunch power(device, bytes, rewrite);
  if (!power.error.empty()) return state.SkipWithError(power.error.c_str());
  const devrt::StreamRef stream = devrt::current_stream(device);
  for (auto _ : state) {
    devrt::Status s =
        power.function.launch({.grid = {kElements / kBlock}, .block = {kBlock}},
                              {power.base, power.exponent, power.result, std::int32_t{kElements}}, stream);
    if (s.ok()) s = devrt::synchronize(stream);
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetItemsProcessed(state.iterations() * kElements);
  state.counters["rewritten"] = power.module.rewritten_instructions().value_or(0);
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::filesystem::path> modules = {std::filesystem::path(DEVRT_BENCH_SPIRV_DIR) / "power.spv",
                                                std::filesystem::path(DEVRT_BENCH_SPIRV_DIR) / "pow_forms.spv"};
  if (const char* directory = std::getenv("DEVRT_BENCH_SPIRV_DIR"); directory != nullptr && *directory != '\0') {
    for (const auto& entry : std::filesystem::directory_iterator(directory)) {
      if (entry.path().extension() == ".spv") modules.push_back(entry.path());
    }
  }
  const devrt::Device vulkan{devrt::DeviceKind::vulkan, 0};
  const bool has_vulkan = devrt::device_exists(vulkan);
  if (!has_vulkan) std::printf("no vulkan:0 here: only the host-side define_pow rows run\n");
  for (const std::filesystem::path& path : modules) {
    const std::string bytes = read_file(path);
    const std::string name = path.stem().string();
    benchmark::RegisterBenchmark(("define_pow/" + name).c_str(), define_pow_only, bytes);
    // pow_forms needs 16-bit storage and float16 arithmetic; the driver may refuse it.
    if (!has_vulkan) continue;
    benchmark::RegisterBenchmark(("load/" + name + "/rewritten").c_str(), load, vulkan, bytes, true);
    benchmark::RegisterBenchmark(("load/" + name + "/as_written").c_str(), load, vulkan, bytes, false);
  }
  if (has_vulkan) {
    const std::string power = read_file(modules[0]);
    benchmark::RegisterBenchmark("power_1M/rewritten", launch, vulkan, power, true);
    benchmark::RegisterBenchmark("power_1M/as_written", launch, vulkan, power, false);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
