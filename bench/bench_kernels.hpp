// SPDX-License-Identifier: Apache-2.0
// What bench-kernels' files share: the raw vendor API's side of each benchmark, behind one
// interface per device, and the sizes every side uses.
#ifndef DEVRT_BENCH_BENCH_KERNELS_HPP
#define DEVRT_BENCH_BENCH_KERNELS_HPP

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bench_kernels {

constexpr int kBatch = 1000;
constexpr std::uint32_t kBlock = 64;
constexpr std::size_t kLaunchBufferBytes = 1 << 20;
// The round trip: this many floats written, scaled by the kernel and read back.
constexpr std::uint32_t kRoundTripElements = 1024;
// The graph rows: this many launches of `scale` over this many floats each.
constexpr int kGraphLaunches = 100;
constexpr std::uint32_t kGraphElements = 1024;
// Textures are rows of this many float32 RGBA texels (16 KiB); a benchmark of n bytes copies
// n / 16 KiB rows.
constexpr std::size_t kTextureWidth = 1024;
constexpr std::size_t kTextureRowBytes = kTextureWidth * 4 * sizeof(float);

// The whole file at `path` ("" when it cannot be read).
std::string read_file(const char* path);

// The raw API's view of one device: launch, allocation and copies done by hand. Each backend
// implements it for the device matched by name; `error` says why it could not be opened.
class RawDevice {
public:
  virtual ~RawDevice() = default;
  virtual void launch_sync(benchmark::State& state) = 0;
  virtual void launch_batch(benchmark::State& state) = 0;
  virtual void alloc_free(benchmark::State& state) = 0;
  virtual void copy(benchmark::State& state, bool write) = 0;
  // The same bytes into or out of a float32 RGBA texture (kTextureWidth texels per row), one layer
  // of an image array as devrt makes it by default.
  virtual void texture_copy(benchmark::State& state, bool write) {
    static_cast<void>(write);
    state.SkipWithError("the raw side has no textures for this API");
  }
  // kRoundTripElements floats written, scaled by the `scale` kernel, read back.
  virtual void round_trip(benchmark::State& state) {
    state.SkipWithError("the raw side has no round trip for this API");
  }
  // kGraphLaunches launches of `scale` over kGraphElements floats recorded once with the API's own
  // replayable object (an OpenCL command buffer, a reusable Vulkan command buffer), then replayed
  // and waited for per iteration.
  virtual void graph_replay(benchmark::State& state) {
    state.SkipWithError("the raw side has no replayable command buffers for this API");
  }
  // A pair of timestamps on an empty queue, waited for and read back as an interval.
  virtual void timed_pair(benchmark::State& state) { state.SkipWithError("the raw side cannot time this API"); }
  bool gpu = false;
  std::string error;        // the device could not be opened: no raw row runs
  std::string launch_error; // no kernel: the launch rows do not run
};

// The raw side of the OpenCL device called `name` on any platform (bench_kernels_opencl.cpp).
std::shared_ptr<RawDevice> open_raw_opencl(const std::string& name);
// The raw side of the Vulkan physical device called `name` (bench_kernels_vulkan.cpp).
std::shared_ptr<RawDevice> open_raw_vulkan(const std::string& name);
// The raw side of the WebGPU adapter called `name` (bench_kernels_webgpu.cpp).
std::shared_ptr<RawDevice> open_raw_webgpu(const std::string& name);

} // namespace bench_kernels

#endif // DEVRT_BENCH_BENCH_KERNELS_HPP
