// SPDX-License-Identifier: Apache-2.0
// The fault sweep (-Dfault_injection=true): runs the conformance operations of one backend once
// cleanly, then once per driver entry point and per occurrence with that one call failing
// (src/support/fault_injection.hpp), and checks what docs/reliability.md promises:
//   - the operation returns an error naming the backend, the device, the devrt call, the driver
//     call and its error (or, for a call devrt may do without, succeeds with correct data);
//   - no crash or sanitizer finding (the suite runs under ASan+UBSan+LSan), no hang (a watchdog);
//   - every driver object created is released (creates and releases counted through the seam);
//   - the device still works afterwards and a buffer written before the fault reads back intact.
// With --discovery the same is done for the calls discovery makes, one child process per fault
// (DEVRT_FAULT): the failure names the call and code, and discovery succeeds when tried again.
// With --releases, the calls that release driver objects (a refused release leaks its object, so
// LeakSanitizer is off there). With --device-lost (Vulkan): a lost device fails every later call, and the process
// survives. With --shutdown: no driver object is left after devrt::shutdown() (devices included).
//
// Usage: test-fault-sweep <backend> [--releases | --discovery | --device-lost | --shutdown]; exit 77 skips with
// the reason. DEVRT_SWEEP_ONLY=<symbol> limits a sweep to one entry point.
#include <devrt/backend/backend.hpp>
#include <devrt/devrt.hpp>
#include <devrt/dlpack.hpp>
#include <devrt/graph.hpp>
#include <devrt/memory_stats.hpp>

#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/fault_injection.hpp"

namespace fault = devrt::detail::fault;
using devrt::Buffer;
using devrt::Device;
using devrt::ErrorCode;
using devrt::Status;

namespace {

std::string g_backend;
std::string g_error_name; // the error injected, by name
std::int64_t g_error_code = 0;
int g_failures = 0;

void fail(const std::string& what) {
  ++g_failures;
  std::printf("FAIL: %s\n", what.c_str());
  std::fflush(stdout);
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string read_text(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

Status mismatch(const char* what) {
  return devrt::make_error(ErrorCode::internal, "wrong data after ", what, " (reported as success)");
}

std::vector<float> floats(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i);
  return v;
}

// The test kernels: OpenCL's source holds them all; Vulkan has one SPIR-V file per shader, WebGPU
// one WGSL file.
devrt::Result<devrt::Module> load_kernel(Device device, const char* shader) {
  if (g_backend == "opencl") {
    return devrt::Module::load(device, devrt::ModuleFormat::opencl_c, read_text(DEVRT_TEST_OPENCL_SOURCE));
  }
  if (g_backend == "webgpu") {
    std::string path = std::string(DEVRT_TEST_WGSL_DIR) + "/" + shader + ".wgsl";
    return devrt::Module::load(device, devrt::ModuleFormat::wgsl, read_text(path.c_str()));
  }
  std::string path = std::string(DEVRT_TEST_SPIRV_DIR) + "/" + shader + ".spv";
  return devrt::Module::load_file(device, devrt::ModuleFormat::spirv, path.c_str());
}

Status read_back(const Buffer& buffer, std::vector<float>& out) {
  out.assign(buffer.size() / sizeof(float), 0.0f);
  DEVRT_RETURN_IF_ERROR(devrt::copy(buffer, devrt::host_span(out.data(), buffer.size())));
  return devrt::synchronize(devrt::current_stream(buffer.device()));
}

// The Vulkan staging ring's chunk size: DEVRT_VULKAN_STAGING_CHUNK (the test environment sets
// it), else the backend's 8 MiB.
std::size_t staging_chunk() {
  static const std::size_t chunk = [] {
    const char* text = std::getenv("DEVRT_VULKAN_STAGING_CHUNK");
    return text != nullptr ? std::size_t{std::strtoull(text, nullptr, 10)} : std::size_t{8} << 20;
  }();
  return chunk;
}

// Copies larger than two staging chunks (Vulkan's discrete-GPU path stages through a ring of two
// chunks, 8 MiB or DEVRT_VULKAN_STAGING_CHUNK): host -> device -> device -> host, each chunk's
// submission a place to fail. Bytes compared with memcmp (this file builds unoptimised under the
// sanitizers).
Status large_copies(Device device) {
  const std::size_t chunk = staging_chunk();
  static const std::size_t bytes = 2 * chunk + chunk / 2 + 4; // three chunks, the last a part of one
  static const std::vector<float> source = floats(bytes / sizeof(float), 0.25f);
  static std::vector<std::byte> back(bytes);
  DEVRT_ASSIGN_OR_RETURN(Buffer a, Buffer::allocate(device, bytes));
  DEVRT_ASSIGN_OR_RETURN(Buffer b, Buffer::allocate(device, bytes));
  DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(source.data(), bytes), a));
  DEVRT_RETURN_IF_ERROR(devrt::copy(a, b));
  std::memset(back.data(), 0, bytes);
  DEVRT_RETURN_IF_ERROR(devrt::copy(b, devrt::host_span(back.data(), bytes)));
  DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
  if (std::memcmp(back.data(), source.data(), bytes) != 0) return mismatch("a copy of three staging chunks");
  // Three uploads of less than a chunk in a row (odd sizes: never recorded inline), into one
  // batch: the third waits for a slot the first reserved, submitting the batch to get it.
  const std::size_t piece = chunk / 2 + 1;
  const auto* from = reinterpret_cast<const std::byte*>(source.data()) + 3;
  for (std::size_t i = 0; i < 3; ++i) {
    DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(from + i * piece, piece), 0, a, i * piece, piece));
  }
  DEVRT_RETURN_IF_ERROR(devrt::copy(a, 0, devrt::host_span(back.data(), 3 * piece), 0, 3 * piece));
  DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
  if (std::memcmp(back.data(), from, 3 * piece) != 0) return mismatch("three staged uploads in a row");
  return Status();
}

// Right after a fault, before anything else submits: two uploads of less than a chunk and a read.
// A staging slot left reserved for the failed batch would make the first wait forever.
Status upload_right_after(Device device) {
  static const std::size_t piece = staging_chunk() / 4 + 1;
  static const std::vector<float> source = floats(piece / 2, 0.75f);
  static std::vector<std::byte> back(2 * piece);
  const auto* from = reinterpret_cast<const std::byte*>(source.data());
  DEVRT_ASSIGN_OR_RETURN(Buffer buffer, Buffer::allocate(device, 2 * piece));
  DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(from, piece), 0, buffer, 0, piece));
  DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(from, piece), 0, buffer, piece, piece));
  DEVRT_RETURN_IF_ERROR(devrt::copy(buffer, devrt::host_span(back.data(), 2 * piece)));
  DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
  if (std::memcmp(back.data(), from, piece) != 0 || std::memcmp(back.data() + piece, from, piece) != 0) {
    return mismatch("two uploads right after a fault");
  }
  return Status();
}

// A texture (global.texture, an image array as TVM main lays it out) filled from the host, copied
// into a 2-D image (TVM 0.22's layout, through the host), into a buffer tensor and back to the
// host. Skipped where the device has no textures.
Status texture_round_trip(Device device) {
  if (!devrt::scope_limits(device, devrt::MemoryScope::texture).ok()) return Status();
  static const std::vector<float> values = floats(2 * 8 * 16 * 4, 1.5f);
  const std::int64_t shape[] = {2, 8, 16, 4};
  devrt::TensorOptions options;
  options.scope = devrt::MemoryScope::texture;
  DEVRT_ASSIGN_OR_RETURN(devrt::Tensor texture,
                         devrt::Tensor::empty(shape, devrt::DataType::float32(), device, options));
  DEVRT_RETURN_IF_ERROR(texture.copy_from_host(values.data(), values.size() * sizeof(float)));
  options.texture_layout = devrt::TextureLayout::image2d;
  DEVRT_ASSIGN_OR_RETURN(devrt::Tensor flat, devrt::Tensor::empty(shape, devrt::DataType::float32(), device, options));
  DEVRT_RETURN_IF_ERROR(flat.copy_from(texture));
  DEVRT_ASSIGN_OR_RETURN(devrt::Tensor linear, devrt::Tensor::empty(shape, devrt::DataType::float32(), device));
  DEVRT_RETURN_IF_ERROR(linear.copy_from(flat));
  std::vector<float> back(values.size());
  DEVRT_RETURN_IF_ERROR(linear.copy_to_host(back.data(), back.size() * sizeof(float)));
  DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
  if (back != values) return mismatch("a texture round trip");
  // A texture over the buffer tensor's memory, where the device makes them (Vulkan: a linear image).
  options.texture_layout = devrt::TextureLayout::image_array;
  devrt::Result<devrt::Tensor> over = linear.as_texture(shape, devrt::DataType::float32(), options);
  if (!over.ok()) return over.status().code() == devrt::ErrorCode::unsupported ? Status() : over.status();
  DEVRT_RETURN_IF_ERROR(over->copy_to_host(back.data(), back.size() * sizeof(float)));
  const devrt::Tensor::TexturePitch pitch = over->texture_pitch();
  // Where its rows are compact, it reads the tensor's bytes as they are.
  if (back != values && pitch.row == 16 * 16 && pitch.layer == 8 * pitch.row)
    return mismatch("a texture over a buffer");
  return Status();
}

// A launch between two timed events and the interval read (where the backend times events: OpenCL's
// profiling queue and markers, Vulkan's timestamp queries).
Status timed_launch(Device device, const devrt::Function& scale, const Buffer& values) {
  if (!devrt::Registry::global().find(g_backend).has_event_timing()) return Status();
  DEVRT_ASSIGN_OR_RETURN(devrt::Event start, devrt::Event::create(device, {.timing = true}));
  DEVRT_ASSIGN_OR_RETURN(devrt::Event end, devrt::Event::create(device, {.timing = true}));
  DEVRT_ASSIGN_OR_RETURN(devrt::Stream stream, devrt::Stream::create(device)); // its caches go with it
  DEVRT_RETURN_IF_ERROR(start.record(stream.ref()));
  DEVRT_RETURN_IF_ERROR(scale.launch({.grid = {4}, .block = {64}}, {values, 1.0f, std::int32_t{256}}, stream.ref()));
  DEVRT_RETURN_IF_ERROR(end.record(stream.ref()));
  DEVRT_RETURN_IF_ERROR(end.synchronize());
  DEVRT_ASSIGN_OR_RETURN(std::int64_t elapsed, devrt::Event::elapsed_ns(start, end));
  if (elapsed < 0) return mismatch("a timed launch's interval");
  return Status();
}

// Vulkan: a launch whose 18 scalars are past the push-constant budget (TVM's kUseUBO), so they go
// in a uniform buffer from the stream's pool.
Status uniform_buffer_launch(Device device, std::size_t n) {
  DEVRT_ASSIGN_OR_RETURN(devrt::Module module, load_kernel(device, "sum_scalars"));
  DEVRT_ASSIGN_OR_RETURN(devrt::Function sum, module.function("main"));
  DEVRT_ASSIGN_OR_RETURN(Buffer sums, Buffer::allocate(device, n * sizeof(std::int32_t)));
  std::vector<devrt::KernelArg> args{sums};
  std::int32_t expected = 0;
  for (std::int32_t i = 0; i < 17; ++i) {
    args.emplace_back(std::int32_t{i - 5});
    expected += i - 5;
  }
  args.emplace_back(static_cast<std::int32_t>(n));
  DEVRT_RETURN_IF_ERROR(sum.launch({.grid = {static_cast<std::uint32_t>((n + 63) / 64)}, .block = {64}}, args));
  std::vector<std::int32_t> got(n);
  DEVRT_RETURN_IF_ERROR(devrt::copy(sums, devrt::host_span(got.data(), n * sizeof(std::int32_t))));
  DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
  if (got != std::vector<std::int32_t>(n, expected)) return mismatch("a launch with its scalars in a uniform buffer");
  return Status();
}

// A captured graph (a host copy, a launch, a device copy) replayed, updated, replayed: the
// backends' graph objects (OpenCL command buffers, Vulkan reusable command buffers) made,
// submitted and freed under every fault. Small on purpose: every driver call it makes is one more
// fault the sweep injects.
Status graph_replay(Device device, const devrt::Function& scale, const Buffer& values) {
  static const std::vector<float> ones = floats(256, 1.0f);
  const std::size_t bytes = ones.size() * sizeof(float);
  DEVRT_ASSIGN_OR_RETURN(Buffer copy, Buffer::allocate(device, bytes));
  DEVRT_ASSIGN_OR_RETURN(devrt::Stream stream, devrt::Stream::create(device));
  DEVRT_RETURN_IF_ERROR(devrt::begin_capture(stream.ref()));
  Status issued = devrt::copy(devrt::host_span(ones.data(), bytes), 0, values, 0, bytes, stream.ref());
  if (issued.ok()) issued = scale.launch({.grid = {4}, .block = {64}}, {values, 2.0f, std::int32_t{256}}, stream);
  if (issued.ok()) issued = devrt::copy(values, 0, copy, 0, bytes, stream.ref());
  devrt::Result<devrt::Graph> graph = devrt::end_capture(stream.ref());
  DEVRT_RETURN_IF_ERROR(issued);
  DEVRT_RETURN_IF_ERROR(graph.status());
  DEVRT_RETURN_IF_ERROR(graph->launch(stream.ref()));
  DEVRT_RETURN_IF_ERROR(graph->update(0, {values, 5.0f, std::int32_t{256}}));
  DEVRT_RETURN_IF_ERROR(graph->launch(stream.ref()));
  std::vector<float> back(ones.size());
  DEVRT_RETURN_IF_ERROR(devrt::copy(copy, devrt::host_span(back.data(), bytes), stream.ref()));
  DEVRT_RETURN_IF_ERROR(stream.synchronize());
  if (back != floats(ones.size(), 5.0f)) return mismatch("a replayed graph");
  return Status();
}

// The conformance operations, each checked: allocation, copies in every direction, a stream, an
// event, a module and a launch, a timed launch, a replayed graph, a workspace pool, the buffer cache, a tensor and
// DLPack.
Status scenario(Device device) {
  constexpr std::size_t n = 1000;
  const std::size_t bytes = n * sizeof(float);
  // Host sources outlive the run: a copy enqueued before a failure may still read them.
  static const std::vector<float> one = floats(n, 1.0f), two = floats(n, 2.0f);
  std::vector<float> back;

  DEVRT_ASSIGN_OR_RETURN(Buffer a, Buffer::allocate(device, bytes));
  DEVRT_ASSIGN_OR_RETURN(Buffer b, Buffer::allocate(device, bytes));
  DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(one.data(), bytes), a));
  DEVRT_RETURN_IF_ERROR(devrt::copy(a, b));
  DEVRT_RETURN_IF_ERROR(read_back(b, back));
  if (back != one) return mismatch("host to device to device to host");

  {
    DEVRT_ASSIGN_OR_RETURN(devrt::Stream stream, devrt::Stream::create(device));
    DEVRT_ASSIGN_OR_RETURN(devrt::Event event, devrt::Event::create(device));
    DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(two.data(), bytes), b, stream));
    DEVRT_RETURN_IF_ERROR(event.record(stream));
    DEVRT_RETURN_IF_ERROR(event.wait_on(devrt::current_stream(device)));
    DEVRT_RETURN_IF_ERROR(event.synchronize());
    DEVRT_ASSIGN_OR_RETURN(bool done, event.query());
    if (!done) return mismatch("an event synchronized but not complete");
    DEVRT_RETURN_IF_ERROR(stream.synchronize());
  }

  {
    DEVRT_ASSIGN_OR_RETURN(devrt::Module module, load_kernel(device, "vadd"));
    DEVRT_ASSIGN_OR_RETURN(devrt::Function vadd, module.function(g_backend == "vulkan" ? "main" : "vadd"));
    DEVRT_ASSIGN_OR_RETURN(Buffer c, Buffer::allocate(device, bytes));
    DEVRT_RETURN_IF_ERROR(
        vadd.launch({.grid = {(n + 63) / 64}, .block = {64}}, {a, b, c, static_cast<std::int32_t>(n)}));
    DEVRT_RETURN_IF_ERROR(read_back(c, back));
    if (back != floats(n, 3.0f)) return mismatch("a launch");
    // A shader sized at launch (Vulkan: a specialisation constant), in two block sizes: one
    // pipeline each.
    DEVRT_ASSIGN_OR_RETURN(devrt::Module sized, load_kernel(device, "scale"));
    DEVRT_ASSIGN_OR_RETURN(devrt::Function scale, sized.function(g_backend == "vulkan" ? "main" : "scale"));
    for (std::uint32_t block : {32u, 128u}) {
      DEVRT_RETURN_IF_ERROR(
          scale.launch({.grid = {static_cast<std::uint32_t>((n + block - 1) / block)}, .block = {block}},
                       {c, 2.0f, static_cast<std::int32_t>(n)}));
    }
    DEVRT_RETURN_IF_ERROR(read_back(c, back));
    if (back != floats(n, 12.0f)) return mismatch("a specialised launch");
    DEVRT_RETURN_IF_ERROR(timed_launch(device, scale, c));
    DEVRT_RETURN_IF_ERROR(graph_replay(device, scale, c));
    if (g_backend == "vulkan") DEVRT_RETURN_IF_ERROR(uniform_buffer_launch(device, n));
  }

  {
    devrt::WorkspacePool pool(devrt::Registry::global().find(g_backend), device, 1 << 20);
    DEVRT_ASSIGN_OR_RETURN(devrt::Workspace small, pool.allocate(256));
    DEVRT_ASSIGN_OR_RETURN(devrt::Workspace large, pool.allocate(1 << 16));
    DEVRT_RETURN_IF_ERROR(pool.release());
  }

  // Freed buffers go to the device's cache and come back from it.
  for (int round = 0; round < 2; ++round) {
    DEVRT_ASSIGN_OR_RETURN(Buffer cached, Buffer::allocate(device, 3 * bytes));
    DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(one.data(), bytes), 0, cached, bytes, bytes));
    std::vector<float> part(n);
    DEVRT_RETURN_IF_ERROR(devrt::copy(cached, bytes, devrt::host_span(part.data(), bytes), 0, bytes));
    DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
    if (part != one) return mismatch("a copy into a cached buffer");
  }

  DEVRT_RETURN_IF_ERROR(large_copies(device));
  DEVRT_RETURN_IF_ERROR(texture_round_trip(device));

  {
    DEVRT_ASSIGN_OR_RETURN(devrt::Tensor tensor, devrt::Tensor::empty({10, 100}, devrt::DataType::float32(), device));
    DEVRT_RETURN_IF_ERROR(tensor.copy_from_host(two.data(), bytes));
    DEVRT_ASSIGN_OR_RETURN(devrt::dlpack::ManagedTensorVersioned * exported, tensor.to_dlpack_versioned());
    DEVRT_ASSIGN_OR_RETURN(devrt::Tensor imported, devrt::Tensor::from_dlpack(exported));
    DEVRT_ASSIGN_OR_RETURN(devrt::Tensor on_host, imported.to(devrt::kHostDevice));
    DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
    if (std::memcmp(on_host.data(), two.data(), bytes) != 0) return mismatch("a tensor's DLPack round trip");
  }
  return Status();
}

// Fails the process if `work` does not finish within `seconds` (a hang is a finding).
template <class Work>
Status bounded(const char* what, int seconds, Work work) {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!done.wait_for(lock, std::chrono::seconds(seconds), [&] { return finished; })) {
      std::printf("FAIL: %s did not finish within %d s (a hang)\n", what, seconds);
      std::fflush(stdout);
      std::_Exit(1);
    }
  });
  Status status = work();
  {
    std::lock_guard<std::mutex> lock(mutex);
    finished = true;
  }
  done.notify_one();
  watchdog.join();
  return status;
}

// Driver objects by kind: the entry points that create one and those that release one.
struct Pairing {
  const char* kind;
  std::vector<std::string> creates, releases;
};

std::vector<Pairing> pairings() {
  if (g_backend == "webgpu") {
    return {
        {"WGPUBuffer", {"wgpuDeviceCreateBuffer"}, {"wgpuBufferRelease"}},
        {"WGPUShaderModule", {"wgpuDeviceCreateShaderModule"}, {"wgpuShaderModuleRelease"}},
        {"WGPUComputePipeline", {"wgpuDeviceCreateComputePipeline"}, {"wgpuComputePipelineRelease"}},
        {"WGPUBindGroupLayout", {"wgpuComputePipelineGetBindGroupLayout"}, {"wgpuBindGroupLayoutRelease"}},
        {"WGPUBindGroup", {"wgpuDeviceCreateBindGroup"}, {"wgpuBindGroupRelease"}},
        {"WGPUCommandEncoder", {"wgpuDeviceCreateCommandEncoder"}, {"wgpuCommandEncoderRelease"}},
        {"WGPUComputePassEncoder", {"wgpuCommandEncoderBeginComputePass"}, {"wgpuComputePassEncoderRelease"}},
        {"WGPUCommandBuffer", {"wgpuCommandEncoderFinish"}, {"wgpuCommandBufferRelease"}},
        {"WGPUDevice", {"wgpuAdapterRequestDevice"}, {"wgpuDeviceRelease"}},
        {"WGPUQueue", {"wgpuDeviceGetQueue"}, {"wgpuQueueRelease"}},
    };
  }
  if (g_backend == "opencl") {
    return {
        {"cl_mem", {"clCreateBuffer", "clCreateSubBuffer", "clCreateImage"}, {"clReleaseMemObject"}},
        {"cl_command_queue", {"clCreateCommandQueue"}, {"clReleaseCommandQueue"}},
        {"cl_context", {"clCreateContext"}, {"clReleaseContext"}},
        {"cl_program", {"clCreateProgramWithSource", "clCreateProgramWithBinary"}, {"clReleaseProgram"}},
        {"cl_kernel", {"clCreateKernel"}, {"clReleaseKernel"}},
        {"cl_event", {"clEnqueueMarkerWithWaitList", "clRetainEvent"}, {"clReleaseEvent"}},
    };
  }
  return {
      {"VkBuffer", {"vkCreateBuffer"}, {"vkDestroyBuffer"}},
      {"VkImage", {"vkCreateImage"}, {"vkDestroyImage"}},
      {"VkDeviceMemory", {"vkAllocateMemory"}, {"vkFreeMemory"}},
      {"VkCommandPool", {"vkCreateCommandPool"}, {"vkDestroyCommandPool"}},
      {"VkShaderModule", {"vkCreateShaderModule"}, {"vkDestroyShaderModule"}},
      {"VkDescriptorSetLayout", {"vkCreateDescriptorSetLayout"}, {"vkDestroyDescriptorSetLayout"}},
      {"VkPipelineLayout", {"vkCreatePipelineLayout"}, {"vkDestroyPipelineLayout"}},
      {"VkPipeline", {"vkCreateComputePipelines"}, {"vkDestroyPipeline"}},
      {"VkDescriptorPool", {"vkCreateDescriptorPool"}, {"vkDestroyDescriptorPool"}},
      {"VkSemaphore", {"vkCreateSemaphore"}, {"vkDestroySemaphore"}},
      {"VkDevice", {"vkCreateDevice"}, {"vkDestroyDevice"}},
  };
}

std::map<std::string, fault::SiteCounts> counts() {
  std::map<std::string, fault::SiteCounts> out;
  for (fault::SiteCounts& site : fault::sites()) {
    if (site.backend == g_backend) out[site.symbol] = site;
  }
  return out;
}

// "" when every object created since the counters were reset was released, else which were not.
// A release that was itself the injected fault leaves its object to the driver; `kept` names a
// kind of which one more may stay (a pool the driver called full, replaced and kept for reuse).
std::string unreleased(const std::string& injected, std::string_view kept = {}) {
  std::map<std::string, fault::SiteCounts> now = counts();
  std::string out;
  for (const Pairing& pair : pairings()) {
    std::int64_t balance = 0;
    bool injected_release = false;
    for (const std::string& name : pair.creates) balance += static_cast<std::int64_t>(now[name].successes);
    for (const std::string& name : pair.releases) {
      balance -= static_cast<std::int64_t>(now[name].successes);
      injected_release = injected_release || name == injected;
    }
    if (balance == 0 || ((injected_release || pair.kind == kept) && balance == 1)) continue;
    out += std::string(out.empty() ? "" : ", ") + std::to_string(balance) + " " + pair.kind;
  }
  return out;
}

// The occurrences to fail of a call made `calls` times: every one.
std::vector<std::uint64_t> occurrences(std::uint64_t calls) {
  std::vector<std::uint64_t> all(calls);
  for (std::uint64_t i = 0; i < calls; ++i) all[i] = i + 1;
  return all;
}

// An error to inject, by name and code.
struct Injected {
  std::string name;
  std::int64_t code = 0;
};

Injected injected(const char* name) {
  Injected out{name, 0};
  fault::code_of(name, out.code);
  return out;
}

// The errors a call is failed with: the backend's resource error, and those the specification
// lists for that call alone, which devrt must handle and name as well (a map failure, a full
// descriptor pool).
std::vector<Injected> errors_for(const std::string& symbol) {
  if (g_backend == "webgpu") {
    // Status 3 is Error for every callback's status but RequestAdapter's (Unavailable: no adapter,
    // not a failure; 4 is its Error); an error scope reports a type (3 OutOfMemory, 2 Validation).
    if (symbol == "wgpuInstanceRequestAdapter") return {injected("WGPURequestAdapterStatus_Error")};
    if (symbol == "wgpuDevicePopErrorScope") {
      return {injected("WGPUErrorType_OutOfMemory"), injected("WGPUErrorType_Validation")};
    }
    if (symbol == "wgpuBufferMapAsync")
      return {injected("WGPUMapAsyncStatus_Error"), injected("WGPUMapAsyncStatus_Aborted")};
    if (symbol == "wgpuAdapterGetInfo" || symbol == "wgpuAdapterGetLimits") return {injected("WGPUStatus_Error")};
    if (symbol == "wgpuAdapterRequestDevice") return {injected("WGPURequestDeviceStatus_Error")};
  }
  std::vector<Injected> out{injected(g_error_name.c_str())};
  if (symbol == "vkMapMemory") out.push_back(injected("VK_ERROR_MEMORY_MAP_FAILED"));
  if (symbol == "vkAllocateDescriptorSets") {
    out.push_back(injected("VK_ERROR_OUT_OF_POOL_MEMORY"));
    out.push_back(injected("VK_ERROR_FRAGMENTED_POOL"));
  }
  if (symbol == "clCreateBuffer" || symbol == "clEnqueueWriteBuffer" || symbol == "clEnqueueReadBuffer" ||
      symbol == "clEnqueueNDRangeKernel") {
    out.push_back(injected("CL_MEM_OBJECT_ALLOCATION_FAILURE"));
  }
  return out;
}

struct Tally {
  std::size_t sites = 0, injected = 0, reported = 0, absorbed = 0, persistent = 0;
};

// Checks the error of a failed call: backend, device, devrt call, driver call, driver error.
void check_message(const Status& status, const std::string& symbol, const Injected& error, const std::string& label) {
  std::string_view message = status.message();
  std::string device = g_backend + ":0";
  // A WebGPU entry point that fails by returning null has no code to name.
  bool names_error = contains(message, error.name) || contains(message, std::to_string(error.code)) ||
                     (g_backend == "webgpu" && contains(message, symbol + " returned null"));
  if (!contains(message, device) || !contains(message, symbol) || !names_error) {
    fail(label + ": the error does not name the device (" + device +
         "), the driver call and its error: " + std::string(message));
  }
}

// DEVRT_SWEEP_ONLY=<symbol> sweeps that entry point alone (to rerun one finding).
bool selected(const std::string& symbol) {
  const char* only = std::getenv("DEVRT_SWEEP_ONLY");
  return only == nullptr || *only == '\0' || symbol == only;
}

// Entry points that release a driver object: failing one leaks that object by construction, so
// they are swept apart (--releases), with LeakSanitizer off.
bool is_release(const std::string& symbol) {
  for (const Pairing& pair : pairings()) {
    for (const std::string& name : pair.releases) {
      if (name == symbol) return true;
    }
  }
  return false;
}

// Submits and waits for everything on the device: what a backend kept because the queue could
// not be waited for is destroyed by then. Its error is the fault's, already reported.
void settle(Device device) {
  static_cast<void>(devrt::empty_cache(device));
  static_cast<void>(devrt::Registry::global().find(g_backend).device_synchronize(device.id));
}

// One fault: the scenario with `symbol`'s nth call failing (every call from the nth on when
// `persistent`), then the checks. Returns whether devrt absorbed it (succeeded with correct data).
bool run_fault(Device device, const std::string& symbol, std::uint64_t nth, const Injected& error, bool persistent,
               const Buffer& sentinel, const std::vector<float>& sentinel_values, Tally& tally) {
  std::string label =
      g_backend + ":" + symbol + ":" + std::to_string(nth) + ":" + error.name + (persistent ? " (persistent)" : "");
  // From the same state as the clean count: nothing cached.
  settle(device);
  fault::reset_counts();
  if (Status armed = fault::arm(g_backend, symbol, nth, error.code, persistent); !armed.ok()) {
    fail(label + ": " + std::string(armed.message()));
    return false;
  }
  Status status = bounded(label.c_str(), 120, [&] { return scenario(device); });
  bool fired = fault::disarm();
  Status next =
      fired ? bounded("an upload right after the fault", 120, [&] { return upload_right_after(device); }) : Status();
  settle(device);
  if (!fired) return false; // the run took another path and made fewer calls
  if (!next.ok()) fail(label + ": an upload right after the fault failed: " + std::string(next.message()));
  ++tally.injected;
  bool absorbed = false;
  if (status.ok()) {
    ++tally.absorbed;
    absorbed = true;
  } else if (status.code() == ErrorCode::internal && contains(status.message(), "reported as success")) {
    fail(label + ": " + std::string(status.message()));
  } else {
    ++tally.reported;
    check_message(status, symbol, error, label);
    std::printf("    %s: %.*s\n", label.c_str(), static_cast<int>(status.message().size()), status.message().data());
  }
  // A descriptor pool may stay, kept for reuse: one the driver called full and replaced, or one
  // made while the stream could not learn that its batches had finished (the counter read failed
  // for good), which returns to the stream's free list once it can.
  const bool pool_kept = error.name == "VK_ERROR_OUT_OF_POOL_MEMORY" || error.name == "VK_ERROR_FRAGMENTED_POOL" ||
                         (persistent && symbol == "vkGetSemaphoreCounterValue");
  if (std::string left = unreleased(symbol, pool_kept ? "VkDescriptorPool" : ""); !left.empty()) {
    fail(label + ": left unreleased: " + left);
  }
  std::vector<float> back;
  Status read = read_back(sentinel, back);
  if (!read.ok() || back != sentinel_values) {
    fail(label + ": the buffer written before the fault did not read back intact: " + std::string(read.message()));
  }
  Status again = bounded("the run after a fault", 120, [&] { return scenario(device); });
  if (!again.ok()) fail(label + ": the device did not recover: " + std::string(again.message()));
  return absorbed;
}

// The calls of each entry point in one clean run, counted after two runs that build what
// persists (staging rings, the cache's first blocks); false (a failure) when a run failed or left
// something unreleased.
bool count_clean_run(Device device, std::map<std::string, fault::SiteCounts>& reached) {
  for (int i = 0; i < 2; ++i) {
    Status clean = bounded("the clean run", 120, [&] { return scenario(device); });
    if (!clean.ok()) {
      fail("the clean run failed: " + std::string(clean.message()));
      return false;
    }
  }
  settle(device);
  fault::reset_counts();
  Status clean = scenario(device);
  settle(device);
  reached = counts();
  if (std::string left = unreleased(""); !clean.ok() || !left.empty()) {
    fail("the clean run: " + std::string(clean.message()) + " unreleased: " + left);
    return false;
  }
  return true;
}

int sweep(Device device, bool releases) {
  const std::vector<float> sentinel_values = floats(4096, 0.5f);
  devrt::Result<Buffer> sentinel = Buffer::allocate(device, sentinel_values.size() * sizeof(float));
  if (!sentinel.ok() || !devrt::copy(devrt::host_span(sentinel_values.data(), sentinel->size()), *sentinel).ok()) {
    fail("could not write the sentinel buffer");
    return 1;
  }
  std::map<std::string, fault::SiteCounts> reached;
  if (!count_clean_run(device, reached)) return 1;

  Tally tally;
  std::vector<std::string> absorbed;
  for (const auto& [symbol, site] : reached) {
    if (site.calls == 0 || is_release(symbol) != releases || !selected(symbol)) continue;
    if (!site.injectable) {
      std::printf("  %-36s %4llu calls, returns nothing (not injectable)\n", symbol.c_str(),
                  static_cast<unsigned long long>(site.calls));
      continue;
    }
    ++tally.sites;
    std::vector<std::uint64_t> picked = occurrences(site.calls);
    std::vector<Injected> errors = errors_for(symbol);
    std::printf("  %-36s %4llu calls, failing each with %zu error(s)\n", symbol.c_str(),
                static_cast<unsigned long long>(site.calls), errors.size());
    std::fflush(stdout);
    for (const Injected& error : errors) {
      for (std::uint64_t nth : picked) {
        if (!run_fault(device, symbol, nth, error, false, *sentinel, sentinel_values, tally)) continue;
        absorbed.push_back(symbol + "#" + std::to_string(nth) + ":" + error.name);
        // Absorbed once (retried, or done without): failing it for good shows what devrt reports
        // when retrying does not help. A release's failure is only ever logged.
        if (!releases) {
          ++tally.persistent;
          run_fault(device, symbol, nth, error, true, *sentinel, sentinel_values, tally);
        }
      }
    }
  }
  std::printf("%s: %zu entry points reached, %zu injectable; %zu faults injected (%zu of them persistent): %zu "
              "reported as errors, %zu absorbed by devrt with correct results\n",
              g_backend.c_str(), reached.size(), tally.sites, tally.injected, tally.persistent, tally.reported,
              tally.absorbed);
  if (!absorbed.empty()) {
    std::printf("absorbed once:");
    for (const std::string& name : absorbed) std::printf(" %s", name.c_str());
    std::printf("\n");
  }
  return g_failures == 0 ? 0 : 1;
}

// ---- Discovery ------------------------------------------------------------------------------

// Runs this program again as `self <backend> <mode> <first> [<second>]` (DEVRT_FAULT=fault when
// given) and waits for it; false, with a failure recorded, unless it exited 0.
bool run_child(const char* self, const char* mode, const std::string& first, const std::string& second,
               const char* fault) {
  pid_t child = fork();
  if (child == 0) {
    if (fault != nullptr) setenv("DEVRT_FAULT", fault, 1);
    execl(self, self, g_backend.c_str(), mode, first.c_str(), second.empty() ? nullptr : second.c_str(),
          static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return true;
  fail(first + (second.empty() ? "" : ":" + second) + ": the child failed (status " + std::to_string(wstatus) + ")");
  return false;
}

// How many libraries the process has unloaded so far (glibc counts them for dl_iterate_phdr).
unsigned long long unloaded_libraries() {
  unsigned long long subs = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<unsigned long long*>(out) = info->dlpi_subs;
        return 1;
      },
      &subs);
  return subs;
}

// In a child with DEVRT_FAULT set: discovery (and the device's opening) with that call failing.
// Discovery tried again must not unload the driver it loaded: memory the driver keeps in its own
// statics would become unreachable (LeakSanitizer reports it on some machines), and the driver's
// cold start would be paid again.
int discovery_child(const char* spec) {
  devrt::BackendRef backend = devrt::Registry::global().find(g_backend);
  Device device{backend.kind(), 0};
  const unsigned long long unloaded_before = unloaded_libraries();
  // Discovery starts with device_count: a failure that may pass is its error, never 0 devices.
  devrt::Result<std::int32_t> counted = backend.device_count();
  if (counted.ok() && *counted == 0) fail(std::string(spec) + ": device_count answered 0 after a failed call");
  Status first = counted.ok() ? backend.availability() : counted.status();
  if (first.ok()) first = bounded("the first run", 120, [&] { return scenario(device); });
  bool fired = fault::disarm();
  if (!fired) return 0;
  if (first.ok()) {
    std::printf("absorbed %s\n", spec);
    return 0;
  }
  std::string_view message = first.message();
  bool names_error = contains(message, g_error_name) || contains(message, std::to_string(g_error_code)) ||
                     contains(message, " returned null");
  if (!names_error)
    fail(std::string(spec) + ": the error does not name the driver call's error: " + std::string(message));
  if (first.code() == ErrorCode::unavailable) {
    fail(std::string(spec) + ": a failed call made the backend unavailable for good: " + std::string(message));
  }
  // Not poisoned: discovery (or the device's opening) is tried again and succeeds.
  Status again = backend.availability();
  if (again.ok()) again = bounded("the run after a fault", 120, [&] { return scenario(device); });
  if (!again.ok()) fail(std::string(spec) + ": discovery did not recover: " + std::string(again.message()));
  // (Not for WebGPU: Dawn opens and closes the Vulkan loader and its drivers itself while an
  // instance looks for adapters.)
  if (unsigned long long unloaded = unloaded_libraries() - unloaded_before; unloaded != 0 && g_backend != "webgpu") {
    fail(std::string(spec) + ": discovery unloaded " + std::to_string(unloaded) +
         " libraries after the failure and loaded them again");
  }
  std::printf("reported %s: %.*s\n", spec, static_cast<int>(message.size()), message.data());
  return g_failures == 0 ? 0 : 1;
}

int discovery_sweep(const char* self, Device device) {
  // The calls discovery and the first use of the device make, counted in this process.
  Status first = scenario(device);
  if (!first.ok()) {
    fail("the clean run failed: " + std::string(first.message()));
    return 1;
  }
  std::map<std::string, fault::SiteCounts> reached = counts();
  std::size_t children = 0, failed = 0;
  // Discovery's calls are those made before the first scenario finished; a second scenario
  // without discovery tells them apart.
  fault::reset_counts();
  Status second = scenario(device);
  std::map<std::string, fault::SiteCounts> steady = counts();
  for (const auto& [symbol, site] : reached) {
    std::uint64_t discovery_calls = site.calls - std::min(site.calls, steady[symbol].calls);
    if (!site.injectable || discovery_calls == 0 || !second.ok()) continue;
    for (std::uint64_t nth : occurrences(discovery_calls)) {
      std::string spec = g_backend + ":" + symbol + ":" + std::to_string(nth) + ":" + errors_for(symbol).front().name;
      ++children;
      if (!run_child(self, "--discovery-child", spec, "", spec.c_str())) ++failed;
    }
  }
  std::printf("%s discovery: %zu faults injected in child processes, %zu failed\n", g_backend.c_str(), children,
              failed);
  return g_failures == 0 ? 0 : 1;
}

// ---- Shutdown --------------------------------------------------------------------------------

// What devrt::shutdown() promises at the driver: once the application's objects are gone, no
// driver object devrt made is left (its devices' included: VkDevice, cl_context, WGPUDevice), and the devices
// open again; an object kept across shutdown keeps its device open until it is destroyed, which
// then closes it. Counted through the seam from the start of the process.
int shutdown_check(Device device) {
  for (int round = 1; round <= 2; ++round) {
    if (Status ran = scenario(device); !ran.ok()) {
      fail("round " + std::to_string(round) + ": " + std::string(ran.message()));
      return 1;
    }
    if (Status shut = devrt::shutdown(); !shut.ok()) fail("shutdown: " + std::string(shut.message()));
    if (std::string left = unreleased(""); !left.empty())
      fail("round " + std::to_string(round) + ": alive after shutdown: " + left);
  }
  {
    devrt::Result<Buffer> kept = Buffer::allocate(device, 4096);
    if (!kept.ok()) {
      fail("allocate after shutdown: " + std::string(kept.status().message()));
      return 1;
    }
    if (Status shut = devrt::shutdown(); !shut.ok()) fail("shutdown: " + std::string(shut.message()));
    if (unreleased("").empty()) fail("a Buffer held across shutdown: its device was closed under it");
    std::vector<float> values = floats(1024, 3.0f), back;
    if (Status used = devrt::copy(devrt::host_span(values.data(), 4096), *kept); !used.ok())
      fail(std::string(used.message()));
    if (Status read = read_back(*kept, back); !read.ok() || back != values) fail("the kept Buffer lost its data");
  }
  if (std::string left = unreleased(""); !left.empty())
    fail("the kept Buffer's destruction did not close its device: " + left);
  if (g_failures != 0) return 1;
  std::printf("%s shutdown: no driver object alive after shutdown, twice; a Buffer kept across it closed its device "
              "when freed\n",
              g_backend.c_str());
  return 0;
}

// ---- Device loss ----------------------------------------------------------------------------

// The calls that report a loss: each fails with VK_ERROR_DEVICE_LOST at every occurrence, in a
// child process each (a loss is for good), with work still running and buffers freed right after
// (the scenario's objects go as it returns).
constexpr const char* kLossReporters[] = {"vkQueueSubmit", "vkWaitSemaphores", "vkGetSemaphoreCounterValue",
                                          "vkQueueWaitIdle"};

int device_lost_child(Device device, const std::string& symbol, std::uint64_t nth) {
  std::string label = "vulkan:" + symbol + ":" + std::to_string(nth) + ":VK_ERROR_DEVICE_LOST";
  if (Status clean = scenario(device); !clean.ok()) { // what persists between runs, made before counting
    fail(label + ": the clean run failed: " + std::string(clean.message()));
    return 1;
  }
  settle(device);
  fault::reset_counts();
  if (Status armed = fault::arm("vulkan", symbol, nth, g_error_code); !armed.ok()) {
    fail(label + ": " + std::string(armed.message()));
    return 1;
  }
  Status lost = bounded(label.c_str(), 120, [&] { return scenario(device); });
  if (!fault::disarm()) return 0; // fewer calls on this run
  if (!lost.ok() && !contains(lost.message(), "VK_ERROR_DEVICE_LOST") && !contains(lost.message(), "was lost")) {
    fail(label + ": the loss was reported as something else: " + std::string(lost.message()));
  }
  // Sticky: every later call reports it, whether or not the call that saw it could say so.
  for (int i = 0; i < 3; ++i) {
    devrt::Result<Buffer> later = Buffer::allocate(device, 256);
    if (later.ok() || !contains(later.status().message(), "was lost")) {
      fail(label + ": a call after the loss did not report it: " + std::string(later.status().message()));
    }
  }
  // A lost device still destroys what it holds, once its queue is idle: nothing leaks.
  static_cast<void>(bounded("freeing after the loss", 120, [&] {
    settle(device);
    return Status();
  }));
  if (std::string left = unreleased(""); !left.empty()) fail(label + ": left unreleased after the loss: " + left);
  std::printf("%s: %.*s\n", label.c_str(), static_cast<int>(lost.message().size()), lost.message().data());
  return g_failures == 0 ? 0 : 1;
}

int device_lost_sweep(const char* self, Device device) {
  std::map<std::string, fault::SiteCounts> reached;
  if (!count_clean_run(device, reached)) return 1;
  std::size_t children = 0, failed = 0;
  for (const char* symbol : kLossReporters) {
    if (!selected(symbol)) continue;
    for (std::uint64_t nth : occurrences(reached[symbol].calls)) {
      ++children;
      if (!run_child(self, "--device-lost-child", symbol, std::to_string(nth), nullptr)) ++failed;
    }
  }
  std::printf("vulkan device loss: %zu losses injected in child processes, %zu failed\n", children, failed);
  return g_failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <backend> [--discovery | --device-lost]\n", argv[0]);
    return 2;
  }
  g_backend = argv[1];
  std::string mode = argc > 2 ? argv[2] : "";
  g_error_name = g_backend == "opencl"   ? "CL_OUT_OF_RESOURCES"
                 : g_backend == "webgpu" ? "WGPUQueueWorkDoneStatus_Error"
                                         : "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  // A discovery child names its error last in its spec.
  if (mode == "--discovery-child" && argc > 3)
    g_error_name = std::string(argv[3]).substr(std::string(argv[3]).rfind(':') + 1);
  if (mode == "--device-lost" || mode == "--device-lost-child" ||
      (mode == "--discovery-child" && argc > 3 && contains(argv[3], "DEVICE_LOST"))) {
    g_error_name = "VK_ERROR_DEVICE_LOST";
  }
  fault::code_of(g_error_name, g_error_code);
  devrt::BackendRef backend = devrt::Registry::global().find(g_backend);
  if (mode == "--discovery-child") return discovery_child(argc > 3 ? argv[3] : "");
  if (!backend) {
    std::printf("skip: the %s backend is not built\n", g_backend.c_str());
    return 77;
  }
  Status available = backend.availability();
  if (!available.ok()) {
    std::printf("skip: %.*s\n", static_cast<int>(available.message().size()), available.message().data());
    return 77;
  }
  if (g_backend == "vulkan" && std::string(DEVRT_TEST_SPIRV_DIR).empty()) {
    std::printf("skip: glslc was not found at build time, so there are no SPIR-V test shaders\n");
    return 77;
  }
  Device device{backend.kind(), 0};
  if (mode == "--discovery") return discovery_sweep(argv[0], device);
  if (mode == "--shutdown") return shutdown_check(device);
  if (mode == "--device-lost") return device_lost_sweep(argv[0], device);
  if (mode == "--device-lost-child") {
    return argc > 4 ? device_lost_child(device, argv[3], std::strtoull(argv[4], nullptr, 10)) : 2;
  }
  return sweep(device, mode == "--releases");
}
