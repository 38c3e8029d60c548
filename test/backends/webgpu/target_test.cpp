// SPDX-License-Identifier: Apache-2.0
// The WebGPU device as TVM's `webgpu` target, from recorded adapters (test/fixtures/webgpu-*/,
// made by test/integration/webgpu_adapter_record.cpp): Mesa's llvmpipe through Dawn's OpenGL ES
// backend in Compatibility mode, as CI has it.
#include <catch2/catch.hpp>

#include "backends/webgpu/webgpu_target.hpp"

#include <fstream>
#include <iterator>
#include <string>

using devrt::webgpu::AdapterFacts;

namespace {

AdapterFacts recorded(const std::string& name) {
  std::ifstream file(std::string(DEVRT_TEST_FIXTURES) + "/" + name + "/adapter.txt");
  REQUIRE(file.good());
  const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  devrt::Result<AdapterFacts> facts = devrt::webgpu::parse_adapter_record(text);
  INFO(facts.status().message());
  REQUIRE(facts.ok());
  return *facts;
}

std::int64_t integer(const devrt::Target& target, const char* key) {
  auto value = target.get<std::int64_t>(key);
  INFO(key);
  REQUIRE(value.has_value());
  return *value;
}

} // namespace

TEST_CASE("llvmpipe through Dawn's OpenGL ES backend is a webgpu target with its limits", "[webgpu]") {
  const AdapterFacts facts = recorded("webgpu-llvmpipe");
  CHECK(facts.backend == "OpenGL ES");
  const devrt::Target target = devrt::webgpu::webgpu_target(facts);
  CHECK(target.kind() == "webgpu");
  CHECK(target.has("keys", "webgpu"));
  CHECK(target.has("keys", "gpu"));
  CHECK(integer(target, "max_num_threads") == facts.max_compute_invocations_per_workgroup);
  CHECK(integer(target, "max_num_threads") >= 128); // Compatibility mode's floor
  CHECK(integer(target, "max_shared_memory_per_block") == facts.max_compute_workgroup_storage_size);
  CHECK(integer(target, "max_block_size_x") == facts.max_compute_workgroup_size[0]);
  // No subgroups on GL: TVM's warp size of one.
  CHECK_FALSE(facts.subgroups);
  CHECK(integer(target, "thread_warp_size") == 1);
  CHECK(target.get<bool>("supports_float16") == facts.shader_f16);
}

TEST_CASE("an adapter record reads back field by field and refuses what is not one", "[webgpu]") {
  AdapterFacts facts;
  facts.device = "Some GPU (rev 2)";
  facts.backend = "Vulkan";
  facts.max_compute_invocations_per_workgroup = 1024;
  facts.max_compute_workgroup_storage_size = 32768;
  facts.max_compute_workgroup_size[0] = 1024;
  facts.max_compute_workgroup_size[1] = 1024;
  facts.max_compute_workgroup_size[2] = 64;
  facts.max_storage_buffer_binding_size = std::uint64_t{4} << 30;
  facts.max_storage_buffers_per_shader_stage = 10;
  facts.subgroup_min_size = 32;
  facts.subgroups = true;
  facts.shader_f16 = true;
  const std::string record = devrt::webgpu::adapter_record(facts);
  devrt::Result<AdapterFacts> read = devrt::webgpu::parse_adapter_record("# a comment\n" + record);
  REQUIRE(read.ok());
  CHECK(devrt::webgpu::adapter_record(*read) == record);
  const devrt::Target target = devrt::webgpu::webgpu_target(*read);
  CHECK(integer(target, "thread_warp_size") == 32);
  CHECK(target.get<bool>("supports_subgroups") == true);
  CHECK(integer(target, "max_storage_buffer_binding_size") == (std::int64_t{4} << 30));

  for (const char* bad : {"maxComputeInvocationsPerWorkgroup 256\n", "maxComputeWorkgroupSizeX: 12x\n",
                          "subgroupMinSize: 4294967296\n", "noSuchLimit: 1\n"}) {
    INFO(bad);
    devrt::Result<AdapterFacts> refused = devrt::webgpu::parse_adapter_record(record + bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(std::string(refused.status().message()).find("line") != std::string::npos);
  }
  CHECK_FALSE(devrt::webgpu::parse_adapter_record("device: x\n").ok()); // fields missing
}
