// SPDX-License-Identifier: Apache-2.0
// An OpenCL device as a compiler target, from its properties alone (no driver call): TVM's
// "opencl" kind, and for Qualcomm Adreno GPUs its `opencl -device=adreno` target.
#include "opencl_state.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace devrt::opencl {
namespace {

bool contains_ignoring_case(std::string_view text, std::string_view word) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  auto match = std::search(text.begin(), text.end(), word.begin(), word.end(),
                           [&](char a, char b) { return lower(a) == lower(b); });
  return match != text.end();
}

} // namespace

bool is_adreno(const ClDevice& d) {
  return contains_ignoring_case(d.name, "adreno") ||
         ((d.type & CL_DEVICE_TYPE_GPU) != 0 && contains_ignoring_case(d.vendor, "qualcomm"));
}

Target describe_target(const ClDevice& d) {
  auto has_extension = [&](std::string_view name) {
    std::string_view all = d.extensions;
    std::size_t pos = 0;
    while ((pos = all.find(name, pos)) != std::string_view::npos) {
      bool starts = pos == 0 || all[pos - 1] == ' ';
      bool ends = pos + name.size() == all.size() || all[pos + name.size()] == ' ';
      if (starts && ends) return true;
      pos += name.size();
    }
    return false;
  };
  std::vector<std::string> extensions;
  std::string_view all = d.extensions;
  while (!all.empty()) {
    std::size_t space = all.find(' ');
    std::string_view item = all.substr(0, space);
    if (!item.empty()) extensions.emplace_back(item);
    if (space == std::string_view::npos) break;
    all.remove_prefix(space + 1);
  }
  std::string c_version = d.c_version;
  int major = 0, minor = 0;
  if (std::sscanf(d.c_version.c_str(), "OpenCL C %d.%d", &major, &minor) == 2) {
    c_version = std::to_string(major) + "." + std::to_string(minor);
  }
  const char* type = (d.type & CL_DEVICE_TYPE_GPU) != 0           ? "gpu"
                     : (d.type & CL_DEVICE_TYPE_ACCELERATOR) != 0 ? "accelerator"
                     : (d.type & CL_DEVICE_TYPE_CPU) != 0         ? "cpu"
                                                                  : "other";
  const bool adreno = is_adreno(d);
  Target target("opencl");
  target.set("keys",
             adreno ? std::vector<std::string>{"adreno", "opencl", "gpu"} : std::vector<std::string>{"opencl", "gpu"});
  target.set("device", std::string(adreno ? "adreno" : type));
  target.set("device_name", d.name);
  target.set("max_threads_per_block", static_cast<std::int64_t>(d.max_work_group_size));
  target.set("max_num_threads", static_cast<std::int64_t>(d.max_work_group_size));
  target.set("max_shared_memory_per_block", static_cast<std::int64_t>(d.local_memory));
  target.set("thread_warp_size", static_cast<std::int64_t>(d.preferred_multiple != 0 ? d.preferred_multiple : 1));
  target.set("max_block_size_x", static_cast<std::int64_t>(d.max_work_item_sizes[0]));
  target.set("max_block_size_y", static_cast<std::int64_t>(d.max_work_item_sizes[1]));
  target.set("max_block_size_z", static_cast<std::int64_t>(d.max_work_item_sizes[2]));
  target.set("opencl_c_version", c_version);
  target.set("supports_float16", has_extension("cl_khr_fp16"));
  target.set("supports_float64", has_extension("cl_khr_fp64"));
  target.set("supports_subgroups", has_extension("cl_khr_subgroups") || has_extension("cl_intel_subgroups"));
  target.set("supports_int64_atomics", has_extension("cl_khr_int64_base_atomics"));
  target.set("extensions", std::move(extensions));
  // TVM's texture limits: the smaller 2-D image side, and the layers of an image array.
  if (d.image_support == CL_TRUE && d.image2d_max_width > 0 && d.image2d_max_height > 0) {
    target.set("texture_spatial_limit", static_cast<std::int64_t>(std::min(d.image2d_max_width, d.image2d_max_height)));
    if (d.image_max_array_size > 0) {
      target.set("texture_depth_limit", static_cast<std::int64_t>(d.image_max_array_size));
    }
  }
  return target;
}

} // namespace devrt::opencl
