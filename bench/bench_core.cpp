// SPDX-License-Identifier: Apache-2.0
// Core benchmarks. Each devrt figure has its raw counterpart in the same run; bench/report.py
// prints the ratios. Names: <what>/<devrt|raw variant>/<size>.
#include <devrt/backend/direct.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/graph.hpp>
#include <devrt/plugin.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"

extern char** environ;

namespace {

constexpr devrt_backend_table kCpuTable = devrt::make_backend_table<devrt::cpu::CpuBackend>();

devrt_copy_desc small_copy_desc(void* dst, const void* src, std::size_t n) {
  devrt_copy_desc desc{};
  desc.src = src;
  desc.src_kind = 1;
  desc.dst = dst;
  desc.dst_kind = 1;
  desc.nbytes = n;
  return desc;
}

// ---- call overhead: the same 64-byte copy, called four ways --------------------------------

void call_direct(benchmark::State& state) {
  alignas(64) char src[64] = {1}, dst[64];
  devrt::cpu::CpuBackend backend;
  devrt_copy_desc desc = small_copy_desc(dst, src, 64);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&desc);
    devrt::Status s = backend.copy(desc);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
}

void call_table(benchmark::State& state) {
  alignas(64) char src[64] = {1}, dst[64];
  const devrt_backend_table* table = devrt::Registry::global().find(devrt::DeviceKind::cpu).table();
  devrt_copy_desc desc = small_copy_desc(dst, src, 64);
  devrt_error err;
  for (auto _ : state) {
    benchmark::DoNotOptimize(table);
    benchmark::DoNotOptimize(&desc);
    benchmark::DoNotOptimize(table->copy(table->context, &desc, &err));
    benchmark::ClobberMemory();
  }
}

void call_backend_ref(benchmark::State& state) {
  alignas(64) char src[64] = {1}, dst[64];
  devrt::BackendRef backend = devrt::Registry::global().find(devrt::DeviceKind::cpu);
  devrt_copy_desc desc = small_copy_desc(dst, src, 64);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&desc);
    devrt::Status s = backend.copy(0, 0, 0, desc);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
}

void call_checked_copy(benchmark::State& state) {
  alignas(64) char src[64] = {1}, dst[64];
  for (auto _ : state) {
    devrt::Status s = devrt::copy(devrt::host_span(src, 64), devrt::host_span(dst, 64));
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
}

// The compile-time path (devrt/backend/direct.hpp): the same checks as devrt::copy, no table.
void call_compile_time_copy(benchmark::State& state) {
  alignas(64) char src[64] = {1}, dst[64];
  for (auto _ : state) {
    devrt::Status s = devrt::direct::copy<devrt::cpu::CpuBackend>(devrt::host_span(src, 64), devrt::host_span(dst, 64));
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
}

void call_memcpy(benchmark::State& state) {
  alignas(64) char src[64] = {1}, dst[64];
  std::size_t n = 64;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    std::memcpy(dst, src, n);
    benchmark::ClobberMemory();
  }
}

BENCHMARK(call_direct)->Name("call/direct");
BENCHMARK(call_table)->Name("call/table");
BENCHMARK(call_backend_ref)->Name("call/backend_ref");
BENCHMARK(call_checked_copy)->Name("call/devrt_copy");
BENCHMARK(call_compile_time_copy)->Name("call/compile_time_copy");
BENCHMARK(call_memcpy)->Name("call/memcpy");

// ---- bulk copies: devrt::copy host -> cpu buffer vs memcpy ---------------------------------

void copy_devrt(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<char> src(n, 1);
  devrt::Buffer dst = std::move(devrt::Buffer::allocate(devrt::kHostDevice, n)).value();
  std::memset(dst.data(), 0, n);
  for (auto _ : state) {
    devrt::Status s = devrt::copy(devrt::host_span(src.data(), n), dst);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void copy_memcpy(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<char> src(n, 1);
  void* dst = std::aligned_alloc(64, (n + 63) / 64 * 64);
  std::memset(dst, 0, n);
  for (auto _ : state) {
    std::memcpy(dst, src.data(), n);
    benchmark::ClobberMemory();
  }
  std::free(dst);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

#define COPY_SIZES ->Arg(64)->Arg(4 << 10)->Arg(1 << 20)->Arg(16 << 20)->Arg(32 << 20)->Arg(64 << 20)->Arg(256 << 20)
BENCHMARK(copy_memcpy)->Name("copy/memcpy") COPY_SIZES;
BENCHMARK(copy_devrt)->Name("copy/devrt") COPY_SIZES;

// ---- workspace pool vs aligned_alloc ------------------------------------------------------

void alloc_pool(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  devrt::WorkspacePool* pool = devrt::workspace_pool(devrt::kHostDevice).value();
  for (auto _ : state) {
    devrt::Result<devrt::Workspace> w = pool->allocate(n);
    benchmark::DoNotOptimize(w->data());
  }
}

void alloc_aligned(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::aligned_alloc(64, (n + 63) / 64 * 64);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

// The CPU backend's allocate + free through its table: what Buffer::allocate costs without the
// cache, less the checks.
void alloc_backend_table(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  const devrt_backend_table* table = devrt::Registry::global().find(devrt::DeviceKind::cpu).table();
  devrt_error err;
  for (auto _ : state) {
    void* p = nullptr;
    benchmark::DoNotOptimize(table->allocate(0, n, devrt::kDefaultAlignment, &p, &err));
    benchmark::DoNotOptimize(table->free(0, p, &err));
  }
}

void alloc_buffer(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    devrt::Result<devrt::Buffer> b = devrt::Buffer::allocate(devrt::kHostDevice, n);
    benchmark::DoNotOptimize(b->data());
  }
}

void alloc_buffer_uncached(benchmark::State& state) {
  const bool was_enabled = devrt::buffer_cache_enabled();
  devrt::set_buffer_cache_enabled(false);
  alloc_buffer(state);
  devrt::set_buffer_cache_enabled(was_enabled);
}

// Buffer::allocate + free on every thread at once: the per-thread caches take no lock.
void alloc_buffer_threads(benchmark::State& state) { alloc_buffer(state); }

// Buffer::allocate + free of 4 KiB while a live graph touches `ranges` other buffers (captured
// copies between them): what the free's check against the graphs' memory costs (devrt/graph.hpp).
void alloc_buffer_beside_graph(benchmark::State& state) {
  const auto ranges = static_cast<std::size_t>(state.range(0));
  devrt::Stream stream = std::move(devrt::Stream::create(devrt::kHostDevice)).value();
  std::vector<devrt::Buffer> touched;
  for (std::size_t i = 0; i < ranges; ++i)
    touched.push_back(std::move(devrt::Buffer::allocate(devrt::kHostDevice, 256)).value());
  static_cast<void>(devrt::begin_capture(stream));
  for (std::size_t i = 0; i + 1 < ranges; i += 2) static_cast<void>(devrt::copy(touched[i], touched[i + 1], stream));
  devrt::Result<devrt::Graph> graph = devrt::end_capture(stream);
  if (!graph.ok()) {
    state.SkipWithError(graph.status().message().data());
    return;
  }
  for (auto _ : state) {
    devrt::Result<devrt::Buffer> b = devrt::Buffer::allocate(devrt::kHostDevice, 4 << 10);
    benchmark::DoNotOptimize(b->data());
  }
}

#define ALLOC_SIZES ->Arg(64)->Arg(4 << 10)->Arg(1 << 20)
// ---- Timing on the CPU device: a timed event pair against the two clock reads it stands for ----

void timed_pair_clock(benchmark::State& state) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
  }
}

void timed_pair_devrt(benchmark::State& state) {
  devrt::Event start = std::move(devrt::Event::create(devrt::kHostDevice, {.timing = true})).value();
  devrt::Event end = std::move(devrt::Event::create(devrt::kHostDevice, {.timing = true})).value();
  const devrt::StreamRef stream = devrt::current_stream(devrt::kHostDevice);
  for (auto _ : state) {
    static_cast<void>(start.record(stream));
    static_cast<void>(end.record(stream));
    static_cast<void>(end.synchronize());
    benchmark::DoNotOptimize(devrt::Event::elapsed_ns(start, end));
  }
}

BENCHMARK(timed_pair_clock)->Name("timed_pair/clock");
BENCHMARK(timed_pair_devrt)->Name("timed_pair/devrt");

BENCHMARK(alloc_aligned)->Name("alloc/aligned_alloc") ALLOC_SIZES;
BENCHMARK(alloc_backend_table)->Name("alloc/backend_table") ALLOC_SIZES;
BENCHMARK(alloc_pool)->Name("alloc/workspace_pool") ALLOC_SIZES;
BENCHMARK(alloc_buffer)->Name("alloc/buffer") ALLOC_SIZES;
BENCHMARK(alloc_buffer_uncached)->Name("alloc/buffer_uncached") ALLOC_SIZES;
BENCHMARK(alloc_buffer_threads)->Name("alloc/buffer_threads")->Arg(4 << 10)->Threads(2)->UseRealTime();
BENCHMARK(alloc_buffer_beside_graph)->Name("alloc/buffer_beside_graph")->Arg(16)->Arg(256);

// ---- process start to registry ready ------------------------------------------------------

// One way to start the child: its mode argument and what it adds to the environment.
struct StartMode {
  const char* counter;
  const char* mode;
  std::vector<std::string> extra;
};

// Starts the child in `mode` once; its wall time in microseconds, or a negative value on failure.
double time_child(const StartMode& mode) {
  char* argv[] = {const_cast<char*>(DEVRT_BENCH_STARTUP_CHILD), const_cast<char*>(mode.mode), nullptr};
  std::vector<std::string> extra = mode.extra;
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (std::string& assignment : extra) envp.push_back(assignment.data());
  envp.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// Every way of starting, round-robin, so that the machine's drift (a process start is ~3 ms of
// fork, exec and page faults here, and varies by 10% over seconds) falls on all of them alike; the
// counters are medians in microseconds. Autoload's share: no plugin directory present (the
// default search path), an empty directory on DEVRT_PLUGIN_PATH, every plugin of this build.
void startup_modes(benchmark::State& state) {
  std::string empty_dir = std::filesystem::temp_directory_path() / "devrt-bench-no-plugins";
  std::filesystem::create_directories(empty_dir);
  std::vector<StartMode> modes = {
      {"empty_main_us", "empty", {}},
      {"registry_ready_us", "registry", {}},
      {"autoload_off_us", "registry", {"DEVRT_BACKEND_AUTOLOAD=0"}},
      {"plugins_none_us", "registry", {"DEVRT_PLUGIN_PATH=" + empty_dir}},
  };
  if (!std::string_view(DEVRT_BENCH_PLUGIN_DIR).empty()) {
    modes.push_back({"plugins_all_us", "registry", {std::string("DEVRT_PLUGIN_PATH=") + DEVRT_BENCH_PLUGIN_DIR}});
  }
  std::vector<std::vector<double>> times(modes.size());
  for (auto _ : state) {
    for (std::size_t m = 0; m < modes.size(); ++m) {
      double us = time_child(modes[m]);
      if (us < 0) return state.SkipWithError("startup child failed");
      times[m].push_back(us);
    }
  }
  for (std::size_t m = 0; m < modes.size(); ++m) {
    std::sort(times[m].begin(), times[m].end());
    state.counters[modes[m].counter] = times[m][times[m].size() / 2];
  }
}
BENCHMARK(startup_modes)->Name("startup/modes")->Iterations(400)->Unit(benchmark::kMicrosecond);

// ---- the loader ---------------------------------------------------------------------------

void load_backend_absent(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(devrt::load_backend("absent_backend").ok());
}
BENCHMARK(load_backend_absent)->Name("plugins/load_backend_absent")->Unit(benchmark::kMicrosecond);

// One call through a backend's table: the same in a static build and in a plugin build.
void table_call(benchmark::State& state, const char* name) {
  devrt::BackendRef backend = devrt::Registry::global().find(name);
  if (!backend || !backend.availability().ok()) return state.SkipWithError("backend not available here");
  for (auto _ : state) benchmark::DoNotOptimize(backend.device_count());
}
void table_call_opencl(benchmark::State& state) { table_call(state, "opencl"); }
void table_call_vulkan(benchmark::State& state) { table_call(state, "vulkan"); }
BENCHMARK(table_call_opencl)->Name("plugins/device_count/opencl");
BENCHMARK(table_call_vulkan)->Name("plugins/device_count/vulkan");

} // namespace

BENCHMARK_MAIN();
