// SPDX-License-Identifier: Apache-2.0
// SPIR-V modules, compute pipelines and launches of the Vulkan backend.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_support/gpu_launch.hpp"
#include "support/environment.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_state.hpp"

namespace devrt::vulkan {
namespace {

bool specialised(const SpirvModuleInfo& info) {
  return info.local_size_spec_id[0] >= 0 || info.local_size_spec_id[1] >= 0 || info.local_size_spec_id[2] >= 0;
}

// The pipeline for one block size (created on first use). Caller holds the function's lock.
Result<VkPipeline> pipeline_for(FunctionState& f, const std::uint32_t block[3]) {
  for (const auto& p : f.pipelines) {
    if (p.block[0] == block[0] && p.block[1] == block[1] && p.block[2] == block[2]) return p.pipeline;
  }
  ModuleState& m = *f.module;
  DeviceState& d = *m.device;
  VkSpecializationMapEntry entries[3];
  std::uint32_t data[3];
  std::uint32_t count = 0;
  for (int i = 0; i < 3; ++i) {
    if (m.info.local_size_spec_id[i] < 0) continue;
    entries[count] = VkSpecializationMapEntry{static_cast<std::uint32_t>(m.info.local_size_spec_id[i]), count * 4u,
                                              sizeof(std::uint32_t)};
    data[count++] = block[i];
  }
  VkSpecializationInfo specialization{count, entries, count * sizeof(std::uint32_t), data};
  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = m.shader;
  info.stage.pName = f.name.c_str();
  info.stage.pSpecializationInfo = count > 0 ? &specialization : nullptr;
  info.layout = m.layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  DEVRT_VK_CHECK("vkCreateComputePipelines",
                 d.api.vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline));
  f.pipelines.push_back(FunctionState::Pipeline{{block[0], block[1], block[2]}, pipeline});
  return pipeline;
}

// A descriptor set from the stream's pools (reset when the batch finishes): from the current
// pool, else from the next one. Caller holds the lock.
Result<VkDescriptorSet> allocate_set(StreamState& s, VkDescriptorSetLayout layout) {
  DeviceState& d = *s.device;
  VkDescriptorSetAllocateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (!s.recording_pools.empty()) {
    info.descriptorPool = s.recording_pools.back();
    VkResult result = d.api.vkAllocateDescriptorSets(d.device, &info, &set);
    if (result == VK_SUCCESS) return set;
    if (result != VK_ERROR_OUT_OF_POOL_MEMORY && result != VK_ERROR_FRAGMENTED_POOL) {
      return device_error(d, "vkAllocateDescriptorSets", result);
    }
  }
  VkDescriptorPool pool = VK_NULL_HANDLE;
  if (!s.free_pools.empty()) {
    pool = s.free_pools.back();
    s.free_pools.pop_back();
  } else {
    const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool},
                                          {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kDescriptorSetsPerPool}};
    VkDescriptorPoolCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    create.maxSets = kDescriptorSetsPerPool;
    create.poolSizeCount = 2;
    create.pPoolSizes = sizes;
    DEVRT_VK_CHECK("vkCreateDescriptorPool", d.api.vkCreateDescriptorPool(d.device, &create, nullptr, &pool));
  }
  s.recording_pools.push_back(pool);
  info.descriptorPool = pool;
  // A fresh pool that cannot hold one set: the call's own error, named.
  VkResult result = d.api.vkAllocateDescriptorSets(d.device, &info, &set);
  if (result != VK_SUCCESS) return device_error(d, "vkAllocateDescriptorSets", result);
  return set;
}

// Once no submission uses its pipelines.
void destroy_module_objects(DeviceState& d, ModuleState* m) {
  for (const auto& f : m->functions) {
    for (const auto& p : f->pipelines) d.api.vkDestroyPipeline(d.device, p.pipeline, nullptr);
  }
  if (m->layout != VK_NULL_HANDLE) d.api.vkDestroyPipelineLayout(d.device, m->layout, nullptr);
  if (m->set_layout != VK_NULL_HANDLE) d.api.vkDestroyDescriptorSetLayout(d.device, m->set_layout, nullptr);
  if (m->shader != VK_NULL_HANDLE) d.api.vkDestroyShaderModule(d.device, m->shader, nullptr);
  delete m;
}

void destroy_module(ModuleState* m) {
  DeviceState& d = *m->device;
  if (m->functions.empty()) {
    destroy_module_objects(d, m); // no pipeline: nothing was submitted
  } else {
    destroy_when_idle(d, make_retired<ModuleState, destroy_module_objects>(m));
  }
}

// The module's words with Pow defined (unless turned off), and how many were rewritten.
Status define_undefined(std::vector<std::uint32_t>& words, std::uint32_t& rewritten, BuildLog& log) {
  // DEVRT_VULKAN_SPIRV_REWRITE false leaves SPIR-V as written (to compare with a driver's own Pow).
  if (!detail::read_boolean_env("DEVRT_VULKAN_SPIRV_REWRITE", true)) return Status();
  Result<SpirvPowRewrite> rewrite = define_pow(words);
  if (!rewrite.ok()) {
    log.append(rewrite.status().message());
    return std::move(rewrite).status();
  }
  if (rewrite->rewritten == 0) return Status();
  words = std::move(rewrite->words);
  rewritten = rewrite->rewritten;
  log.append("devrt defined " + std::to_string(rewritten) +
             " GLSL.std.450 Pow instruction(s), undefined in SPIR-V for a negative base, as C's pow "
             "(DEVRT_VULKAN_SPIRV_REWRITE=0 leaves them as written)");
  return Status();
}

// The module's scalars fit this device's push-constant block or uniform buffer.
Status check_scalar_blocks(const DeviceState& d, const SpirvModuleInfo& info) {
  const std::uint32_t push_limit = std::min(d.properties.limits.maxPushConstantsSize, kMaxPushConstantBytes);
  if (info.push_constant_bytes > push_limit) {
    return make_error(ErrorCode::unsupported, "the push-constant block needs ", info.push_constant_bytes,
                      " bytes; at most ", push_limit, " are supported here");
  }
  const std::uint32_t uniform_limit = std::min(d.properties.limits.maxUniformBufferRange, kMaxUniformBytes);
  if (info.uniform_bytes > uniform_limit) {
    return make_error(ErrorCode::unsupported, "the uniform block of scalars needs ", info.uniform_bytes,
                      " bytes; at most ", uniform_limit, " are supported here");
  }
  return Status();
}

} // namespace

// ---- Modules ---------------------------------------------------------------------------------

Result<void*> VulkanBackend::module_load(const BackendDevice& device, ModuleFormat, std::span<const std::byte> data,
                                         const char*, BuildLog& log) noexcept {
  if (data.size() % 4 != 0) {
    log.append("SPIR-V size is not a multiple of 4 bytes");
    return make_error(ErrorCode::invalid_argument, "SPIR-V must be whole 32-bit words; ", data.size(),
                      " bytes is not a multiple of 4");
  }
  DEVRT_VK_DEVICE(d, device);
  std::vector<std::uint32_t> words(data.size() / 4);
  std::memcpy(words.data(), data.data(), data.size());
  Result<SpirvModuleInfo> info = reflect_spirv(words);
  if (!info.ok()) {
    log.append(info.status().message());
    return std::move(info).status();
  }
  DEVRT_RETURN_IF_ERROR(check_scalar_blocks(d, *info));
  auto module = std::make_unique<ModuleState>();
  module->device = &d;
  module->info = std::move(*info);
  DEVRT_RETURN_IF_ERROR(define_undefined(words, module->rewritten, log));
  VkShaderModuleCreateInfo shader{};
  shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  shader.codeSize = words.size() * 4;
  shader.pCode = words.data();
  VkResult result = d.api.vkCreateShaderModule(d.device, &shader, nullptr, &module->shader);
  if (result != VK_SUCCESS) {
    log.append("vkCreateShaderModule rejected the SPIR-V");
    destroy_module(module.release());
    return vk_error("vkCreateShaderModule", result);
  }
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (std::uint32_t binding : module->info.storage_bindings) {
    VkDescriptorSetLayoutBinding b{};
    b.binding = binding;
    b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b.descriptorCount = 1;
    b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(b);
  }
  if (module->info.has_uniform_block) {
    VkDescriptorSetLayoutBinding b{};
    b.binding = module->info.uniform_binding;
    b.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    b.descriptorCount = 1;
    b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(b);
  }
  module->push_descriptors = d.use_push_descriptors && bindings.size() <= kMaxPushDescriptors;
  VkDescriptorSetLayoutCreateInfo set{};
  set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set.flags = module->push_descriptors ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
  set.bindingCount = static_cast<std::uint32_t>(bindings.size());
  set.pBindings = bindings.data();
  result = d.api.vkCreateDescriptorSetLayout(d.device, &set, nullptr, &module->set_layout);
  if (result != VK_SUCCESS) {
    destroy_module(module.release());
    return vk_error("vkCreateDescriptorSetLayout", result);
  }
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, module->info.push_constant_bytes};
  VkPipelineLayoutCreateInfo layout{};
  layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &module->set_layout;
  layout.pushConstantRangeCount = module->info.push_constant_bytes > 0 ? 1 : 0;
  layout.pPushConstantRanges = &push;
  result = d.api.vkCreatePipelineLayout(d.device, &layout, nullptr, &module->layout);
  if (result != VK_SUCCESS) {
    destroy_module(module.release());
    return vk_error("vkCreatePipelineLayout", result);
  }
  return static_cast<void*>(module.release());
}

Status VulkanBackend::module_unload(const BackendDevice&, void* handle) noexcept {
  destroy_module(static_cast<ModuleState*>(handle));
  return Status();
}

Result<std::uint32_t> VulkanBackend::module_rewrites(const BackendDevice&, void* handle) noexcept {
  return static_cast<const ModuleState*>(handle)->rewritten;
}

Result<void*> VulkanBackend::module_function(const BackendDevice&, void* handle, const char* name) noexcept {
  auto* m = static_cast<ModuleState*>(handle);
  std::lock_guard<std::mutex> lock(m->mutex);
  for (const auto& f : m->functions) {
    if (f->name == name) return static_cast<void*>(f.get());
  }
  const SpirvEntryPoint* entry = nullptr;
  for (const SpirvEntryPoint& e : m->info.entry_points) {
    if (e.name == name) entry = &e;
  }
  if (entry == nullptr) {
    std::string names;
    for (const SpirvEntryPoint& e : m->info.entry_points) names += (names.empty() ? "" : ", ") + e.name;
    return make_error(ErrorCode::not_found, "the SPIR-V module has no compute entry point '", name,
                      "' (it has: ", names, ")");
  }
  auto f = std::make_unique<FunctionState>();
  f->module = m;
  f->name = name;
  f->entry = *entry;
  f->signature.known = true;
  for (std::size_t i = 0; i < m->info.storage_bindings.size(); ++i) {
    f->signature.add(detail::KernelParam{detail::KernelParam::Kind::buffer, 0, 0});
  }
  for (const SpirvPushMember& member : m->info.has_uniform_block ? m->info.uniform_members : m->info.push_members) {
    f->signature.add(detail::KernelParam{detail::KernelParam::Kind::scalar, member.code, member.bits});
  }
  if (!specialised(m->info)) {
    // A fixed workgroup size: build the pipeline now, so shader errors surface here.
    std::lock_guard<std::mutex> function_lock(f->mutex);
    DEVRT_ASSIGN_OR_RETURN(f->fixed_pipeline, pipeline_for(*f, f->entry.local_size));
  }
  void* result = f.get();
  m->functions.push_back(std::move(f));
  return result;
}

namespace {

// What a launch must pass before anything is recorded: its arguments, its extents, and the
// shader's fixed local size where it has one.
Status check_launch(const FunctionState& f, const DeviceState& d, const LaunchDesc& desc) {
  const VkPhysicalDeviceLimits& limits = d.properties.limits;
  for (std::uint32_t i = 0; i < desc.num_args; ++i) {
    if (desc.args[i].kind == DEVRT_ARG_TEXTURE) {
      return make_error(ErrorCode::unsupported, "argument ", i, " of '", f.name,
                        "' is a texture: Vulkan shaders take storage buffers and scalars here, not storage images");
    }
  }
  DEVRT_RETURN_IF_ERROR(detail::check_kernel_args(f.name, f.signature, desc.args, desc.num_args));
  if (desc.dynamic_shared_bytes != 0) {
    return make_error(ErrorCode::unsupported,
                      "Vulkan shaders declare their shared memory statically; dynamic_shared_bytes must be 0");
  }
  DEVRT_RETURN_IF_ERROR(detail::check_gpu_extents(
      desc, detail::GpuLimits::from(limits.maxComputeWorkGroupSize, limits.maxComputeWorkGroupCount,
                                    limits.maxComputeWorkGroupInvocations)));
  for (int i = 0; i < 3; ++i) {
    if (f.module->info.local_size_spec_id[i] < 0 && desc.block[i] != f.entry.local_size[i]) {
      return make_error(ErrorCode::invalid_argument, "shader '", f.name, "' has a fixed local size ",
                        f.entry.local_size[0], "x", f.entry.local_size[1], "x", f.entry.local_size[2],
                        "; launch with that block or size it with local_size_x_id/y_id/z_id");
    }
  }
  return Status();
}

// A launch's arguments as Vulkan binds them: storage buffers (descriptor writes and the ranges
// they touch), and the scalars' block: push constants, or the bytes of a uniform buffer.
struct LaunchBindings {
  VkDescriptorBufferInfo buffers[kMaxKernelArgs + 1];
  VkWriteDescriptorSet writes[kMaxKernelArgs + 1];
  TouchedRange ranges[kMaxKernelArgs];
  unsigned char push[kMaxPushConstantBytes];
  unsigned char uniform[kMaxUniformBytes];
  std::uint32_t buffer_count = 0;
};

Status bind_arguments(const ModuleState& m, const LaunchDesc& desc, LaunchBindings& out) {
  const VkPhysicalDeviceLimits& limits = m.device->properties.limits;
  const bool uniform = m.info.has_uniform_block;
  unsigned char* scalars = uniform ? out.uniform : out.push;
  const std::vector<SpirvPushMember>& members = uniform ? m.info.uniform_members : m.info.push_members;
  std::memset(scalars, 0, uniform ? m.info.uniform_bytes : m.info.push_constant_bytes); // padding between members
  std::uint32_t scalar_index = 0;
  for (std::uint32_t i = 0; i < desc.num_args; ++i) {
    const devrt_kernel_arg& arg = desc.args[i];
    if (arg.kind != DEVRT_ARG_BUFFER) {
      const SpirvPushMember& member = members[scalar_index++];
      std::memcpy(scalars + member.offset, arg.value.bytes, member.bits / 8u);
      continue;
    }
    const auto* allocation = static_cast<const Allocation*>(arg.buffer);
    DEVRT_RETURN_IF_ERROR(freed_buffers().check(allocation, "", i));
    if (allocation == nullptr || arg.size == 0) {
      return make_error(ErrorCode::invalid_argument, "argument ", i, ": a storage buffer needs at least one byte");
    }
    if (arg.offset % limits.minStorageBufferOffsetAlignment != 0) {
      return make_error(ErrorCode::invalid_argument, "argument ", i, ": offset ", arg.offset,
                        " is not a multiple of minStorageBufferOffsetAlignment ",
                        limits.minStorageBufferOffsetAlignment);
    }
    const std::uint32_t n = out.buffer_count++;
    VkDeviceSize range = std::min<VkDeviceSize>(arg.size, limits.maxStorageBufferRange);
    out.buffers[n] = VkDescriptorBufferInfo{allocation->buffer, arg.offset, range};
    out.ranges[n] = TouchedRange{allocation->buffer, arg.offset, arg.offset + range};
    VkWriteDescriptorSet& w = out.writes[n];
    w = VkWriteDescriptorSet{};
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstBinding = m.info.storage_bindings[n];
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &out.buffers[n];
  }
  return Status();
}

// The launch's uniform buffer of scalars: a free one of the stream's, or a new host-visible one,
// written, and held by the batch being recorded until the device has run it. The descriptor write
// after the buffers' is set to it. Caller holds s.mutex.
Status bind_uniform(StreamState& s, const ModuleState& m, LaunchBindings& b) {
  DeviceState& d = *m.device;
  Allocation* uniform = nullptr;
  if (!s.free_uniforms.empty()) {
    uniform = s.free_uniforms.back();
    s.free_uniforms.pop_back();
  } else {
    DEVRT_ASSIGN_OR_RETURN(uniform, create_allocation(d, kMaxUniformBytes, MemoryUsage::upload));
    if (uniform->mapped == nullptr) {
      destroy_allocation(d, uniform);
      return make_error(ErrorCode::unsupported, "no host-visible memory for a launch's uniform buffer of scalars");
    }
  }
  s.recording_uniforms.push_back(uniform);
  std::memcpy(uniform->mapped, b.uniform, m.info.uniform_bytes);
  flush_mapping(d, *uniform, true);
  const std::uint32_t n = b.buffer_count;
  b.buffers[n] = VkDescriptorBufferInfo{uniform->buffer, 0, m.info.uniform_bytes};
  VkWriteDescriptorSet& w = b.writes[n];
  w = VkWriteDescriptorSet{};
  w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  w.dstBinding = m.info.uniform_binding;
  w.descriptorCount = 1;
  w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
  w.pBufferInfo = &b.buffers[n];
  return Status();
}

// Records the pipeline, buffers and push constants into the stream's command buffer, leaving out
// what the previous dispatch of the same layout already bound. Caller holds s.mutex.
Status record_bindings(StreamState& s, const ModuleState& m, VkPipeline pipeline, LaunchBindings& b) {
  DeviceState& d = *m.device;
  const bool uniform = m.info.has_uniform_block;
  if (uniform) DEVRT_RETURN_IF_ERROR(bind_uniform(s, m, b));
  if (s.bound_pipeline != pipeline) {
    d.api.vkCmdBindPipeline(s.recording, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    s.bound_pipeline = pipeline;
  }
  // Pushed state of the same layout stays bound across dispatches; another layout disturbs it.
  if (s.pushed_layout != m.layout) {
    s.pushed_layout = m.layout;
    s.pushed_buffer_count = UINT32_MAX;
    s.pushed_constant_bytes = UINT32_MAX;
  }
  // A uniform buffer is the launch's own: its descriptors are written every time.
  const std::uint32_t count = b.buffer_count + (uniform ? 1 : 0);
  if (count > 0 && m.push_descriptors) {
    const bool same = !uniform && s.pushed_buffer_count == count &&
                      std::memcmp(s.pushed_buffers, b.buffers, count * sizeof(VkDescriptorBufferInfo)) == 0;
    if (!same) {
      d.api.vkCmdPushDescriptorSetKHR(s.recording, VK_PIPELINE_BIND_POINT_COMPUTE, m.layout, 0, count, b.writes);
      std::memcpy(s.pushed_buffers, b.buffers, b.buffer_count * sizeof(VkDescriptorBufferInfo));
      s.pushed_buffer_count = uniform ? UINT32_MAX : count;
    }
  } else if (count > 0) {
    DEVRT_ASSIGN_OR_RETURN(VkDescriptorSet set, allocate_set(s, m.set_layout));
    for (std::uint32_t i = 0; i < count; ++i) b.writes[i].dstSet = set;
    d.api.vkUpdateDescriptorSets(d.device, count, b.writes, 0, nullptr);
    d.api.vkCmdBindDescriptorSets(s.recording, VK_PIPELINE_BIND_POINT_COMPUTE, m.layout, 0, 1, &set, 0, nullptr);
  }
  const std::uint32_t constant_bytes = m.info.push_constant_bytes;
  if (constant_bytes > 0 &&
      (s.pushed_constant_bytes != constant_bytes || std::memcmp(s.pushed_constants, b.push, constant_bytes) != 0)) {
    d.api.vkCmdPushConstants(s.recording, m.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, constant_bytes, b.push);
    std::memcpy(s.pushed_constants, b.push, constant_bytes);
    s.pushed_constant_bytes = constant_bytes;
  }
  return Status();
}

} // namespace

Status VulkanBackend::launch(const BackendDevice&, void* handle, const LaunchDesc& desc) noexcept {
  auto& f = *static_cast<FunctionState*>(handle);
  ModuleState& m = *f.module;
  Result<DeviceState*> usable = usable_device(*m.device); // a lost device records nothing more
  if (!usable.ok()) return std::move(usable).status();
  DeviceState& d = **usable;
  DEVRT_RETURN_IF_ERROR(check_launch(f, d, desc));
  VkPipeline pipeline = f.fixed_pipeline;
  if (pipeline == VK_NULL_HANDLE) {
    std::lock_guard<std::mutex> lock(f.mutex);
    DEVRT_ASSIGN_OR_RETURN(pipeline, pipeline_for(f, desc.block));
  }
  LaunchBindings bindings;
  DEVRT_RETURN_IF_ERROR(bind_arguments(m, desc, bindings));
  StreamState& s = stream_of(*m.device, desc.stream);
  std::lock_guard<std::mutex> lock(s.mutex);
  DEVRT_RETURN_IF_ERROR(begin(s));
  order_command(s, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, {bindings.ranges, bindings.buffer_count});
  DEVRT_RETURN_IF_ERROR(record_bindings(s, m, pipeline, bindings));
  m.device->api.vkCmdDispatch(s.recording, desc.grid[0], desc.grid[1], desc.grid[2]);
  return recorded(s);
}

} // namespace devrt::vulkan
