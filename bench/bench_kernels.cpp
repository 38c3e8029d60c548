// SPDX-License-Identifier: Apache-2.0
// Launch, allocation and copy benchmarks for the GPU-API backends, each against the raw vendor
// API in the same run, on the same device (the raw side opens the device whose name devrt
// reports), doing the same operation. Every present device is measured, GPUs first; rows are
// named <backend>:<id>/<what>/<variant>[/<bytes>] and the JSON context maps each <backend>:<id> to
// its device name. A backend without a driver is skipped with its reason (printed, and recorded
// in the context as "skipped <backend>"), never aborting the run. bench/report.py prints the
// ratios, one row per device.
#include <devrt/devrt.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/dynamic_library.hpp"
#if DEVRT_WITH_OPENCL
#include "backends/opencl/opencl_api.hpp"
#endif
#if DEVRT_WITH_VULKAN
#include "backends/vulkan/vulkan_api.hpp"
#endif

namespace {

constexpr int kBatch = 1000;
constexpr std::uint32_t kBlock = 64;
constexpr std::size_t kLaunchBufferBytes = 1 << 20;

std::string read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

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

// Host memory <-> a device buffer, complete each time: a write is followed by the synchronize the
// copy rule names (devrt::copy_device); a read into host memory is complete when it returns.
void devrt_copy(benchmark::State& state, devrt::Device device, bool write) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<unsigned char> host(n, 1);
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(device, n);
  if (!buffer.ok()) return state.SkipWithError(std::string(buffer.status().message()).c_str());
  devrt::StreamRef stream = devrt::current_stream(device);
  for (auto _ : state) {
    devrt::Status s = write ? devrt::copy(devrt::host_span(host.data(), n), *buffer, stream)
                            : devrt::copy(*buffer, devrt::MemorySpan{devrt::kHostDevice, host.data(), n}, stream);
    if (s.ok()) s = devrt::synchronize(stream);
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

// ---- What each backend registers ----------------------------------------------------------------

// The raw API's view of one device: launch, allocation and copies done by hand. Each backend
// implements it for the device matched by name; `error` says why it could not be opened.
class RawDevice {
public:
  virtual ~RawDevice() = default;
  virtual void launch_sync(benchmark::State& state) = 0;
  virtual void launch_batch(benchmark::State& state) = 0;
  virtual void alloc_free(benchmark::State& state) = 0;
  virtual void copy(benchmark::State& state, bool write) = 0;
  bool gpu = false;
  std::string error;        // the device could not be opened: no raw row runs
  std::string launch_error; // no kernel: the launch rows do not run
};

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
        ->Arg(1 << 20)
        ->Arg(64 << 20)
        ->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "/" + direction + "/devrt").c_str(),
                                 [device, write](benchmark::State& s) { devrt_copy(s, device, write); })
        ->Arg(1 << 20)
        ->Arg(64 << 20)
        ->UseRealTime();
  }
}

#if DEVRT_WITH_OPENCL
// ---- OpenCL, raw ---------------------------------------------------------------------------------

struct OpenclLibrary {
  devrt::opencl::Api api;
  devrt::detail::DynamicLibrary library;
  std::string error;
};

OpenclLibrary& opencl_library() {
  static OpenclLibrary* lib = [] {
    auto* l = new OpenclLibrary();
    if (!l->library.open({"libOpenCL.so.1"}, l->error)) return l;
#define DEVRT_BENCH_RESOLVE(name) l->library.resolve(#name, l->api.name);
    DEVRT_OPENCL_SYMBOLS(DEVRT_BENCH_RESOLVE)
#undef DEVRT_BENCH_RESOLVE
    return l;
  }();
  return *lib;
}

class RawOpencl final : public RawDevice {
public:
  // Opens the device called `name` on any platform.
  explicit RawOpencl(const std::string& name) : api_(opencl_library().api) {
    if (!opencl_library().error.empty()) {
      error = "raw OpenCL: " + opencl_library().error;
      return;
    }
    cl_uint platforms = 0;
    api_.clGetPlatformIDs(0, nullptr, &platforms);
    std::vector<cl_platform_id> platform(platforms);
    api_.clGetPlatformIDs(platforms, platform.data(), nullptr);
    for (cl_platform_id p : platform) {
      cl_uint count = 0;
      if (api_.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
      std::vector<cl_device_id> ids(count);
      api_.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
      for (cl_device_id id : ids) {
        char text[256] = {};
        api_.clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof text - 1, text, nullptr);
        if (device_ == nullptr && name == text) device_ = id;
      }
    }
    if (device_ == nullptr) {
      error = "raw OpenCL found no device named '" + name + "'";
      return;
    }
    cl_device_type type = 0;
    api_.clGetDeviceInfo(device_, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    cl_int err = 0;
    context_ = api_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    queue_ = api_.clCreateCommandQueue(context_, device_, 0, &err);
    std::string source = read_file(DEVRT_BENCH_OPENCL_SOURCE);
    const char* text = source.c_str();
    cl_program program = api_.clCreateProgramWithSource(context_, 1, &text, nullptr, &err);
    buffer_ = api_.clCreateBuffer(context_, CL_MEM_READ_WRITE, kLaunchBufferBytes, nullptr, &err);
    if (err != CL_SUCCESS) error = "raw OpenCL: setup failed (" + std::to_string(err) + ")";
    if (api_.clBuildProgram(program, 1, &device_, "", nullptr, nullptr) != CL_SUCCESS) {
      launch_error = "raw OpenCL: clBuildProgram failed";
      return;
    }
    kernel_ = api_.clCreateKernel(program, "scale", &err);
  }

  void launch_sync(benchmark::State& state) override {
    for (auto _ : state) {
      enqueue();
      api_.clFinish(queue_);
    }
  }
  void launch_batch(benchmark::State& state) override {
    for (auto _ : state) {
      for (int i = 0; i < kBatch; ++i) enqueue();
      api_.clFinish(queue_);
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
  }
  void alloc_free(benchmark::State& state) override {
    for (auto _ : state) {
      cl_int err = 0;
      cl_mem mem =
          api_.clCreateBuffer(context_, CL_MEM_READ_WRITE, static_cast<std::size_t>(state.range(0)), nullptr, &err);
      api_.clReleaseMemObject(mem);
    }
  }
  void copy(benchmark::State& state, bool write) override {
    auto n = static_cast<std::size_t>(state.range(0));
    std::vector<unsigned char> host(n, 1);
    cl_int err = 0;
    cl_mem mem = api_.clCreateBuffer(context_, CL_MEM_READ_WRITE, n, nullptr, &err);
    for (auto _ : state) {
      if (write) {
        api_.clEnqueueWriteBuffer(queue_, mem, CL_FALSE, 0, n, host.data(), 0, nullptr, nullptr);
        api_.clFinish(queue_);
      } else {
        api_.clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, n, host.data(), 0, nullptr, nullptr);
      }
    }
    api_.clReleaseMemObject(mem);
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
  }

private:
  void enqueue() {
    float factor = 1.0f;
    cl_int n = 0;
    std::size_t global = kBlock, local = kBlock;
    api_.clSetKernelArg(kernel_, 0, sizeof(cl_mem), &buffer_);
    api_.clSetKernelArg(kernel_, 1, sizeof factor, &factor);
    api_.clSetKernelArg(kernel_, 2, sizeof n, &n);
    api_.clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  }

  const devrt::opencl::Api& api_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_mem buffer_ = nullptr;
};
#endif

#if DEVRT_WITH_VULKAN
// ---- Vulkan, raw: what a hand-written compute program does ---------------------------------------

struct VulkanLoader {
  devrt::detail::DynamicLibrary library;
  devrt::vulkan::GlobalApi api;
  VkInstance instance = VK_NULL_HANDLE;
  std::string error;
};

VulkanLoader& vulkan_loader() {
  static VulkanLoader* loader = [] {
    auto* l = new VulkanLoader();
    if (!l->library.open({"libvulkan.so.1"}, l->error) ||
        !l->library.resolve("vkGetInstanceProcAddr", l->api.vkGetInstanceProcAddr)) {
      if (l->error.empty()) l->error = "no vkGetInstanceProcAddr";
      return l;
    }
    auto gipa = l->api.vkGetInstanceProcAddr;
    l->api.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    create.pApplicationInfo = &app;
    if (l->api.vkCreateInstance(&create, nullptr, &l->instance) != VK_SUCCESS) {
      l->error = "vkCreateInstance failed";
      return l;
    }
#define DEVRT_BENCH_INSTANCE(name) l->api.name = reinterpret_cast<PFN_##name>(gipa(l->instance, #name));
    DEVRT_VULKAN_INSTANCE_SYMBOLS(DEVRT_BENCH_INSTANCE)
#undef DEVRT_BENCH_INSTANCE
    return l;
  }();
  return *loader;
}

class RawVulkan final : public RawDevice {
public:
  // Opens the physical device called `name`.
  explicit RawVulkan(const std::string& name) : api_(vulkan_loader().api) {
    if (!vulkan_loader().error.empty()) {
      error = "raw Vulkan: " + vulkan_loader().error;
      return;
    }
    VkInstance instance = vulkan_loader().instance;
    std::uint32_t count = 0;
    api_.vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    api_.vkEnumeratePhysicalDevices(instance, &count, physical.data());
    VkPhysicalDeviceProperties properties{};
    for (VkPhysicalDevice p : physical) {
      api_.vkGetPhysicalDeviceProperties(p, &properties);
      if (name == properties.deviceName) {
        physical_ = p;
        break;
      }
    }
    if (physical_ == VK_NULL_HANDLE) {
      error = "raw Vulkan found no device named '" + name + "'";
      return;
    }
    gpu = properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
          properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
    api_.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
    if (!open_device() || !create_pipeline()) return;
    launch_buffer_ = make_buffer(kLaunchBufferBytes, device_local_type(), nullptr);
    if (set_ == VK_NULL_HANDLE) return;
    VkDescriptorBufferInfo info{launch_buffer_.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{};
    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    write.dstSet = set_;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &info;
    dev_.vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);
  }

  void launch_sync(benchmark::State& state) override {
    for (auto _ : state) {
      dev_.vkResetCommandBuffer(commands_, 0);
      record_dispatches(1);
      submit_and_wait();
    }
  }
  void launch_batch(benchmark::State& state) override {
    for (auto _ : state) {
      dev_.vkResetCommandBuffer(commands_, 0);
      record_dispatches(kBatch);
      submit_and_wait();
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
  }
  void alloc_free(benchmark::State& state) override {
    for (auto _ : state) {
      Buffer b = make_buffer(static_cast<VkDeviceSize>(state.range(0)), device_local_type(), nullptr);
      destroy(b);
    }
  }
  // Host <-> a device-local buffer. On unified memory (every heap device-local, a cached
  // host-visible device type) the buffer is mapped and the copy is a memcpy; on a discrete GPU the
  // bytes go through a host-visible staging buffer (host-cached for reads) and one vkCmdCopyBuffer,
  // submitted and waited for.
  void copy(benchmark::State& state, bool write) override {
    auto n = static_cast<VkDeviceSize>(state.range(0));
    std::vector<unsigned char> host(n, 1);
    const bool unified = unified_memory();
    void* mapped = nullptr;
    Buffer device = make_buffer(n, device_local_type(), unified ? &mapped : nullptr);
    void* staging_mapped = nullptr;
    Buffer staging{};
    if (!unified) staging = make_buffer(n, host_type(!write), &staging_mapped);
    for (auto _ : state) {
      if (unified) {
        if (write) {
          std::memcpy(mapped, host.data(), n);
        } else {
          std::memcpy(host.data(), mapped, n);
        }
      } else {
        if (write) std::memcpy(staging_mapped, host.data(), n);
        dev_.vkResetCommandBuffer(commands_, 0);
        VkCommandBufferBeginInfo begin{};
        begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        dev_.vkBeginCommandBuffer(commands_, &begin);
        VkBufferCopy region{0, 0, n};
        dev_.vkCmdCopyBuffer(commands_, write ? staging.buffer : device.buffer, write ? device.buffer : staging.buffer,
                             1, &region);
        if (!write) {
          VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT,
                                  VK_ACCESS_HOST_READ_BIT};
          dev_.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                                    &to_host, 0, nullptr, 0, nullptr);
        }
        dev_.vkEndCommandBuffer(commands_);
        submit_and_wait();
        if (!write) std::memcpy(host.data(), staging_mapped, n);
      }
      benchmark::ClobberMemory();
    }
    destroy(device);
    if (!unified) destroy(staging);
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
  }

private:
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
  };

  bool all_heaps_device_local() const {
    for (std::uint32_t i = 0; i < memory_.memoryHeapCount; ++i) {
      if ((memory_.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) == 0) return false;
    }
    return true;
  }
  bool unified_memory() const {
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    return all_heaps_device_local() && (memory_.memoryTypes[device_local_type()].propertyFlags & want) == want;
  }
  // Device-local memory outside any host-visible window where there is such a type (on unified
  // memory: a host-cached one).
  std::uint32_t device_local_type() const {
    const bool unified = all_heaps_device_local();
    std::uint32_t fallback = 0;
    for (std::uint32_t i = memory_.memoryTypeCount; i-- > 0;) {
      VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
      if ((flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) == 0) continue;
      fallback = i;
      if (!unified && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) == 0) return i;
      if (unified && (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0) return i;
    }
    return fallback;
  }
  // Host-visible system memory: host-cached for reads, any coherent type for writes.
  std::uint32_t host_type(bool cached) const {
    std::uint32_t fallback = 0;
    for (std::uint32_t i = memory_.memoryTypeCount; i-- > 0;) {
      VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
      if ((flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) == 0) continue;
      fallback = i;
      bool local = (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
      bool is_cached = (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
      if (!local && (!cached || is_cached)) return i;
    }
    return fallback;
  }

  Buffer make_buffer(VkDeviceSize size, std::uint32_t type, void** mapped) const {
    Buffer b;
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = size;
    info.usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    dev_.vkCreateBuffer(device_, &info, nullptr, &b.buffer);
    VkMemoryRequirements needs{};
    dev_.vkGetBufferMemoryRequirements(device_, b.buffer, &needs);
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = type;
    dev_.vkAllocateMemory(device_, &allocate, nullptr, &b.memory);
    dev_.vkBindBufferMemory(device_, b.buffer, b.memory, 0);
    if (mapped != nullptr) dev_.vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, mapped);
    return b;
  }
  void destroy(const Buffer& b) const {
    dev_.vkDestroyBuffer(device_, b.buffer, nullptr);
    dev_.vkFreeMemory(device_, b.memory, nullptr);
  }

  bool open_device() {
    std::uint32_t families = 0;
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, family.data());
    for (std::uint32_t i = 0; i < families; ++i) {
      if ((family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
        family_ = i;
        break;
      }
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = family_;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkDeviceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    create.queueCreateInfoCount = 1;
    create.pQueueCreateInfos = &queue;
    if (api_.vkCreateDevice(physical_, &create, nullptr, &device_) != VK_SUCCESS) {
      error = "raw Vulkan: vkCreateDevice failed";
      return false;
    }
    auto gdpa = api_.vkGetDeviceProcAddr;
#define DEVRT_BENCH_DEVICE(name) dev_.name = reinterpret_cast<PFN_##name>(gdpa(device_, #name));
    DEVRT_VULKAN_DEVICE_SYMBOLS(DEVRT_BENCH_DEVICE)
#undef DEVRT_BENCH_DEVICE
    vkCreateFence_ = reinterpret_cast<PFN_vkCreateFence>(gdpa(device_, "vkCreateFence"));
    vkWaitForFences_ = reinterpret_cast<PFN_vkWaitForFences>(gdpa(device_, "vkWaitForFences"));
    vkResetFences_ = reinterpret_cast<PFN_vkResetFences>(gdpa(device_, "vkResetFences"));
    dev_.vkGetDeviceQueue(device_, family_, 0, &queue_);
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = family_;
    VkCommandPool command_pool = VK_NULL_HANDLE;
    dev_.vkCreateCommandPool(device_, &pool, nullptr, &command_pool);
    VkCommandBufferAllocateInfo cb{};
    cb.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cb.commandPool = command_pool;
    cb.commandBufferCount = 1;
    dev_.vkAllocateCommandBuffers(device_, &cb, &commands_);
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    vkCreateFence_(device_, &fence, nullptr, &fence_);
    return true;
  }

  bool create_pipeline() {
    std::string code = read_file(DEVRT_BENCH_SPIRV_SCALE);
    if (code.empty()) {
      launch_error = std::string("no SPIR-V at '") + DEVRT_BENCH_SPIRV_SCALE + "' (glslc missing at build time?)";
      return true; // copies and allocations still run
    }
    VkShaderModuleCreateInfo shader{};
    shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    shader.codeSize = code.size();
    shader.pCode = reinterpret_cast<const std::uint32_t*>(code.data());
    VkShaderModule module = VK_NULL_HANDLE;
    dev_.vkCreateShaderModule(device_, &shader, nullptr, &module);
    VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo set_layout{};
    set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set_layout.bindingCount = 1;
    set_layout.pBindings = &binding;
    VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
    dev_.vkCreateDescriptorSetLayout(device_, &set_layout, nullptr, &dsl);
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &dsl;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &push;
    dev_.vkCreatePipelineLayout(device_, &layout, nullptr, &layout_);
    VkSpecializationMapEntry entry{0, 0, 4};
    std::uint32_t block = kBlock;
    VkSpecializationInfo spec{1, &entry, 4, &block};
    VkComputePipelineCreateInfo pipeline{};
    pipeline.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline.stage.module = module;
    pipeline.stage.pName = "main";
    pipeline.stage.pSpecializationInfo = &spec;
    pipeline.layout = layout_;
    if (dev_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline, nullptr, &pipeline_) != VK_SUCCESS) {
      launch_error = "raw Vulkan: vkCreateComputePipelines failed";
      return true;
    }
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool_info{};
    pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    dev_.vkCreateDescriptorPool(device_, &pool_info, nullptr, &descriptors);
    VkDescriptorSetAllocateInfo set{};
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    set.descriptorPool = descriptors;
    set.descriptorSetCount = 1;
    set.pSetLayouts = &dsl;
    dev_.vkAllocateDescriptorSets(device_, &set, &set_);
    return true;
  }

  void record_dispatches(int dispatches) const {
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    dev_.vkBeginCommandBuffer(commands_, &begin);
    struct {
      float factor;
      std::int32_t n;
    } push{1.0f, 0};
    dev_.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    dev_.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
    dev_.vkCmdPushConstants(commands_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    for (int i = 0; i < dispatches; ++i) {
      if (i > 0) {
        dev_.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  0, 1, &barrier, 0, nullptr, 0, nullptr);
      }
      dev_.vkCmdDispatch(commands_, 1, 1, 1);
    }
    dev_.vkEndCommandBuffer(commands_);
  }
  void submit_and_wait() const {
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands_;
    dev_.vkQueueSubmit(queue_, 1, &submit, fence_);
    vkWaitForFences_(device_, 1, &fence_, VK_TRUE, UINT64_MAX);
    vkResetFences_(device_, 1, &fence_);
  }

  const devrt::vulkan::GlobalApi& api_;
  devrt::vulkan::DeviceApi dev_;
  PFN_vkCreateFence vkCreateFence_ = nullptr;
  PFN_vkWaitForFences vkWaitForFences_ = nullptr;
  PFN_vkResetFences vkResetFences_ = nullptr;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  std::uint32_t family_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  Buffer launch_buffer_;
};
#endif

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
      if (k.kind == devrt::DeviceKind::opencl) e.raw = std::make_shared<RawOpencl>(e.name);
#endif
#if DEVRT_WITH_VULKAN
      if (k.kind == devrt::DeviceKind::vulkan) {
        e.raw = std::make_shared<RawVulkan>(e.name);
        e.batched_backend = true;
      }
#endif
      entries.push_back(std::move(e));
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.raw->gpu > b.raw->gpu; });
  return entries;
}

} // namespace

int main(int argc, char** argv) {
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
