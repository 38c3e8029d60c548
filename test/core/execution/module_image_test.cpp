// SPDX-License-Identifier: Apache-2.0
// Module image inspection and the GPU backends' "does this image fit the device" checks: the parts
// of loading PTX, cubin, fatbin and hsaco that need no driver. Real images come from nvcc and
// hipcc at build time when those compilers were found.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <devrt/config.hpp>
#include <devrt/module.hpp>

#include "backend_support/gpu_launch.hpp"

using devrt::ErrorCode;
using devrt::ModuleFormat;

namespace {

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

std::span<const std::byte> as_bytes(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

template <class T>
void put(std::vector<std::byte>& out, std::size_t offset, T value) {
  if (out.size() < offset + sizeof value) out.resize(offset + sizeof value);
  std::memcpy(out.data() + offset, &value, sizeof value);
}

// A 64-byte ELF header for `machine` with `flags` and ELF ABI version `abi`.
std::vector<std::byte> elf_header(std::uint16_t machine, std::uint32_t flags, std::uint8_t abi,
                                  std::uint16_t type = 2) {
  std::vector<std::byte> elf(64);
  std::memcpy(elf.data(),
              "\x7f"
              "ELF\x02\x01\x01",
              7);
  elf[8] = std::byte{abi};
  put<std::uint16_t>(elf, 16, type);
  put<std::uint16_t>(elf, 18, machine);
  put<std::uint32_t>(elf, 48, flags);
  return elf;
}

// A fatbin with one entry per (kind, arch): kind 1 PTX, 2 cubin; 16-byte payloads.
std::vector<std::byte> fatbin(std::initializer_list<std::pair<std::uint16_t, std::uint32_t>> entries) {
  std::vector<std::byte> out(16);
  std::size_t offset = 16;
  for (auto [kind, arch] : entries) {
    put<std::uint16_t>(out, offset, kind);
    put<std::uint32_t>(out, offset + 4, 64);
    put<std::uint64_t>(out, offset + 8, 16);
    put<std::uint32_t>(out, offset + 28, arch);
    offset += 64 + 16;
    out.resize(offset);
  }
  put<std::uint32_t>(out, 0, 0xBA55ED50u);
  put<std::uint16_t>(out, 4, 1);
  put<std::uint16_t>(out, 6, 16);
  put<std::uint64_t>(out, 8, offset - 16);
  return out;
}

} // namespace

TEST_CASE("inspect_module_image recognises formats and architectures from headers", "[module][image]") {
  auto ptx = devrt::inspect_module_image(as_bytes("//\n.version 8.5\n.target sm_90\n.address_size 64\n"));
  REQUIRE(ptx.ok());
  CHECK(ptx->format == ModuleFormat::ptx);
  CHECK(ptx->architectures == std::vector<std::string>{"compute_90"});

  // CUDA 12.8+ (ELF ABI 8) keeps the SM number in bits 8-15 of e_flags; older ones in bits 0-7.
  auto cubin_new = devrt::inspect_module_image(elf_header(190, 0x6005a04, 8));
  REQUIRE(cubin_new.ok());
  CHECK(cubin_new->format == ModuleFormat::cubin);
  CHECK(cubin_new->architectures == std::vector<std::string>{"sm_90"});
  auto cubin_old = devrt::inspect_module_image(elf_header(190, 0x00500550, 7));
  REQUIRE(cubin_old.ok());
  CHECK(cubin_old->architectures == std::vector<std::string>{"sm_80"});

  auto hsaco = devrt::inspect_module_image(elf_header(224, 0x3f, 2, 3));
  REQUIRE(hsaco.ok());
  CHECK(hsaco->format == ModuleFormat::hsaco);
  CHECK(hsaco->architectures == std::vector<std::string>{"gfx90a"});

  auto so = devrt::inspect_module_image(elf_header(62, 0, 0, 3));
  REQUIRE(so.ok());
  CHECK(so->format == ModuleFormat::shared_object);

  auto fat = devrt::inspect_module_image(fatbin({{2, 80}, {2, 90}, {1, 90}}));
  REQUIRE(fat.ok());
  CHECK(fat->format == ModuleFormat::fatbin);
  CHECK(fat->architectures == std::vector<std::string>{"sm_80", "sm_90", "compute_90"});

  std::vector<std::byte> spirv(20);
  put<std::uint32_t>(spirv, 0, 0x07230203u);
  auto spv = devrt::inspect_module_image(spirv);
  REQUIRE(spv.ok());
  CHECK(spv->format == ModuleFormat::spirv);
}

TEST_CASE("inspect_module_image refuses truncated and unrecognisable images", "[module][image]") {
  CHECK(devrt::inspect_module_image({}).status().code() == ErrorCode::invalid_argument);
  auto junk = devrt::inspect_module_image(as_bytes("definitely not a module"));
  CHECK(junk.status().code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(junk.status().message()), Catch::Contains("not PTX"));

  std::vector<std::byte> short_elf = elf_header(190, 0, 8);
  short_elf.resize(40);
  auto cut = devrt::inspect_module_image(short_elf);
  CHECK(cut.status().code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(cut.status().message()), Catch::Contains("truncated ELF header"));

  auto arm = devrt::inspect_module_image(elf_header(40, 0, 0, 1));
  CHECK(arm.status().code() == ErrorCode::invalid_argument);

  // A fatbin whose header claims more than the bytes hold, and one whose entry runs past the end.
  std::vector<std::byte> fat = fatbin({{2, 90}});
  std::vector<std::byte> cut_fat(fat.begin(), fat.end() - 8);
  auto short_fat = devrt::inspect_module_image(cut_fat);
  CHECK(short_fat.status().code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(short_fat.status().message()), Catch::Contains("truncated fatbin"));
  put<std::uint64_t>(fat, 16 + 8, 1u << 30);
  auto long_entry = devrt::inspect_module_image(fat);
  CHECK(long_entry.status().code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(long_entry.status().message()), Catch::Contains("past the image's end"));

  std::vector<std::byte> odd_spirv(21);
  put<std::uint32_t>(odd_spirv, 0, 0x07230203u);
  CHECK(devrt::inspect_module_image(odd_spirv).status().code() == ErrorCode::invalid_argument);

  std::string bundle = "__CLANG_OFFLOAD_BUNDLE__";
  bundle.append("\x05\0\0\0\0\0\0\0", 8); // five entries, none present
  CHECK(devrt::inspect_module_image(as_bytes(bundle)).status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("images built by nvcc and hipcc are recognised", "[module][image]") {
  const std::string ptx_path = DEVRT_TEST_CUDA_PTX, cubin_path = DEVRT_TEST_CUDA_CUBIN,
                    fatbin_path = DEVRT_TEST_CUDA_FATBIN, hsaco_path = DEVRT_TEST_HSACO;
  if (ptx_path.empty()) {
    WARN("skip (nvcc part): nvcc was not found at build time");
  } else {
    auto ptx = devrt::inspect_module_image(read_bytes(ptx_path));
    REQUIRE(ptx.ok());
    CHECK(ptx->format == ModuleFormat::ptx);
    CHECK(ptx->architectures == std::vector<std::string>{"compute_75"});
    auto cubin = devrt::inspect_module_image(read_bytes(cubin_path));
    REQUIRE(cubin.ok());
    CHECK(cubin->format == ModuleFormat::cubin);
    CHECK(cubin->architectures == std::vector<std::string>{"sm_90"});
    auto fat = devrt::inspect_module_image(read_bytes(fatbin_path));
    REQUIRE(fat.ok());
    CHECK(fat->format == ModuleFormat::fatbin);
    CHECK(fat->architectures == std::vector<std::string>{"sm_80", "sm_90", "compute_90"});
  }
  if (hsaco_path.empty()) {
    WARN("skip (hipcc part): hipcc was not found at build time");
  } else {
    auto hsaco = devrt::inspect_module_image(read_bytes(hsaco_path));
    INFO(hsaco.status().message());
    REQUIRE(hsaco.ok());
    CHECK(hsaco->format == ModuleFormat::hsaco);
    CHECK(hsaco->architectures == std::vector<std::string>{"gfx1030", "gfx906", "gfx90a"}); // bundle order
  }
}

TEST_CASE("cuda: an image must carry code the device can run", "[module][image][cuda]") {
  using devrt::detail::check_cuda_image_fits;
  devrt::ModuleImageInfo cubin80{ModuleFormat::cubin, {"sm_80"}};
  CHECK(check_cuda_image_fits(cubin80, 8, 0).ok());
  CHECK(check_cuda_image_fits(cubin80, 8, 6).ok()); // same major, newer minor
  devrt::Status h200 = check_cuda_image_fits(cubin80, 9, 0);
  CHECK(h200.code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(h200.message()), Catch::Contains("sm_80") && Catch::Contains("sm_90 device"));
  CHECK_FALSE(check_cuda_image_fits({ModuleFormat::cubin, {"sm_86"}}, 8, 0).ok()); // older minor on the device
  devrt::ModuleImageInfo ptx75{ModuleFormat::ptx, {"compute_75"}};
  CHECK(check_cuda_image_fits(ptx75, 9, 0).ok()); // PTX JIT-compiles forward
  CHECK_FALSE(check_cuda_image_fits({ModuleFormat::ptx, {"compute_100"}}, 9, 0).ok());
  devrt::ModuleImageInfo fat{ModuleFormat::fatbin, {"sm_80", "compute_80"}};
  CHECK(check_cuda_image_fits(fat, 9, 0).ok()); // through its PTX
  CHECK_FALSE(check_cuda_image_fits({ModuleFormat::fatbin, {"sm_80", "sm_86"}}, 9, 0).ok());
}

TEST_CASE("rocm: code objects run only on their processor; gcn_arch numbers", "[module][image][rocm]") {
  devrt::ModuleImageInfo bundle{ModuleFormat::hsaco, {"gfx906", "gfx90a"}};
  CHECK(devrt::detail::check_rocm_image_fits(bundle, "gfx90a").ok());
  devrt::Status other = devrt::detail::check_rocm_image_fits(bundle, "gfx1100");
  CHECK(other.code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(other.message()), Catch::Contains("--offload-arch=gfx1100"));
  CHECK(devrt::detail::gcn_arch_number("gfx90a:sramecc+:xnack-") == 910);
  CHECK(devrt::detail::gcn_arch_number("gfx906") == 906);
  CHECK(devrt::detail::gcn_arch_number("gfx1100") == 1100);
  CHECK(devrt::detail::gcn_arch_number("sm_90") == 0);
}
