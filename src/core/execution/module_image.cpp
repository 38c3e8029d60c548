// SPDX-License-Identifier: Apache-2.0
// Module image inspection: formats and architectures from headers alone, so that a backend can
// refuse an image for the wrong device with a sentence instead of a driver code.
#include <devrt/backend/module_image.hpp>

#include <cstdio>
#include <cstring>

namespace devrt {

namespace {

constexpr std::uint16_t kElfMachineCuda = 190;   // EM_CUDA
constexpr std::uint16_t kElfMachineAmdgpu = 224; // EM_AMDGPU
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint32_t kSpirvMagic = 0x07230203u;
constexpr std::string_view kOffloadBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";

// Little-endian reads at an offset already checked to be in range.
template <class T>
T read_le(std::span<const std::byte> bytes, std::size_t offset) noexcept {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

[[gnu::cold]] Status truncated(std::string_view what, std::size_t need, std::size_t have) {
  return make_error(ErrorCode::invalid_argument, "truncated ", what, ": ", need, " bytes needed, the image has ", have);
}

std::string sm_name(const char* prefix, std::uint32_t arch) { return std::string(prefix) + std::to_string(arch); }

// EF_AMDGPU_MACH values (LLVM's ELF.h) for the processors ROCm supports.
std::string amdgpu_processor(std::uint32_t flags) {
  struct Mach {
    std::uint32_t value;
    const char* name;
  };
  static constexpr Mach kMachs[] = {
      {0x02c, "gfx900"},  {0x02f, "gfx906"},  {0x030, "gfx908"},  {0x03f, "gfx90a"},  {0x040, "gfx940"},
      {0x04b, "gfx941"},  {0x04c, "gfx942"},  {0x033, "gfx1010"}, {0x036, "gfx1030"}, {0x037, "gfx1031"},
      {0x038, "gfx1032"}, {0x041, "gfx1100"}, {0x046, "gfx1101"}, {0x047, "gfx1102"},
  };
  std::uint32_t mach = flags & 0xffu;
  for (const Mach& m : kMachs) {
    if (m.value == mach) return m.name;
  }
  char text[32];
  std::snprintf(text, sizeof text, "amdgcn-mach-0x%02x", static_cast<unsigned>(mach));
  return text;
}

Result<ModuleImageInfo> inspect_elf(std::span<const std::byte> image) {
  if (image.size() < 64) return truncated("ELF header", 64, image.size());
  if (static_cast<unsigned char>(image[4]) != 2 || static_cast<unsigned char>(image[5]) != 1) {
    return make_error(ErrorCode::invalid_argument, "only 64-bit little-endian ELF images are loadable");
  }
  auto machine = read_le<std::uint16_t>(image, 18);
  auto flags = read_le<std::uint32_t>(image, 48);
  ModuleImageInfo info;
  if (machine == kElfMachineCuda) {
    info.format = ModuleFormat::cubin;
    // ELF ABI version 8 (CUDA 12.8+) moved the SM number from bits 0-7 to bits 8-15.
    std::uint32_t abi = static_cast<unsigned char>(image[8]);
    info.architectures.push_back(sm_name("sm_", abi >= 8 ? (flags >> 8) & 0xffu : flags & 0xffu));
  } else if (machine == kElfMachineAmdgpu) {
    info.format = ModuleFormat::hsaco;
    info.architectures.push_back(amdgpu_processor(flags));
  } else if (read_le<std::uint16_t>(image, 16) == 3) { // ET_DYN on the host
    info.format = ModuleFormat::shared_object;
  } else {
    return make_error(ErrorCode::invalid_argument, "an ELF image for machine ", machine,
                      " that is neither a CUDA cubin, an AMD GPU code object nor a shared object");
  }
  return info;
}

// A fatbin: a 16-byte header {magic, version, header size, payload size}, then entries of
// {kind (1 PTX, 2 ELF), ..., header size at +4, payload size at +8, SM number at +28}.
Result<ModuleImageInfo> inspect_fatbin(std::span<const std::byte> image) {
  if (image.size() < 16) return truncated("fatbin header", 16, image.size());
  auto header_size = read_le<std::uint16_t>(image, 6);
  auto payload_size = read_le<std::uint64_t>(image, 8);
  if (header_size < 16 || payload_size > image.size() || header_size + payload_size > image.size()) {
    return truncated("fatbin", header_size + payload_size, image.size());
  }
  ModuleImageInfo info;
  info.format = ModuleFormat::fatbin;
  std::size_t offset = header_size;
  std::size_t end = header_size + payload_size;
  while (offset < end) {
    if (end - offset < 32) return truncated("fatbin entry header", offset + 32, image.size());
    auto kind = read_le<std::uint16_t>(image, offset);
    auto entry_header = read_le<std::uint32_t>(image, offset + 4);
    auto entry_size = read_le<std::uint64_t>(image, offset + 8);
    auto arch = read_le<std::uint32_t>(image, offset + 28);
    if (entry_header < 32 || entry_size > end - offset || entry_header > end - offset - entry_size) {
      return make_error(ErrorCode::invalid_argument, "fatbin entry at byte ", offset, " runs past the image's end");
    }
    if (kind == 1) info.architectures.push_back(sm_name("compute_", arch));
    if (kind == 2) info.architectures.push_back(sm_name("sm_", arch));
    offset += entry_header + entry_size;
  }
  if (info.architectures.empty()) return make_error(ErrorCode::invalid_argument, "the fatbin holds no PTX or cubin");
  return info;
}

// A clang offload bundle: magic, entry count, then {offset, size, triple length, triple} per
// entry; device entries are "hip(v4)-amdgcn-amd-amdhsa--gfx90a[:features]".
Result<ModuleImageInfo> inspect_offload_bundle(std::span<const std::byte> image) {
  std::size_t offset = kOffloadBundleMagic.size();
  if (image.size() < offset + 8) return truncated("offload bundle header", offset + 8, image.size());
  auto count = read_le<std::uint64_t>(image, offset);
  offset += 8;
  ModuleImageInfo info;
  info.format = ModuleFormat::hsaco;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (image.size() - offset < 24) return truncated("offload bundle entry", offset + 24, image.size());
    auto code_offset = read_le<std::uint64_t>(image, offset);
    auto code_size = read_le<std::uint64_t>(image, offset + 8);
    auto triple_size = read_le<std::uint64_t>(image, offset + 16);
    offset += 24;
    if (triple_size > image.size() - offset || code_offset > image.size() || code_size > image.size() - code_offset) {
      return make_error(ErrorCode::invalid_argument, "offload bundle entry ", i, " runs past the image's end");
    }
    std::string_view triple(reinterpret_cast<const char*>(image.data() + offset), triple_size);
    offset += triple_size;
    if (triple.find("amdgcn") == std::string_view::npos) continue; // the host entry
    std::string_view processor = triple.substr(triple.rfind('-') + 1);
    processor = processor.substr(0, processor.find(':'));
    // A processor name is letters, digits and '_' ("gfx90a"): anything else is a broken triple.
    bool named = !processor.empty() && processor.size() <= 32 &&
                 processor.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                     std::string_view::npos;
    if (!named) {
      return make_error(ErrorCode::invalid_argument, "offload bundle entry ", i,
                        ": its target triple names no processor (after the last '-')");
    }
    info.architectures.emplace_back(processor);
  }
  if (info.architectures.empty()) {
    return make_error(ErrorCode::invalid_argument, "the offload bundle holds no amdgcn code object");
  }
  return info;
}

// PTX text: ".version X.Y" and ".target sm_NN" directives (a NUL may end it).
Result<ModuleImageInfo> inspect_ptx(std::span<const std::byte> image) {
  std::string_view text(reinterpret_cast<const char*>(image.data()), image.size());
  text = text.substr(0, text.find('\0'));
  std::size_t target = text.find(".target");
  if (text.find(".version") == std::string_view::npos || target == std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument, "not a module image: not ELF, fatbin, SPIR-V or an offload bundle,",
                      " and not PTX (no .version/.target directives)");
  }
  ModuleImageInfo info;
  info.format = ModuleFormat::ptx;
  std::size_t sm = text.find("sm_", target);
  if (sm != std::string_view::npos) {
    std::size_t end = text.find_first_not_of("0123456789", sm + 3);
    std::string_view digits = text.substr(sm + 3, end == std::string_view::npos ? end : end - sm - 3);
    if (!digits.empty()) info.architectures.push_back("compute_" + std::string(digits));
  }
  return info;
}

} // namespace

Result<ModuleImageInfo> inspect_module_image(std::span<const std::byte> image) noexcept {
  if (image.empty()) return make_error(ErrorCode::invalid_argument, "empty module image");
  if (image.size() >= 4) {
    auto magic = read_le<std::uint32_t>(image, 0);
    if (std::memcmp(image.data(),
                    "\x7f"
                    "ELF",
                    4) == 0)
      return inspect_elf(image);
    if (magic == kFatbinMagic) return inspect_fatbin(image);
    if (magic == kSpirvMagic) {
      if (image.size() % 4 != 0 || image.size() < 20) {
        return make_error(ErrorCode::invalid_argument, "SPIR-V image of ", image.size(),
                          " bytes: needs a 20-byte header and whole 32-bit words");
      }
      return ModuleImageInfo{ModuleFormat::spirv, {}};
    }
  }
  if (image.size() >= kOffloadBundleMagic.size() &&
      std::memcmp(image.data(), kOffloadBundleMagic.data(), kOffloadBundleMagic.size()) == 0) {
    return inspect_offload_bundle(image);
  }
  return inspect_ptx(image);
}

} // namespace devrt
