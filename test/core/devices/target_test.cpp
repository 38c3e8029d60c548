// SPDX-License-Identifier: Apache-2.0
// Target JSON (round trips and every parse error with its position), detection errors, and the
// CPU detector's pure parts.
#include <devrt/devrt.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"

using devrt::ErrorCode;
using devrt::Target;

namespace {
bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
} // namespace

TEST_CASE("targets serialise to JSON and parse back", "[target][json]") {
  Target t("cuda");
  t.set("arch", std::string("sm_90"));
  t.set("max_threads_per_block", std::int64_t{1024});
  t.set("max_shared_memory_per_block", std::int64_t{49152});
  t.set("thread_warp_size", std::int64_t{32});
  t.set("supports_float16", true);
  t.set("mattr", std::vector<std::string>{"+ptx80", "quote\"back\\slash\ttab\x01"});
  t.set("model", std::string("H200 \xe2\x9c\x93")); // UTF-8 passes through
  t.set("empty", std::vector<std::string>{});
  t.set("min", std::numeric_limits<std::int64_t>::min());
  std::string json = t.to_json();
  CHECK(json.rfind("{\"kind\":\"cuda\",\"arch\":\"sm_90\"", 0) == 0);
  devrt::Result<Target> back = Target::from_json(json);
  REQUIRE(back.ok());
  CHECK(*back == t);
  CHECK(back->get<std::int64_t>("thread_warp_size") == 32);
  CHECK(back->get<std::string>("thread_warp_size") == std::nullopt);
  CHECK(back->has("mattr", "+ptx80"));
  CHECK_FALSE(back->has("arch", "sm_90"));

  t.set("arch", std::string("sm_80")); // replaces, keeps the order
  CHECK(t.key(0) == "arch");
  CHECK(t.type(0) == Target::ValueType::string);
  CHECK(t.get<std::string>("arch") == "sm_80");
  CHECK(t.to_string().rfind("cuda -arch=sm_80 -max_threads_per_block=1024", 0) == 0);
}

TEST_CASE("target JSON accepts whitespace, escapes, surrogate pairs and kind anywhere", "[target][json]") {
  devrt::Result<Target> t =
      Target::from_json(" \n{ \"num-cores\" : -12 ,\t\"s\": \"a\\u00e9\\ud83d\\ude00\\/\\n\", \"kind\":\"llvm\" }\r\n");
  REQUIRE(t.ok());
  CHECK(t->kind() == "llvm");
  CHECK(t->get<std::int64_t>("num-cores") == -12);
  CHECK(t->get<std::string>("s") == "a\xc3\xa9\xf0\x9f\x98\x80/\n");
}

TEST_CASE("malformed target JSON is refused with its position", "[target][json]") {
  struct Case {
    const char* json;
    const char* reason;
    const char* where;
  };
  const Case cases[] = {
      {"", "expected '{'", "at end of input"},
      {"[]", "expected '{'", "column 1"},
      {"{}", "missing \"kind\"", "column 2"},
      {"{\"arch\": \"x\"}", "missing \"kind\"", "byte 0"},
      {"{\"kind\": 3}", "\"kind\" must be a string", "column 10"},
      {"{\"kind\": \"\"}", "\"kind\" is empty", "column 10"},
      {"{\"kind\": \"a\", \"kind\": \"b\"}", "duplicate key \"kind\"", "column 15"},
      {"{\"kind\": \"a\", \"x\": 1, \"x\": 2}", "duplicate key", "column 23"},
      {"{\"kind\": \"a\"", "expected ',' or '}'", "at end of input"},
      {"{\"kind\": \"a\",}", "expected a string key", "column 14"},
      {"{\"kind\" \"a\"}", "expected ':'", "column 9"},
      {"{\"kind\": \"a\"} x", "unexpected text", "column 15"},
      {"{\"kind\": \"a\", \"x\": 1.5}", "only integers", "column 21"},
      {"{\"kind\": \"a\", \"x\": 1e3}", "only integers", "column 21"},
      {"{\"kind\": \"a\", \"x\": 01}", "leading zeros", "column 20"},
      {"{\"kind\": \"a\", \"x\": -}", "expected a digit", "column 21"},
      {"{\"kind\": \"a\", \"x\": 9223372036854775808}", "integer out of range", "column 20"},
      {"{\"kind\": \"a\", \"x\": 99999999999999999999999}", "integer out of range", "column 20"},
      {"{\"kind\": \"a\", \"x\": null}", "null values", "column 20"},
      {"{\"kind\": \"a\", \"x\": {}}", "nested objects", "column 20"},
      {"{\"kind\": \"a\", \"x\": [1]}", "only hold strings", "column 21"},
      {"{\"kind\": \"a\", \"x\": [\"a\" \"b\"]}", "expected ',' or ']'", "column 25"},
      {"{\"kind\": \"a\", \"x\": tru}", "unknown literal", "column 20"},
      {"{\"kind\": \"a\", \"x\": @}", "unexpected character", "column 20"},
      {"{\"kind\": \"a\", \"x\": }", "unexpected character", "column 20"},
      {"{\"kind\": \"a\", \"x\":", "expected a value", "at end of input"},
      {"{\"kind\": \"a\", \"x\": \"abc", "unterminated string", "at end of input"},
      {"{\"kind\": \"a\", \"x\": \"a\tb\"}", "control character", "column 22"},
      {"{\"kind\": \"a\", \"x\": \"\\q\"}", "unknown escape", "column 22"},
      {"{\"kind\": \"a\", \"x\": \"\\u12g4\"}", "4 hex digits", "column 25"},
      {"{\"kind\": \"a\", \"x\": \"\\udc00\"}", "unpaired low surrogate", "column 27"},
      {"{\"kind\": \"a\", \"x\": \"\\ud800x\"}", "unpaired high surrogate", "column 27"},
      {"{\"kind\": \"a\", \"x\": \"\xff\"}", "invalid UTF-8", "column 21"},
      {"{\"kind\": \"a\", \"x\": \"\xc3(\"}", "invalid UTF-8", "column 21"},
      {"{\"kind\": \"a\", \"x\": \"\xe0\x80\xaf\"}", "invalid UTF-8", "column 21"},
      {"{\"kind\": \"a\", \"x\": \"\xed\xa0\x80\"}", "invalid UTF-8", "column 21"},
      {"{\"kind\": \"a\", \"x\": \"\xf0\x9f\x98", "truncated UTF-8", "column 21"},
      {"{\"kind\": \"a\",\n \"x\": nul}", "null values", "line 2, column 7"},
  };
  for (const Case& c : cases) {
    INFO(c.json);
    devrt::Result<Target> t = Target::from_json(c.json);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == ErrorCode::invalid_argument);
    CHECK(contains(t.status().message(), "target JSON: "));
    CHECK(contains(t.status().message(), c.reason));
    CHECK(contains(t.status().message(), c.where));
  }
}

TEST_CASE("detection errors read as TVM's", "[target][detect]") {
  devrt::Result<Target> unsupported = devrt::detect_target({devrt::DeviceKind::ext_dev, 0});
  CHECK(unsupported.status().code() == ErrorCode::invalid_argument);
  CHECK(contains(unsupported.status().message(), "auto detection for device kind ext_dev is not supported"));
  CHECK(contains(unsupported.status().message(), "supported kinds: cpu, cuda, rocm, opencl, vulkan"));

  devrt::Result<Target> absent = devrt::detect_target({devrt::DeviceKind::cpu, 7});
  CHECK(absent.status().code() == ErrorCode::unavailable);
  CHECK(contains(absent.status().message(), "cannot detect device cpu:7: make sure the device and its driver are "
                                            "installed and devrt was built with that backend"));
  if (!devrt::Registry::global().find(devrt::DeviceKind::metal)) {
    devrt::Result<Target> metal = devrt::detect_target({devrt::DeviceKind::metal, 0});
    CHECK(metal.status().code() == ErrorCode::unavailable);
    CHECK(contains(metal.status().message(), "cannot detect device metal:0"));
  }
}

TEST_CASE("the CPU detector describes this host", "[target][detect][cpu]") {
  devrt::Result<Target> t = devrt::detect_target(devrt::kHostDevice);
  REQUIRE(t.ok());
  CHECK(t->kind() == "llvm");
  CHECK(t->has("keys", "cpu"));
  REQUIRE(t->get<std::string>("mtriple").has_value());
  REQUIRE(t->get<std::string>("mcpu").has_value());
  CHECK_FALSE(t->get<std::string>("mcpu")->empty());
  REQUIRE(t->get<std::span<const std::string>>("mattr").has_value());
  CHECK(t->get<std::int64_t>("num-cores").value_or(0) >= 1);
  std::int64_t lanes = t->get<std::int64_t>("simd-32bit-lanes").value_or(0);
  CHECK((lanes == 4 || lanes == 8 || lanes == 16 || lanes > 16));
#if defined(__x86_64__)
  CHECK(t->get<std::string>("mtriple") == "x86_64-pc-linux-gnu");
  CHECK(t->has("mattr", "+sse2"));
  CHECK(lanes == devrt::cpu::simd_32bit_lanes(*t->get<std::span<const std::string>>("mattr")));
#endif
  // Cached: the same answer again.
  devrt::Result<Target> again = devrt::detect_target(devrt::kHostDevice);
  REQUIRE(again.ok());
  CHECK(*again == *t);
  // What the backend table carries is the same target.
  devrt::Result<std::string> json = devrt::Registry::global().find(devrt::DeviceKind::cpu).detect_target(0);
  REQUIRE(json.ok());
  CHECK(Target::from_json(*json).value() == *t);
}

TEST_CASE("SIMD lanes follow TVM's get_simd_32bit_lanes", "[target][cpu]") {
  using devrt::cpu::simd_32bit_lanes;
  using Strings = std::vector<std::string>;
  CHECK(simd_32bit_lanes(Strings{"+sse4.2"}) == 4);
  CHECK(simd_32bit_lanes(Strings{"+avx", "+avx2"}) == 8);
  CHECK(simd_32bit_lanes(Strings{"+avx2", "+avx512f"}) == 8); // avx512f without avx512bw
  CHECK(simd_32bit_lanes(Strings{"+avx2", "+avx512f", "+avx512bw"}) == 16);
  CHECK(simd_32bit_lanes(Strings{"+neon"}) == 4);
  CHECK(simd_32bit_lanes(Strings{"+neon", "+sve"}, 32) == 8);
}

TEST_CASE("x86 CPU names come from cpuid and never claim more than the features", "[target][cpu]") {
  using devrt::cpu::x86_cpu_name;
  CHECK(x86_cpu_name("GenuineIntel", 6, 0x6a, 6, 4) == "icelake-server");
  CHECK(x86_cpu_name("GenuineIntel", 6, 0x55, 4, 4) == "skylake-avx512");
  CHECK(x86_cpu_name("GenuineIntel", 6, 0x55, 7, 4) == "cascadelake");
  CHECK(x86_cpu_name("GenuineIntel", 6, 0x55, 11, 4) == "cooperlake");
  CHECK(x86_cpu_name("GenuineIntel", 6, 0x8f, 8, 4) == "sapphirerapids");
  CHECK(x86_cpu_name("AuthenticAMD", 0x19, 0x11, 1, 4) == "znver4");
  CHECK(x86_cpu_name("AuthenticAMD", 0x19, 0x01, 1, 3) == "znver3");
  CHECK(x86_cpu_name("AuthenticAMD", 0x17, 0x31, 0, 3) == "znver2");
  // A hypervisor that hides AVX-512 on an Ice Lake host: no name that implies it.
  CHECK(x86_cpu_name("GenuineIntel", 6, 0x6a, 6, 3).empty());
  CHECK(x86_cpu_name("GenuineIntel", 6, 0x01, 0, 4).empty());
}
