// SPDX-License-Identifier: Apache-2.0
// The OpenCL device as a compiler target, from recorded clinfo output (test/fixtures/): an Adreno
// GPU is TVM's `opencl -device=adreno` with its texture limits; the H100 and PoCL are plain
// "opencl" targets with theirs.
#include <catch2/catch.hpp>

#include "backends/opencl/opencl_state.hpp"

#include <cstdio>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace {

// "  Max 2D image size      16384x16384 pixels" -> key "Max 2D image size", value "16384x16384 pixels".
bool split_line(const std::string& line, std::string& key, std::string& value) {
  std::size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos || line[start] == '#') return false;
  std::size_t gap = line.find("  ", start);
  if (gap == std::string::npos) return false;
  std::size_t value_start = line.find_first_not_of(' ', gap);
  key = line.substr(start, gap - start);
  value = value_start == std::string::npos ? "" : line.substr(value_start);
  return true;
}

// The properties devrt reads of the device named `name` in a clinfo dump.
devrt::opencl::ClDevice device_from_clinfo(const std::string& path, const std::string& name) {
  std::ifstream file(path);
  REQUIRE(file.good());
  devrt::opencl::ClDevice d;
  bool in_device = false;
  std::string line, key, value;
  while (std::getline(file, line)) {
    if (!split_line(line, key, value)) continue;
    if (key == "Device Name") {
      if (in_device) break;
      in_device = value == name;
      if (in_device) d.name = value;
      continue;
    }
    if (!in_device) continue;
    if (key == "Device Vendor") d.vendor = value;
    if (key == "Device Version") d.version = value;
    if (key == "Driver Version") d.driver_version = value;
    if (key == "Device OpenCL C Version") d.c_version = value;
    if (key == "Device Extensions") d.extensions = value;
    if (key == "Device Type") d.type = value == "GPU" ? CL_DEVICE_TYPE_GPU : value == "CPU" ? CL_DEVICE_TYPE_CPU : 0;
    if (key == "Max work group size") d.max_work_group_size = std::stoul(value);
    if (key == "Max work item sizes") {
      std::sscanf(value.c_str(), "%zux%zux%zu", &d.max_work_item_sizes[0], &d.max_work_item_sizes[1],
                  &d.max_work_item_sizes[2]);
    }
    if (key == "Local memory size") d.local_memory = std::stoul(value);
    if (key == "Image support") d.image_support = value == "Yes" ? CL_TRUE : CL_FALSE;
    if (key == "Max 2D image size") std::sscanf(value.c_str(), "%zux%zu", &d.image2d_max_width, &d.image2d_max_height);
    if (key == "Max 1D or 2D image array size") d.image_max_array_size = std::stoul(value);
  }
  REQUIRE(d.name == name);
  return d;
}

std::vector<std::string> keys_of(const devrt::Target& target) {
  std::optional<std::span<const std::string>> keys = target.get<std::span<const std::string>>("keys");
  REQUIRE(keys.has_value());
  return std::vector<std::string>(keys->begin(), keys->end());
}

std::string fixture(const char* file) { return std::string(DEVRT_TEST_FIXTURES) + "/" + file; }

} // namespace

TEST_CASE("an Adreno GPU is TVM's opencl -device=adreno target, with its texture limits", "[opencl][target]") {
  devrt::opencl::ClDevice adreno = device_from_clinfo(fixture("adreno-740/clinfo.txt"), "QUALCOMM Adreno(TM) 740");
  CHECK(devrt::opencl::is_adreno(adreno));
  devrt::Target target = devrt::opencl::describe_target(adreno);
  CHECK(target.kind() == "opencl");
  CHECK(target.get<std::string>("device").value_or("") == "adreno");
  CHECK(keys_of(target) == std::vector<std::string>{"adreno", "opencl", "gpu"});
  CHECK(target.get<std::int64_t>("texture_spatial_limit").value_or(0) == 16384);
  CHECK(target.get<std::int64_t>("texture_depth_limit").value_or(0) == 2048);
  CHECK(target.get<bool>("supports_float16").value_or(false));
  CHECK(target.get<std::string>("device_name").value_or("") == "QUALCOMM Adreno(TM) 740");

  // Older drivers say only "QUALCOMM Adreno(TM)"; a Qualcomm GPU without the word is Adreno too,
  // but a Qualcomm CPU device is not.
  adreno.name = "QUALCOMM Adreno(TM)";
  CHECK(devrt::opencl::is_adreno(adreno));
  adreno.name = "Qualcomm GPU";
  CHECK(devrt::opencl::is_adreno(adreno));
  adreno.type = CL_DEVICE_TYPE_CPU;
  CHECK_FALSE(devrt::opencl::is_adreno(adreno));
}

TEST_CASE("other OpenCL devices are plain opencl targets, with their own texture limits", "[opencl][target]") {
  devrt::opencl::ClDevice h100 = device_from_clinfo(fixture("nvidia-h100/clinfo.txt"), "NVIDIA H100 80GB HBM3");
  CHECK_FALSE(devrt::opencl::is_adreno(h100));
  devrt::Target target = devrt::opencl::describe_target(h100);
  CHECK(target.get<std::string>("device").value_or("") == "gpu");
  CHECK(keys_of(target) == std::vector<std::string>{"opencl", "gpu"});
  CHECK(target.get<std::int64_t>("texture_spatial_limit").value_or(0) == 32768);
  CHECK(target.get<std::int64_t>("texture_depth_limit").value_or(0) == 2048);
  CHECK(target.get<std::int64_t>("max_threads_per_block").value_or(0) == 1024);

  devrt::opencl::ClDevice pocl =
      device_from_clinfo(fixture("nvidia-h100/clinfo.txt"), "cpu-skylake-avx512-Intel(R) Xeon(R) Processor");
  CHECK_FALSE(devrt::opencl::is_adreno(pocl));
  CHECK(devrt::opencl::describe_target(pocl).get<std::int64_t>("texture_spatial_limit").value_or(0) == 8192);
  // Without image support there is no texture limit to report.
  pocl.image_support = CL_FALSE;
  CHECK_FALSE(devrt::opencl::describe_target(pocl).get<std::int64_t>("texture_spatial_limit").has_value());
}
