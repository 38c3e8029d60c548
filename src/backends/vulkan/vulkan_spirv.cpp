// SPDX-License-Identifier: Apache-2.0
#include "vulkan_spirv.hpp"
#include "vulkan_spirv_opcodes.hpp"

#include <algorithm>
#include <unordered_map>

#include <devrt/dtype.hpp>

namespace devrt::vulkan {
namespace {

constexpr std::uint32_t kMagic = 0x07230203;

// Decorations, storage classes and built-ins from the SPIR-V specification (opcodes:
// vulkan_spirv_opcodes.hpp).
enum : std::uint32_t {
  kDecorationSpecId = 1,
  kDecorationBlock = 2,
  kDecorationBufferBlock = 3,
  kDecorationBuiltIn = 11,
  kDecorationBinding = 33,
  kDecorationDescriptorSet = 34,
  kDecorationOffset = 35,
};
enum : std::uint32_t {
  kStorageUniformConstant = 0,
  kStorageUniform = 2,
  kStoragePushConstant = 9,
  kStorageStorageBuffer = 12,
};
constexpr std::uint32_t kExecutionModelGLCompute = 5;
constexpr std::uint32_t kExecutionModeLocalSize = 17;
constexpr std::uint32_t kExecutionModeLocalSizeId = 38;
constexpr std::uint32_t kBuiltInWorkgroupSize = 25;

struct Type {
  std::uint32_t opcode = 0;
  std::uint32_t width = 0;
  bool is_signed = false;
  std::uint32_t storage = 0;          // pointers
  std::uint32_t pointee = 0;          // pointers
  std::vector<std::uint32_t> members; // structs
};

struct Constant {
  std::uint32_t opcode = 0;
  std::uint32_t value = 0;
  std::vector<std::uint32_t> parts;
};

// What one pass over the instructions collects, by result id.
struct Reflection {
  std::unordered_map<std::uint32_t, Type> types;
  std::unordered_map<std::uint32_t, Constant> constants;
  std::unordered_map<std::uint32_t, std::uint32_t> binding, set, spec_id;
  std::unordered_map<std::uint32_t, bool> buffer_block, block;
  std::unordered_map<std::uint64_t, std::uint32_t> member_offset; // (struct id << 32) | member
  std::uint32_t workgroup_builtin = 0;
  struct Variable {
    std::uint32_t id, type, storage;
  };
  std::vector<Variable> variables;
  std::vector<std::pair<std::uint32_t, SpirvEntryPoint>> entries; // function id -> entry
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> local_size_ids;
};

Status check_header(std::span<const std::uint32_t> words) {
  if (words.size() < 5) {
    return make_error(ErrorCode::invalid_argument, "SPIR-V: ", words.size() * 4,
                      " bytes is shorter than the 20-byte header");
  }
  if (words[0] != kMagic) {
    return make_error(ErrorCode::invalid_argument, "SPIR-V: bad magic number 0x", detail::Hex{words[0]},
                      words[0] == 0x03022307 ? " (big-endian words are not supported)" : " (expected 0x07230203)");
  }
  std::uint32_t version = words[1];
  if ((version >> 16) != 1 || (version & 0xff0000ffu) != 0) {
    return make_error(ErrorCode::invalid_argument, "SPIR-V: unknown version word 0x", detail::Hex{version});
  }
  return Status();
}

Status record_entry_point(Reflection& r, const std::uint32_t* op, std::uint32_t count) {
  if (count < 4 || op[1] != kExecutionModelGLCompute) return Status();
  SpirvEntryPoint entry;
  const char* text = reinterpret_cast<const char*>(op + 3);
  std::size_t max = (count - 3) * 4u;
  std::size_t n = 0;
  while (n < max && text[n] != '\0') ++n;
  if (n == max) return make_error(ErrorCode::invalid_argument, "SPIR-V: unterminated entry point name");
  entry.name.assign(text, n);
  r.entries.emplace_back(op[2], std::move(entry));
  return Status();
}

void record_decoration(Reflection& r, const std::uint32_t* op, std::uint32_t count) {
  if (count < 3) return;
  const bool operand = count >= 4;
  if (op[2] == kDecorationBinding && operand) r.binding[op[1]] = op[3];
  if (op[2] == kDecorationDescriptorSet && operand) r.set[op[1]] = op[3];
  if (op[2] == kDecorationSpecId && operand) r.spec_id[op[1]] = op[3];
  if (op[2] == kDecorationBufferBlock) r.buffer_block[op[1]] = true;
  if (op[2] == kDecorationBlock) r.block[op[1]] = true;
  if (op[2] == kDecorationBuiltIn && operand && op[3] == kBuiltInWorkgroupSize) r.workgroup_builtin = op[1];
}

// Records what reflection needs from one instruction of `count` words.
Status record_instruction(Reflection& r, const std::uint32_t* op, std::uint32_t count) {
  const std::uint32_t opcode = op[0] & 0xffffu;
  switch (opcode) {
  case spirv::kOpEntryPoint: return record_entry_point(r, op, count);
  case spirv::kOpExecutionMode:
    if (count >= 6 && op[2] == kExecutionModeLocalSize) {
      for (auto& [function, entry] : r.entries) {
        if (function == op[1]) std::copy(op + 3, op + 6, entry.local_size);
      }
    } else if (count >= 6 && op[2] == kExecutionModeLocalSizeId) {
      r.local_size_ids.emplace_back(op[1], std::vector<std::uint32_t>(op + 3, op + 6));
    }
    break;
  case spirv::kOpDecorate: record_decoration(r, op, count); break;
  case spirv::kOpMemberDecorate:
    if (count >= 5 && op[3] == kDecorationOffset) r.member_offset[(std::uint64_t{op[1]} << 32) | op[2]] = op[4];
    break;
  case spirv::kOpTypeBool:
    if (count >= 2) r.types[op[1]] = Type{opcode, 8, false, 0, 0, {}};
    break;
  case spirv::kOpTypeInt:
    if (count >= 4) r.types[op[1]] = Type{opcode, op[2], op[3] != 0, 0, 0, {}};
    break;
  case spirv::kOpTypeFloat:
    if (count >= 3) r.types[op[1]] = Type{opcode, op[2], false, 0, 0, {}};
    break;
  case spirv::kOpTypeStruct:
    if (count >= 2) r.types[op[1]] = Type{opcode, 0, false, 0, 0, std::vector<std::uint32_t>(op + 2, op + count)};
    break;
  case spirv::kOpTypePointer:
    if (count >= 4) r.types[op[1]] = Type{opcode, 0, false, op[2], op[3], {}};
    break;
  case spirv::kOpConstant:
  case spirv::kOpSpecConstant:
    if (count >= 4) r.constants[op[2]] = Constant{opcode, op[3], {}};
    break;
  case spirv::kOpConstantComposite:
  case spirv::kOpSpecConstantComposite:
    if (count >= 3) r.constants[op[2]] = Constant{opcode, 0, std::vector<std::uint32_t>(op + 3, op + count)};
    break;
  case spirv::kOpVariable:
    if (count >= 4) r.variables.push_back(Reflection::Variable{op[2], op[1], op[3]});
    break;
  default: break;
  }
  return Status();
}

// The workgroup size: the WorkgroupSize built-in overrides LocalSize; LocalSizeId names
// constants. Either may be specialisation constants (local_size_x_id in GLSL).
void apply_workgroup_sizes(Reflection& r, SpirvModuleInfo& info) {
  auto apply_size = [&](const std::vector<std::uint32_t>& ids, SpirvEntryPoint* only) {
    for (int d = 0; d < 3 && d < static_cast<int>(ids.size()); ++d) {
      auto constant = r.constants.find(ids[d]);
      if (constant == r.constants.end()) continue;
      for (auto& [function, entry] : r.entries) {
        if (only == nullptr || &entry == only) entry.local_size[d] = constant->second.value;
      }
      auto spec = r.spec_id.find(ids[d]);
      if (constant->second.opcode == spirv::kOpSpecConstant && spec != r.spec_id.end()) {
        info.local_size_spec_id[d] = static_cast<std::int32_t>(spec->second);
      }
    }
  };
  for (auto& [function, ids] : r.local_size_ids) {
    for (auto& [entry_function, entry] : r.entries) {
      if (entry_function == function) apply_size(ids, &entry);
    }
  }
  if (r.workgroup_builtin != 0) {
    auto composite = r.constants.find(r.workgroup_builtin);
    if (composite != r.constants.end()) apply_size(composite->second.parts, nullptr);
  }
}

// A block of scalars of struct type `block_type` (`what`: "push-constant", "uniform"): its members
// in order with their offsets and types, and the bytes it spans.
Status reflect_scalar_block(const Reflection& r, std::uint32_t block_type, const char* what,
                            std::vector<SpirvPushMember>& out, std::uint32_t& bytes) {
  auto structure = r.types.find(block_type);
  if (structure == r.types.end() || structure->second.opcode != spirv::kOpTypeStruct) {
    return make_error(ErrorCode::unsupported, "SPIR-V: the ", what, " block is not a struct");
  }
  const std::vector<std::uint32_t>& members = structure->second.members;
  for (std::uint32_t m = 0; m < members.size(); ++m) {
    auto type = r.types.find(members[m]);
    bool scalar = type != r.types.end() &&
                  (type->second.opcode == spirv::kOpTypeInt || type->second.opcode == spirv::kOpTypeFloat);
    if (!scalar) {
      return make_error(ErrorCode::unsupported, "SPIR-V: ", what, " member ", m,
                        " is not a scalar; devrt passes scalar arguments there");
    }
    std::uint32_t width = type->second.width;
    if (width != 8 && width != 16 && width != 32 && width != 64) {
      return make_error(ErrorCode::invalid_argument, "SPIR-V: ", what, " member ", m, " is ", width,
                        " bits wide (8, 16, 32 or 64)");
    }
    SpirvPushMember member;
    auto offset = r.member_offset.find((std::uint64_t{block_type} << 32) | m);
    member.offset = offset != r.member_offset.end() ? offset->second : 0;
    // Scalar blocks are a few hundred bytes (maxPushConstantsSize, TVM's uniform blocks): an
    // offset past 64 KiB is a broken module, and would overflow the block's size.
    if (member.offset > 65536) {
      return make_error(ErrorCode::invalid_argument, "SPIR-V: ", what, " member ", m, " has offset ", member.offset);
    }
    member.bits = static_cast<std::uint8_t>(width);
    member.code = static_cast<std::uint8_t>(type->second.opcode == spirv::kOpTypeFloat ? DataTypeCode::floating
                                            : type->second.is_signed                   ? DataTypeCode::signed_int
                                                                                       : DataTypeCode::unsigned_int);
    out.push_back(member);
    bytes = std::max(bytes, member.offset + type->second.width / 8);
  }
  return Status();
}

// The module's variables: the push-constant block and the storage buffers of set 0.
Status reflect_variables(const Reflection& r, SpirvModuleInfo& info) {
  for (const Reflection::Variable& variable : r.variables) {
    auto pointer = r.types.find(variable.type);
    if (pointer == r.types.end() || pointer->second.opcode != spirv::kOpTypePointer) continue;
    std::uint32_t pointee = pointer->second.pointee;
    if (variable.storage == kStoragePushConstant) {
      DEVRT_RETURN_IF_ERROR(
          reflect_scalar_block(r, pointee, "push-constant", info.push_members, info.push_constant_bytes));
      continue;
    }
    const bool uniform_block =
        variable.storage == kStorageUniform && r.buffer_block.count(pointee) == 0 && r.block.count(pointee) != 0;
    if (uniform_block) {
      auto set = r.set.find(variable.id);
      auto binding = r.binding.find(variable.id);
      if ((set != r.set.end() && set->second != 0) || info.has_uniform_block) {
        return make_error(ErrorCode::unsupported,
                          "SPIR-V: a uniform buffer outside set 0, or a second one (devrt binds one block of scalars)");
      }
      info.has_uniform_block = true;
      info.uniform_binding = binding != r.binding.end() ? binding->second : 0;
      DEVRT_RETURN_IF_ERROR(reflect_scalar_block(r, pointee, "uniform", info.uniform_members, info.uniform_bytes));
      continue;
    }
    bool storage_buffer = variable.storage == kStorageStorageBuffer ||
                          (variable.storage == kStorageUniform && r.buffer_block.count(pointee) != 0);
    bool descriptor =
        storage_buffer || variable.storage == kStorageUniform || variable.storage == kStorageUniformConstant;
    if (!descriptor) continue;
    auto set = r.set.find(variable.id);
    auto binding = r.binding.find(variable.id);
    std::uint32_t set_index = set != r.set.end() ? set->second : 0;
    std::uint32_t binding_index = binding != r.binding.end() ? binding->second : 0;
    if (!storage_buffer) {
      return make_error(ErrorCode::unsupported, "SPIR-V: set ", set_index, " binding ", binding_index,
                        " is not a storage buffer (uniform buffers and images are not bound by devrt)");
    }
    if (set_index != 0) {
      return make_error(ErrorCode::unsupported, "SPIR-V: storage buffer at set ", set_index, " binding ", binding_index,
                        "; devrt binds descriptor set 0 only");
    }
    info.storage_bindings.push_back(binding_index);
  }
  std::sort(info.storage_bindings.begin(), info.storage_bindings.end());
  if (std::adjacent_find(info.storage_bindings.begin(), info.storage_bindings.end()) != info.storage_bindings.end()) {
    return make_error(ErrorCode::unsupported, "SPIR-V: two storage buffers share a binding");
  }
  if (info.has_uniform_block) {
    if (!info.push_members.empty()) {
      return make_error(ErrorCode::unsupported, "SPIR-V: scalars both in push constants and in a uniform buffer");
    }
    if (std::binary_search(info.storage_bindings.begin(), info.storage_bindings.end(), info.uniform_binding)) {
      return make_error(ErrorCode::unsupported, "SPIR-V: the uniform buffer shares a binding with a storage buffer");
    }
    info.uniform_bytes = (info.uniform_bytes + 3u) & ~3u;
  }
  info.push_constant_bytes = (info.push_constant_bytes + 3u) & ~3u;
  return Status();
}

} // namespace

Result<SpirvModuleInfo> reflect_spirv(std::span<const std::uint32_t> words) noexcept {
  DEVRT_RETURN_IF_ERROR(check_header(words));
  Reflection reflection;
  for (std::size_t i = 5; i < words.size();) {
    std::uint32_t count = words[i] >> 16;
    if (count == 0 || i + count > words.size()) {
      return make_error(ErrorCode::invalid_argument, "SPIR-V: instruction at word ", i, " (opcode ", words[i] & 0xffffu,
                        ") has a bad word count ", count);
    }
    DEVRT_RETURN_IF_ERROR(record_instruction(reflection, &words[i], count));
    i += count;
  }
  if (reflection.entries.empty()) {
    return make_error(ErrorCode::invalid_argument, "SPIR-V: the module has no GLCompute entry point");
  }
  SpirvModuleInfo info;
  apply_workgroup_sizes(reflection, info);
  for (auto& [function, entry] : reflection.entries) {
    // A fixed workgroup extent of 0 can never be dispatched (a specialised one is set at launch).
    for (int d = 0; d < 3; ++d) {
      if (entry.local_size[d] == 0 && info.local_size_spec_id[d] < 0) {
        return make_error(ErrorCode::invalid_argument, "SPIR-V: entry point '", entry.name,
                          "' has a workgroup size of 0 in dimension ", d);
      }
    }
    info.entry_points.push_back(std::move(entry));
  }
  DEVRT_RETURN_IF_ERROR(reflect_variables(reflection, info));
  return info;
}

} // namespace devrt::vulkan
