// SPDX-License-Identifier: Apache-2.0
// Memory scopes on every device: the backends with textures (OpenCL on devices with image
// support) allocate, copy in every direction and read them in a kernel; every other backend
// answers `unsupported` naming the scope and the device.
#include "conformance.hpp"

#include <cstdint>
#include <cstring>
#include <string>

using devrt::DataType;
using devrt::DataTypeCode;
using devrt::Device;
using devrt::ErrorCode;
using devrt::MemoryScope;
using devrt::Tensor;

namespace {

constexpr MemoryScope kTextureScopes[] = {MemoryScope::texture, MemoryScope::texture_nhwc, MemoryScope::texture_weight};

devrt::TensorOptions in_scope(MemoryScope scope, devrt::TextureLayout layout = devrt::TextureLayout::image_array) {
  devrt::TensorOptions options;
  options.scope = scope;
  options.texture_layout = layout;
  return options;
}

// Values whose bytes differ element by element, for any texel type.
template <class T>
std::vector<T> values_of(std::size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * 7 + seed) % 120);
  return v;
}

template <class T>
Tensor host_tensor(std::span<const std::int64_t> shape, DataType dtype, const std::vector<T>& values) {
  devrt::Result<Tensor> t = Tensor::empty(shape, dtype);
  REQUIRE(t.ok());
  std::memcpy(t->host_data(), values.data(), values.size() * sizeof(T));
  return std::move(t).value();
}

template <class T>
std::vector<T> host_values(const Tensor& t) {
  devrt::Result<Tensor> host = t.to(devrt::kHostDevice);
  REQUIRE(host.ok());
  std::vector<T> out(static_cast<std::size_t>(host->numel()));
  std::memcpy(out.data(), host->host_data(), out.size() * sizeof(T));
  return out;
}

// A texture of `shape` filled from the host, copied texture -> texture, -> a device buffer tensor,
// -> host; and a device buffer tensor copied into a texture; every path must give the values back.
template <class T>
void round_trip(Device device, MemoryScope scope, std::span<const std::int64_t> shape, DataType dtype,
                devrt::TextureLayout layout = devrt::TextureLayout::image_array) {
  INFO(devrt::to_string(scope) << " " << devrt::to_string(dtype) << " " << devrt::to_string(layout));
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  const std::vector<T> values = values_of<T>(n, static_cast<unsigned>(scope));
  Tensor host = host_tensor(shape, dtype, values);

  devrt::Result<Tensor> texture = Tensor::empty(shape, dtype, device, in_scope(scope, layout));
  REQUIRE(texture.ok());
  CHECK(texture->scope() == scope);
  REQUIRE(texture->copy_from(host).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  CHECK(host_values<T>(*texture) == values);

  devrt::Result<Tensor> other = Tensor::empty(shape, dtype, device, in_scope(scope, layout));
  REQUIRE(other.ok());
  REQUIRE(other->copy_from(*texture).ok());
  devrt::Result<Tensor> linear = Tensor::empty(shape, dtype, device);
  REQUIRE(linear.ok());
  REQUIRE(linear->copy_from(*other).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  CHECK(host_values<T>(*linear) == values);

  // A device buffer into a fresh texture (clEnqueueCopyBufferToImage and its kin).
  devrt::Result<Tensor> again = Tensor::empty(shape, dtype, device, in_scope(scope, layout));
  REQUIRE(again.ok());
  REQUIRE(again->copy_from(*linear).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  CHECK(host_values<T>(*again) == values);
}

// The device's global.texture limits; when it has none, a skip that says why.
devrt::Result<devrt::ScopeLimits> texture_limits(Device device) {
  devrt::Result<devrt::ScopeLimits> limits = devrt::scope_limits(device, MemoryScope::texture);
  if (!limits.ok()) CONFORMANCE_SKIP(devrt::to_string(device) << ": " << limits.status().message());
  return limits;
}

// An OpenCL kernel as TVM <= 0.22 writes one: an image2d_t read with a sampler, its texels written
// into a buffer.
constexpr std::string_view kReadTexture2d = R"(
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
__kernel void read_texture(__read_only image2d_t texture, __global float4* out, int width) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  out[y * width + x] = read_imagef(texture, nearest, (int2)(x, y)) * 2.0f;
}
)";

// And as TVM main writes one (apache/tvm#18523): an image2d_array_t read with an int4 coordinate
// (x, y, layer, 0), the layer from the third grid axis.
constexpr std::string_view kReadTextureArray = R"(
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
__kernel void read_texture(__read_only image2d_array_t texture, __global float4* out, int width, int height) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  int layer = get_global_id(2);
  out[(layer * height + y) * width + x] = read_imagef(texture, nearest, (int4)(x, y, layer, 0)) * 2.0f;
}
)";

// `shape` (a float32 texture of `layout`) filled from the host, read by `source`'s kernel over
// `grid` blocks of `block` texels, each texel doubled into a buffer in the tensor's order.
void read_in_kernel(Device device, std::string_view source, std::span<const std::int64_t> shape,
                    devrt::TextureLayout layout, const devrt::LaunchConfig& config,
                    std::span<const std::int32_t> sizes) {
  INFO(devrt::to_string(layout));
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  const std::vector<float> values = values_of<float>(n, 3);
  Tensor host = host_tensor(shape, DataType::float32(), values);
  devrt::Result<Tensor> texture =
      Tensor::empty(shape, DataType::float32(), device, in_scope(MemoryScope::texture, layout));
  REQUIRE(texture.ok());
  REQUIRE(texture->copy_from(host).ok());
  devrt::Result<Tensor> out = Tensor::empty(shape, DataType::float32(), device);
  REQUIRE(out.ok());

  devrt::Result<devrt::Module> module = devrt::Module::load(device, devrt::ModuleFormat::opencl_c, source);
  REQUIRE(module.ok());
  devrt::Result<devrt::Function> function = module->function("read_texture");
  REQUIRE(function.ok());
  std::vector<devrt::KernelArg> args{devrt::KernelArg::texture(*texture), devrt::KernelArg(out->storage_span())};
  for (std::int32_t size : sizes) args.emplace_back(size);
  REQUIRE(function->launch(config, args).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  std::vector<float> expected = values;
  for (float& v : expected) v *= 2.0f;
  CHECK(host_values<float>(*out) == expected);

  // A buffer where the image goes, and a texture where a buffer goes, are refused by name.
  std::swap(args[0], args[1]);
  devrt::Status refused = function->launch(config, args);
  CHECK(refused.code() == ErrorCode::invalid_argument);
  CHECK(conformance::contains(refused.message(), "texture"));
}

void read_in_kernels(Device device) {
  // TVM <= 0.22: [3, 5, 4] in global.texture is 3 rows of 5 texels of a 2-D image.
  const std::int64_t flat[] = {3, 5, 4};
  const std::int32_t flat_sizes[] = {5};
  read_in_kernel(device, kReadTexture2d, flat, devrt::TextureLayout::image2d, {.grid = {1, 3}, .block = {5, 1}},
                 flat_sizes);
  // TVM main: [2, 3, 4, 5, 4] is 6 layers of 4 rows of 5 texels; [3, 5, 4] one layer of 3 x 5.
  const std::int64_t activation[] = {2, 3, 4, 5, 4};
  const std::int32_t activation_sizes[] = {5, 4};
  read_in_kernel(device, kReadTextureArray, activation, devrt::TextureLayout::image_array,
                 {.grid = {1, 4, 6}, .block = {5, 1, 1}}, activation_sizes);
  const std::int32_t one_layer_sizes[] = {5, 3};
  read_in_kernel(device, kReadTextureArray, flat, devrt::TextureLayout::image_array,
                 {.grid = {1, 3, 1}, .block = {5, 1, 1}}, one_layer_sizes);
}

// The shapes of TVM's own texture tests, in the layout TVM main gives them: texture_copy_test.cc
// ([16, 16, 4], its pool [32, 32, 4]), test_texture_nd.py's copies of a [256, 1024] matrix as
// [256, 1024 / lanes, lanes] for 64- and 128-bit channels, and the Adreno conv2d tests' NCHW4c
// activations and OIHW4o weights.
void tvm_shapes(Device device, const devrt::ScopeLimits& limits) {
  const DataType i8{DataTypeCode::signed_int, 8, 1};
  const DataType i16{DataTypeCode::signed_int, 16, 1};
  const DataType i32{DataTypeCode::signed_int, 32, 1};
  const DataType f16{DataTypeCode::floating, 16, 1};
  const std::int64_t copy[] = {16, 16, 4};
  const std::int64_t pool[] = {32, 32, 4};
  round_trip<float>(device, MemoryScope::texture, copy, DataType::float32());
  round_trip<float>(device, MemoryScope::texture, pool, DataType::float32());
  // 128-bit channels: lanes 16 of int8, 8 of int16, 4 of int32 and float32.
  const std::int64_t int8_128[] = {256, 64, 16};
  const std::int64_t int16_128[] = {256, 128, 8};
  const std::int64_t wide_128[] = {256, 256, 4};
  round_trip<std::int8_t>(device, MemoryScope::texture, int8_128, i8);
  round_trip<std::int16_t>(device, MemoryScope::texture, int16_128, i16);
  round_trip<std::int32_t>(device, MemoryScope::texture, wide_128, i32);
  round_trip<float>(device, MemoryScope::texture, wide_128, DataType::float32());
  // Adreno conv2d: x (2, 64, 56, 56) as NCHW4c, w (32, 64, 3, 3) as OIHW4o; x (2, 16, 28, 28).
  const std::int64_t conv_x[] = {2, 16, 56, 56, 4};
  const std::int64_t conv_w[] = {8, 64, 3, 3, 4};
  const std::int64_t small_x[] = {2, 4, 28, 28, 4};
  const std::int64_t small_w[] = {1, 16, 3, 3, 4};
  round_trip<float>(device, MemoryScope::texture, conv_x, DataType::float32());
  round_trip<float>(device, MemoryScope::texture_weight, conv_w, DataType::float32());
  round_trip<float>(device, MemoryScope::texture, small_x, DataType::float32());
  round_trip<float>(device, MemoryScope::texture_weight, small_w, DataType::float32());
  // 64-bit channels are float16 texels: lanes 8 of int8, 4 of int16 and float16, 2 of int32.
  if (!limits.half_texels) {
    CONFORMANCE_SKIP("64-bit texel packs on " << devrt::to_string(device) << ": no float16 texels");
    return;
  }
  const std::int64_t int8_64[] = {256, 128, 8};
  const std::int64_t int32_64[] = {256, 512, 2};
  round_trip<std::int8_t>(device, MemoryScope::texture, int8_64, i8);
  round_trip<std::int16_t>(device, MemoryScope::texture, wide_128, i16);
  round_trip<std::uint16_t>(device, MemoryScope::texture, wide_128, f16);
  round_trip<std::int32_t>(device, MemoryScope::texture, int32_64, i32);
}

// The compact rows of a float32 texture of `layers` x `rows` x `width` texels that lies in
// `memory` at `pitch`.
std::vector<float> rows_in(const std::vector<float>& memory, Tensor::TexturePitch pitch, std::size_t layers,
                           std::size_t rows, std::size_t width) {
  std::vector<float> out(layers * rows * width * 4);
  const auto* bytes = reinterpret_cast<const std::byte*>(memory.data());
  for (std::size_t layer = 0; layer < layers; ++layer) {
    for (std::size_t row = 0; row < rows; ++row) {
      std::memcpy(out.data() + (layer * rows + row) * width * 4, bytes + layer * pitch.layer + row * pitch.row,
                  width * 4 * sizeof(float));
    }
  }
  return out;
}

// Textures over a Buffer tensor's memory (Tensor::as_texture), where the device makes them: the
// texture's rows lie in the buffer at texture_pitch(), a second texture over the same buffer
// writes the same memory and the first reads it, the texture keeps the buffer alive, and what
// cannot work is refused by name.
void textures_over_buffers(Device device) {
  const std::int64_t shape[] = {2, 3, 5, 4}; // 2 layers of 3 rows of 5 texels
  devrt::Result<Tensor> linear = Tensor::empty({4096}, DataType::float32(), device);
  REQUIRE(linear.ok());
  devrt::Result<Tensor> texture = linear->as_texture(shape, DataType::float32(), in_scope(MemoryScope::texture));
  if (texture.status().code() == ErrorCode::unsupported) {
    CHECK((conformance::contains(texture.status().message(), "over buffers") ||
           conformance::contains(texture.status().message(), "over a buffer")));
    CONFORMANCE_SKIP("textures over buffers on " << devrt::to_string(device) << ": " << texture.status().message());
    return;
  }
  REQUIRE(texture.ok());
  const Tensor::TexturePitch pitch = texture->texture_pitch();
  CHECK(pitch.row >= 5 * 16);
  CHECK(pitch.layer >= 3 * pitch.row);
  CHECK(linear->texture_pitch().row == 0);
  const std::vector<float> values = values_of<float>(120, 5);
  REQUIRE(texture->copy_from_host(values.data(), values.size() * sizeof(float)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  CHECK(host_values<float>(*texture) == values);
  CHECK(rows_in(host_values<float>(*linear), pitch, 2, 3, 5) == values);
  // Another texture over the same memory (a planner's reuse), one layer of 6 rows of 5 texels: its
  // writes land in the buffer at its own pitch, and the first texture reads the buffer as it is.
  const std::int64_t other_shape[] = {6, 5, 4};
  devrt::Result<Tensor> other = linear->as_texture(other_shape, DataType::float32(),
                                                   in_scope(MemoryScope::texture, devrt::TextureLayout::image2d));
  REQUIRE(other.ok());
  const std::vector<float> again = values_of<float>(120, 9);
  REQUIRE(other->copy_from_host(again.data(), again.size() * sizeof(float)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  const std::vector<float> memory = host_values<float>(*linear);
  CHECK(rows_in(memory, other->texture_pitch(), 1, 6, 5) == again);
  CHECK(host_values<float>(*texture) == rows_in(memory, pitch, 2, 3, 5));
  CHECK(host_values<float>(*texture) != values);
  // The texture keeps the buffer's memory: dropping the tensor leaves it readable.
  *linear = Tensor();
  CHECK(host_values<float>(*other) == again);

  // Refusals, each naming what is wrong.
  devrt::Result<Tensor> small = Tensor::empty({16}, DataType::float32(), device);
  REQUIRE(small.ok());
  devrt::Result<Tensor> too_big = small->as_texture(shape, DataType::float32(), in_scope(MemoryScope::texture));
  CHECK(too_big.status().code() == ErrorCode::invalid_argument);
  CHECK(conformance::contains(too_big.status().message(), "bytes"));
  devrt::Result<Tensor> not_texture = small->as_texture(shape, DataType::float32(), in_scope(MemoryScope::global));
  CHECK(not_texture.status().code() == ErrorCode::invalid_argument);
  devrt::Result<Tensor> of_texture = texture->as_texture(shape, DataType::float32(), in_scope(MemoryScope::texture));
  CHECK(of_texture.status().code() == ErrorCode::invalid_argument);
  CHECK(conformance::contains(of_texture.status().message(), "not in global memory"));
  devrt::Result<Tensor> big = Tensor::empty({64, 64}, DataType::float32(), device);
  REQUIRE(big.ok());
  devrt::Result<Tensor> strided = big->slice(1, 0, 32);
  REQUIRE(strided.ok());
  CHECK(strided->as_texture(shape, DataType::float32(), in_scope(MemoryScope::texture)).status().code() ==
        ErrorCode::invalid_argument);
  devrt::Result<Tensor> offset = big->slice(0, 1, 64);
  REQUIRE(offset.ok());
  devrt::Result<Tensor> misaligned = offset->as_texture(shape, DataType::float32(), in_scope(MemoryScope::texture));
  if (!misaligned.ok()) {
    CHECK(misaligned.status().code() == ErrorCode::invalid_argument);
    CHECK(conformance::contains(misaligned.status().message(), "byte 256"));
  }
}

} // namespace

TEST_CASE("texture scopes: limits, or unsupported naming scope and device", "[conformance][scope]") {
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    REQUIRE(devrt::scope_limits(device, MemoryScope::global).ok());
    for (MemoryScope scope : kTextureScopes) {
      devrt::Result<devrt::ScopeLimits> limits = devrt::scope_limits(device, scope);
      if (limits.ok()) {
        CHECK(conformance::backend().has_textures());
        CHECK(limits->scope == scope);
        CHECK(limits->max_width >= 2048); // OpenCL's minimum for image2d
        CHECK(limits->max_height >= 2048);
        continue;
      }
      // A backend that declares textures (the texture functions in its table) lacks them only on
      // a device without images.
      if (conformance::backend().has_textures()) {
        CHECK((conformance::contains(limits.status().message(), "no image support") ||
               conformance::contains(limits.status().message(), "storage images")));
      }
      CHECK(limits.status().code() == ErrorCode::unsupported);
      CHECK(conformance::contains(limits.status().message(), devrt::to_string(device)));
      CHECK(conformance::contains(limits.status().message(), devrt::to_string(scope)));
      devrt::Result<Tensor> tensor = Tensor::empty({2, 4}, DataType::float32(), device, in_scope(scope));
      REQUIRE_FALSE(tensor.ok());
      CHECK(tensor.status().code() == ErrorCode::unsupported);
    }
    devrt::Result<devrt::ScopeLimits> vtcm = devrt::scope_limits(device, MemoryScope::vtcm);
    CHECK(vtcm.status().code() == ErrorCode::unsupported);
  }
}

TEST_CASE("textures round trip in every scope and texel type", "[conformance][scope]") {
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    devrt::Result<devrt::ScopeLimits> limits = texture_limits(device);
    if (!limits.ok()) continue;
    const std::int64_t activation[] = {2, 3, 4, 5, 4};
    const std::int64_t weight[] = {4, 3, 2, 2, 4};
    const std::int64_t nhwc[] = {1, 3, 5, 2, 4};
    round_trip<float>(device, MemoryScope::texture, activation, DataType::float32());
    round_trip<float>(device, MemoryScope::texture_weight, weight, DataType::float32());
    round_trip<float>(device, MemoryScope::texture_nhwc, nhwc, DataType::float32());
    round_trip<std::int32_t>(device, MemoryScope::texture, activation, DataType{DataTypeCode::signed_int, 32, 1});
    round_trip<std::uint8_t>(device, MemoryScope::texture, activation, DataType{DataTypeCode::unsigned_int, 8, 1});
    round_trip<std::int16_t>(device, MemoryScope::texture_weight, weight, DataType{DataTypeCode::signed_int, 16, 1});
    // TVM <= 0.22's 2-D images, by name.
    constexpr devrt::TextureLayout kFlat = devrt::TextureLayout::image2d;
    round_trip<float>(device, MemoryScope::texture, activation, DataType::float32(), kFlat);
    round_trip<float>(device, MemoryScope::texture_weight, weight, DataType::float32(), kFlat);
    round_trip<std::uint8_t>(device, MemoryScope::texture_nhwc, nhwc, DataType{DataTypeCode::unsigned_int, 8, 1},
                             kFlat);
    tvm_shapes(device, *limits);
    // Copies in bands (Vulkan's staging ring: DEVRT_VULKAN_STAGING_CHUNK=16384 in the staging run):
    // bands of rows that end a layer, cover whole layers and start the next; rows of 17,600 bytes
    // in pieces; several whole layers in one band.
    const std::int64_t across_layers[] = {5, 7, 80, 4};
    const std::int64_t wide_rows[] = {1, 3, 1100, 4};
    const std::int64_t thin_layers[] = {8, 2, 320, 4};
    round_trip<float>(device, MemoryScope::texture, across_layers, DataType::float32());
    round_trip<float>(device, MemoryScope::texture, wide_rows, DataType::float32());
    round_trip<std::uint8_t>(device, MemoryScope::texture, thin_layers, DataType{DataTypeCode::unsigned_int, 8, 1});
    // Rows as many as the device's image height, in layers: an image array; the same rows as one
    // 2-D image pass the height.
    if (limits->max_layers >= 2) {
      const auto rows = static_cast<std::int64_t>(limits->max_height);
      const std::int64_t tall[] = {2, rows, 1, 4};
      const std::int64_t tall_nhwc[] = {2, rows, 1, 1, 4};
      round_trip<float>(device, MemoryScope::texture, tall, DataType::float32());
      round_trip<std::int16_t>(device, MemoryScope::texture_nhwc, tall_nhwc, DataType{DataTypeCode::signed_int, 16, 1});
      CHECK(Tensor::empty(tall, DataType::float32(), device, in_scope(MemoryScope::texture, kFlat)).status().code() ==
            ErrorCode::out_of_range);
    } else {
      CONFORMANCE_SKIP("image arrays: " << devrt::to_string(device) << " has none");
    }
    if (limits->half_texels) {
      round_trip<std::uint16_t>(device, MemoryScope::texture, activation, DataType{DataTypeCode::floating, 16, 1});
    } else {
      CONFORMANCE_SKIP("float16 texels: " << devrt::to_string(device) << " lists no CL_RGBA/CL_HALF_FLOAT images");
    }
    // Across devices: a texture to and from every present device, through the host.
    for (const Device other : conformance::all_present_devices()) {
      INFO(devrt::to_string(device) << " <-> " << devrt::to_string(other));
      const std::vector<float> values = values_of<float>(480, 11);
      Tensor host = host_tensor(activation, DataType::float32(), values);
      devrt::Result<Tensor> there = host.to(other);
      REQUIRE(there.ok());
      devrt::Result<Tensor> texture =
          Tensor::empty(activation, DataType::float32(), device, in_scope(MemoryScope::texture));
      REQUIRE(texture.ok());
      REQUIRE(texture->copy_from(*there).ok());
      devrt::Result<Tensor> back = Tensor::empty(activation, DataType::float32(), other);
      REQUIRE(back.ok());
      REQUIRE(back->copy_from(*texture).ok());
      REQUIRE(devrt::synchronize(devrt::current_stream(other)).ok());
      CHECK(host_values<float>(*back) == values);
    }
  }
}

TEST_CASE("textures over buffers share the buffer's memory, or are refused naming why", "[conformance][scope]") {
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    devrt::Result<devrt::ScopeLimits> limits = texture_limits(device);
    if (!limits.ok()) {
      devrt::Result<Tensor> linear = Tensor::empty({64}, DataType::float32(), device);
      REQUIRE(linear.ok());
      const std::int64_t shape[] = {2, 4};
      CHECK(linear->as_texture(shape, DataType::float32(), in_scope(MemoryScope::texture)).status().code() ==
            ErrorCode::unsupported);
      continue;
    }
    textures_over_buffers(device);
  }
}

TEST_CASE("textures are read by kernels, and refuse what has byte addresses", "[conformance][scope]") {
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    devrt::Result<devrt::ScopeLimits> limits = texture_limits(device);
    if (!limits.ok()) continue;
    if (conformance::backend().has_capability(DEVRT_CAP_TEXTURE_ARGUMENTS) &&
        conformance::backend().loads_module_format(DEVRT_MODULE_OPENCL_C)) {
      read_in_kernels(device);
    } else if (conformance::backend().has_capability(DEVRT_CAP_TEXTURE_ARGUMENTS)) {
      CONFORMANCE_SKIP("reading a texture in a kernel on " << devrt::to_string(device)
                                                           << ": the suite's texture kernel is OpenCL C");
    } else {
      CONFORMANCE_SKIP("reading a texture in a kernel on " << devrt::to_string(device) << ": "
                                                           << conformance::backend().name()
                                                           << " kernels take no textures (no texture_arguments)");
    }
    if (!conformance::backend().has_capability(DEVRT_CAP_TEXTURE_ARGUMENTS) &&
        conformance::backend().loads_module_format(DEVRT_MODULE_SPIRV)) {
      // A Vulkan shader takes storage buffers and scalars: a texture argument is refused by name.
      const std::string path = std::string(DEVRT_TEST_SPIRV_DIR) + "/scale.spv";
      devrt::Result<devrt::Module> module = devrt::Module::load_file(device, devrt::ModuleFormat::spirv, path.c_str());
      REQUIRE(module.ok());
      devrt::Result<devrt::Function> scale = module->function("main");
      REQUIRE(scale.ok());
      const std::int64_t small[] = {1, 64, 4};
      devrt::Result<Tensor> image = Tensor::empty(small, DataType::float32(), device, in_scope(MemoryScope::texture));
      REQUIRE(image.ok());
      const devrt::KernelArg args[] = {devrt::KernelArg::texture(*image), 2.0f, std::int32_t{64}};
      devrt::Status refused = scale->launch({.grid = {1}, .block = {64}}, args);
      CHECK(refused.code() == ErrorCode::unsupported);
      CHECK(conformance::contains(refused.message(), "is a texture"));
    }

    const std::int64_t shape[] = {2, 3, 4};
    devrt::Result<Tensor> texture = Tensor::empty(shape, DataType::float32(), device, in_scope(MemoryScope::texture));
    REQUIRE(texture.ok());
    CHECK(texture->host_data() == nullptr);
    CHECK(texture->slice(0, 0, 1).status().code() == ErrorCode::unsupported);
    CHECK(texture->reshape({6, 4}).status().code() == ErrorCode::unsupported);
    devrt::Result<DLManagedTensor*> exported = texture->to_dlpack();
    REQUIRE_FALSE(exported.ok());
    CHECK(exported.status().code() == ErrorCode::unsupported);
    CHECK(conformance::contains(exported.status().message(), "DLPack has no memory scopes"));
    CHECK(texture->to_dlpack_versioned().status().code() == ErrorCode::unsupported);

    // Shapes and types a texture cannot take, and limits it cannot pass.
    const std::int64_t no_channels[] = {2, 3, 3};
    CHECK(Tensor::empty(no_channels, DataType::float32(), device, in_scope(MemoryScope::texture)).status().code() ==
          ErrorCode::invalid_argument);
    // float64: no texel of 4 channels in TVM 0.22's layout, no pack of 4 (256 bits) in TVM main's.
    CHECK(
        Tensor::empty(shape, DataType::float64(), device, in_scope(MemoryScope::texture, devrt::TextureLayout::image2d))
            .status()
            .code() == ErrorCode::unsupported);
    devrt::Result<Tensor> no_pack = Tensor::empty(shape, DataType::float64(), device, in_scope(MemoryScope::texture));
    CHECK(no_pack.status().code() == ErrorCode::invalid_argument);
    CHECK(conformance::contains(no_pack.status().message(), "a pack of 4 float64"));
    const std::int64_t too_wide[] = {1, static_cast<std::int64_t>(limits->max_width) + 1, 4};
    devrt::Result<Tensor> wide = Tensor::empty(too_wide, DataType::float32(), device, in_scope(MemoryScope::texture));
    CHECK(wide.status().code() == ErrorCode::out_of_range);
    CHECK(conformance::contains(wide.status().message(), devrt::to_string(device)));
    devrt::TensorOptions pooled = in_scope(MemoryScope::texture);
    pooled.from_workspace = true;
    CHECK(Tensor::empty(shape, DataType::float32(), device, pooled).status().code() == ErrorCode::unsupported);
  }
}
