// SPDX-License-Identifier: Apache-2.0
// Kernel math that a format leaves undefined and devrt defines: pow of a negative or zero base
// (GLSL.std.450 Pow in SPIR-V, rewritten at load; OpenCL C, CUDA and the CPU kernels define it as
// C does already). The same kernel on every backend with modules, against C's pow.
#include "conformance.hpp"
#include "kernels.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

using devrt::Buffer;
using devrt::Device;

using namespace conformance_kernels; // NOLINT(google-build-using-namespace)

namespace {

// True when `got` is C's pow(base, exponent) within the formats' pow precision (OpenCL's 16 ulp,
// Vulkan's exp2(y * log2(x))): NaN where C gives NaN, the same infinity, else a relative error
// below 2^-16.
bool matches_c_pow(float base, float exponent, float got) {
  const float expected = std::pow(base, exponent);
  if (std::isnan(expected) || std::isnan(got)) return std::isnan(expected) && std::isnan(got);
  if (std::isinf(expected) || std::isinf(got)) return expected == got;
  return std::fabs(got - expected) <= std::fabs(expected) * (1.0f / 65536) + std::numeric_limits<float>::min();
}

} // namespace

TEST_CASE("pow of negative, zero and positive bases is C's pow", "[conformance][kernel]") {
  SKIP_WITHOUT_KERNELS();
  if (std::get<KernelSource>(kernel_source()) == KernelSource::wgsl) {
    CONFORMANCE_SKIP("WGSL's pow is exp2(y * log2(x)), undefined for x < 0 by the WGSL specification, and devrt "
                     "passes WGSL to the WebGPU implementation as written");
    return;
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> bases = {-inf, -3.0f, -2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, inf};
  const std::vector<float> exponents = {-3.0f, -2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f, 2.5f, 3.0f, 4.0f, 7.0f};
  std::vector<float> base, exponent;
  for (float b : bases) {
    for (float e : exponents) {
      base.push_back(b);
      exponent.push_back(e);
    }
  }
  const std::size_t n = base.size();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel power = load_kernel(device, "power");
    // SPIR-V's one Pow is rewritten (on a remote device, by its server's Vulkan backend); the
    // other formats' pow is C's already.
    devrt::Result<std::uint32_t> rewritten = power.module.rewritten_instructions();
    INFO(rewritten.status().message());
    REQUIRE(rewritten.ok());
    CHECK(*rewritten == (glsl_kernels() ? 1u : 0u));
    Buffer bases_on_device = upload_floats(device, base), exponents_on_device = upload_floats(device, exponent),
           results = upload_floats(device, std::vector<float>(n));
    devrt::Status launched =
        power.function.launch({.grid = {blocks_for(n)}, .block = {kBlock}},
                              {bases_on_device, exponents_on_device, results, static_cast<std::int32_t>(n)});
    INFO(launched.message());
    REQUIRE(launched.ok());
    std::vector<float> got = download_floats(results, n);
    int mismatches = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!matches_c_pow(base[i], exponent[i], got[i])) {
        ++mismatches;
        UNSCOPED_INFO("pow(" << base[i] << ", " << exponent[i] << ") = " << got[i] << ", C gives "
                             << std::pow(base[i], exponent[i]));
      }
    }
    CHECK(mismatches == 0);
  }
}
