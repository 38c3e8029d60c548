#include "vulkan_spirv.hpp"

#include <algorithm>
#include <unordered_map>

#include <devrt/dtype.hpp>

namespace devrt::vulkan {
namespace {

constexpr std::uint32_t kMagic = 0x07230203;

// Opcodes, decorations, storage classes and built-ins from the SPIR-V specification.
enum : std::uint32_t {
  kOpTypeBool = 20,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstant = 43,
  kOpConstantComposite = 44,
  kOpSpecConstant = 50,
  kOpSpecConstantComposite = 51,
  kOpEntryPoint = 15,
  kOpExecutionMode = 16,
  kOpVariable = 59,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
};
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

} // namespace

Result<SpirvModuleInfo> reflect_spirv(std::span<const std::uint32_t> words) noexcept {
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
  std::unordered_map<std::uint32_t, Type> types;
  std::unordered_map<std::uint32_t, Constant> constants;
  std::unordered_map<std::uint32_t, std::uint32_t> binding, set, spec_id;
  std::unordered_map<std::uint32_t, bool> buffer_block, block;
  std::unordered_map<std::uint64_t, std::uint32_t> member_offset;
  std::uint32_t workgroup_builtin = 0;
  struct Variable {
    std::uint32_t id, type, storage;
  };
  std::vector<Variable> variables;
  std::vector<std::pair<std::uint32_t, SpirvEntryPoint>> entries; // function id -> entry
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> local_size_ids;

  SpirvModuleInfo info;
  std::size_t i = 5;
  while (i < words.size()) {
    std::uint32_t count = words[i] >> 16;
    std::uint32_t opcode = words[i] & 0xffffu;
    if (count == 0 || i + count > words.size()) {
      return make_error(ErrorCode::invalid_argument, "SPIR-V: instruction at word ", i, " (opcode ", opcode,
                        ") has a bad word count ", count);
    }
    const std::uint32_t* op = &words[i];
    auto need = [&](std::uint32_t n) { return count >= n; };
    switch (opcode) {
    case kOpEntryPoint:
      if (need(4) && op[1] == kExecutionModelGLCompute) {
        SpirvEntryPoint entry;
        const char* text = reinterpret_cast<const char*>(op + 3);
        std::size_t max = (count - 3) * 4u;
        std::size_t n = 0;
        while (n < max && text[n] != '\0') ++n;
        if (n == max) return make_error(ErrorCode::invalid_argument, "SPIR-V: unterminated entry point name");
        entry.name.assign(text, n);
        entries.emplace_back(op[2], std::move(entry));
      }
      break;
    case kOpExecutionMode:
      if (need(6) && op[2] == kExecutionModeLocalSize) {
        for (auto& [function, entry] : entries) {
          if (function == op[1]) std::copy(op + 3, op + 6, entry.local_size);
        }
      } else if (need(6) && op[2] == kExecutionModeLocalSizeId) {
        local_size_ids.emplace_back(op[1], std::vector<std::uint32_t>(op + 3, op + 6));
      }
      break;
    case kOpDecorate:
      if (!need(3)) break;
      if (op[2] == kDecorationBinding && need(4)) binding[op[1]] = op[3];
      if (op[2] == kDecorationDescriptorSet && need(4)) set[op[1]] = op[3];
      if (op[2] == kDecorationSpecId && need(4)) spec_id[op[1]] = op[3];
      if (op[2] == kDecorationBufferBlock) buffer_block[op[1]] = true;
      if (op[2] == kDecorationBlock) block[op[1]] = true;
      if (op[2] == kDecorationBuiltIn && need(4) && op[3] == kBuiltInWorkgroupSize) workgroup_builtin = op[1];
      break;
    case kOpMemberDecorate:
      if (need(5) && op[3] == kDecorationOffset) member_offset[(std::uint64_t{op[1]} << 32) | op[2]] = op[4];
      break;
    case kOpTypeBool:
      if (need(2)) types[op[1]] = Type{opcode, 8, false, 0, 0, {}};
      break;
    case kOpTypeInt:
      if (need(4)) types[op[1]] = Type{opcode, op[2], op[3] != 0, 0, 0, {}};
      break;
    case kOpTypeFloat:
      if (need(3)) types[op[1]] = Type{opcode, op[2], false, 0, 0, {}};
      break;
    case kOpTypeStruct:
      if (need(2)) types[op[1]] = Type{opcode, 0, false, 0, 0, std::vector<std::uint32_t>(op + 2, op + count)};
      break;
    case kOpTypePointer:
      if (need(4)) types[op[1]] = Type{opcode, 0, false, op[2], op[3], {}};
      break;
    case kOpConstant:
    case kOpSpecConstant:
      if (need(4)) constants[op[2]] = Constant{opcode, op[3], {}};
      break;
    case kOpConstantComposite:
    case kOpSpecConstantComposite:
      if (need(3)) constants[op[2]] = Constant{opcode, 0, std::vector<std::uint32_t>(op + 3, op + count)};
      break;
    case kOpVariable:
      if (need(4)) variables.push_back(Variable{op[2], op[1], op[3]});
      break;
    default: break;
    }
    i += count;
  }
  if (entries.empty())
    return make_error(ErrorCode::invalid_argument, "SPIR-V: the module has no GLCompute entry point");

  // The workgroup size: the WorkgroupSize built-in overrides LocalSize; LocalSizeId names
  // constants. Either may be specialisation constants (local_size_x_id in GLSL).
  auto apply_size = [&](const std::vector<std::uint32_t>& ids, SpirvEntryPoint* only) {
    for (int d = 0; d < 3 && d < static_cast<int>(ids.size()); ++d) {
      auto constant = constants.find(ids[d]);
      if (constant == constants.end()) continue;
      for (auto& [function, entry] : entries) {
        if (only == nullptr || &entry == only) entry.local_size[d] = constant->second.value;
      }
      auto spec = spec_id.find(ids[d]);
      if (constant->second.opcode == kOpSpecConstant && spec != spec_id.end()) {
        info.local_size_spec_id[d] = static_cast<std::int32_t>(spec->second);
      }
    }
  };
  for (auto& [function, ids] : local_size_ids) {
    for (auto& [entry_function, entry] : entries) {
      if (entry_function == function) apply_size(ids, &entry);
    }
  }
  if (workgroup_builtin != 0) {
    auto composite = constants.find(workgroup_builtin);
    if (composite != constants.end()) apply_size(composite->second.parts, nullptr);
  }
  for (auto& [function, entry] : entries) info.entry_points.push_back(std::move(entry));

  for (const Variable& variable : variables) {
    auto pointer = types.find(variable.type);
    if (pointer == types.end() || pointer->second.opcode != kOpTypePointer) continue;
    std::uint32_t pointee = pointer->second.pointee;
    if (variable.storage == kStoragePushConstant) {
      auto structure = types.find(pointee);
      if (structure == types.end() || structure->second.opcode != kOpTypeStruct) {
        return make_error(ErrorCode::unsupported, "SPIR-V: the push-constant block is not a struct");
      }
      const std::vector<std::uint32_t>& members = structure->second.members;
      for (std::uint32_t m = 0; m < members.size(); ++m) {
        auto type = types.find(members[m]);
        bool scalar = type != types.end() && (type->second.opcode == kOpTypeInt || type->second.opcode == kOpTypeFloat);
        if (!scalar) {
          return make_error(ErrorCode::unsupported, "SPIR-V: push-constant member ", m,
                            " is not a scalar; devrt passes scalar arguments as push constants");
        }
        SpirvPushMember member;
        auto offset = member_offset.find((std::uint64_t{pointee} << 32) | m);
        member.offset = offset != member_offset.end() ? offset->second : 0;
        member.bits = static_cast<std::uint8_t>(type->second.width);
        member.code = static_cast<std::uint8_t>(type->second.opcode == kOpTypeFloat ? DataTypeCode::floating
                                                : type->second.is_signed            ? DataTypeCode::signed_int
                                                                                    : DataTypeCode::unsigned_int);
        info.push_members.push_back(member);
        info.push_constant_bytes = std::max(info.push_constant_bytes, member.offset + type->second.width / 8);
      }
      continue;
    }
    bool storage_buffer = variable.storage == kStorageStorageBuffer ||
                          (variable.storage == kStorageUniform && buffer_block.count(pointee) != 0);
    bool descriptor =
        storage_buffer || variable.storage == kStorageUniform || variable.storage == kStorageUniformConstant;
    if (!descriptor) continue;
    std::uint32_t set_index = set.count(variable.id) != 0 ? set[variable.id] : 0;
    std::uint32_t binding_index = binding.count(variable.id) != 0 ? binding[variable.id] : 0;
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
  info.push_constant_bytes = (info.push_constant_bytes + 3u) & ~3u;
  return info;
}

} // namespace devrt::vulkan
