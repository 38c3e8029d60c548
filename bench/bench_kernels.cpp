// SPDX-License-Identifier: Apache-2.0
// Launch, allocation and copy benchmarks for the GPU-API backends, each against the raw vendor
// API in the same run, on the same device (the raw side opens the device whose name devrt
// reports), doing the same operation. Every present device is measured, GPUs first; rows are
// named <backend>:<id>/<what>/<variant>[/<bytes>] and the JSON context maps each <backend>:<id> to
// its device name. A backend without a driver is skipped with its reason (printed, and recorded
// in the context as "skipped <backend>"), never aborting the run. bench/report.py prints the
// ratios, one row per device.
#include <devrt/backend/workspace_pool.hpp>
#include <devrt/devrt.hpp>
#include <devrt/graph.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "bench_kernels.hpp"

namespace bench_kernels {

std::string read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

namespace {

// ---- devrt's side: the same for every backend ----------------------------------------------------

// A 1 MiB buffer and the `scale` kernel launched with n = 0 (an empty kernel that still binds a
// buffer and two scalars, like the raw side). Prepared on first use; `error` says why not.
struct DevrtSide {
  devrt::Device device;
  devrt::ModuleFormat format = devrt::ModuleFormat::opencl_c;
  std::string code;
  const char* entry = "scale";
  devrt::Module module;
  devrt::Function scale;
  devrt::Buffer buffer;
  bool prepared = false;
  std::string error;

  bool ready(benchmark::State& state) {
    if (!prepared && code.empty()) {
      prepared = true;
      error = "no kernel code for " + devrt::to_string(device) + " (SPIR-V needs glslc at build time)";
    }
    if (!prepared) {
      prepared = true;
      devrt::Result<devrt::Module> loaded = devrt::Module::load(device, format, code);
      devrt::Result<devrt::Function> function =
          loaded.ok() ? loaded->function(entry) : devrt::Result<devrt::Function>(loaded.status());
      devrt::Result<devrt::Buffer> allocated = devrt::Buffer::allocate(device, kLaunchBufferBytes);
      if (!function.ok()) {
        error = std::string(function.status().message());
      } else if (!allocated.ok()) {
        error = std::string(allocated.status().message());
      } else {
        module = std::move(loaded).value();
        scale = std::move(function).value();
        buffer = std::move(allocated).value();
      }
    }
    if (!error.empty()) state.SkipWithError(error.c_str());
    return error.empty();
  }
};

devrt::Status launch_empty(const DevrtSide& side, devrt::StreamRef stream) {
  return side.scale.launch({.grid = {1}, .block = {kBlock}}, {side.buffer, 1.0f, std::int32_t{0}}, stream);
}

void devrt_launch_sync(benchmark::State& state, DevrtSide& side) {
  if (!side.ready(state)) return;
  devrt::StreamRef stream = devrt::current_stream(side.device);
  for (auto _ : state) {
    if (!launch_empty(side, stream).ok() || !devrt::synchronize(stream).ok()) state.SkipWithError("launch failed");
  }
}

void devrt_launch_batch(benchmark::State& state, DevrtSide& side, bool sync_each) {
  if (!side.ready(state)) return;
  devrt::StreamRef stream = devrt::current_stream(side.device);
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      if (!launch_empty(side, stream).ok()) state.SkipWithError("launch failed");
      if (sync_each) static_cast<void>(devrt::synchronize(stream));
    }
    if (!devrt::synchronize(stream).ok()) state.SkipWithError("synchronize failed");
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// kRoundTripElements floats to the device, scaled there, and back (complete on return).
// Two timed events recorded on the current stream with nothing between them, the second waited
// for, the interval read.
void devrt_timed_pair(benchmark::State& state, devrt::Device device) {
  devrt::Result<devrt::Event> start = devrt::Event::create(device, {.timing = true});
  devrt::Result<devrt::Event> end = devrt::Event::create(device, {.timing = true});
  if (!start.ok() || !end.ok()) {
    state.SkipWithError(std::string(start.status().message()).c_str());
    return;
  }
  const devrt::StreamRef stream = devrt::current_stream(device);
  for (auto _ : state) {
    static_cast<void>(start->record(stream));
    static_cast<void>(end->record(stream));
    static_cast<void>(end->synchronize());
    benchmark::DoNotOptimize(devrt::Event::elapsed_ns(*start, *end));
  }
}

void devrt_round_trip(benchmark::State& state, DevrtSide& side) {
  if (!side.ready(state)) return;
  std::vector<float> host(kRoundTripElements, 1.0f);
  const std::size_t bytes = host.size() * sizeof(float);
  devrt::StreamRef stream = devrt::current_stream(side.device);
  for (auto _ : state) {
    devrt::Status s = devrt::copy(devrt::host_span(host.data(), bytes), 0, side.buffer, 0, bytes, stream);
    if (s.ok()) {
      s = side.scale.launch({.grid = {kRoundTripElements / kBlock}, .block = {kBlock}},
                            {side.buffer, 1.0f, static_cast<std::int32_t>(kRoundTripElements)}, stream);
    }
    if (s.ok())
      s = devrt::copy(side.buffer, 0, devrt::MemorySpan{devrt::kHostDevice, host.data(), bytes}, 0, bytes, stream);
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
}

// kGraphLaunches launches of `scale` on a stream, issued one by one or replayed as one captured
// graph, waited for per iteration.
devrt::Status launch_graph_work(const DevrtSide& side, devrt::StreamRef stream) {
  for (int i = 0; i < kGraphLaunches; ++i) {
    DEVRT_RETURN_IF_ERROR(side.scale.launch({.grid = {kGraphElements / kBlock}, .block = {kBlock}},
                                            {side.buffer, 1.0f, static_cast<std::int32_t>(kGraphElements)}, stream));
  }
  return devrt::Status();
}

void devrt_graph_work(benchmark::State& state, DevrtSide& side, bool replay) {
  if (!side.ready(state)) return;
  devrt::Result<devrt::Stream> stream = devrt::Stream::create(side.device);
  if (!stream.ok()) return state.SkipWithError(std::string(stream.status().message()).c_str());
  devrt::Graph graph;
  if (replay) {
    devrt::Status begun = devrt::begin_capture(*stream);
    devrt::Status issued = begun.ok() ? launch_graph_work(side, *stream) : begun;
    devrt::Result<devrt::Graph> captured = devrt::end_capture(*stream);
    if (!issued.ok() || !captured.ok()) {
      return state.SkipWithError(std::string((issued.ok() ? captured.status() : issued).message()).c_str());
    }
    graph = std::move(captured).value();
    state.SetLabel(devrt::graph_mode_name(graph.mode()));
  }
  for (auto _ : state) {
    devrt::Status s = replay ? graph.launch(*stream) : launch_graph_work(side, *stream);
    if (s.ok()) s = stream->synchronize();
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetItemsProcessed(state.iterations() * kGraphLaunches);
}

void devrt_alloc_free(benchmark::State& state, devrt::Device device) {
  for (auto _ : state) {
    devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(device, static_cast<std::size_t>(state.range(0)));
    if (!buffer.ok()) return state.SkipWithError(std::string(buffer.status().message()).c_str());
    benchmark::DoNotOptimize(buffer->data());
  }
}

void devrt_pool_alloc_free(benchmark::State& state, devrt::Device device) {
  devrt::WorkspacePool pool(devrt::Registry::global().find(device.kind), device);
  for (auto _ : state) {
    devrt::Result<devrt::Workspace> block = pool.allocate(static_cast<std::size_t>(state.range(0)));
    if (!block.ok()) return state.SkipWithError(std::string(block.status().message()).c_str());
    benchmark::DoNotOptimize(block->data());
  }
}

// Host memory <-> a device buffer, complete each time: each copy is followed by the synchronize
// the copy rule names (devrt::copy_device), which a backend whose reads end on return makes cheap.
void devrt_copy(benchmark::State& state, devrt::Device device, bool write) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<unsigned char> host(n, 1);
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(device, n);
  if (!buffer.ok()) return state.SkipWithError(std::string(buffer.status().message()).c_str());
  devrt::StreamRef stream = devrt::current_stream(device);
  if (!write) { // first uses (a staging buffer made and mapped), untimed, as on the raw side
    static_cast<void>(devrt::copy(*buffer, devrt::MemorySpan{devrt::kHostDevice, host.data(), n}, stream));
  }
  for (auto _ : state) {
    devrt::Status s = write ? devrt::copy(devrt::host_span(host.data(), n), *buffer, stream)
                            : devrt::copy(*buffer, devrt::MemorySpan{devrt::kHostDevice, host.data(), n}, stream);
    if (s.ok()) s = devrt::synchronize(stream);
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

// The same through a texture-scoped tensor (global.texture, rows of kTextureWidth float32 RGBA
// texels): copy_from_host + synchronize, or copy_to_host (complete on return).
void devrt_texture_copy(benchmark::State& state, devrt::Device device, bool write) {
  auto n = static_cast<std::size_t>(state.range(0));
  const auto rows = static_cast<std::int64_t>(n / kTextureRowBytes);
  std::vector<unsigned char> host(n, 1);
  devrt::TensorOptions options;
  options.scope = devrt::MemoryScope::texture;
  devrt::Result<devrt::Tensor> texture = devrt::Tensor::empty({rows, static_cast<std::int64_t>(kTextureWidth), 4},
                                                              devrt::DataType::float32(), device, options);
  if (!texture.ok()) return state.SkipWithError(std::string(texture.status().message()).c_str());
  devrt::StreamRef stream = devrt::current_stream(device);
  for (auto _ : state) {
    devrt::Status s =
        write ? texture->copy_from_host(host.data(), n, stream) : texture->copy_to_host(host.data(), n, stream);
    if (s.ok()) s = devrt::synchronize(stream);
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

// ---- What each backend registers ----------------------------------------------------------------

struct Entry {
  devrt::Device device;
  std::string name;
  std::shared_ptr<DevrtSide> side;
  std::shared_ptr<RawDevice> raw;
  bool batched_backend = false; // Vulkan: also one submit per dispatch
};

bool raw_ready(RawDevice& raw, benchmark::State& state) {
  if (!raw.error.empty()) state.SkipWithError(raw.error.c_str());
  return raw.error.empty();
}

bool raw_launch_ready(RawDevice& raw, benchmark::State& state) {
  if (!raw_ready(raw, state)) return false;
  if (!raw.launch_error.empty()) state.SkipWithError(raw.launch_error.c_str());
  return raw.launch_error.empty();
}

// launch_each, graph_replay and raw_graph_replay, named <what>/<device>/<launches> so that the
// ratios read straight from the JSON.
void register_graph_rows(const std::string& prefix, const std::shared_ptr<DevrtSide>& side,
                         const std::shared_ptr<RawDevice>& raw) {
  const std::string graph_suffix = "/" + prefix + "/" + std::to_string(kGraphLaunches);
  benchmark::RegisterBenchmark(("launch_each" + graph_suffix).c_str(), [side](benchmark::State& s) {
    devrt_graph_work(s, *side, false);
  })->UseRealTime();
  benchmark::RegisterBenchmark(("graph_replay" + graph_suffix).c_str(), [side](benchmark::State& s) {
    devrt_graph_work(s, *side, true);
  })->UseRealTime();
  benchmark::RegisterBenchmark(("raw_graph_replay" + graph_suffix).c_str(), [raw](benchmark::State& s) {
    if (raw_launch_ready(*raw, s)) raw->graph_replay(s);
  })->UseRealTime();
}

void register_entry(const Entry& e) {
  const std::string prefix = devrt::to_string(e.device);
  std::shared_ptr<DevrtSide> side = e.side;
  std::shared_ptr<RawDevice> raw = e.raw;
  const devrt::Device device = e.device;
  auto named = [&](const char* what) { return prefix + "/" + what; };
  benchmark::RegisterBenchmark(named("launch_sync/raw").c_str(), [raw](benchmark::State& s) {
    if (raw_launch_ready(*raw, s)) raw->launch_sync(s);
  })->UseRealTime();
  benchmark::RegisterBenchmark(named("launch_sync/devrt").c_str(), [side](benchmark::State& s) {
    devrt_launch_sync(s, *side);
  })->UseRealTime();
  benchmark::RegisterBenchmark(named("launch_1000/raw").c_str(), [raw](benchmark::State& s) {
    if (raw_launch_ready(*raw, s)) raw->launch_batch(s);
  })->UseRealTime();
  benchmark::RegisterBenchmark(named("launch_1000/devrt").c_str(), [side](benchmark::State& s) {
    devrt_launch_batch(s, *side, false);
  })->UseRealTime();
  if (e.batched_backend) {
    benchmark::RegisterBenchmark(named("launch_1000/single_submit").c_str(), [side](benchmark::State& s) {
      devrt_launch_batch(s, *side, true);
    })->UseRealTime();
  }
  benchmark::RegisterBenchmark(named("round_trip_1024/raw").c_str(), [raw](benchmark::State& s) {
    if (raw_launch_ready(*raw, s)) raw->round_trip(s);
  })->UseRealTime();
  benchmark::RegisterBenchmark(named("round_trip_1024/devrt").c_str(), [side](benchmark::State& s) {
    devrt_round_trip(s, *side);
  })->UseRealTime();
  register_graph_rows(prefix, side, raw);
  benchmark::RegisterBenchmark(named("timed_pair/raw").c_str(), [raw](benchmark::State& s) {
    if (raw_ready(*raw, s)) raw->timed_pair(s);
  })->UseRealTime();
  benchmark::RegisterBenchmark(named("timed_pair/devrt").c_str(), [device](benchmark::State& s) {
    devrt_timed_pair(s, device);
  })->UseRealTime();
  benchmark::RegisterBenchmark(named("alloc_free/raw").c_str(), [raw](benchmark::State& s) {
    if (raw_ready(*raw, s)) raw->alloc_free(s);
  })->Arg(1 << 20);
  benchmark::RegisterBenchmark(named("alloc_free/devrt").c_str(), [device](benchmark::State& s) {
    devrt_alloc_free(s, device);
  })->Arg(1 << 20);
  benchmark::RegisterBenchmark(named("alloc_free/pool").c_str(), [device](benchmark::State& s) {
    devrt_pool_alloc_free(s, device);
  })->Arg(1 << 20);
  for (bool write : {true, false}) {
    const char* direction = write ? "write" : "read";
    benchmark::RegisterBenchmark((prefix + "/" + direction + "/raw").c_str(),
                                 [raw, write](benchmark::State& s) {
                                   if (raw_ready(*raw, s)) raw->copy(s, write);
                                 })
        ->Arg(4 << 10)
        ->Arg(1 << 20)
        ->Arg(64 << 20)
        ->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "/" + direction + "/devrt").c_str(),
                                 [device, write](benchmark::State& s) { devrt_copy(s, device, write); })
        ->Arg(4 << 10)
        ->Arg(1 << 20)
        ->Arg(64 << 20)
        ->UseRealTime();
    // The same bytes as a texture: compare with the buffer rows above and the raw API's image copy.
    const std::string texture = prefix + "/texture_" + direction;
    benchmark::RegisterBenchmark((texture + "/raw").c_str(),
                                 [raw, write](benchmark::State& s) {
                                   if (raw_ready(*raw, s)) raw->texture_copy(s, write);
                                 })
        ->Arg(1 << 20)
        ->Arg(64 << 20)
        ->UseRealTime();
    benchmark::RegisterBenchmark((texture + "/devrt").c_str(),
                                 [device, write](benchmark::State& s) { devrt_texture_copy(s, device, write); })
        ->Arg(1 << 20)
        ->Arg(64 << 20)
        ->UseRealTime();
  }
}

// Every present device of the GPU-API backends compiled in, GPUs first; unavailable backends are
// reported and skipped.
std::vector<Entry> discover() {
  std::vector<Entry> entries;
  const devrt::Registry& registry = devrt::Registry::global();
  struct Kind {
    devrt::DeviceKind kind;
    devrt::ModuleFormat format;
    const char* code_path;
    const char* entry;
  };
  std::vector<Kind> kinds;
#if DEVRT_WITH_OPENCL
  kinds.push_back({devrt::DeviceKind::opencl, devrt::ModuleFormat::opencl_c, DEVRT_BENCH_OPENCL_SOURCE, "scale"});
#endif
#if DEVRT_WITH_VULKAN
  kinds.push_back({devrt::DeviceKind::vulkan, devrt::ModuleFormat::spirv, DEVRT_BENCH_SPIRV_SCALE, "main"});
#endif
#if DEVRT_WITH_WEBGPU
  kinds.push_back({devrt::DeviceKind::webgpu, devrt::ModuleFormat::wgsl, DEVRT_BENCH_WGSL_SCALE, "scale"});
#endif
  for (const Kind& k : kinds) {
    devrt::BackendRef backend = registry.find(k.kind);
    const std::string backend_name(devrt::device_kind_name(k.kind));
    devrt::Status available = backend ? backend.availability() : devrt::Status();
    if (!backend || !available.ok()) {
      std::string reason = backend ? std::string(available.message()) : std::string("not registered");
      std::fprintf(stderr, "bench-kernels: skipping %s: %s\n", backend_name.c_str(), reason.c_str());
      benchmark::AddCustomContext("skipped " + backend_name, reason);
      // A row that says so, which also keeps the JSON output valid when nothing else runs.
      benchmark::RegisterBenchmark((backend_name + "/skipped").c_str(),
                                   [reason](benchmark::State& state) { state.SkipWithError(reason.c_str()); });
      continue;
    }
    const std::int32_t count = backend.device_count().value_or(0);
    for (std::int32_t id = 0; id < count; ++id) {
      Entry e;
      e.device = devrt::Device{k.kind, id};
      e.name = devrt::get_attribute<devrt::Attribute::device_name>(e.device).value_or(std::nullopt).value_or("?");
      e.side = std::make_shared<DevrtSide>();
      e.side->device = e.device;
      e.side->format = k.format;
      e.side->code = read_file(k.code_path);
      e.side->entry = k.entry;
#if DEVRT_WITH_OPENCL
      if (k.kind == devrt::DeviceKind::opencl) e.raw = open_raw_opencl(e.name);
#endif
#if DEVRT_WITH_VULKAN
      if (k.kind == devrt::DeviceKind::vulkan) {
        e.raw = open_raw_vulkan(e.name);
        e.batched_backend = true;
      }
#endif
#if DEVRT_WITH_WEBGPU
      if (k.kind == devrt::DeviceKind::webgpu) e.raw = open_raw_webgpu(e.name);
#endif
      entries.push_back(std::move(e));
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.raw->gpu > b.raw->gpu; });
  return entries;
}

} // namespace
} // namespace bench_kernels

int main(int argc, char** argv) {
  using namespace bench_kernels;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::vector<Entry> entries = discover();
  for (const Entry& e : entries) {
    benchmark::AddCustomContext("device " + devrt::to_string(e.device),
                                e.name + (e.raw->gpu ? " (GPU)" : "") +
                                    (e.raw->error.empty() ? "" : "; raw side: " + e.raw->error));
    register_entry(e);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
