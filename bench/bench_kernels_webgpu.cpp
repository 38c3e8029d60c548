// SPDX-License-Identifier: Apache-2.0
// bench-kernels' raw WebGPU side: what a hand-written webgpu.h program does for each benchmark,
// through the same dlopened implementation (DEVRT_WEBGPU_LIBRARY) and the same declarations devrt's
// backend uses. It opens its own instance, adapter and device on the benchmark thread (Dawn's
// OpenGL ES backend binds a device to the thread that made it), keeps one bind group and one
// uniform buffer for the kernel, one staging buffer for reads, and waits by processing events.
#include "bench_kernels.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/webgpu/webgpu_api.hpp"
#include "backends/webgpu/webgpu_library.hpp"
#include "support/dynamic_library.hpp"

namespace bench_kernels {
namespace {

using namespace devrt::webgpu;

std::string text(WGPUStringView view) {
  if (view.data == nullptr) return {};
  return view.length == SIZE_MAX ? std::string(view.data) : std::string(view.data, view.length);
}

class RawWebgpu final : public RawDevice {
public:
  explicit RawWebgpu(const std::string& name) {
    // The library devrt's backend opens: the first of the same candidates that loads.
    if (devrt::Status opened = library_.open(kLibrary, library_candidates()); !opened.ok()) {
      error = "raw WebGPU: " + std::string(opened.message());
      return;
    }
#define DEVRT_BENCH_RESOLVE(symbol, result, parameters) library_.resolve(#symbol, api_.symbol);
    DEVRT_WEBGPU_SYMBOLS(DEVRT_BENCH_RESOLVE)
#undef DEVRT_BENCH_RESOLVE
    open_surfaceless_display();
    instance_ = api_.wgpuCreateInstance(nullptr);
    for (WGPUEnum backend : {kBackendVulkan, kBackendOpenGLES}) {
      adapter_ = request_adapter(backend, backend == kBackendOpenGLES ? kFeatureLevelCompatibility : kFeatureLevelCore);
      WGPUAdapterInfo info{};
      if (adapter_ != nullptr && api_.wgpuAdapterGetInfo(adapter_, &info) == kSuccess) {
        const bool match = text(info.device) == name;
        gpu = info.adapterType == kAdapterDiscreteGPU || info.adapterType == kAdapterIntegratedGPU;
        api_.wgpuAdapterInfoFreeMembers(info);
        if (match) break;
      }
      adapter_ = nullptr;
    }
    if (adapter_ == nullptr || !request_device()) {
      error = "raw WebGPU: no adapter or device named '" + name + "'";
      return;
    }
    queue_ = api_.wgpuDeviceGetQueue(device_);
    prepare_kernel();
  }

  void launch_sync(benchmark::State& state) override {
    for (auto _ : state) {
      dispatch_and_submit(1, launch_group_);
      wait_idle();
    }
  }
  void launch_batch(benchmark::State& state) override {
    for (auto _ : state) {
      dispatch_and_submit(kBatch, launch_group_);
      wait_idle();
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
  }
  void alloc_free(benchmark::State& state) override {
    for (auto _ : state) {
      WGPUBuffer b =
          make_buffer(static_cast<std::uint64_t>(state.range(0)), kUsageStorage | kUsageCopySrc | kUsageCopyDst);
      api_.wgpuBufferDestroy(b);
      api_.wgpuBufferRelease(b);
    }
  }
  // Writes through the queue (complete on the GPU once the queue is idle); reads through one kept
  // MapRead staging buffer: copy, submit, map, memcpy, unmap.
  void copy(benchmark::State& state, bool write) override {
    auto n = static_cast<std::uint64_t>(state.range(0));
    std::vector<unsigned char> host(n, 1);
    WGPUBuffer buffer = make_buffer(n, kUsageStorage | kUsageCopySrc | kUsageCopyDst);
    WGPUBuffer staging = write ? nullptr : make_buffer(n, kUsageMapRead | kUsageCopyDst);
    if (!write) read(buffer, staging, host.data(), n); // the first map of a new buffer, untimed
    for (auto _ : state) {
      if (write) {
        api_.wgpuQueueWriteBuffer(queue_, buffer, 0, host.data(), n);
        wait_idle();
      } else {
        read(buffer, staging, host.data(), n);
      }
    }
    for (WGPUBuffer b : {buffer, staging}) {
      if (b != nullptr) api_.wgpuBufferRelease(b);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
  }
  // 1024 floats written, scaled by the kernel, read back.
  void round_trip(benchmark::State& state) override {
    std::vector<float> host(kRoundTripElements, 1.0f);
    const std::uint64_t bytes = kRoundTripElements * sizeof(float);
    WGPUBuffer staging = make_buffer(bytes, kUsageMapRead | kUsageCopyDst);
    for (auto _ : state) {
      api_.wgpuQueueWriteBuffer(queue_, buffer_, 0, host.data(), bytes);
      dispatch_and_submit(1, round_trip_group_, kRoundTripElements / kBlock);
      read(buffer_, staging, host.data(), bytes);
    }
    api_.wgpuBufferRelease(staging);
  }

private:
  bool wait(const std::atomic<bool>& done) {
    while (!done.load(std::memory_order_acquire)) api_.wgpuInstanceProcessEvents(instance_);
    return true;
  }

  // Mesa's surfaceless EGL display for Dawn's OpenGL ES backend, as devrt opens it.
  void open_surfaceless_display() {
    std::string reason;
    if (!egl_.open({"libEGL.so.1"}, reason) || !egl_.resolve("eglGetProcAddress", egl_get_proc_)) return;
    using GetPlatformDisplay = void* (*)(std::uint32_t, void*, const std::intptr_t*);
    auto get_display = reinterpret_cast<GetPlatformDisplay>(egl_get_proc_("eglGetPlatformDisplayEXT"));
    if (get_display != nullptr)
      egl_display_ = get_display(0x31DD /* EGL_PLATFORM_SURFACELESS_MESA */, nullptr, nullptr);
  }

  WGPUAdapter request_adapter(WGPUEnum backend, WGPUEnum level) {
    struct Answer {
      std::atomic<bool> done{false};
      WGPUAdapter adapter = nullptr;
    } answer;
    WGPURequestAdapterOptions options{};
    options.backendType = backend;
    options.featureLevel = level;
    DawnRequestAdapterOptionsGetGLProc gl{};
    if (backend == kBackendOpenGLES && egl_display_ != nullptr) {
      gl.chain.sType = kSTypeDawnRequestAdapterOptionsGetGLProc;
      gl.getProc = egl_get_proc_;
      gl.display = egl_display_;
      options.nextInChain = &gl.chain;
    }
    WGPURequestAdapterCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum status, WGPUAdapter adapter, WGPUStringView, void* data, void*) {
      auto* a = static_cast<Answer*>(data);
      if (status == kSuccess) a->adapter = adapter;
      a->done.store(true, std::memory_order_release);
    };
    callback.userdata1 = &answer;
    api_.wgpuInstanceRequestAdapter(instance_, &options, callback);
    wait(answer.done);
    return answer.adapter;
  }

  bool request_device() {
    WGPULimits limits{};
    api_.wgpuAdapterGetLimits(adapter_, &limits);
    struct Answer {
      std::atomic<bool> done{false};
      WGPUDevice device = nullptr;
    } answer;
    WGPUDeviceDescriptor descriptor{};
    descriptor.requiredLimits = &limits;
    WGPURequestDeviceCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum status, WGPUDevice device, WGPUStringView, void* data, void*) {
      auto* a = static_cast<Answer*>(data);
      if (status == kSuccess) a->device = device;
      a->done.store(true, std::memory_order_release);
    };
    callback.userdata1 = &answer;
    api_.wgpuAdapterRequestDevice(adapter_, &descriptor, callback);
    wait(answer.done);
    device_ = answer.device;
    return device_ != nullptr;
  }

  WGPUBuffer make_buffer(std::uint64_t bytes, WGPUFlags usage) {
    WGPUBufferDescriptor descriptor{};
    descriptor.size = bytes;
    descriptor.usage = usage;
    return api_.wgpuDeviceCreateBuffer(device_, &descriptor);
  }

  // The scale kernel (block_x = 64), the 1 MiB buffer, and two bind groups: n = 0 (the launch
  // rows' empty kernel) and n = 1024 (the round trip).
  void prepare_kernel() {
    const std::string source = read_file(DEVRT_BENCH_WGSL_SCALE);
    WGPUShaderSourceWGSL wgsl{};
    wgsl.chain.sType = kSTypeShaderSourceWGSL;
    wgsl.code = WGPUStringView{source.data(), source.size()};
    WGPUShaderModuleDescriptor module_descriptor{};
    module_descriptor.nextInChain = &wgsl.chain;
    WGPUShaderModule module = api_.wgpuDeviceCreateShaderModule(device_, &module_descriptor);
    const char* key = "block_x";
    WGPUConstantEntry block{nullptr, WGPUStringView{key, std::strlen(key)}, double(kBlock)};
    WGPUComputePipelineDescriptor descriptor{};
    descriptor.compute.module = module;
    descriptor.compute.entryPoint = WGPUStringView{"scale", 5};
    descriptor.compute.constantCount = 1;
    descriptor.compute.constants = &block;
    pipeline_ = api_.wgpuDeviceCreateComputePipeline(device_, &descriptor);
    api_.wgpuShaderModuleRelease(module);
    buffer_ = make_buffer(kLaunchBufferBytes, kUsageStorage | kUsageCopySrc | kUsageCopyDst);
    launch_group_ = bind_group(0, 1);
    round_trip_group_ = bind_group(static_cast<std::int32_t>(kRoundTripElements), kRoundTripElements / kBlock);
  }

  WGPUBindGroup bind_group(std::int32_t n, std::uint32_t grid) {
    std::uint32_t words[4] = {};
    const float factor = 1.0f;
    std::memcpy(&words[0], &factor, 4);
    std::memcpy(&words[1], &n, 4);
    words[2] = grid; // packGridDimX
    WGPUBuffer uniform = make_buffer(sizeof words, kUsageUniform | kUsageCopyDst);
    api_.wgpuQueueWriteBuffer(queue_, uniform, 0, words, sizeof words);
    WGPUBindGroupEntry entries[2] = {};
    entries[0].binding = 0;
    entries[0].buffer = buffer_;
    entries[0].size = kLaunchBufferBytes;
    entries[1].binding = 1;
    entries[1].buffer = uniform;
    entries[1].size = sizeof words;
    WGPUBindGroupLayout layout = api_.wgpuComputePipelineGetBindGroupLayout(pipeline_, 0);
    WGPUBindGroupDescriptor descriptor{};
    descriptor.layout = layout;
    descriptor.entryCount = 2;
    descriptor.entries = entries;
    WGPUBindGroup group = api_.wgpuDeviceCreateBindGroup(device_, &descriptor);
    api_.wgpuBindGroupLayoutRelease(layout);
    api_.wgpuBufferRelease(uniform); // the bind group keeps it
    return group;
  }

  void dispatch_and_submit(int dispatches, WGPUBindGroup group, std::uint32_t grid = 1) {
    WGPUCommandEncoder encoder = api_.wgpuDeviceCreateCommandEncoder(device_, nullptr);
    WGPUComputePassEncoder pass = api_.wgpuCommandEncoderBeginComputePass(encoder, nullptr);
    api_.wgpuComputePassEncoderSetPipeline(pass, pipeline_);
    api_.wgpuComputePassEncoderSetBindGroup(pass, 0, group, 0, nullptr);
    for (int i = 0; i < dispatches; ++i) api_.wgpuComputePassEncoderDispatchWorkgroups(pass, grid, 1, 1);
    api_.wgpuComputePassEncoderEnd(pass);
    WGPUCommandBuffer commands = api_.wgpuCommandEncoderFinish(encoder, nullptr);
    api_.wgpuQueueSubmit(queue_, 1, &commands);
    api_.wgpuCommandBufferRelease(commands);
    api_.wgpuComputePassEncoderRelease(pass);
    api_.wgpuCommandEncoderRelease(encoder);
  }

  void wait_idle() {
    std::atomic<bool> done{false};
    WGPUQueueWorkDoneCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum, WGPUStringView, void* data, void*) {
      static_cast<std::atomic<bool>*>(data)->store(true, std::memory_order_release);
    };
    callback.userdata1 = &done;
    api_.wgpuQueueOnSubmittedWorkDone(queue_, callback);
    wait(done);
  }

  void read(WGPUBuffer source, WGPUBuffer staging, void* out, std::uint64_t bytes) {
    WGPUCommandEncoder encoder = api_.wgpuDeviceCreateCommandEncoder(device_, nullptr);
    api_.wgpuCommandEncoderCopyBufferToBuffer(encoder, source, 0, staging, 0, bytes);
    WGPUCommandBuffer commands = api_.wgpuCommandEncoderFinish(encoder, nullptr);
    api_.wgpuQueueSubmit(queue_, 1, &commands);
    api_.wgpuCommandBufferRelease(commands);
    api_.wgpuCommandEncoderRelease(encoder);
    std::atomic<bool> mapped{false};
    WGPUBufferMapCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum, WGPUStringView, void* data, void*) {
      static_cast<std::atomic<bool>*>(data)->store(true, std::memory_order_release);
    };
    callback.userdata1 = &mapped;
    api_.wgpuBufferMapAsync(staging, kMapRead, 0, bytes, callback);
    wait(mapped);
    std::memcpy(out, api_.wgpuBufferGetConstMappedRange(staging, 0, bytes), bytes);
    api_.wgpuBufferUnmap(staging);
  }

  Api api_{};
  devrt::detail::DynamicLibrary library_, egl_;
  void* (*egl_get_proc_)(const char*) = nullptr;
  void* egl_display_ = nullptr;
  WGPUInstance instance_ = nullptr;
  WGPUAdapter adapter_ = nullptr;
  WGPUDevice device_ = nullptr;
  WGPUQueue queue_ = nullptr;
  WGPUComputePipeline pipeline_ = nullptr;
  WGPUBuffer buffer_ = nullptr;
  WGPUBindGroup launch_group_ = nullptr, round_trip_group_ = nullptr;
};

} // namespace

std::shared_ptr<RawDevice> open_raw_webgpu(const std::string& name) { return std::make_shared<RawWebgpu>(name); }

} // namespace bench_kernels
