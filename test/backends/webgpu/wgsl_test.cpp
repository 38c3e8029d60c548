// SPDX-License-Identifier: Apache-2.0
// What the WebGPU backend reads from WGSL before Dawn compiles it (scan_wgsl): bind group 0's
// buffers, the uniform struct's scalars (TVM's PODArgs) that launches are checked against, and the
// entry points with their workgroup sizes. No WebGPU implementation is needed.
#include <catch2/catch.hpp>

#include "backends/webgpu/webgpu_wgsl.hpp"

#include <string>

using devrt::ErrorCode;
using devrt::webgpu::scan_wgsl;
using devrt::webgpu::WgslInterface;

namespace {

// A kernel as TVM's WebGPU codegen writes one: storage buffers in parameter order, the scalars and
// packGridDimX in one uniform struct, the block size from an override constant.
constexpr const char* kTvmSaxpy = R"(
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> y : array<f32>;
struct PODArgs { alpha: f32, n: i32, packGridDimX: u32 }
@group(0) @binding(2) var<uniform> podArgs : PODArgs;
@compute @workgroup_size(block_x)
fn saxpy(@builtin(workgroup_id) blockIdx : vec3<u32>, @builtin(local_invocation_id) threadIdx : vec3<u32>) {
  var<private> unused : f32;
  let i = blockIdx.x * block_x + threadIdx.x;
  if (i < u32(podArgs.n)) { y[i] = podArgs.alpha * x[i] + y[i]; }
}
)";

WgslInterface scanned(const std::string& source) {
  devrt::Result<WgslInterface> interface = scan_wgsl(source);
  INFO(interface.status().message());
  REQUIRE(interface.ok());
  return std::move(interface).value();
}

} // namespace

TEST_CASE("a kernel in TVM's calling convention: buffers, PODArgs scalars, an override block size", "[webgpu]") {
  const WgslInterface interface = scanned(kTvmSaxpy);
  REQUIRE(interface.bindings.size() == 3);
  CHECK((interface.bindings[0].binding == 0 && !interface.bindings[0].uniform));
  CHECK((interface.bindings[1].binding == 1 && !interface.bindings[1].uniform));
  CHECK((interface.bindings[2].binding == 2 && interface.bindings[2].uniform));
  REQUIRE(interface.scalars_known);
  REQUIRE(interface.scalars.size() == 2); // packGridDimX is devrt's to fill, not an argument
  CHECK((interface.scalars[0].name == "alpha" && interface.scalars[0].code == 2 && interface.scalars[0].bits == 32));
  CHECK((interface.scalars[1].name == "n" && interface.scalars[1].code == 0));
  REQUIRE(interface.entry_points.size() == 1);
  const auto& entry = interface.entry_points[0];
  CHECK(entry.name == "saxpy");
  CHECK(entry.workgroup_size[0] == 0); // set per launch through the override constant
  CHECK(entry.size_override[0] == "block_x");
  CHECK((entry.workgroup_size[1] == 1 && entry.workgroup_size[2] == 1));
}

TEST_CASE("bindings are sorted, comments ignored, fixed sizes read", "[webgpu]") {
  const WgslInterface interface = scanned(R"(
// @group(0) @binding(7) var<storage, read_write> commented_out : array<f32>;
/* nested /* block */ comment: @group(0) @binding(8) var<uniform> gone : Gone; */
@group(0) @binding(3) var<storage, read_write> b : array<u32>;
@binding(1) @group(0) var<storage, read> a : array<u32>;
var<workgroup> tile : array<f32, 64>;
@compute @workgroup_size(16, 4) fn first() {}
@compute @workgroup_size(8, 8, 2)
fn second() {}
fn helper() {}
)");
  REQUIRE(interface.bindings.size() == 2);
  CHECK(interface.bindings[0].binding == 1);
  CHECK(interface.bindings[1].binding == 3);
  CHECK(interface.scalars_known); // no uniform buffer: no scalars
  CHECK(interface.scalars.empty());
  REQUIRE(interface.entry_points.size() == 2);
  CHECK(interface.entry_points[0].name == "first");
  CHECK((interface.entry_points[0].workgroup_size[0] == 16 && interface.entry_points[0].workgroup_size[1] == 4 &&
         interface.entry_points[0].workgroup_size[2] == 1));
  CHECK(interface.entry_points[1].workgroup_size[2] == 2);
}

TEST_CASE("scalars of other types leave the signature unknown", "[webgpu]") {
  const WgslInterface interface = scanned(R"(
@group(0) @binding(0) var<storage, read_write> v : array<f32>;
struct Params { scale: vec4<f32>, n: i32 }
@group(0) @binding(1) var<uniform> params : Params;
@compute @workgroup_size(64) fn k() {}
)");
  CHECK_FALSE(interface.scalars_known);
  CHECK(interface.scalars.empty());
  const WgslInterface attributed = scanned(R"(
struct Params { @align(16) scale: f32, count: u32, }
@group(0) @binding(0) var<uniform> params : Params;
@compute @workgroup_size(1) fn k() {}
)");
  REQUIRE(attributed.scalars_known);
  REQUIRE(attributed.scalars.size() == 2);
  CHECK(attributed.scalars[0].name == "scale");
  CHECK((attributed.scalars[1].name == "count" && attributed.scalars[1].code == 1));
}

TEST_CASE("resources devrt cannot bind are refused with the reason", "[webgpu]") {
  struct Case {
    const char* source;
    const char* message;
  };
  const Case cases[] = {
      {"@group(1) @binding(0) var<storage, read_write> v : array<f32>;", "group 0 only"},
      {"@group(0) @binding(0) var<storage> a : array<f32>;\n@group(0) @binding(0) var<storage> b : array<f32>;",
       "two resources at @binding(0)"},
      {"@group(0) @binding(0) var t : texture_2d<f32>;", "not a storage or uniform buffer"},
      {"@group(0) @binding(n) var<storage> a : array<f32>;", "not an integer literal"},
  };
  for (const Case& c : cases) {
    INFO(c.source);
    devrt::Result<WgslInterface> interface = scan_wgsl(c.source);
    REQUIRE_FALSE(interface.ok());
    CHECK(interface.status().code() == ErrorCode::invalid_argument);
    CHECK(std::string(interface.status().message()).find(c.message) != std::string::npos);
  }
}
