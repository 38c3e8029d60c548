// Launch, allocation and copy benchmarks for the GPU-API backends, each against the raw vendor
// API in the same run (same device, same kernel, same sizes). Names: <backend>/<what>/<variant>;
// bench/report.py prints the ratios. A backend without a device here reports an error row.
#include <devrt/devrt.hpp>

#include <benchmark/benchmark.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dynamic_library.hpp"
#if DEVRT_WITH_OPENCL
#include "opencl/opencl_api.hpp"
#endif
#if DEVRT_WITH_VULKAN
#include "vulkan/vulkan_api.hpp"
#endif

namespace {

constexpr int kBatch = 1000;
constexpr std::uint32_t kBlock = 64;

std::string read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// The devrt side of one backend: a 1 MiB buffer and the `scale` kernel launched with n = 0 (an
// empty kernel that still binds a buffer and two scalars, like the raw side).
struct DevrtSide {
  devrt::Device device;
  devrt::Module module;
  devrt::Function scale;
  devrt::Buffer buffer;
  bool ok = false;
};

bool prepare(DevrtSide& side, devrt::DeviceKind kind, devrt::ModuleFormat format, const std::string& code,
             const char* entry, benchmark::State& state) {
  side.device = devrt::Device{kind, 0};
  if (!devrt::device_exists(side.device)) {
    state.SkipWithError("no device of this backend here");
    return false;
  }
  devrt::Result<devrt::Module> module = devrt::Module::load(side.device, format, code);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return false;
  }
  side.module = std::move(module).value();
  side.scale = side.module.function(entry).value();
  side.buffer = devrt::Buffer::allocate(side.device, 1 << 20).value();
  side.ok = true;
  return true;
}

devrt::Status launch_empty(const DevrtSide& side, devrt::StreamRef stream) {
  return side.scale.launch({.grid = {1}, .block = {kBlock}}, {side.buffer, 1.0f, std::int32_t{0}}, stream);
}

void devrt_launch_sync(benchmark::State& state, DevrtSide& side) {
  devrt::StreamRef stream = devrt::current_stream(side.device);
  for (auto _ : state) {
    if (!launch_empty(side, stream).ok() || !devrt::synchronize(stream).ok()) state.SkipWithError("launch failed");
  }
}

void devrt_launch_batch(benchmark::State& state, DevrtSide& side, bool sync_each) {
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
    benchmark::DoNotOptimize(buffer->data());
  }
}

void devrt_pool_alloc_free(benchmark::State& state, devrt::Device device) {
  devrt::WorkspacePool pool(devrt::Registry::global().find(device.kind), device);
  for (auto _ : state) {
    devrt::Result<devrt::Workspace> block = pool.allocate(static_cast<std::size_t>(state.range(0)));
    benchmark::DoNotOptimize(block->data());
  }
}

void devrt_copy(benchmark::State& state, devrt::Device device, bool write) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<unsigned char> host(n, 1);
  devrt::Buffer buffer = devrt::Buffer::allocate(device, n).value();
  devrt::StreamRef stream = devrt::current_stream(device);
  for (auto _ : state) {
    // Reads into host memory return once the bytes are there (OpenCL and Vulkan backends); a
    // write is only done after the stream is synchronized.
    devrt::Status s = write ? devrt::copy(devrt::host_span(host.data(), n), buffer, stream)
                            : devrt::copy(buffer, devrt::MemorySpan{devrt::kHostDevice, host.data(), n}, stream);
    if (s.ok() && write) s = devrt::synchronize(stream);
    if (!s.ok()) state.SkipWithError("copy failed");
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

#if DEVRT_WITH_OPENCL
// ---- OpenCL, raw -------------------------------------------------------------------------------

struct RawOpencl {
  devrt::opencl::Api api;
  devrt::detail::DynamicLibrary library;
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue queue = nullptr;
  cl_kernel kernel = nullptr;
  cl_mem buffer = nullptr;
  bool ok = false;
};

RawOpencl& raw_opencl() {
  static RawOpencl* raw = [] {
    auto* r = new RawOpencl();
    std::string reason;
    if (!r->library.open({"libOpenCL.so.1"}, reason)) return r;
#define DEVRT_BENCH_RESOLVE(name) r->library.resolve(#name, r->api.name);
    DEVRT_OPENCL_SYMBOLS(DEVRT_BENCH_RESOLVE)
#undef DEVRT_BENCH_RESOLVE
    cl_platform_id platform = nullptr;
    if (r->api.clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS) return r;
    if (r->api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &r->device, nullptr) != CL_SUCCESS) return r;
    cl_int err = 0;
    r->context = r->api.clCreateContext(nullptr, 1, &r->device, nullptr, nullptr, &err);
    r->queue = r->api.clCreateCommandQueue(r->context, r->device, 0, &err);
    std::string source = read_file(DEVRT_BENCH_OPENCL_SOURCE);
    const char* text = source.c_str();
    cl_program program = r->api.clCreateProgramWithSource(r->context, 1, &text, nullptr, &err);
    if (r->api.clBuildProgram(program, 1, &r->device, "", nullptr, nullptr) != CL_SUCCESS) return r;
    r->kernel = r->api.clCreateKernel(program, "scale", &err);
    r->buffer = r->api.clCreateBuffer(r->context, CL_MEM_READ_WRITE, 1 << 20, nullptr, &err);
    r->ok = err == CL_SUCCESS;
    return r;
  }();
  return *raw;
}

void raw_opencl_enqueue(RawOpencl& r) {
  float factor = 1.0f;
  cl_int n = 0;
  std::size_t global = kBlock, local = kBlock;
  r.api.clSetKernelArg(r.kernel, 0, sizeof(cl_mem), &r.buffer);
  r.api.clSetKernelArg(r.kernel, 1, sizeof factor, &factor);
  r.api.clSetKernelArg(r.kernel, 2, sizeof n, &n);
  r.api.clEnqueueNDRangeKernel(r.queue, r.kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
}

DevrtSide& opencl_side(benchmark::State& state) {
  static DevrtSide side;
  if (!side.ok)
    prepare(side, devrt::DeviceKind::opencl, devrt::ModuleFormat::opencl_c, read_file(DEVRT_BENCH_OPENCL_SOURCE),
            "scale", state);
  return side;
}

void opencl_launch_sync_raw(benchmark::State& state) {
  RawOpencl& r = raw_opencl();
  if (!r.ok) return state.SkipWithError("no OpenCL device");
  for (auto _ : state) {
    raw_opencl_enqueue(r);
    r.api.clFinish(r.queue);
  }
}
void opencl_launch_sync_devrt(benchmark::State& state) {
  DevrtSide& side = opencl_side(state);
  if (side.ok) devrt_launch_sync(state, side);
}
void opencl_launch_batch_raw(benchmark::State& state) {
  RawOpencl& r = raw_opencl();
  if (!r.ok) return state.SkipWithError("no OpenCL device");
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) raw_opencl_enqueue(r);
    r.api.clFinish(r.queue);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
void opencl_launch_batch_devrt(benchmark::State& state) {
  DevrtSide& side = opencl_side(state);
  if (side.ok) devrt_launch_batch(state, side, false);
}
void opencl_alloc_free_raw(benchmark::State& state) {
  RawOpencl& r = raw_opencl();
  if (!r.ok) return state.SkipWithError("no OpenCL device");
  for (auto _ : state) {
    cl_int err = 0;
    cl_mem mem =
        r.api.clCreateBuffer(r.context, CL_MEM_READ_WRITE, static_cast<std::size_t>(state.range(0)), nullptr, &err);
    r.api.clReleaseMemObject(mem);
  }
}
void opencl_alloc_free_devrt(benchmark::State& state) { devrt_alloc_free(state, {devrt::DeviceKind::opencl, 0}); }
void opencl_alloc_free_pool(benchmark::State& state) { devrt_pool_alloc_free(state, {devrt::DeviceKind::opencl, 0}); }
void opencl_copy_raw(benchmark::State& state, bool write) {
  RawOpencl& r = raw_opencl();
  if (!r.ok) return state.SkipWithError("no OpenCL device");
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<unsigned char> host(n, 1);
  cl_int err = 0;
  cl_mem mem = r.api.clCreateBuffer(r.context, CL_MEM_READ_WRITE, n, nullptr, &err);
  for (auto _ : state) {
    if (write) {
      r.api.clEnqueueWriteBuffer(r.queue, mem, CL_FALSE, 0, n, host.data(), 0, nullptr, nullptr);
      r.api.clFinish(r.queue);
    } else {
      r.api.clEnqueueReadBuffer(r.queue, mem, CL_TRUE, 0, n, host.data(), 0, nullptr, nullptr);
    }
  }
  r.api.clReleaseMemObject(mem);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
void opencl_write_raw(benchmark::State& state) { opencl_copy_raw(state, true); }
void opencl_read_raw(benchmark::State& state) { opencl_copy_raw(state, false); }
void opencl_write_devrt(benchmark::State& state) { devrt_copy(state, {devrt::DeviceKind::opencl, 0}, true); }
void opencl_read_devrt(benchmark::State& state) { devrt_copy(state, {devrt::DeviceKind::opencl, 0}, false); }

BENCHMARK(opencl_launch_sync_raw)->Name("opencl/launch_sync/raw")->UseRealTime();
BENCHMARK(opencl_launch_sync_devrt)->Name("opencl/launch_sync/devrt")->UseRealTime();
BENCHMARK(opencl_launch_batch_raw)->Name("opencl/launch_1000/raw")->UseRealTime();
BENCHMARK(opencl_launch_batch_devrt)->Name("opencl/launch_1000/devrt")->UseRealTime();
BENCHMARK(opencl_alloc_free_raw)->Name("opencl/alloc_free/raw")->Arg(1 << 20);
BENCHMARK(opencl_alloc_free_devrt)->Name("opencl/alloc_free/devrt")->Arg(1 << 20);
BENCHMARK(opencl_alloc_free_pool)->Name("opencl/alloc_free/pool")->Arg(1 << 20);
BENCHMARK(opencl_write_raw)->Name("opencl/write/raw")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(opencl_write_devrt)->Name("opencl/write/devrt")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(opencl_read_raw)->Name("opencl/read/raw")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(opencl_read_devrt)->Name("opencl/read/devrt")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
#endif

#if DEVRT_WITH_VULKAN
// ---- Vulkan, raw: the minimum a hand-written compute dispatch needs ----------------------------

struct RawVulkan {
  devrt::detail::DynamicLibrary library;
  devrt::vulkan::GlobalApi api;
  devrt::vulkan::DeviceApi dev;
  PFN_vkCreateFence vkCreateFence = nullptr;
  PFN_vkWaitForFences vkWaitForFences = nullptr;
  PFN_vkResetFences vkResetFences = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory{};
  std::uint32_t family = 0;
  bool ok = false;

  std::uint32_t host_type() const {
    for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
      if ((memory.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0) return i;
    }
    return 0;
  }
  // A buffer with its own memory, mapped when `mapped` is given.
  VkDeviceMemory make_buffer(VkDeviceSize size, VkBuffer* out, void** mapped) const {
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = size;
    info.usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    dev.vkCreateBuffer(device, &info, nullptr, out);
    VkMemoryRequirements needs{};
    dev.vkGetBufferMemoryRequirements(device, *out, &needs);
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = host_type();
    VkDeviceMemory mem = VK_NULL_HANDLE;
    dev.vkAllocateMemory(device, &allocate, nullptr, &mem);
    dev.vkBindBufferMemory(device, *out, mem, 0);
    if (mapped != nullptr) dev.vkMapMemory(device, mem, 0, VK_WHOLE_SIZE, 0, mapped);
    return mem;
  }
  void record(int dispatches) const {
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    dev.vkBeginCommandBuffer(commands, &begin);
    struct {
      float factor;
      std::int32_t n;
    } push{1.0f, 0};
    dev.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    dev.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    dev.vkCmdPushConstants(commands, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    for (int i = 0; i < dispatches; ++i) {
      if (i > 0) {
        dev.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 0, 1, &barrier, 0, nullptr, 0, nullptr);
      }
      dev.vkCmdDispatch(commands, 1, 1, 1);
    }
    dev.vkEndCommandBuffer(commands);
  }
  void submit_and_wait() const {
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    dev.vkQueueSubmit(queue, 1, &submit, fence);
    vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
    vkResetFences(device, 1, &fence);
  }
};

RawVulkan& raw_vulkan() {
  static RawVulkan* raw = [] {
    auto* r = new RawVulkan();
    std::string reason;
    if (!r->library.open({"libvulkan.so.1"}, reason) ||
        !r->library.resolve("vkGetInstanceProcAddr", r->api.vkGetInstanceProcAddr)) {
      return r;
    }
    auto gipa = r->api.vkGetInstanceProcAddr;
    r->api.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    create.pApplicationInfo = &app;
    if (r->api.vkCreateInstance(&create, nullptr, &r->instance) != VK_SUCCESS) return r;
#define DEVRT_BENCH_INSTANCE(name) r->api.name = reinterpret_cast<PFN_##name>(gipa(r->instance, #name));
    DEVRT_VULKAN_INSTANCE_SYMBOLS(DEVRT_BENCH_INSTANCE)
#undef DEVRT_BENCH_INSTANCE
    std::uint32_t count = 1;
    if (r->api.vkEnumeratePhysicalDevices(r->instance, &count, &r->physical) < 0 || count == 0) return r;
    r->api.vkGetPhysicalDeviceMemoryProperties(r->physical, &r->memory);
    std::uint32_t families = 0;
    r->api.vkGetPhysicalDeviceQueueFamilyProperties(r->physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    r->api.vkGetPhysicalDeviceQueueFamilyProperties(r->physical, &families, family.data());
    for (std::uint32_t i = 0; i < families; ++i) {
      if ((family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
        r->family = i;
        break;
      }
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = r->family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkDeviceCreateInfo device{};
    device.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    device.queueCreateInfoCount = 1;
    device.pQueueCreateInfos = &queue;
    if (r->api.vkCreateDevice(r->physical, &device, nullptr, &r->device) != VK_SUCCESS) return r;
    auto gdpa = r->api.vkGetDeviceProcAddr;
#define DEVRT_BENCH_DEVICE(name) r->dev.name = reinterpret_cast<PFN_##name>(gdpa(r->device, #name));
    DEVRT_VULKAN_DEVICE_SYMBOLS(DEVRT_BENCH_DEVICE)
#undef DEVRT_BENCH_DEVICE
    r->vkCreateFence = reinterpret_cast<PFN_vkCreateFence>(gdpa(r->device, "vkCreateFence"));
    r->vkWaitForFences = reinterpret_cast<PFN_vkWaitForFences>(gdpa(r->device, "vkWaitForFences"));
    r->vkResetFences = reinterpret_cast<PFN_vkResetFences>(gdpa(r->device, "vkResetFences"));
    r->dev.vkGetDeviceQueue(r->device, r->family, 0, &r->queue);
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = r->family;
    r->dev.vkCreateCommandPool(r->device, &pool, nullptr, &r->pool);
    VkCommandBufferAllocateInfo cb{};
    cb.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cb.commandPool = r->pool;
    cb.commandBufferCount = 1;
    r->dev.vkAllocateCommandBuffers(r->device, &cb, &r->commands);
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    r->vkCreateFence(r->device, &fence, nullptr, &r->fence);
    std::string code = read_file(DEVRT_BENCH_SPIRV_SCALE);
    if (code.empty()) return r;
    VkShaderModuleCreateInfo shader{};
    shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    shader.codeSize = code.size();
    shader.pCode = reinterpret_cast<const std::uint32_t*>(code.data());
    VkShaderModule module = VK_NULL_HANDLE;
    r->dev.vkCreateShaderModule(r->device, &shader, nullptr, &module);
    VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo set_layout{};
    set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set_layout.bindingCount = 1;
    set_layout.pBindings = &binding;
    VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
    r->dev.vkCreateDescriptorSetLayout(r->device, &set_layout, nullptr, &dsl);
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &dsl;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &push;
    r->dev.vkCreatePipelineLayout(r->device, &layout, nullptr, &r->layout);
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
    pipeline.layout = r->layout;
    if (r->dev.vkCreateComputePipelines(r->device, VK_NULL_HANDLE, 1, &pipeline, nullptr, &r->pipeline) != VK_SUCCESS) {
      return r;
    }
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool_info{};
    pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    r->dev.vkCreateDescriptorPool(r->device, &pool_info, nullptr, &descriptors);
    VkDescriptorSetAllocateInfo set{};
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    set.descriptorPool = descriptors;
    set.descriptorSetCount = 1;
    set.pSetLayouts = &dsl;
    r->dev.vkAllocateDescriptorSets(r->device, &set, &r->set);
    r->make_buffer(1 << 20, &r->buffer, nullptr);
    VkDescriptorBufferInfo info{r->buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{};
    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    write.dstSet = r->set;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &info;
    r->dev.vkUpdateDescriptorSets(r->device, 1, &write, 0, nullptr);
    r->ok = true;
    return r;
  }();
  return *raw;
}

DevrtSide& vulkan_side(benchmark::State& state) {
  static DevrtSide side;
  if (!side.ok)
    prepare(side, devrt::DeviceKind::vulkan, devrt::ModuleFormat::spirv, read_file(DEVRT_BENCH_SPIRV_SCALE), "main",
            state);
  return side;
}

void vulkan_launch_sync_raw(benchmark::State& state) {
  RawVulkan& r = raw_vulkan();
  if (!r.ok) return state.SkipWithError("no Vulkan device");
  for (auto _ : state) {
    r.dev.vkResetCommandBuffer(r.commands, 0);
    r.record(1);
    r.submit_and_wait();
  }
}
void vulkan_launch_sync_devrt(benchmark::State& state) {
  DevrtSide& side = vulkan_side(state);
  if (side.ok) devrt_launch_sync(state, side);
}
void vulkan_launch_batch_raw(benchmark::State& state) {
  RawVulkan& r = raw_vulkan();
  if (!r.ok) return state.SkipWithError("no Vulkan device");
  for (auto _ : state) {
    r.dev.vkResetCommandBuffer(r.commands, 0);
    r.record(kBatch);
    r.submit_and_wait();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
void vulkan_launch_batch_devrt(benchmark::State& state) {
  DevrtSide& side = vulkan_side(state);
  if (side.ok) devrt_launch_batch(state, side, false);
}
void vulkan_launch_batch_single_submit(benchmark::State& state) {
  DevrtSide& side = vulkan_side(state);
  if (side.ok) devrt_launch_batch(state, side, true);
}
void vulkan_alloc_free_raw(benchmark::State& state) {
  RawVulkan& r = raw_vulkan();
  if (!r.ok) return state.SkipWithError("no Vulkan device");
  for (auto _ : state) {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = r.make_buffer(static_cast<VkDeviceSize>(state.range(0)), &buffer, nullptr);
    r.dev.vkDestroyBuffer(r.device, buffer, nullptr);
    r.dev.vkFreeMemory(r.device, memory, nullptr);
  }
}
void vulkan_alloc_free_devrt(benchmark::State& state) { devrt_alloc_free(state, {devrt::DeviceKind::vulkan, 0}); }
void vulkan_alloc_free_pool(benchmark::State& state) { devrt_pool_alloc_free(state, {devrt::DeviceKind::vulkan, 0}); }
void vulkan_copy_raw(benchmark::State& state, bool write) {
  RawVulkan& r = raw_vulkan();
  if (!r.ok) return state.SkipWithError("no Vulkan device");
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<unsigned char> host(n, 1);
  VkBuffer buffer = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceMemory memory = r.make_buffer(n, &buffer, &mapped);
  for (auto _ : state) {
    if (write) {
      std::memcpy(mapped, host.data(), n);
    } else {
      std::memcpy(host.data(), mapped, n);
    }
    benchmark::ClobberMemory();
  }
  r.dev.vkDestroyBuffer(r.device, buffer, nullptr);
  r.dev.vkFreeMemory(r.device, memory, nullptr);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
void vulkan_write_raw(benchmark::State& state) { vulkan_copy_raw(state, true); }
void vulkan_read_raw(benchmark::State& state) { vulkan_copy_raw(state, false); }
void vulkan_write_devrt(benchmark::State& state) { devrt_copy(state, {devrt::DeviceKind::vulkan, 0}, true); }
void vulkan_read_devrt(benchmark::State& state) { devrt_copy(state, {devrt::DeviceKind::vulkan, 0}, false); }

BENCHMARK(vulkan_launch_sync_raw)->Name("vulkan/launch_sync/raw")->UseRealTime();
BENCHMARK(vulkan_launch_sync_devrt)->Name("vulkan/launch_sync/devrt")->UseRealTime();
BENCHMARK(vulkan_launch_batch_raw)->Name("vulkan/launch_1000/raw")->UseRealTime();
BENCHMARK(vulkan_launch_batch_devrt)->Name("vulkan/launch_1000/devrt")->UseRealTime();
BENCHMARK(vulkan_launch_batch_single_submit)->Name("vulkan/launch_1000/single_submit")->UseRealTime();
BENCHMARK(vulkan_alloc_free_raw)->Name("vulkan/alloc_free/raw")->Arg(1 << 20);
BENCHMARK(vulkan_alloc_free_devrt)->Name("vulkan/alloc_free/devrt")->Arg(1 << 20);
BENCHMARK(vulkan_alloc_free_pool)->Name("vulkan/alloc_free/pool")->Arg(1 << 20);
BENCHMARK(vulkan_write_raw)->Name("vulkan/write/raw")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(vulkan_write_devrt)->Name("vulkan/write/devrt")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(vulkan_read_raw)->Name("vulkan/read/raw")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(vulkan_read_devrt)->Name("vulkan/read/devrt")->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();
#endif

} // namespace

BENCHMARK_MAIN();
