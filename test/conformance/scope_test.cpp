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

devrt::TensorOptions in_scope(MemoryScope scope) {
  devrt::TensorOptions options;
  options.scope = scope;
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
void round_trip(Device device, MemoryScope scope, std::span<const std::int64_t> shape, DataType dtype) {
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  const std::vector<T> values = values_of<T>(n, static_cast<unsigned>(scope));
  Tensor host = host_tensor(shape, dtype, values);

  devrt::Result<Tensor> texture = Tensor::empty(shape, dtype, device, in_scope(scope));
  REQUIRE(texture.ok());
  CHECK(texture->scope() == scope);
  REQUIRE(texture->copy_from(host).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  CHECK(host_values<T>(*texture) == values);

  devrt::Result<Tensor> other = Tensor::empty(shape, dtype, device, in_scope(scope));
  REQUIRE(other.ok());
  REQUIRE(other->copy_from(*texture).ok());
  devrt::Result<Tensor> linear = Tensor::empty(shape, dtype, device);
  REQUIRE(linear.ok());
  REQUIRE(linear->copy_from(*other).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  CHECK(host_values<T>(*linear) == values);

  // A device buffer into a fresh texture (clEnqueueCopyBufferToImage and its kin).
  devrt::Result<Tensor> again = Tensor::empty(shape, dtype, device, in_scope(scope));
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

// An OpenCL kernel that reads a texture with a sampler and writes its texels into a buffer.
constexpr std::string_view kReadTexture = R"(
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
__kernel void read_texture(__read_only image2d_t texture, __global float4* out, int width) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  out[y * width + x] = read_imagef(texture, nearest, (int2)(x, y)) * 2.0f;
}
)";

void read_in_kernel(Device device) {
  const std::int64_t shape[] = {3, 5, 4}; // global.texture: 3 rows of 5 texels
  const std::vector<float> values = values_of<float>(60, 3);
  Tensor host = host_tensor(shape, DataType::float32(), values);
  devrt::Result<Tensor> texture = Tensor::empty(shape, DataType::float32(), device, in_scope(MemoryScope::texture));
  REQUIRE(texture.ok());
  REQUIRE(texture->copy_from(host).ok());
  devrt::Result<Tensor> out = Tensor::empty(shape, DataType::float32(), device);
  REQUIRE(out.ok());

  devrt::Result<devrt::Module> module = devrt::Module::load(device, devrt::ModuleFormat::opencl_c, kReadTexture);
  REQUIRE(module.ok());
  devrt::Result<devrt::Function> function = module->function("read_texture");
  REQUIRE(function.ok());
  const devrt::LaunchConfig config{.grid = {1, 3}, .block = {5, 1}};
  const devrt::KernelArg args[] = {devrt::KernelArg::texture(*texture), devrt::KernelArg(out->storage_span()),
                                   std::int32_t{5}};
  REQUIRE(function->launch(config, args).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  std::vector<float> expected = values;
  for (float& v : expected) v *= 2.0f;
  CHECK(host_values<float>(*out) == expected);

  // A buffer where the image goes, and a texture where a buffer goes, are refused by name.
  const devrt::KernelArg swapped[] = {devrt::KernelArg(out->storage_span()), devrt::KernelArg::texture(*texture),
                                      std::int32_t{5}};
  devrt::Status refused = function->launch(config, swapped);
  CHECK(refused.code() == ErrorCode::invalid_argument);
  CHECK(conformance::contains(refused.message(), "texture"));
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
    // Rows beyond the device's image height: image arrays (layers of max_height rows).
    if (limits->max_layers >= 2) {
      const auto rows = static_cast<std::int64_t>(limits->max_height);
      const std::int64_t tall[] = {2, rows, 1, 4};
      const std::int64_t tall_nhwc[] = {2, rows, 1, 1, 4};
      round_trip<float>(device, MemoryScope::texture, tall, DataType::float32());
      round_trip<std::int16_t>(device, MemoryScope::texture_nhwc, tall_nhwc, DataType{DataTypeCode::signed_int, 16, 1});
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

TEST_CASE("textures are read by kernels, and refuse what has byte addresses", "[conformance][scope]") {
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    devrt::Result<devrt::ScopeLimits> limits = texture_limits(device);
    if (!limits.ok()) continue;
    if (conformance::backend().has_capability(DEVRT_CAP_TEXTURE_ARGUMENTS) &&
        conformance::backend().loads_module_format(DEVRT_MODULE_OPENCL_C)) {
      read_in_kernel(device);
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
    CHECK(Tensor::empty(shape, DataType::float64(), device, in_scope(MemoryScope::texture)).status().code() ==
          ErrorCode::unsupported);
    const std::int64_t too_wide[] = {1, static_cast<std::int64_t>(limits->max_width) + 1, 4};
    devrt::Result<Tensor> wide = Tensor::empty(too_wide, DataType::float32(), device, in_scope(MemoryScope::texture));
    CHECK(wide.status().code() == ErrorCode::out_of_range);
    CHECK(conformance::contains(wide.status().message(), devrt::to_string(device)));
    devrt::TensorOptions pooled = in_scope(MemoryScope::texture);
    pooled.from_workspace = true;
    CHECK(Tensor::empty(shape, DataType::float32(), device, pooled).status().code() == ErrorCode::unsupported);
  }
}
