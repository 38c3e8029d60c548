// SPDX-License-Identifier: Apache-2.0
// WebGPU kernel modules from WGSL, and launches in TVM's calling convention: buffer arguments bind,
// in order, to the storage buffers of bind group 0 (ascending @binding); the scalars (32-bit:
// i32, u32, f32), 4 bytes each and in order, then the grid's x extent as a u32 (TVM's
// packGridDimX), fill the one uniform buffer the shader declares there. A grid wider than the
// device allows in x is spread into z as TVM's runtime does (the kernel folds blockIdx.z back).
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend_support/kernel_signature.hpp"
#include "webgpu_backend.hpp"
#include "webgpu_state.hpp"
#include "webgpu_wgsl.hpp"

namespace devrt::webgpu {

namespace {

struct ModuleState;

// A pipeline and its bind group layout (from the shader: getBindGroupLayout(0)), or null when the
// shader binds nothing.
struct Pipeline {
  WGPUComputePipeline pipeline = nullptr;
  WGPUBindGroupLayout layout = nullptr;
};

// The bind group of a function's last launch, with what it binds: the next launch with the same
// pipeline, buffers and scalars (whose uniform slot still holds them) binds it again.
struct LastBinding {
  WGPUComputePipeline pipeline = nullptr;
  std::vector<WGPUBindGroupEntry> storage;
  std::vector<std::uint32_t> words;
  std::uint64_t slot = 0;
  WGPUBindGroup group = nullptr;
};

// One pipeline per block extent for a kernel whose workgroup size comes from override constants;
// one in all for a fixed size. Owned by its module; changed on the worker thread only.
struct FunctionState {
  ModuleState* module = nullptr;
  WgslEntryPoint entry;
  std::map<std::array<std::uint32_t, 3>, Pipeline> pipelines;
  LastBinding last;
};

struct ModuleState {
  DeviceState* device = nullptr;
  WGPUShaderModule shader = nullptr;
  std::string source;
  WgslInterface interface;
  detail::KernelSignature signature;                     // every entry point's: the storage buffers, then the scalars
  std::vector<std::unique_ptr<FunctionState>> functions; // on the worker thread only
};

bool fixed_size(const WgslEntryPoint& entry) {
  return entry.workgroup_size[0] != 0 && entry.workgroup_size[1] != 0 && entry.workgroup_size[2] != 0;
}

// The entry point's compilation errors, one per line with their positions, into `log`.
void collect_compilation_log(const Runtime& rt, WGPUShaderModule shader, BuildLog& log, bool& has_errors) {
  struct Answer {
    std::atomic<bool> done{false};
    std::string text;
    bool errors = false;
  } answer;
  WGPUCompilationInfoCallbackInfo callback{};
  callback.mode = kCallbackModeAllowProcessEvents;
  callback.callback = [](WGPUEnum status, const WGPUCompilationInfo* info, void* data, void*) {
    auto* a = static_cast<Answer*>(data);
    // Without the messages the module is still built: its errors come from the error scope.
    if (status != kSuccess) a->text = failure("wgpuShaderModuleGetCompilationInfo", status, {}) + "\n";
    for (std::size_t i = 0; info != nullptr && i < info->messageCount; ++i) {
      const WGPUCompilationMessage& m = info->messages[i];
      if (m.type == kCompilationMessageError) a->errors = true;
      a->text += std::to_string(m.lineNum) + ":" + std::to_string(m.linePos) + ": " + text(m.message) + "\n";
    }
    a->done.store(true, std::memory_order_release);
  };
  callback.userdata1 = &answer;
  rt.api.wgpuShaderModuleGetCompilationInfo(shader, callback);
  if (wait_for(rt, answer.done)) {
    log.append(answer.text);
    has_errors = answer.errors;
  }
}

Result<Pipeline> make_pipeline(const Runtime& rt, DeviceState& d, const FunctionState& f,
                               const std::array<std::uint32_t, 3>& block) {
  std::vector<WGPUConstantEntry> constants;
  for (int dim = 0; dim < 3; ++dim) {
    const std::string& name = f.entry.size_override[dim];
    if (name.empty()) continue;
    constants.push_back(WGPUConstantEntry{nullptr, WGPUStringView{name.data(), name.size()}, double(block[dim])});
  }
  WGPUComputePipelineDescriptor descriptor{};
  descriptor.compute.module = f.module->shader;
  descriptor.compute.entryPoint = WGPUStringView{f.entry.name.data(), f.entry.name.size()};
  descriptor.compute.constantCount = constants.size();
  descriptor.compute.constants = constants.data();
  auto create = [&] { return rt.api.wgpuDeviceCreateComputePipeline(d.device, &descriptor); };
  Pipeline made;
  DEVRT_ASSIGN_OR_RETURN(made.pipeline, create_scoped<WGPUComputePipeline>(rt, d, "wgpuDeviceCreateComputePipeline",
                                                                           create, rt.api.wgpuComputePipelineRelease));
  if (!f.module->interface.bindings.empty()) {
    made.layout = rt.api.wgpuComputePipelineGetBindGroupLayout(made.pipeline, 0);
  }
  return made;
}

void release_pipeline(const Api& api, const Pipeline& p) {
  if (p.layout != nullptr) api.wgpuBindGroupLayoutRelease(p.layout);
  api.wgpuComputePipelineRelease(p.pipeline);
}

// TVM's convention as a signature: buffers for the storage bindings, then the uniform struct's
// members; unknown when a member's type is not a 32-bit scalar.
detail::KernelSignature signature_of(const WgslInterface& interface) {
  detail::KernelSignature signature;
  if (!interface.scalars_known) return signature;
  signature.known = true;
  for (const WgslBinding& binding : interface.bindings) {
    if (!binding.uniform) signature.add(detail::KernelParam{detail::KernelParam::Kind::buffer, 0, 0});
  }
  for (const WgslScalar& scalar : interface.scalars) {
    signature.add(detail::KernelParam{detail::KernelParam::Kind::scalar, scalar.code, scalar.bits});
  }
  return signature;
}

std::string extent_text(const std::uint32_t (&extent)[3]) {
  return std::to_string(extent[0]) + "x" + std::to_string(extent[1]) + "x" + std::to_string(extent[2]);
}

} // namespace

Result<void*> WebgpuBackend::module_load(const BackendDevice& device, ModuleFormat, std::span<const std::byte> data,
                                         const char* options, BuildLog& log) noexcept {
  if (options != nullptr && options[0] != '\0') {
    return make_error(ErrorCode::invalid_argument, "WGSL takes no compiler options (got '", options, "')");
  }
  auto module = std::make_unique<ModuleState>();
  module->device = &state_of(device);
  module->source.assign(reinterpret_cast<const char*>(data.data()), data.size());
  Result<WgslInterface> interface = scan_wgsl(module->source);
  if (!interface.ok()) {
    log.append(interface.status().message());
    return std::move(interface).status();
  }
  module->interface = std::move(interface).value();
  module->signature = signature_of(module->interface);
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  Status status = worker().run([&]() -> Status {
    WGPUShaderSourceWGSL source{};
    source.chain.sType = kSTypeShaderSourceWGSL;
    source.code = WGPUStringView{module->source.data(), module->source.size()};
    WGPUShaderModuleDescriptor descriptor{};
    descriptor.nextInChain = &source.chain;
    push_scope(rt.api, d);
    module->shader = rt.api.wgpuDeviceCreateShaderModule(d.device, &descriptor);
    Status created = pop_scope(rt, d, "wgpuDeviceCreateShaderModule");
    bool has_errors = false;
    if (module->shader != nullptr) collect_compilation_log(rt, module->shader, log, has_errors);
    if (created.ok() && module->shader == nullptr) {
      created = make_error(ErrorCode::driver_error, "wgpuDeviceCreateShaderModule returned null");
    }
    if (created.ok() && !has_errors) return Status();
    if (module->shader != nullptr) rt.api.wgpuShaderModuleRelease(module->shader);
    module->shader = nullptr;
    if (has_errors) {
      return make_error(ErrorCode::driver_error, "the WGSL module does not compile; build log:\n", log.view());
    }
    return created; // the device refused it (out of memory, a validation error): its scope says why
  });
  if (!status.ok()) return status;
  return static_cast<void*>(module.release());
}

Status WebgpuBackend::module_unload(const BackendDevice&, void* handle) noexcept {
  const Runtime& rt = runtime();
  auto* module = static_cast<ModuleState*>(handle);
  worker().run([&] {
    submit(rt, *module->device); // the batch may use the module's pipelines
    for (const auto& function : module->functions) {
      if (function->last.group != nullptr) rt.api.wgpuBindGroupRelease(function->last.group);
      for (auto& [block, pipeline] : function->pipelines) release_pipeline(rt.api, pipeline);
    }
    rt.api.wgpuShaderModuleRelease(module->shader);
    return 0;
  });
  delete module;
  return Status();
}

Result<void*> WebgpuBackend::module_function(const BackendDevice& device, void* handle, const char* name) noexcept {
  auto* module = static_cast<ModuleState*>(handle);
  const auto& entries = module->interface.entry_points;
  auto found = std::find_if(entries.begin(), entries.end(), [&](const WgslEntryPoint& e) { return e.name == name; });
  if (found == entries.end()) {
    std::string names;
    for (const WgslEntryPoint& e : entries) names += (names.empty() ? "" : ", ") + e.name;
    return make_error(ErrorCode::not_found, "the WGSL module has no compute entry point '", name,
                      "' (it has: ", names.empty() ? std::string("none") : names, ")");
  }
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  return worker().run([&]() -> Result<void*> {
    for (const auto& existing : module->functions) {
      if (existing->entry.name == name) return static_cast<void*>(existing.get());
    }
    auto function = std::make_unique<FunctionState>();
    function->module = module;
    function->entry = *found;
    if (fixed_size(function->entry)) { // built now, so that a bad entry point fails here
      const std::array<std::uint32_t, 3> size{function->entry.workgroup_size[0], function->entry.workgroup_size[1],
                                              function->entry.workgroup_size[2]};
      DEVRT_ASSIGN_OR_RETURN(Pipeline pipeline, make_pipeline(rt, d, *function, size));
      function->pipelines.emplace(size, pipeline);
    }
    module->functions.push_back(std::move(function));
    return static_cast<void*>(module->functions.back().get());
  });
}

namespace {

// A launch checked against the device and the shader, ready to record.
struct PreparedLaunch {
  std::vector<std::uint32_t> storage;    // the storage bindings, ascending
  const WgslBinding* uniform = nullptr;  // the uniform binding, if the shader has one
  std::vector<devrt_kernel_arg> buffers; // in argument order (copies: the launch runs later)
  std::vector<std::uint32_t> words;      // the scalars, then packGridDimX
  std::uint32_t grid[3] = {1, 1, 1};     // as dispatched (x spread into z when too wide)
};

Status check_block(const WGPULimits& limits, const WgslEntryPoint& entry, const LaunchDesc& desc) {
  const std::uint64_t threads = std::uint64_t{desc.block[0]} * desc.block[1] * desc.block[2];
  if (threads > limits.maxComputeInvocationsPerWorkgroup || desc.block[0] > limits.maxComputeWorkgroupSizeX ||
      desc.block[1] > limits.maxComputeWorkgroupSizeY || desc.block[2] > limits.maxComputeWorkgroupSizeZ) {
    return make_error(ErrorCode::invalid_argument, "block ", extent_text(desc.block), " exceeds the device's ",
                      limits.maxComputeInvocationsPerWorkgroup, " threads per workgroup (max_threads_per_block) or ",
                      limits.maxComputeWorkgroupSizeX, "x", limits.maxComputeWorkgroupSizeY, "x",
                      limits.maxComputeWorkgroupSizeZ);
  }
  for (int dim = 0; dim < 3; ++dim) {
    if (entry.workgroup_size[dim] != 0 && entry.workgroup_size[dim] != desc.block[dim]) {
      return make_error(ErrorCode::invalid_argument, "block ", extent_text(desc.block),
                        " differs from the entry point's @workgroup_size(", extent_text(entry.workgroup_size), ")");
    }
  }
  if (desc.dynamic_shared_bytes != 0) {
    return make_error(ErrorCode::unsupported, "WGSL declares its workgroup memory itself: no dynamic shared memory");
  }
  return Status();
}

Status prepare_arguments(const WGPULimits& limits, const FunctionState& function, const LaunchDesc& desc,
                         PreparedLaunch& out) {
  for (const WgslBinding& b : function.module->interface.bindings) {
    if (b.uniform) {
      out.uniform = &b;
    } else {
      out.storage.push_back(b.binding);
    }
  }
  for (std::uint32_t i = 0; i < desc.num_args; ++i) {
    const devrt_kernel_arg& arg = desc.args[i];
    if (arg.kind == DEVRT_ARG_BUFFER) {
      DEVRT_RETURN_IF_ERROR(freed_buffers().check(arg.buffer, "", i));
      if (arg.offset % limits.minStorageBufferOffsetAlignment != 0) {
        return make_error(ErrorCode::invalid_argument, "argument ", i, ": offset ", arg.offset,
                          " is not a multiple of minStorageBufferOffsetAlignment ",
                          limits.minStorageBufferOffsetAlignment);
      }
      out.buffers.push_back(arg);
    } else if (arg.kind == DEVRT_ARG_SCALAR && arg.type_bits == 32 &&
               (arg.type_code == 0 || arg.type_code == 1 || arg.type_code == 2)) {
      std::uint32_t word = 0;
      std::memcpy(&word, arg.value.bytes, 4);
      out.words.push_back(word);
    } else {
      return make_error(ErrorCode::invalid_argument, "argument ", i,
                        ": WGSL kernels take buffers and 32-bit scalars (i32, u32, f32)");
    }
  }
  const std::string& name = function.entry.name;
  if (out.buffers.size() != out.storage.size()) {
    return make_error(ErrorCode::invalid_argument, "kernel '", name, "' binds ", out.storage.size(),
                      " storage buffers but was given ", out.buffers.size());
  }
  if (out.uniform == nullptr && !out.words.empty()) {
    return make_error(ErrorCode::invalid_argument, "kernel '", name, "' was given ", out.words.size(),
                      " scalars but declares no uniform buffer for them");
  }
  // The grid: x beyond the device's limit spreads into z (TVM's runtime does the same).
  std::copy(std::begin(desc.grid), std::end(desc.grid), std::begin(out.grid));
  while (out.grid[0] > limits.maxComputeWorkgroupsPerDimension && out.grid[2] == 1) {
    out.grid[0] = (out.grid[0] + 1) / 2;
    out.grid[2] *= 2;
  }
  for (std::uint32_t extent : out.grid) {
    if (extent > limits.maxComputeWorkgroupsPerDimension) {
      return make_error(ErrorCode::invalid_argument, "grid ", extent_text(desc.grid), " exceeds ",
                        limits.maxComputeWorkgroupsPerDimension, " workgroups per dimension");
    }
  }
  out.words.push_back(desc.grid[0]); // packGridDimX
  return Status();
}

// The pipeline for `block`: the fixed one, or one made for these override values. On the worker.
Result<Pipeline> pipeline_for(const Runtime& rt, DeviceState& d, FunctionState& function,
                              const std::uint32_t (&requested)[3]) {
  const WgslEntryPoint& entry = function.entry;
  const std::array<std::uint32_t, 3> block =
      fixed_size(entry)
          ? std::array<std::uint32_t, 3>{entry.workgroup_size[0], entry.workgroup_size[1], entry.workgroup_size[2]}
          : std::array<std::uint32_t, 3>{requested[0], requested[1], requested[2]};
  if (auto cached = function.pipelines.find(block); cached != function.pipelines.end()) return cached->second;
  DEVRT_ASSIGN_OR_RETURN(Pipeline pipeline, make_pipeline(rt, d, function, block));
  function.pipelines.emplace(block, pipeline);
  return pipeline;
}

bool same_entries(const std::vector<WGPUBindGroupEntry>& a, const std::vector<WGPUBindGroupEntry>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const WGPUBindGroupEntry& x, const WGPUBindGroupEntry& y) {
                      return x.binding == y.binding && x.buffer == y.buffer && x.offset == y.offset && x.size == y.size;
                    });
}

// The bind group of this launch: the last one again when it binds the same, else a new one (its
// scalars in a new uniform slot). On the worker.
Result<WGPUBindGroup> bind_group_for(const Runtime& rt, DeviceState& d, FunctionState& function,
                                     const Pipeline& pipeline, const PreparedLaunch& p) {
  std::vector<WGPUBindGroupEntry> storage;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const devrt_kernel_arg& arg = p.buffers[i];
    const auto* allocation = static_cast<const Allocation*>(arg.buffer);
    WGPUBindGroupEntry e{};
    e.binding = p.storage[i];
    e.buffer = allocation->buffer;
    e.offset = arg.offset;
    e.size = std::min<std::uint64_t>((arg.size + 3) & ~std::uint64_t{3}, allocation->size - arg.offset);
    storage.push_back(e);
  }
  LastBinding& last = function.last;
  const bool uniform = p.uniform != nullptr;
  if (last.group != nullptr && last.pipeline == pipeline.pipeline && same_entries(last.storage, storage) &&
      (!uniform || (last.words == p.words && slot_intact(d, last.slot)))) {
    return last.group;
  }
  std::vector<WGPUBindGroupEntry> entries = storage;
  std::uint64_t slot = 0;
  if (uniform) {
    DEVRT_ASSIGN_OR_RETURN(slot, take_uniform_slot(rt, d, p.words));
    WGPUBindGroupEntry e{};
    e.binding = p.uniform->binding;
    e.buffer = d.ring.buffer;
    e.offset = slot_offset(d, slot);
    e.size = (p.words.size() * 4 + 15) & ~std::uint64_t{15};
    entries.push_back(e);
  }
  WGPUBindGroupDescriptor descriptor{};
  descriptor.layout = pipeline.layout;
  descriptor.entryCount = entries.size();
  descriptor.entries = entries.data();
  WGPUBindGroup group = rt.api.wgpuDeviceCreateBindGroup(d.device, &descriptor); // errors: check_device()
  if (last.group != nullptr) rt.api.wgpuBindGroupRelease(last.group);
  last = LastBinding{pipeline.pipeline, std::move(storage), p.words, slot, group};
  return group;
}

// Records the dispatch into the batch. On the worker. A validation error the implementation finds
// now or when the batch is submitted is reported by the device's next check_device().
Status record_launch(const Runtime& rt, DeviceState& d, FunctionState& function, const Pipeline& pipeline,
                     const PreparedLaunch& p) {
  const Api& api = rt.api;
  WGPUBindGroup group = nullptr;
  if (pipeline.layout != nullptr) {
    DEVRT_ASSIGN_OR_RETURN(group, bind_group_for(rt, d, function, pipeline, p));
  }
  WGPUComputePassEncoder pass = batch_pass(rt, d);
  Batch& batch = d.batch;
  if (batch.pipeline != pipeline.pipeline) {
    api.wgpuComputePassEncoderSetPipeline(pass, pipeline.pipeline);
    batch.pipeline = pipeline.pipeline;
  }
  if (group != nullptr && batch.group != group) {
    api.wgpuComputePassEncoderSetBindGroup(pass, 0, group, 0, nullptr);
    batch.group = group;
  }
  api.wgpuComputePassEncoderDispatchWorkgroups(pass, p.grid[0], p.grid[1], p.grid[2]);
  return Status();
}

} // namespace

// Checks the launch here and records it on the worker thread without waiting for it: a run of
// launches is recorded while the caller prepares the next. What fails on the worker (a pipeline
// for a new block extent, a bind group) is reported by the device's next call that waits.
Status WebgpuBackend::launch(const BackendDevice& device, void* handle, const LaunchDesc& desc) noexcept {
  auto* function = static_cast<FunctionState*>(handle);
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  if (d.lost.load(std::memory_order_acquire)) return make_error(ErrorCode::driver_error, "the WebGPU device was lost");
  DEVRT_RETURN_IF_ERROR(
      detail::check_kernel_args(function->entry.name, function->module->signature, desc.args, desc.num_args));
  DEVRT_RETURN_IF_ERROR(check_block(d.limits, function->entry, desc));
  PreparedLaunch prepared;
  DEVRT_RETURN_IF_ERROR(prepare_arguments(d.limits, *function, desc, prepared));
  const std::array<std::uint32_t, 3> block{desc.block[0], desc.block[1], desc.block[2]};
  const bool queued = worker().post([&rt, &d, function, block, prepared = std::move(prepared)] {
    const std::uint32_t requested[3] = {block[0], block[1], block[2]};
    Result<Pipeline> pipeline = pipeline_for(rt, d, *function, requested);
    Status status = pipeline.ok() ? record_launch(rt, d, *function, *pipeline, prepared) : pipeline.status();
    if (!status.ok()) note_error(d, status, "the launch of '" + function->entry.name + "'");
  });
  if (!queued) return make_error(ErrorCode::out_of_memory, "no host memory to queue the launch");
  return Status();
}

Result<ModuleBinary> WebgpuBackend::module_binary(const BackendDevice&, void* handle) noexcept {
  const auto* module = static_cast<const ModuleState*>(handle);
  return ModuleBinary{ModuleFormat::wgsl, module->source};
}

} // namespace devrt::webgpu
