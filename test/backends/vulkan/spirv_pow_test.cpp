// SPDX-License-Identifier: Apache-2.0
// The Vulkan backend's rewrite of GLSL.std.450 Pow (define_pow, src/backends/vulkan/vulkan_spirv.hpp)
// over every SPIR-V module of the test suite: what is rewritten passes spirv-val (Debian's
// spirv-tools) and keeps the module's interface (capabilities, decorations, entry points, bindings).
// pow_forms.comp holds Pow in every form; power.comp is the conformance suite's pow kernel, whose
// results the suite checks against C's pow on each device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unordered_set>
#include <vector>

#include "backends/vulkan/vulkan_spirv.hpp"
#include "backends/vulkan/vulkan_spirv_opcodes.hpp"

using devrt::vulkan::define_pow;
using devrt::vulkan::SpirvPowRewrite;
namespace spirv = devrt::vulkan::spirv;

namespace {

std::vector<std::uint32_t> read_words(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::uint32_t> words(bytes.size() / 4);
  std::copy_n(bytes.data(), words.size() * 4, reinterpret_cast<char*>(words.data()));
  return words;
}

std::vector<std::filesystem::path> test_modules() {
  std::vector<std::filesystem::path> paths;
  for (const char* directory : {DEVRT_TEST_SPIRV_DIR, DEVRT_TEST_TVM_SPIRV_DIR}) {
    for (const auto& entry : std::filesystem::directory_iterator(directory)) {
      if (entry.path().extension() == ".spv") paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Each instruction as its words.
std::vector<std::vector<std::uint32_t>> instructions(const std::vector<std::uint32_t>& words) {
  std::vector<std::vector<std::uint32_t>> out;
  for (std::size_t i = 5; i < words.size();) {
    const std::uint32_t count = words[i] >> 16;
    REQUIRE(count > 0);
    out.emplace_back(words.begin() + static_cast<std::ptrdiff_t>(i),
                     words.begin() + static_cast<std::ptrdiff_t>(i + count));
    i += count;
  }
  return out;
}

// The instructions that make a module's interface, in order.
std::vector<std::vector<std::uint32_t>> interface_of(const std::vector<std::uint32_t>& words) {
  std::vector<std::vector<std::uint32_t>> out;
  for (auto& op : instructions(words)) {
    const std::uint32_t opcode = op[0] & 0xffffu;
    if (opcode == spirv::kOpCapability || opcode == spirv::kOpEntryPoint || opcode == spirv::kOpExecutionMode ||
        opcode == spirv::kOpDecorate || opcode == spirv::kOpMemberDecorate) {
      out.push_back(op);
    }
  }
  return out;
}

// spirv-val's verdict on `words`: "" when valid, else what it said.
std::string spirv_val(const std::vector<std::uint32_t>& words, const std::string& name) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("devrt-pow-" + name);
  {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  }
  const std::string log = path.string() + ".log";
  const std::string command =
      std::string(DEVRT_TEST_SPIRV_VAL) + " --target-env vulkan1.1 '" + path.string() + "' > '" + log + "' 2>&1";
  const int status = std::system(command.c_str()); // NOLINT(concurrency-mt-unsafe)
  std::ifstream said(log);
  std::string text((std::istreambuf_iterator<char>(said)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  std::filesystem::remove(log);
  return status == 0 ? std::string() : "spirv-val: " + text;
}

} // namespace

TEST_CASE("every SPIR-V module of the tests, rewritten, passes spirv-val and keeps its interface") {
  const std::vector<std::filesystem::path> paths = test_modules();
  REQUIRE(paths.size() >= 9); // the conformance shaders, power and pow_forms, the TVM fixture's
  std::uint32_t rewritten_modules = 0;
  for (const std::filesystem::path& path : paths) {
    INFO(path.filename().string());
    const std::vector<std::uint32_t> words = read_words(path);
    REQUIRE(spirv_val(words, path.filename().string()).empty());
    devrt::Result<SpirvPowRewrite> rewrite = define_pow(words);
    INFO(rewrite.status().message());
    REQUIRE(rewrite.ok());
    if (rewrite->rewritten == 0) {
      CHECK(rewrite->words.empty());
      continue;
    }
    ++rewritten_modules;
    CHECK(spirv_val(rewrite->words, path.filename().string()) == "");
    CHECK(std::equal(words.begin(), words.begin() + 3, rewrite->words.begin())); // magic, version, generator
    CHECK(rewrite->words[3] >= words[3]);                                        // multiplications alone need no new id
    CHECK(interface_of(rewrite->words) == interface_of(words));
    devrt::Result<devrt::vulkan::SpirvModuleInfo> before = devrt::vulkan::reflect_spirv(words);
    devrt::Result<devrt::vulkan::SpirvModuleInfo> after = devrt::vulkan::reflect_spirv(rewrite->words);
    REQUIRE(before.ok());
    REQUIRE(after.ok());
    CHECK(after->storage_bindings == before->storage_bindings);
    CHECK(after->push_constant_bytes == before->push_constant_bytes);
    CHECK(after->entry_points.size() == before->entry_points.size());
  }
  CHECK(rewritten_modules >= 2); // power, pow_forms
}

TEST_CASE("Pow in every form: multiplications for exponents of 1 to 4, else a Pow of the magnitude") {
  const std::vector<std::uint32_t> words = read_words(std::filesystem::path(DEVRT_TEST_SPIRV_DIR) / "pow_forms.spv");
  devrt::Result<SpirvPowRewrite> rewrite = define_pow(words);
  INFO(rewrite.status().message());
  REQUIRE(rewrite.ok());
  // 19 in the shader: x^1..x^4, x^3 of a vec3, f16 x^3 and x^2 of an f16vec4 become multiplications
  // (7); the 12 others remain a Pow, of an FAbs result.
  CHECK(rewrite->rewritten == 19);
  std::unordered_set<std::uint32_t> magnitudes;
  int pows = 0;
  for (const auto& op : instructions(rewrite->words)) {
    if ((op[0] & 0xffffu) != spirv::kOpExtInst || op.size() < 6) continue;
    if (op[4] == spirv::kGlslFAbs) magnitudes.insert(op[2]);
    if (op[4] == spirv::kGlslPow) {
      ++pows;
      CHECK(magnitudes.count(op[5]) == 1);
    }
  }
  CHECK(pows == 12);
  // Rewriting the output again defines the 12 remaining Pows again: still valid.
  devrt::Result<SpirvPowRewrite> again = define_pow(rewrite->words);
  REQUIRE(again.ok());
  CHECK(again->rewritten == 12);
  CHECK(spirv_val(again->words, "pow_forms-twice.spv") == "");
}

TEST_CASE("a broken module or one out of ids is refused with the reason") {
  std::vector<std::uint32_t> words = read_words(std::filesystem::path(DEVRT_TEST_SPIRV_DIR) / "power.spv");
  REQUIRE(words.size() > 20);
  SECTION("no header") {
    devrt::Result<SpirvPowRewrite> rewrite = define_pow(std::span<const std::uint32_t>(words.data(), 3));
    CHECK(rewrite.status().code() == devrt::ErrorCode::invalid_argument);
  }
  SECTION("an instruction running past the end") {
    words[5] = (0xffffu << 16) | (words[5] & 0xffffu);
    devrt::Result<SpirvPowRewrite> rewrite = define_pow(words);
    CHECK(rewrite.status().code() == devrt::ErrorCode::invalid_argument);
    CHECK(rewrite.status().message().find("bad word count") != std::string_view::npos);
  }
  SECTION("a bound of 2^32 - 1, where new ids would wrap to 0") {
    words[3] = 0xffffffffu;
    devrt::Result<SpirvPowRewrite> rewrite = define_pow(words);
    CHECK(rewrite.status().code() == devrt::ErrorCode::unsupported);
  }
  SECTION("new ids past SPIR-V's bound") {
    words[3] = 0x3fffff - 2;
    devrt::Result<SpirvPowRewrite> rewrite = define_pow(words);
    CHECK(rewrite.status().code() == devrt::ErrorCode::unsupported);
    CHECK(rewrite.status().message().find("4194303") != std::string_view::npos);
  }
}
