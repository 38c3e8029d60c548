// SPDX-License-Identifier: Apache-2.0
// What the WebGPU backend reads from WGSL source before the implementation compiles it: the
// resources of bind group 0 and the compute entry points with their workgroup sizes. A pure
// function, unit-tested. Not public API.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_WGSL_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_WGSL_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::webgpu {

// A resource of bind group 0: `@group(0) @binding(N) var<storage, ...>` or `var<uniform>`.
struct WgslBinding {
  std::uint32_t binding = 0;
  bool uniform = false; // false: a storage buffer
};

// A compute entry point: `@compute @workgroup_size(x, y, z) fn name(...)`. A size is an integer
// literal, or the name of an `override` constant that devrt sets to the launch's block extent
// (`override block_x: u32 = 64;` ... `@workgroup_size(block_x)`): its size reads 0 and its name
// is kept. Anything else (an expression) reads 0 with no name: unknown, not checked.
struct WgslEntryPoint {
  std::string name;
  std::uint32_t workgroup_size[3] = {1, 1, 1};
  std::string size_override[3];
};

// A member of the uniform buffer's struct (TVM's PODArgs): a launch's scalar, as a DLPack type.
struct WgslScalar {
  std::string name;
  std::uint8_t code = 0; // kDLInt 0, kDLUInt 1, kDLFloat 2
  std::uint8_t bits = 32;
};

struct WgslInterface {
  std::vector<WgslBinding> bindings; // ascending binding numbers
  std::vector<WgslEntryPoint> entry_points;
  // The uniform buffer's members in order, TVM's trailing packGridDimX left out; known when the
  // shader has no uniform buffer, or one whose struct has i32, u32 and f32 members only.
  bool scalars_known = false;
  std::vector<WgslScalar> scalars;
};

// The interface of `source`, after comments are removed. invalid_argument for what the backend
// cannot bind: a resource outside group 0, two resources at one binding, or a resource that is
// neither a storage nor a uniform buffer (textures, samplers).
Result<WgslInterface> scan_wgsl(std::string_view source);

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_WGSL_HPP
