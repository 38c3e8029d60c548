// SPDX-License-Identifier: Apache-2.0
// The WebGPU device as TVM's `webgpu` target (webgpu_target.hpp).
#include "webgpu_target.hpp"

#include <charconv>
#include <cstddef>

namespace devrt::webgpu {

namespace {

// The record's numeric fields, in the order they are written.
struct NumericField {
  const char* name;
  std::uint32_t AdapterFacts::*field32;
  std::uint64_t AdapterFacts::*field64;
};
constexpr NumericField kNumericFields[] = {
    {"maxComputeInvocationsPerWorkgroup", &AdapterFacts::max_compute_invocations_per_workgroup, nullptr},
    {"maxComputeWorkgroupStorageSize", &AdapterFacts::max_compute_workgroup_storage_size, nullptr},
    {"maxStorageBufferBindingSize", nullptr, &AdapterFacts::max_storage_buffer_binding_size},
    {"maxStorageBuffersPerShaderStage", &AdapterFacts::max_storage_buffers_per_shader_stage, nullptr},
    {"subgroupMinSize", &AdapterFacts::subgroup_min_size, nullptr},
};
constexpr const char* kSizeFields[] = {"maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY",
                                       "maxComputeWorkgroupSizeZ"};

std::string_view field_text(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

bool parse_number(std::string_view text, std::uint64_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, out);
  return error == std::errc() && ptr == end && !text.empty();
}

// Stores `value` into the field called `name`; false for an unknown name or a bad value.
bool set_field(AdapterFacts& facts, std::string_view name, std::string_view value) {
  if (name == "device") {
    facts.device = std::string(value);
    return true;
  }
  if (name == "backendType") {
    facts.backend = std::string(value);
    return true;
  }
  if (name == "features") {
    for (std::size_t at = 0; at < value.size();) {
      std::size_t end = value.find(' ', at);
      std::string_view word = value.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
      facts.shader_f16 = facts.shader_f16 || word == "shader-f16";
      facts.subgroups = facts.subgroups || word == "subgroups";
      at = end == std::string_view::npos ? value.size() : end + 1;
    }
    return true;
  }
  std::uint64_t number = 0;
  if (!parse_number(value, number)) return false;
  for (int dim = 0; dim < 3; ++dim) {
    if (name == kSizeFields[dim]) {
      facts.max_compute_workgroup_size[dim] = static_cast<std::uint32_t>(number);
      return number <= UINT32_MAX;
    }
  }
  for (const NumericField& f : kNumericFields) {
    if (name != f.name) continue;
    if (f.field64 != nullptr) {
      facts.*f.field64 = number;
      return true;
    }
    facts.*f.field32 = static_cast<std::uint32_t>(number);
    return number <= UINT32_MAX;
  }
  return false;
}

} // namespace

Target webgpu_target(const AdapterFacts& facts) {
  auto integer = [](auto value) { return static_cast<std::int64_t>(value); };
  Target target("webgpu");
  target.set("keys", {"webgpu", "gpu"});
  target.set("max_num_threads", integer(facts.max_compute_invocations_per_workgroup));
  target.set("max_shared_memory_per_block", integer(facts.max_compute_workgroup_storage_size));
  // A subgroup size without the subgroups feature (Dawn's GL backend reports 4) is no warp a kernel
  // can use.
  target.set("thread_warp_size",
             integer(facts.subgroups && facts.subgroup_min_size != 0 ? facts.subgroup_min_size : 1));
  target.set("supports_subgroups", facts.subgroups);
  target.set("supports_float16", facts.shader_f16);
  target.set("max_block_size_x", integer(facts.max_compute_workgroup_size[0]));
  target.set("max_block_size_y", integer(facts.max_compute_workgroup_size[1]));
  target.set("max_block_size_z", integer(facts.max_compute_workgroup_size[2]));
  target.set("max_storage_buffer_binding_size", integer(facts.max_storage_buffer_binding_size));
  target.set("max_storage_buffers_per_shader_stage", integer(facts.max_storage_buffers_per_shader_stage));
  target.set("device_name", facts.device);
  target.set("backend", facts.backend);
  return target;
}

std::string adapter_record(const AdapterFacts& facts) {
  std::string out = "device: " + facts.device + "\nbackendType: " + facts.backend + "\n";
  for (const NumericField& f : kNumericFields) {
    const std::uint64_t value = f.field64 != nullptr ? facts.*f.field64 : facts.*f.field32;
    out += std::string(f.name) + ": " + std::to_string(value) + "\n";
  }
  for (int dim = 0; dim < 3; ++dim) {
    out += std::string(kSizeFields[dim]) + ": " + std::to_string(facts.max_compute_workgroup_size[dim]) + "\n";
  }
  out += "features:";
  if (facts.shader_f16) out += " shader-f16";
  if (facts.subgroups) out += " subgroups";
  return out + "\n";
}

Result<AdapterFacts> parse_adapter_record(std::string_view record) {
  AdapterFacts facts;
  unsigned seen = 0;
  unsigned line_number = 0;
  for (std::size_t at = 0; at < record.size();) {
    std::size_t end = record.find('\n', at);
    if (end == std::string_view::npos) end = record.size();
    const std::string_view line = field_text(record.substr(at, end - at));
    at = end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos ||
        !set_field(facts, field_text(line.substr(0, colon)), field_text(line.substr(colon + 1)))) {
      return make_error(ErrorCode::invalid_argument, "adapter record line ", line_number, " is not a field: '", line,
                        "'");
    }
    ++seen;
  }
  constexpr unsigned kFields = 3 + std::size(kNumericFields) + std::size(kSizeFields);
  if (seen < kFields) {
    return make_error(ErrorCode::invalid_argument, "the adapter record has ", seen, " fields of ", kFields);
  }
  return facts;
}

} // namespace devrt::webgpu
