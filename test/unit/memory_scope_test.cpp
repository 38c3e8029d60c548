// SPDX-License-Identifier: Apache-2.0
// Memory scopes as pure functions: TVM's names, its texture flattening (with the shapes of TVM's own
// tests), the texel types and limits a texture must fit, and the answer of a device without scopes.
#include <catch2/catch.hpp>

#include <devrt/devrt.hpp>
#include <devrt/registry.hpp>

#include "core/memory_scope.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

devrt::Result<devrt::TextureExtent> extent_of(devrt::MemoryScope scope, std::vector<std::int64_t> shape) {
  return devrt::texture_extent(scope, shape);
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

} // namespace

TEST_CASE("memory scopes have TVM's names, and nothing else parses", "[scope]") {
  using devrt::MemoryScope;
  for (std::int32_t i = 0; i < devrt::kMemoryScopeCount; ++i) {
    auto scope = static_cast<MemoryScope>(i);
    devrt::Result<MemoryScope> parsed = devrt::parse_memory_scope(devrt::to_string(scope));
    REQUIRE(parsed.ok());
    CHECK(*parsed == scope);
  }
  CHECK(devrt::to_string(MemoryScope::texture_nhwc) == "global.texture-nhwc");
  CHECK(*devrt::parse_memory_scope("") == MemoryScope::global);
  for (const char* bad : {"texture", "global.Texture", "global.texture ", "shared", "global.vtcm2"}) {
    devrt::Result<MemoryScope> parsed = devrt::parse_memory_scope(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == devrt::ErrorCode::invalid_argument);
    CHECK(contains(parsed.status().message(), std::string("'") + bad + "'"));
  }
  CHECK(devrt::is_texture_scope(MemoryScope::texture_weight));
  CHECK_FALSE(devrt::is_texture_scope(MemoryScope::vtcm));
  CHECK_FALSE(devrt::is_texture_scope(MemoryScope::global));
}

TEST_CASE("texture_extent follows TVM's flattening rule", "[scope]") {
  using devrt::MemoryScope;
  using devrt::TextureExtent;
  // Activations, [N, C, H, W, 4] -> rows N*C*H, width W (TVM's texture.h comment).
  CHECK(*extent_of(MemoryScope::texture, {1, 2, 3, 5, 4}) == TextureExtent{5, 6});
  // Weights, [O, I, H, W, 4] -> rows O, width I*H*W.
  CHECK(*extent_of(MemoryScope::texture_weight, {8, 64, 3, 3, 4}) == TextureExtent{576, 8});
  // NHWC: TVM's test_token_2d_alloc: [1, 22, 20, 20, 4] -> height 22, width 400.
  CHECK(*extent_of(MemoryScope::texture_nhwc, {1, 22, 20, 20, 4}) == TextureExtent{400, 22});
  // NHWC of rank 3 separates after the first axis.
  CHECK(*extent_of(MemoryScope::texture_nhwc, {7, 9, 4}) == TextureExtent{9, 7});
  // Rank 2: one row.
  CHECK(*extent_of(MemoryScope::texture, {10, 4}) == TextureExtent{10, 1});
  CHECK(*extent_of(MemoryScope::texture_weight, {10, 4}) == TextureExtent{1, 10});
}

TEST_CASE("the layered form: the rows' last axis is the height, the axes before it the layers", "[scope]") {
  using devrt::MemoryScope;
  using devrt::TextureExtent;
  auto layered = [](MemoryScope scope, std::vector<std::int64_t> shape) {
    return devrt::texture_array_extent(scope, shape);
  };
  // [N, C, H, W, 4]: N*C layers of H rows of W texels (TVM's Adreno choice under texture_depth_limit).
  CHECK(*layered(MemoryScope::texture, {2, 3, 7, 5, 4}) == TextureExtent{5, 7, 6});
  // [N, H, W, C, 4] in nhwc: N layers of H rows of W*C texels.
  CHECK(*layered(MemoryScope::texture_nhwc, {2, 22, 20, 20, 4}) == TextureExtent{400, 22, 2});
  // Rows from one axis, and weights: no layered form.
  CHECK(layered(MemoryScope::texture, {3, 5, 4}).status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(layered(MemoryScope::texture_nhwc, {7, 9, 4}).status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(layered(MemoryScope::texture_weight, {8, 64, 3, 3, 4}).status().code() == devrt::ErrorCode::invalid_argument);
  // The shape's own errors come first.
  CHECK(layered(MemoryScope::texture, {2, 3, 7, 5, 3}).status().code() == devrt::ErrorCode::invalid_argument);
  // Each side fits on its own: the 2-D rows (3 * INT64_MAX) need not.
  CHECK(*layered(MemoryScope::texture, {3, INT64_MAX, 3, 4}) == TextureExtent{3, INT64_MAX, 3});
  CHECK(devrt::texture_extent(MemoryScope::texture, std::vector<std::int64_t>{3, INT64_MAX, 3, 4}).status().code() ==
        devrt::ErrorCode::out_of_range);
  devrt::Result<TextureExtent> too_many = layered(MemoryScope::texture, {INT64_MAX, 2, 5, 3, 4});
  CHECK(too_many.status().code() == devrt::ErrorCode::out_of_range);
  CHECK(contains(too_many.status().message(), "layer count overflows int64"));
}

TEST_CASE("place_texture: 2-D when it fits, else layered, else both sizes in the error", "[scope]") {
  using devrt::MemoryScope;
  using devrt::TextureExtent;
  const devrt::ScopeLimits limits{MemoryScope::texture, 1024, 100, 1u << 30, false, 16};
  const devrt::DataType f32 = devrt::DataType::float32();
  const std::int64_t fits_flat[] = {2, 3, 10, 8, 4};
  CHECK(*devrt::detail::place_texture(limits, f32, fits_flat) == TextureExtent{8, 60, 1});
  const std::int64_t needs_layers[] = {2, 3, 50, 8, 4}; // 300 rows > 100: 6 layers of 50
  CHECK(*devrt::detail::place_texture(limits, f32, needs_layers) == TextureExtent{8, 50, 6});
  const std::int64_t too_many_layers[] = {4, 5, 50, 8, 4}; // 20 layers > 16
  devrt::Result<TextureExtent> refused = devrt::detail::place_texture(limits, f32, too_many_layers);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == devrt::ErrorCode::out_of_range);
  CHECK(contains(refused.status().message(), "8 x 1000 texels"));
  CHECK(contains(refused.status().message(), "20 layers exceeds the device's 16"));
  devrt::ScopeLimits no_arrays = limits;
  no_arrays.max_layers = 0;
  CHECK(devrt::detail::place_texture(no_arrays, f32, needs_layers).status().code() == devrt::ErrorCode::out_of_range);
  // A type error is not hidden behind the layered form.
  CHECK(devrt::detail::place_texture(limits, devrt::DataType::float64(), needs_layers).status().code() ==
        devrt::ErrorCode::unsupported);
}

TEST_CASE("texture_extent refuses shapes a texture cannot hold", "[scope]") {
  using devrt::MemoryScope;
  struct Case {
    MemoryScope scope;
    std::vector<std::int64_t> shape;
    devrt::ErrorCode code;
    const char* says;
  };
  const Case cases[] = {
      {MemoryScope::global, {2, 4}, devrt::ErrorCode::invalid_argument, "not a texture scope"},
      {MemoryScope::vtcm, {2, 4}, devrt::ErrorCode::invalid_argument, "not a texture scope"},
      {MemoryScope::texture, {4}, devrt::ErrorCode::invalid_argument, "at least 2 axes"},
      {MemoryScope::texture_nhwc, {3, 4}, devrt::ErrorCode::invalid_argument, "at least 3 axes"},
      {MemoryScope::texture, {2, 3}, devrt::ErrorCode::invalid_argument, "must end in an axis of 4"},
      {MemoryScope::texture, {2, 0, 4}, devrt::ErrorCode::invalid_argument, "axis 1 is 0"},
      {MemoryScope::texture, {2, -3, 4}, devrt::ErrorCode::invalid_argument, "axis 1 is -3"},
      {MemoryScope::texture_weight, {1, INT64_MAX, INT64_MAX, 4}, devrt::ErrorCode::out_of_range, "overflows"},
      // Sides in [2^63, 2^64) fit an unsigned 64-bit product but no int64: refused (a height of
      // 13835058055282163712 was accepted before).
      {MemoryScope::texture,
       {3, std::int64_t{1} << 62, 3, 4},
       devrt::ErrorCode::out_of_range,
       "height overflows int64"},
      {MemoryScope::texture_weight,
       {2, std::int64_t{1} << 62, 2, 4},
       devrt::ErrorCode::out_of_range,
       "width overflows int64"},
  };
  for (const Case& c : cases) {
    devrt::Result<devrt::TextureExtent> extent = devrt::texture_extent(c.scope, c.shape);
    INFO(devrt::to_string(c.scope) << " " << c.says);
    REQUIRE_FALSE(extent.ok());
    CHECK(extent.status().code() == c.code);
    CHECK(contains(extent.status().message(), c.says));
  }
}

TEST_CASE("check_texture_fits: texel types, float16 and the device's limits", "[scope]") {
  using devrt::DataType;
  using devrt::DataTypeCode;
  const devrt::ScopeLimits limits{devrt::MemoryScope::texture, 16384, 8192, 1u << 30, false, 2048};
  CHECK(devrt::detail::check_texture_fits(limits, DataType{DataTypeCode::floating, 32, 1}, {16384, 8192}).ok());
  CHECK(devrt::detail::check_texture_fits(limits, DataType{DataTypeCode::unsigned_int, 8, 1}, {1, 1}).ok());
  CHECK(devrt::detail::check_texture_fits(limits, DataType{DataTypeCode::signed_int, 16, 1}, {1, 1}).ok());

  devrt::Status wide = devrt::detail::check_texture_fits(limits, DataType{DataTypeCode::floating, 32, 1}, {16385, 1});
  CHECK(wide.code() == devrt::ErrorCode::out_of_range);
  CHECK(contains(wide.message(), "16385 x 1 texels exceeds the device's 16384 x 8192"));
  CHECK(devrt::detail::check_texture_fits(limits, DataType{DataTypeCode::floating, 32, 1}, {1, 8193}).code() ==
        devrt::ErrorCode::out_of_range);

  for (DataType type : {DataType{DataTypeCode::floating, 64, 1}, DataType{DataTypeCode::signed_int, 64, 1},
                        DataType{DataTypeCode::bfloat, 16, 1}, DataType{DataTypeCode::floating, 32, 4},
                        DataType{DataTypeCode::boolean, 8, 1}}) {
    devrt::Status status = devrt::detail::check_texture_fits(limits, type, {1, 1});
    INFO(devrt::to_string(type));
    CHECK(status.code() == devrt::ErrorCode::unsupported);
    CHECK(contains(status.message(), "no texel channel type"));
  }
  devrt::Status half = devrt::detail::check_texture_fits(limits, DataType{DataTypeCode::floating, 16, 1}, {1, 1});
  CHECK(half.code() == devrt::ErrorCode::unsupported);
  CHECK(contains(half.message(), "float16"));
  devrt::ScopeLimits with_half = limits;
  with_half.half_texels = true;
  CHECK(devrt::detail::check_texture_fits(with_half, DataType{DataTypeCode::floating, 16, 1}, {1, 1}).ok());
}

TEST_CASE("the CPU has only global memory, and says so naming scope and device", "[scope]") {
  devrt::Device cpu{devrt::DeviceKind::cpu, 0};
  devrt::Result<devrt::ScopeLimits> global = devrt::scope_limits(cpu, devrt::MemoryScope::global);
  REQUIRE(global.ok());
  for (devrt::MemoryScope scope : {devrt::MemoryScope::texture, devrt::MemoryScope::texture_nhwc,
                                   devrt::MemoryScope::texture_weight, devrt::MemoryScope::vtcm}) {
    devrt::Result<devrt::ScopeLimits> limits = devrt::scope_limits(cpu, scope);
    REQUIRE_FALSE(limits.ok());
    CHECK(limits.status().code() == devrt::ErrorCode::unsupported);
    CHECK(contains(limits.status().message(), "cpu:0"));
    CHECK(contains(limits.status().message(), std::string("'") + std::string(devrt::to_string(scope)) + "'"));

    devrt::TensorOptions options;
    options.scope = scope;
    devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({2, 4}, devrt::DataType{}, cpu, options);
    REQUIRE_FALSE(tensor.ok());
    CHECK(tensor.status().code() == devrt::ErrorCode::unsupported);
    CHECK(contains(tensor.status().message(), devrt::to_string(scope)));
  }
  devrt::Result<devrt::ScopeLimits> bogus = devrt::scope_limits(cpu, static_cast<devrt::MemoryScope>(9));
  CHECK(bogus.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(devrt::scope_limits(devrt::Device{devrt::DeviceKind::cpu, 7}, devrt::MemoryScope::texture).status().code() ==
        devrt::ErrorCode::invalid_argument);
}

TEST_CASE("only the backends with textures carry the texture entries", "[scope]") {
  // CUDA and ROCm have no scope besides "global": their tables leave the entries empty, so that on
  // a device they answer `unsupported` through the path the CPU test above takes (and the
  // conformance suite checks it on every present device).
  const devrt::Registry& registry = devrt::Registry::global();
  for (std::size_t i = 0; i < registry.size(); ++i) {
    devrt::BackendRef backend = registry.at(i);
    INFO(backend.name());
    const bool textures = backend.name() == "opencl" || backend.name() == "vulkan";
    if (backend.has_capability(DEVRT_CAP_PLACEHOLDER)) continue; // a plugin not loaded: no table yet
    CHECK(backend.has_textures() == textures);
    CHECK(DEVRT_BACKEND_TABLE_HAS(backend.table(), scope_limits) == textures);
  }
}
