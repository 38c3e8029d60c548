// SPDX-License-Identifier: Apache-2.0
// CUDA benchmarks, each against the raw driver API in the same run (same device, same kernel,
// same sizes): empty-kernel launch + sync, 1000 launches then one sync, cuMemAlloc vs the
// workspace pool, H2D/D2H at 1 MiB and 256 MiB from pinned and pageable memory. Plus NVRTC cold
// vs cached compiles, which need no GPU. Names: cuda/<what>/<variant>; bench/report.py prints the
// ratios. Without a CUDA device the cuda/* rows report an error and the nvrtc/* rows still run.
#include <devrt/backend/workspace_pool.hpp>
#include <devrt/devrt.hpp>
#include <devrt/graph.hpp>
#include <devrt/nvrtc.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "backends/cuda/cuda_api.hpp"
#include "support/dynamic_library.hpp"

#define DEVRT_BENCH_STRINGIFY_(x) #x
#define DEVRT_BENCH_STRINGIFY(x) DEVRT_BENCH_STRINGIFY_(x)

namespace {

constexpr int kBatch = 1000;

std::string read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// The kernels as PTX for cuda:0, through NVRTC (no cache: the cache is what nvrtc/* measures).
std::string kernels_ptx() {
  devrt::nvrtc::CompileOptions options;
  options.use_cache = false;
  devrt::Result<devrt::nvrtc::Program> program = devrt::nvrtc::compile(read_file(DEVRT_BENCH_CUDA_SOURCE), options);
  if (!program.ok()) return {};
  return std::string(reinterpret_cast<const char*>(program->bytes.data()), program->bytes.size());
}

// The raw side: libcuda opened by the benchmark itself, cuda:0's primary context, the same PTX.
struct RawCuda {
  bool ok = false;
  devrt::cuda::Api api;
  devrt::detail::DynamicLibrary library;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction empty = nullptr;
};

RawCuda& raw_cuda() {
  static RawCuda* raw = [] {
    auto* r = new RawCuda();
    if (!devrt::device_exists({devrt::DeviceKind::cuda, 0}) || !r->library.open(devrt::cuda::kDriver).ok()) return r;
#define DEVRT_BENCH_RESOLVE(name)                                                                                      \
  if (!r->library.resolve(DEVRT_BENCH_STRINGIFY(name), r->api.name)) return r;
    DEVRT_CUDA_SYMBOLS(DEVRT_BENCH_RESOLVE)
#undef DEVRT_BENCH_RESOLVE
#define DEVRT_BENCH_RESOLVE_OPTIONAL(name)                                                                             \
  static_cast<void>(r->library.resolve(DEVRT_BENCH_STRINGIFY(name), r->api.name));
    DEVRT_CUDA_OPTIONAL_SYMBOLS(DEVRT_BENCH_RESOLVE_OPTIONAL)
#undef DEVRT_BENCH_RESOLVE_OPTIONAL
    CUdevice device = 0;
    std::string ptx = kernels_ptx();
    if (ptx.empty() || r->api.cuInit(0) != CUDA_SUCCESS || r->api.cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
        r->api.cuDevicePrimaryCtxRetain(&r->context, device) != CUDA_SUCCESS ||
        r->api.cuCtxSetCurrent(r->context) != CUDA_SUCCESS ||
        r->api.cuModuleLoadDataEx(&r->module, ptx.c_str(), 0, nullptr, nullptr) != CUDA_SUCCESS ||
        r->api.cuModuleGetFunction(&r->empty, r->module, "empty") != CUDA_SUCCESS) {
      return r;
    }
    r->ok = true;
    return r;
  }();
  if (raw->ok) raw->api.cuCtxSetCurrent(raw->context);
  return *raw;
}

struct DevrtCuda {
  bool ok = false;
  devrt::Device device{devrt::DeviceKind::cuda, 0};
  devrt::Module module;
  devrt::Function empty;
};

DevrtCuda& devrt_cuda() {
  static DevrtCuda* side = [] {
    auto* s = new DevrtCuda();
    if (!devrt::device_exists(s->device)) return s;
    std::string ptx = kernels_ptx();
    devrt::Result<devrt::Module> module = devrt::Module::load(s->device, devrt::ModuleFormat::ptx, ptx);
    if (!module.ok()) return s;
    s->module = std::move(module).value();
    s->empty = s->module.function("empty").value();
    s->ok = true;
    return s;
  }();
  return *side;
}

// ---- Launches --------------------------------------------------------------------------------

void cuda_launch_sync_raw(benchmark::State& state) {
  RawCuda& r = raw_cuda();
  if (!r.ok) return state.SkipWithError("no CUDA device");
  for (auto _ : state) {
    r.api.cuLaunchKernel(r.empty, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
    r.api.cuStreamSynchronize(nullptr);
  }
}

void cuda_launch_sync_devrt(benchmark::State& state) {
  DevrtCuda& d = devrt_cuda();
  if (!d.ok) return state.SkipWithError("no CUDA device");
  devrt::StreamRef stream = devrt::current_stream(d.device);
  for (auto _ : state) {
    static_cast<void>(d.empty.launch({.grid = {1}, .block = {32}}, {}, stream));
    static_cast<void>(devrt::synchronize(stream));
  }
}

// A timed pair of events on an empty stream, recorded, waited for and read: cuEventRecord twice,
// cuEventSynchronize, cuEventElapsedTime.
void cuda_timed_pair_raw(benchmark::State& state) {
  RawCuda& r = raw_cuda();
  if (!r.ok) return state.SkipWithError("no CUDA device");
  if (r.api.cuEventElapsedTime == nullptr) return state.SkipWithError("the driver has no cuEventElapsedTime_v2");
  CUevent start = nullptr, end = nullptr;
  r.api.cuEventCreate(&start, CU_EVENT_DEFAULT);
  r.api.cuEventCreate(&end, CU_EVENT_DEFAULT);
  for (auto _ : state) {
    float ms = 0;
    r.api.cuEventRecord(start, nullptr);
    r.api.cuEventRecord(end, nullptr);
    r.api.cuEventSynchronize(end);
    r.api.cuEventElapsedTime(&ms, start, end);
    benchmark::DoNotOptimize(ms);
  }
  r.api.cuEventDestroy(start);
  r.api.cuEventDestroy(end);
}

void cuda_timed_pair_devrt(benchmark::State& state) {
  DevrtCuda& d = devrt_cuda();
  if (!d.ok) return state.SkipWithError("no CUDA device");
  devrt::Result<devrt::Event> start = devrt::Event::create(d.device, {.timing = true});
  devrt::Result<devrt::Event> end = devrt::Event::create(d.device, {.timing = true});
  if (!start.ok() || !end.ok()) return state.SkipWithError("no timed events");
  devrt::StreamRef stream = devrt::current_stream(d.device);
  for (auto _ : state) {
    static_cast<void>(start->record(stream));
    static_cast<void>(end->record(stream));
    static_cast<void>(end->synchronize());
    benchmark::DoNotOptimize(devrt::Event::elapsed_ns(*start, *end));
  }
}

void cuda_launch_batch_raw(benchmark::State& state) {
  RawCuda& r = raw_cuda();
  if (!r.ok) return state.SkipWithError("no CUDA device");
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) r.api.cuLaunchKernel(r.empty, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
    r.api.cuStreamSynchronize(nullptr);
  }
}

void cuda_launch_batch_devrt(benchmark::State& state) {
  DevrtCuda& d = devrt_cuda();
  if (!d.ok) return state.SkipWithError("no CUDA device");
  devrt::StreamRef stream = devrt::current_stream(d.device);
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) static_cast<void>(d.empty.launch({.grid = {1}, .block = {32}}, {}, stream));
    static_cast<void>(devrt::synchronize(stream));
  }
}

// ---- Graphs: kGraphLaunches launches of `empty` over 1024 threads, one by one or replayed -------

constexpr int kGraphLaunches = 100;

// Captured once on a stream of its own (cuStreamBeginCapture), instantiated, then cuGraphLaunch and
// cuStreamSynchronize per iteration.
void cuda_graph_replay_raw(benchmark::State& state) {
  RawCuda& r = raw_cuda();
  if (!r.ok) return state.SkipWithError("no CUDA device");
  if (r.api.cuStreamBeginCapture == nullptr || r.api.cuGraphInstantiate == nullptr) {
    return state.SkipWithError("the driver has no stream capture");
  }
  CUstream stream = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  r.api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  r.api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  for (int i = 0; i < kGraphLaunches; ++i)
    r.api.cuLaunchKernel(r.empty, 32, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  r.api.cuStreamEndCapture(stream, &graph);
  if (graph == nullptr || r.api.cuGraphInstantiate(&exec, graph, 0) != CUDA_SUCCESS) {
    return state.SkipWithError("the capture failed");
  }
  for (auto _ : state) {
    r.api.cuGraphLaunch(exec, stream);
    r.api.cuStreamSynchronize(stream);
  }
  r.api.cuGraphExecDestroy(exec);
  r.api.cuGraphDestroy(graph);
  r.api.cuStreamDestroy(stream);
  state.SetItemsProcessed(state.iterations() * kGraphLaunches);
}

devrt::Status launch_graph_work(const DevrtCuda& d, devrt::StreamRef stream) {
  for (int i = 0; i < kGraphLaunches; ++i)
    DEVRT_RETURN_IF_ERROR(d.empty.launch({.grid = {32}, .block = {32}}, {}, stream));
  return devrt::Status();
}

void cuda_graph_work_devrt(benchmark::State& state, bool replay) {
  DevrtCuda& d = devrt_cuda();
  if (!d.ok) return state.SkipWithError("no CUDA device");
  devrt::Result<devrt::Stream> stream = devrt::Stream::create(d.device);
  if (!stream.ok()) return state.SkipWithError(std::string(stream.status().message()).c_str());
  devrt::Graph graph;
  if (replay) {
    devrt::Status begun = devrt::begin_capture(*stream);
    devrt::Status issued = begun.ok() ? launch_graph_work(d, *stream) : begun;
    devrt::Result<devrt::Graph> captured = devrt::end_capture(*stream);
    if (!issued.ok() || !captured.ok()) return state.SkipWithError("the capture failed");
    graph = std::move(captured).value();
    state.SetLabel(devrt::graph_mode_name(graph.mode()));
  }
  for (auto _ : state) {
    devrt::Status s = replay ? graph.launch(*stream) : launch_graph_work(d, *stream);
    if (s.ok()) s = stream->synchronize();
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetItemsProcessed(state.iterations() * kGraphLaunches);
}

void cuda_launch_each_devrt(benchmark::State& state) { cuda_graph_work_devrt(state, false); }
void cuda_graph_replay_devrt(benchmark::State& state) { cuda_graph_work_devrt(state, true); }

// ---- Allocation ------------------------------------------------------------------------------

void cuda_alloc_free_raw(benchmark::State& state) {
  RawCuda& r = raw_cuda();
  if (!r.ok) return state.SkipWithError("no CUDA device");
  for (auto _ : state) {
    CUdeviceptr p = 0;
    r.api.cuMemAlloc(&p, static_cast<std::size_t>(state.range(0)));
    r.api.cuMemFree(p);
  }
}

// The stream-ordered allocator (CUDA 11.2+): the device's default pool with its release threshold
// raised so that freed memory stays in the pool, alloc and free ordered on one stream. The
// comparison devrt's Buffer cache (which waits for the device at free, as cuMemFree does) has to
// beat or join.
void cuda_alloc_free_async(benchmark::State& state) {
  RawCuda& r = raw_cuda();
  if (!r.ok) return state.SkipWithError("no CUDA device");
  using AllocAsync = CUresult (*)(CUdeviceptr*, size_t, CUstream);
  using FreeAsync = CUresult (*)(CUdeviceptr, CUstream);
  using DefaultPool = CUresult (*)(CUmemoryPool*, CUdevice);
  using SetPoolAttribute = CUresult (*)(CUmemoryPool, CUmemPool_attribute, void*);
  auto alloc = reinterpret_cast<AllocAsync>(r.library.symbol("cuMemAllocAsync"));
  auto free_async = reinterpret_cast<FreeAsync>(r.library.symbol("cuMemFreeAsync"));
  auto default_pool = reinterpret_cast<DefaultPool>(r.library.symbol("cuDeviceGetDefaultMemPool"));
  auto set_attribute = reinterpret_cast<SetPoolAttribute>(r.library.symbol("cuMemPoolSetAttribute"));
  if (alloc == nullptr || free_async == nullptr || default_pool == nullptr || set_attribute == nullptr) {
    return state.SkipWithError("driver without the stream-ordered allocator");
  }
  CUmemoryPool pool = nullptr;
  cuuint64_t keep = ~cuuint64_t{0};
  CUstream stream = nullptr;
  if (default_pool(&pool, 0) != CUDA_SUCCESS ||
      set_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) != CUDA_SUCCESS ||
      r.api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    return state.SkipWithError("no memory pool on cuda:0");
  }
  for (auto _ : state) {
    CUdeviceptr p = 0;
    alloc(&p, static_cast<std::size_t>(state.range(0)), stream);
    free_async(p, stream);
  }
  r.api.cuStreamSynchronize(stream);
  r.api.cuStreamDestroy(stream);
}

// devrt::Buffer on cuda:0: served by the Buffer cache (cuCtxSynchronize at free, then reuse).
void cuda_alloc_free_buffer(benchmark::State& state) {
  devrt::Device device{devrt::DeviceKind::cuda, 0};
  if (!devrt::device_exists(device)) return state.SkipWithError("no CUDA device");
  for (auto _ : state) {
    devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(device, static_cast<std::size_t>(state.range(0)));
    benchmark::DoNotOptimize(buffer->data());
  }
}

void cuda_alloc_free_pool(benchmark::State& state) {
  devrt::Device device{devrt::DeviceKind::cuda, 0};
  if (!devrt::device_exists(device)) return state.SkipWithError("no CUDA device");
  devrt::WorkspacePool pool(devrt::Registry::global().find(device.kind), device);
  for (auto _ : state) {
    devrt::Result<devrt::Workspace> block = pool.allocate(static_cast<std::size_t>(state.range(0)));
    benchmark::DoNotOptimize(block->data());
  }
}

// ---- Copies: range(0) bytes, range(1) 1 = pinned host memory ---------------------------------

void cuda_copy_raw(benchmark::State& state, bool to_device) {
  RawCuda& r = raw_cuda();
  if (!r.ok) return state.SkipWithError("no CUDA device");
  auto n = static_cast<std::size_t>(state.range(0));
  bool pinned = state.range(1) != 0;
  void* host = nullptr;
  std::vector<unsigned char> pageable;
  if (pinned) {
    r.api.cuMemHostAlloc(&host, n, CU_MEMHOSTALLOC_PORTABLE);
  } else {
    pageable.assign(n, 1);
    host = pageable.data();
  }
  CUdeviceptr device = 0;
  r.api.cuMemAlloc(&device, n);
  for (auto _ : state) {
    if (to_device) {
      r.api.cuMemcpyHtoDAsync(device, host, n, nullptr);
    } else {
      r.api.cuMemcpyDtoHAsync(host, device, n, nullptr);
    }
    r.api.cuStreamSynchronize(nullptr);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n));
  r.api.cuMemFree(device);
  if (pinned) r.api.cuMemFreeHost(host);
}

void cuda_copy_devrt(benchmark::State& state, bool to_device) {
  devrt::Device device{devrt::DeviceKind::cuda, 0};
  if (!devrt::device_exists(device)) return state.SkipWithError("no CUDA device");
  auto n = static_cast<std::size_t>(state.range(0));
  devrt::Buffer host_buffer;
  std::vector<unsigned char> pageable;
  devrt::MemorySpan host;
  if (state.range(1) != 0) {
    host_buffer = devrt::Buffer::allocate({devrt::DeviceKind::cuda_host, 0}, n).value();
    host = host_buffer;
  } else {
    pageable.assign(n, 1);
    host = devrt::host_span(pageable.data(), n);
  }
  devrt::Buffer buffer = devrt::Buffer::allocate(device, n).value();
  devrt::StreamRef stream = devrt::current_stream(device);
  for (auto _ : state) {
    static_cast<void>(to_device ? devrt::copy(host, buffer, stream) : devrt::copy(buffer, host, stream));
    static_cast<void>(devrt::synchronize(stream));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

void cuda_h2d_raw(benchmark::State& state) { cuda_copy_raw(state, true); }
void cuda_h2d_devrt(benchmark::State& state) { cuda_copy_devrt(state, true); }
void cuda_d2h_raw(benchmark::State& state) { cuda_copy_raw(state, false); }
void cuda_d2h_devrt(benchmark::State& state) { cuda_copy_devrt(state, false); }

// ---- NVRTC -----------------------------------------------------------------------------------

void nvrtc_compile(benchmark::State& state, bool cached) {
  if (!devrt::nvrtc::availability().ok()) return state.SkipWithError("no NVRTC");
  std::string cache =
      (std::filesystem::temp_directory_path() / ("devrt-bench-nvrtc-" + std::to_string(getpid()))).string();
  ::setenv("DEVRT_CACHE_DIR", cache.c_str(), 1);
  std::string source = read_file(DEVRT_BENCH_CUDA_SOURCE);
  devrt::nvrtc::CompileOptions options;
  options.arch = "compute_75";
  options.use_cache = cached;
  if (cached) static_cast<void>(devrt::nvrtc::compile(source, options)); // fill the cache
  for (auto _ : state) {
    devrt::Result<devrt::nvrtc::Program> program = devrt::nvrtc::compile(source, options);
    if (!program.ok() || program->from_cache != cached) return state.SkipWithError("unexpected compile result");
    benchmark::DoNotOptimize(program->bytes.data());
  }
  std::filesystem::remove_all(cache);
}

void nvrtc_compile_cold(benchmark::State& state) { nvrtc_compile(state, false); }
void nvrtc_compile_cached(benchmark::State& state) { nvrtc_compile(state, true); }

} // namespace

BENCHMARK(cuda_launch_sync_raw)->Name("cuda/launch_sync/raw")->UseRealTime();
BENCHMARK(cuda_launch_sync_devrt)->Name("cuda/launch_sync/devrt")->UseRealTime();
BENCHMARK(cuda_launch_batch_raw)->Name("cuda/launch_1000/raw")->UseRealTime();
BENCHMARK(cuda_timed_pair_raw)->Name("cuda/timed_pair/raw")->UseRealTime();
BENCHMARK(cuda_timed_pair_devrt)->Name("cuda/timed_pair/devrt")->UseRealTime();
BENCHMARK(cuda_launch_batch_devrt)->Name("cuda/launch_1000/devrt")->UseRealTime();
BENCHMARK(cuda_launch_each_devrt)->Name("launch_each/cuda:0/100")->UseRealTime();
BENCHMARK(cuda_graph_replay_devrt)->Name("graph_replay/cuda:0/100")->UseRealTime();
BENCHMARK(cuda_graph_replay_raw)->Name("raw_graph_replay/cuda:0/100")->UseRealTime();
BENCHMARK(cuda_alloc_free_raw)->Name("cuda/alloc_free/raw")->Arg(1 << 20);
BENCHMARK(cuda_alloc_free_pool)->Name("cuda/alloc_free/pool")->Arg(1 << 20);
BENCHMARK(cuda_alloc_free_async)->Name("cuda/alloc_free/async")->Arg(1 << 20);
BENCHMARK(cuda_alloc_free_buffer)->Name("cuda/alloc_free/buffer")->Arg(1 << 20);
BENCHMARK(cuda_h2d_raw)->Name("cuda/h2d/raw")->ArgsProduct({{1 << 20, 256 << 20}, {0, 1}})->UseRealTime();
BENCHMARK(cuda_h2d_devrt)->Name("cuda/h2d/devrt")->ArgsProduct({{1 << 20, 256 << 20}, {0, 1}})->UseRealTime();
BENCHMARK(cuda_d2h_raw)->Name("cuda/d2h/raw")->ArgsProduct({{1 << 20, 256 << 20}, {0, 1}})->UseRealTime();
BENCHMARK(cuda_d2h_devrt)->Name("cuda/d2h/devrt")->ArgsProduct({{1 << 20, 256 << 20}, {0, 1}})->UseRealTime();
BENCHMARK(nvrtc_compile_cold)->Name("nvrtc/compile/cold")->Unit(benchmark::kMillisecond);
BENCHMARK(nvrtc_compile_cached)->Name("nvrtc/compile/cached")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
