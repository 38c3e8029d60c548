// SPDX-License-Identifier: Apache-2.0
// An operator called through a TVM-built library (devrt::tvm::Library::call: the library's host
// code checks its arguments, looks its kernel up, and launches it through devrt) against the same
// kernel launched through devrt's Module API, same device, same run, interleaved: each iteration
// times one of each (launch and wait), in alternating order. Counters: library_us, module_us, ratio. The libraries are
// the test build's TVM-layout fixtures (test/tvm/), in TVM <= 0.20's ABI and tvm-ffi's; the
// kernel's code is taken from the library's own blob.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/tvm.hpp>

namespace {

constexpr std::int64_t kElements = 1 << 16;

std::vector<std::byte> read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  std::vector<std::byte> out(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) out[i] = static_cast<std::byte>(bytes[i]);
  return out;
}

struct Case {
  devrt::Device device;
  const char* library;
  const char* blob;
  devrt::tvm::BlobAbi abi;
};

void library_against_module(benchmark::State& state, Case c) {
  devrt::Result<devrt::BackendRef> backend = devrt::Registry::global().get(c.device.kind);
  if (!backend.ok() || !backend->availability().ok()) {
    state.SkipWithError("backend unavailable");
    return;
  }
  devrt::Result<devrt::tvm::Library> lib = devrt::tvm::Library::load(c.library, c.device);
  devrt::Result<devrt::tvm::DeviceBlob> blob = devrt::tvm::parse_device_blob(read_file(c.blob), c.abi);
  if (!lib.ok() || !blob.ok() || blob->modules.empty()) {
    state.SkipWithError(std::string(lib.ok() ? blob.status().message() : lib.status().message()).c_str());
    return;
  }
  // The same kernel's code, through the Module API.
  const devrt::tvm::DeviceModule& dm = blob->modules[0];
  std::span<const std::byte> code = dm.source;
  for (const devrt::tvm::KernelCode& k : dm.kernel_code) {
    if (k.name == "vadd_kernel") code = k.code;
  }
  const devrt::ModuleFormat format =
      dm.type_key == "opencl" ? devrt::ModuleFormat::opencl_c : devrt::ModuleFormat::spirv;
  devrt::Result<devrt::Module> module = devrt::Module::load(c.device, format, code);
  devrt::Result<devrt::Function> vadd = module.ok() ? module->function("vadd_kernel") : module.status();
  auto make = [&] { return devrt::Tensor::empty({kElements}, devrt::DataType::float32(), c.device); };
  devrt::Result<devrt::Tensor> a = make(), b = make(), out = make();
  if (!vadd.ok() || !a.ok() || !b.ok() || !out.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  const devrt::StreamRef stream = devrt::current_stream(c.device);
  devrt::LaunchConfig config;
  config.grid.x = static_cast<std::uint32_t>((kElements + 63) / 64);
  config.block.x = 64;
  const devrt::KernelArg args[] = {a->storage_span(), b->storage_span(), out->storage_span(),
                                   static_cast<std::int32_t>(kElements)};
  using Clock = std::chrono::steady_clock;
  double library_seconds = 0, module_seconds = 0;
  // Which goes first alternates: on a CPU driver the second of two back-to-back launches finds
  // its worker threads awake.
  auto call_library = [&] { return lib->call("vadd", {*a, *b, *out}).ok() && devrt::synchronize(stream).ok(); };
  auto call_module = [&] { return vadd->launch(config, args, stream).ok() && devrt::synchronize(stream).ok(); };
  bool library_first = true;
  for (auto _ : state) {
    double seconds[2] = {0, 0};
    for (int turn = 0; turn < 2; ++turn) {
      const bool library = (turn == 0) == library_first;
      const auto t0 = Clock::now();
      if (!(library ? call_library() : call_module())) {
        state.SkipWithError(library ? "library call failed" : "module launch failed");
        return;
      }
      seconds[library ? 0 : 1] = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    library_first = !library_first;
    library_seconds += seconds[0];
    module_seconds += seconds[1];
    state.SetIterationTime(seconds[0]);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["library_us"] = library_seconds / n * 1e6;
  state.counters["module_us"] = module_seconds / n * 1e6;
  state.counters["ratio"] = library_seconds / module_seconds;
}

// The library's own cost beside the launch: the call of an operator whose host code refuses its
// arguments at its first check (no launch), and the same call that launches without waiting.
void library_call_overhead(benchmark::State& state, Case c) {
  devrt::Result<devrt::tvm::Library> lib = devrt::tvm::Library::load(c.library, c.device);
  devrt::Result<devrt::Tensor> a = devrt::Tensor::empty({kElements}, devrt::DataType::float32(), c.device);
  if (!lib.ok() || !a.ok()) {
    state.SkipWithError("backend unavailable");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(lib->call("vadd", {*a}).code());
}

void register_all() {
  std::vector<std::pair<std::string, Case>> cases;
#ifdef DEVRT_BENCH_TVM_OPENCL
  cases.push_back({"opencl",
                   {{devrt::DeviceKind::opencl, 0},
                    DEVRT_BENCH_TVM_OPENCL,
                    DEVRT_BENCH_TVM_OPENCL_BLOB,
                    devrt::tvm::BlobAbi::packed}});
  cases.push_back({"opencl_ffi",
                   {{devrt::DeviceKind::opencl, 0},
                    DEVRT_BENCH_TVM_OPENCL_FFI,
                    DEVRT_BENCH_TVM_OPENCL_FFI_BLOB,
                    devrt::tvm::BlobAbi::ffi}});
#endif
#ifdef DEVRT_BENCH_TVM_VULKAN
  cases.push_back({"vulkan",
                   {{devrt::DeviceKind::vulkan, 0},
                    DEVRT_BENCH_TVM_VULKAN,
                    DEVRT_BENCH_TVM_VULKAN_BLOB,
                    devrt::tvm::BlobAbi::packed}});
  cases.push_back({"vulkan_ffi",
                   {{devrt::DeviceKind::vulkan, 0},
                    DEVRT_BENCH_TVM_VULKAN_FFI,
                    DEVRT_BENCH_TVM_VULKAN_FFI_BLOB,
                    devrt::tvm::BlobAbi::ffi}});
#endif
  for (const auto& [name, c] : cases) {
    benchmark::RegisterBenchmark(("tvm/vadd_library_vs_module/" + name).c_str(), library_against_module, c)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("tvm/call_refused_by_host_code/" + name).c_str(), library_call_overhead, c)
        ->Unit(benchmark::kNanosecond);
  }
}

} // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
