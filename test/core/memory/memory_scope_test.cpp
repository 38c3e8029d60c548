// SPDX-License-Identifier: Apache-2.0
// Memory scopes as pure functions: TVM's names, its texture flattening (with the shapes of TVM's
// own tests), the texel types and limits a texture must fit, and the answer of a device without
// scopes.
#include <catch2/catch.hpp>

#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>

#include "backend_support/gpu_texture.hpp"
#include "core/memory/memory_scope.hpp"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
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

TEST_CASE("texture_extent follows TVM 0.22's flattening rule", "[scope]") {
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

namespace {

// TVM main's flattening as its texture.h computes it, written out independently for the
// comparison: the separator in size_t, so that 0 - 1 wraps and every axis lands in the depth, and
// the products in 128 bits so that the shapes whose int64 products overflow (undefined in TVM)
// are known. nullopt: TVM refuses the rank, or a product overflows.
std::optional<devrt::TextureExtent> tvm_main_extent(devrt::MemoryScope scope, const std::vector<std::int64_t>& shape) {
  const std::size_t rank = shape.size();
  std::size_t axis = scope == devrt::MemoryScope::texture_weight ? 1
                     : scope == devrt::MemoryScope::texture_nhwc ? 2
                                                                 : rank - 2;
  if (!(axis < rank)) return std::nullopt;
  __extension__ using Wide = __int128;
  Wide width = 1;
  Wide height = 1;
  Wide depth = 1;
  for (std::size_t i = 0; i < rank - 1; i++) {
    Wide& side = i < axis - 1 ? depth : i < axis ? height : width;
    side *= shape[i];
    if (side > INT64_MAX) return std::nullopt;
  }
  return devrt::TextureExtent{static_cast<std::uint64_t>(width), static_cast<std::uint64_t>(height),
                              static_cast<std::uint64_t>(depth)};
}

} // namespace

TEST_CASE("texture_array_extent is TVM main's flattening", "[scope]") {
  using devrt::MemoryScope;
  using devrt::TextureExtent;
  auto layered = [](MemoryScope scope, std::vector<std::int64_t> shape) {
    return devrt::texture_array_extent(scope, shape);
  };
  // [N, C, H, W, c]: N*C layers of H rows of W texels.
  CHECK(*layered(MemoryScope::texture, {2, 3, 7, 5, 4}) == TextureExtent{5, 7, 6});
  // [N, H, W, C, c] in nhwc: N layers of H rows of W*C texels.
  CHECK(*layered(MemoryScope::texture_nhwc, {2, 22, 20, 20, 4}) == TextureExtent{400, 22, 2});
  // The cases only TVM main defines: weights and rank-3 activations are one layer; rank-2
  // activations [N, c] are N layers of one texel; rank-3 nhwc [A, B, c] is A layers of B x 1.
  CHECK(*layered(MemoryScope::texture_weight, {8, 64, 3, 3, 4}) == TextureExtent{576, 8, 1});
  CHECK(*layered(MemoryScope::texture, {3, 5, 4}) == TextureExtent{5, 3, 1});
  CHECK(*layered(MemoryScope::texture, {10, 4}) == TextureExtent{1, 1, 10});
  CHECK(*layered(MemoryScope::texture_nhwc, {7, 9, 4}) == TextureExtent{1, 9, 7});
  // Packs of any count: TVM's test_texture_nd int8 [256, 64, 16] is 256 rows of 64 texels.
  CHECK(*layered(MemoryScope::texture, {256, 64, 16}) == TextureExtent{64, 256, 1});
  CHECK(*layered(MemoryScope::texture, {2, 3, 7, 5, 1}) == TextureExtent{5, 7, 6});
  // Axes of 0 give TVM's sides of 0; negative axes and short shapes are refused.
  CHECK(*layered(MemoryScope::texture, {2, 0, 7, 5, 4}) == TextureExtent{5, 7, 0});
  CHECK(layered(MemoryScope::texture, {2, -3, 4}).status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(layered(MemoryScope::texture_nhwc, {3, 4}).status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(layered(MemoryScope::global, {3, 4}).status().code() == devrt::ErrorCode::invalid_argument);
  // Each side fits on its own: the 2-D rows (3 * INT64_MAX) need not.
  CHECK(*layered(MemoryScope::texture, {3, INT64_MAX, 3, 4}) == TextureExtent{3, INT64_MAX, 3});
  CHECK(devrt::texture_extent(MemoryScope::texture, std::vector<std::int64_t>{3, INT64_MAX, 3, 4}).status().code() ==
        devrt::ErrorCode::out_of_range);
  devrt::Result<TextureExtent> too_many = layered(MemoryScope::texture, {INT64_MAX, 2, 5, 3, 4});
  CHECK(too_many.status().code() == devrt::ErrorCode::out_of_range);
  CHECK(contains(too_many.status().message(), "layer count overflows int64"));
  CHECK(contains(layered(MemoryScope::texture_weight, {2, std::int64_t{1} << 62, 2, 4}).status().message(),
                 "width overflows int64"));
}

TEST_CASE("texture_array_extent equals TVM main's flattening on 300,000 scope/shape pairs", "[scope]") {
  std::mt19937_64 random(44);
  // Axes from small ones to ones near 2^63, so that products overflow as often as not.
  auto axis = [&random]() -> std::int64_t {
    switch (random() % 4) {
    case 0: return static_cast<std::int64_t>(random() % 4);
    case 1: return static_cast<std::int64_t>(random() % 300);
    case 2: return static_cast<std::int64_t>(random() % (std::uint64_t{1} << 32));
    default: return static_cast<std::int64_t>(random() >> 1);
    }
  };
  std::size_t compared = 0;
  std::size_t overflowing = 0;
  for (int n = 0; n < 100000; ++n) {
    std::vector<std::int64_t> shape(1 + random() % 6);
    for (std::int64_t& a : shape) a = axis();
    for (devrt::MemoryScope scope :
         {devrt::MemoryScope::texture, devrt::MemoryScope::texture_nhwc, devrt::MemoryScope::texture_weight}) {
      const std::optional<devrt::TextureExtent> tvm = tvm_main_extent(scope, shape);
      devrt::Result<devrt::TextureExtent> ours = devrt::texture_array_extent(scope, shape);
      if (tvm.has_value()) {
        INFO(devrt::to_string(scope) << " rank " << shape.size());
        REQUIRE(ours.ok());
        REQUIRE(*ours == *tvm);
        ++compared;
      } else if (shape.size() >= (scope == devrt::MemoryScope::texture_nhwc ? 3u : 2u)) {
        REQUIRE(ours.status().code() == devrt::ErrorCode::out_of_range);
        ++overflowing;
      } else {
        REQUIRE(ours.status().code() == devrt::ErrorCode::invalid_argument);
      }
    }
  }
  CHECK(compared > 50000);
  CHECK(overflowing > 50000);
}

TEST_CASE("texel_channel_type: a pack of 4 keeps its type, 64 and 128 bits are float texels", "[scope]") {
  using devrt::DataType;
  using devrt::DataTypeCode;
  const DataType i8{DataTypeCode::signed_int, 8, 1};
  const DataType f16{DataTypeCode::floating, 16, 1};
  CHECK(*devrt::texel_channel_type(DataType::float32(), 4) == DataType::float32());
  CHECK(*devrt::texel_channel_type(i8, 4) == i8);
  CHECK(*devrt::texel_channel_type(f16, 4) == f16);
  CHECK(*devrt::texel_channel_type(i8, 16) == DataType::float32()); // TVM's int8 [256, 64, 16]
  CHECK(*devrt::texel_channel_type(i8, 8) == f16);
  CHECK(*devrt::texel_channel_type(f16, 8) == DataType::float32());
  CHECK(*devrt::texel_channel_type(DataType::float32(), 2) == f16);
  CHECK(*devrt::texel_channel_type(DataType::float64(), 2) == DataType::float32());
  for (auto [type, pack] :
       {std::pair{DataType::float32(), std::int64_t{1}}, std::pair{i8, std::int64_t{3}},
        std::pair{DataType::float64(), std::int64_t{4}}, std::pair{i8, std::int64_t{0}},
        std::pair{DataType{DataTypeCode::floating, 32, 4}, std::int64_t{1}}, std::pair{i8, INT64_MAX}}) {
    devrt::Result<DataType> refused = devrt::texel_channel_type(type, pack);
    INFO(devrt::to_string(type) << " x " << pack);
    CHECK(refused.status().code() == devrt::ErrorCode::invalid_argument);
    CHECK(contains(refused.status().message(), "a pack of " + std::to_string(pack) + " " + devrt::to_string(type)));
  }
}

TEST_CASE("place_texture: image arrays by default, TVM 0.22's 2-D images by name", "[scope]") {
  using devrt::DataType;
  using devrt::MemoryScope;
  using devrt::TextureExtent;
  using devrt::TextureLayout;
  using devrt::detail::place_texture;
  const devrt::ScopeLimits limits{MemoryScope::texture, 1024, 100, 1u << 30, false, 16};
  const DataType f32 = DataType::float32();
  const DataType i8{devrt::DataTypeCode::signed_int, 8, 1};
  const std::int64_t activation[] = {2, 3, 10, 8, 4};
  devrt::Result<devrt::detail::TexturePlacement> array =
      place_texture(limits, f32, activation, TextureLayout::image_array);
  REQUIRE(array.ok());
  CHECK(array->extent == TextureExtent{8, 10, 6});
  CHECK(array->image_array);
  CHECK(array->channel == f32);
  devrt::Result<devrt::detail::TexturePlacement> flat = place_texture(limits, f32, activation, TextureLayout::image2d);
  REQUIRE(flat.ok());
  CHECK(flat->extent == TextureExtent{8, 60, 1});
  CHECK_FALSE(flat->image_array);
  // One layer is still an array.
  const std::int64_t weight[] = {4, 3, 2, 2, 4};
  CHECK(place_texture(limits, f32, weight, TextureLayout::image_array)->image_array);
  // A pack of 16 int8 is one float32 texel; the 2-D layout wants 4 channels.
  const std::int64_t packed[] = {64, 16, 16};
  devrt::Result<devrt::detail::TexturePlacement> texels = place_texture(limits, i8, packed, TextureLayout::image_array);
  REQUIRE(texels.ok());
  CHECK(texels->extent == TextureExtent{16, 64, 1});
  CHECK(texels->channel == f32);
  CHECK(place_texture(limits, i8, packed, TextureLayout::image2d).status().code() ==
        devrt::ErrorCode::invalid_argument);
  // A pack as float16 texels on a device without them: unsupported, naming the pack.
  const std::int64_t half_packed[] = {64, 16, 8};
  devrt::Result<devrt::detail::TexturePlacement> no_half =
      place_texture(limits, i8, half_packed, TextureLayout::image_array);
  CHECK(no_half.status().code() == devrt::ErrorCode::unsupported);
  CHECK(contains(no_half.status().message(), "a pack of 8 int8"));
  // Limits: rows past the height, layers past the device's, no arrays at all, empty sides.
  const std::int64_t tall[] = {1, 2, 200, 8, 4};
  CHECK(place_texture(limits, f32, tall, TextureLayout::image_array).status().code() == devrt::ErrorCode::out_of_range);
  const std::int64_t deep[] = {4, 5, 50, 8, 4};
  devrt::Result<devrt::detail::TexturePlacement> refused = place_texture(limits, f32, deep, TextureLayout::image_array);
  CHECK(refused.status().code() == devrt::ErrorCode::out_of_range);
  CHECK(contains(refused.status().message(), "20 layers exceeds the device's 16"));
  devrt::ScopeLimits no_arrays = limits;
  no_arrays.max_layers = 0;
  devrt::Result<devrt::detail::TexturePlacement> unsupported =
      place_texture(no_arrays, f32, weight, TextureLayout::image_array);
  CHECK(unsupported.status().code() == devrt::ErrorCode::unsupported);
  CHECK(contains(unsupported.status().message(), "TextureLayout::image2d"));
  CHECK(place_texture(no_arrays, f32, activation, TextureLayout::image2d).ok());
  const std::int64_t empty[] = {2, 0, 10, 8, 4};
  devrt::Result<devrt::detail::TexturePlacement> none = place_texture(limits, f32, empty, TextureLayout::image_array);
  CHECK(none.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(contains(none.status().message(), "empty texture"));
  CHECK(place_texture(limits, f32, activation, static_cast<TextureLayout>(7)).status().code() ==
        devrt::ErrorCode::invalid_argument);
  // A type error is not hidden behind the layout.
  CHECK(place_texture(limits, DataType::float64(), activation, TextureLayout::image_array).status().code() ==
        devrt::ErrorCode::invalid_argument);
  CHECK(place_texture(limits, DataType::float64(), activation, TextureLayout::image2d).status().code() ==
        devrt::ErrorCode::unsupported);
}

TEST_CASE("pitched_image: rows padded to the pitch alignment in texels, or the bytes it lacks", "[scope]") {
  devrt_texture_desc desc{};
  desc.type_bits = 32; // texels of 16 bytes
  desc.width = 5;
  desc.height = 3;
  desc.layers = 2;
  // No alignment (PoCL and the H100 report 0): compact rows.
  devrt::Result<devrt::detail::PitchedImage> compact = devrt::detail::pitched_image(desc, 0, 1 << 20);
  REQUIRE(compact.ok());
  CHECK(compact->row_pitch == 80);
  CHECK(compact->bytes == 480);
  // An alignment of 64 texels (1 KiB rows of float32 RGBA).
  devrt::Result<devrt::detail::PitchedImage> padded = devrt::detail::pitched_image(desc, 64, 1 << 20);
  REQUIRE(padded.ok());
  CHECK(padded->row_pitch == 1024);
  CHECK(padded->bytes == 6144);
  desc.type_bits = 8;
  CHECK(devrt::detail::pitched_image(desc, 64, 1 << 20)->row_pitch == 256);
  // Too few bytes: invalid_argument with both sizes; sizes past 64 bits: out_of_range.
  devrt::Result<devrt::detail::PitchedImage> short_buffer = devrt::detail::pitched_image(desc, 64, 1535);
  CHECK(short_buffer.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(contains(short_buffer.status().message(), "needs 1536 bytes of the buffer, which has 1535"));
  desc.width = UINT64_MAX - 2;
  CHECK(devrt::detail::pitched_image(desc, 64, SIZE_MAX).status().code() == devrt::ErrorCode::out_of_range);
  desc.width = 1;
  desc.height = UINT64_MAX / 2;
  CHECK(devrt::detail::pitched_image(desc, 0, SIZE_MAX).status().code() == devrt::ErrorCode::out_of_range);
}

TEST_CASE("texture layouts have names, and nothing else parses", "[scope]") {
  CHECK(*devrt::parse_texture_layout("image_array") == devrt::TextureLayout::image_array);
  CHECK(*devrt::parse_texture_layout("") == devrt::TextureLayout::image_array);
  CHECK(*devrt::parse_texture_layout("image2d") == devrt::TextureLayout::image2d);
  CHECK(devrt::to_string(devrt::TextureLayout::image2d) == "image2d");
  devrt::Result<devrt::TextureLayout> unknown = devrt::parse_texture_layout("image2d_array");
  CHECK(unknown.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(contains(unknown.status().message(), "'image2d_array'"));
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

TEST_CASE("a backend's texture entries are all there or all absent, as has_textures() says", "[scope]") {
  // Expectations come from each table's own declarations, never from backend names: a backend
  // with textures (OpenCL, Vulkan, the null template) carries every texture entry and scope_limits;
  // one without (CUDA, ROCm) leaves them all empty and answers `unsupported` for texture scopes
  // through the path the CPU test above takes.
  const devrt::Registry& registry = devrt::Registry::global();
  for (std::size_t i = 0; i < registry.size(); ++i) {
    devrt::BackendRef backend = registry.at(i);
    INFO(backend.name());
    if (backend.has_capability(DEVRT_CAP_PLACEHOLDER)) continue; // a plugin not loaded: no table yet
    const devrt_backend_table* table = backend.table();
    const bool textures = DEVRT_BACKEND_TABLE_HAS(table, texture_allocate);
    CHECK(DEVRT_BACKEND_TABLE_HAS(table, texture_free) == textures);
    CHECK(DEVRT_BACKEND_TABLE_HAS(table, texture_copy) == textures);
    CHECK(backend.has_textures() == textures);
    if (textures) CHECK(DEVRT_BACKEND_TABLE_HAS(table, scope_limits));
    if (backend.has_capability(DEVRT_CAP_TEXTURE_ARGUMENTS)) CHECK(textures);
    if (!textures && DEVRT_BACKEND_TABLE_HAS(table, texture_view)) FAIL("texture_view without textures");
  }
}
