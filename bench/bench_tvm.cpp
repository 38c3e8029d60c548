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
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/discovery.hpp>
#include <devrt/remote.hpp>
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

// The same operator through the same library, on a remote device (a devrt-server's device of
// the library's kind: host code here, its launch and the wait over the wire) and on the local
// device of that kind, interleaved in one run. Counters: remote_us, local_us, ratio. Registered
// where DEVRT_REMOTE names a server (bench-tvm-remote runs under test/remote/with_server.sh).
void remote_against_local(benchmark::State& state, Case c, devrt::Device remote) {
  devrt::Result<devrt::tvm::Library> far = devrt::tvm::Library::load(c.library, remote);
  devrt::Result<devrt::tvm::Library> near = devrt::tvm::Library::load(c.library, c.device);
  if (!far.ok() || !near.ok()) {
    state.SkipWithError(std::string(far.ok() ? near.status().message() : far.status().message()).c_str());
    return;
  }
  auto make = [](devrt::Device d) { return devrt::Tensor::empty({kElements}, devrt::DataType::float32(), d); };
  devrt::Result<devrt::Tensor> ra = make(remote), rb = make(remote), rc = make(remote);
  devrt::Result<devrt::Tensor> la = make(c.device), lb = make(c.device), lc = make(c.device);
  if (!ra.ok() || !rb.ok() || !rc.ok() || !la.ok() || !lb.ok() || !lc.ok()) {
    state.SkipWithError("tensors failed");
    return;
  }
  using Clock = std::chrono::steady_clock;
  double remote_seconds = 0, local_seconds = 0;
  bool remote_first = true;
  for (auto _ : state) {
    for (int turn = 0; turn < 2; ++turn) {
      const bool far_turn = (turn == 0) == remote_first;
      const devrt::tvm::Library& lib = far_turn ? *far : *near;
      const auto t0 = Clock::now();
      const bool ok = far_turn ? lib.call("vadd", {*ra, *rb, *rc}).ok() && lib.synchronize().ok()
                               : lib.call("vadd", {*la, *lb, *lc}).ok() && lib.synchronize().ok();
      if (!ok) {
        state.SkipWithError(far_turn ? "remote call failed" : "local call failed");
        return;
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      (far_turn ? remote_seconds : local_seconds) += seconds;
      if (far_turn) state.SetIterationTime(seconds);
    }
    remote_first = !remote_first;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["remote_us"] = remote_seconds / n * 1e6;
  state.counters["local_us"] = local_seconds / n * 1e6;
  state.counters["ratio"] = remote_seconds / local_seconds;
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
    if (std::getenv("DEVRT_REMOTE") == nullptr) continue;
    for (const devrt::Device& device : devrt::devices()) {
      devrt::Result<devrt::remote::DeviceInfo> info =
          device.kind == devrt::DeviceKind::remote ? devrt::remote::describe(device) : devrt::Status();
      if (!info.ok() || info->kind != c.device.kind) continue;
      benchmark::RegisterBenchmark(("tvm/vadd_remote_vs_local/" + name).c_str(), remote_against_local, c, device)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
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
