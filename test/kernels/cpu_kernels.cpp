// SPDX-License-Identifier: Apache-2.0
// The conformance kernels as CPU kernels (devrt/backend/cpu_kernel.h): each call runs one block, looping
// over its threads; a barrier is the end of one loop. Built into the conformance test as a kernel
// table and, unchanged, into a shared object that the CPU backend loads with dlopen.
#include <devrt/backend/cpu_kernel.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cpu_kernels.hpp"

namespace {

// The global index of thread t of the current block in dimension d.
inline std::uint32_t global_id(const devrt_cpu_kernel_context* c, int d, std::uint32_t t) {
  return c->block_index[d] * c->block[d] + t;
}

} // namespace

extern "C" {

extern DEVRT_TEST_EXPORT const char vadd_devrt_signature[] = "buffer,buffer,buffer,int32";
DEVRT_TEST_EXPORT std::int32_t vadd(const devrt_cpu_kernel_context* c, devrt_error*) {
  const auto* a = static_cast<const float*>(devrt_cpu_arg_pointer(c, 0));
  const auto* b = static_cast<const float*>(devrt_cpu_arg_pointer(c, 1));
  auto* out = static_cast<float*>(devrt_cpu_arg_pointer(c, 2));
  auto n = static_cast<std::uint32_t>(devrt_cpu_arg_i32(c, 3));
  for (std::uint32_t t = 0; t < c->block[0]; ++t) {
    std::uint32_t i = global_id(c, 0, t);
    if (i < n) out[i] = a[i] + b[i];
  }
  return 0;
}

extern DEVRT_TEST_EXPORT const char saxpy_devrt_signature[] = "buffer,buffer,float32,int32";
DEVRT_TEST_EXPORT std::int32_t saxpy(const devrt_cpu_kernel_context* c, devrt_error*) {
  const auto* x = static_cast<const float*>(devrt_cpu_arg_pointer(c, 0));
  auto* y = static_cast<float*>(devrt_cpu_arg_pointer(c, 1));
  float alpha = devrt_cpu_arg_f32(c, 2);
  auto n = static_cast<std::uint32_t>(devrt_cpu_arg_i32(c, 3));
  for (std::uint32_t t = 0; t < c->block[0]; ++t) {
    std::uint32_t i = global_id(c, 0, t);
    if (i < n) y[i] = alpha * x[i] + y[i];
  }
  return 0;
}

extern DEVRT_TEST_EXPORT const char fill2d_devrt_signature[] = "buffer,int32,int32";
DEVRT_TEST_EXPORT std::int32_t fill2d(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* values = static_cast<float*>(devrt_cpu_arg_pointer(c, 0));
  auto width = static_cast<std::uint32_t>(devrt_cpu_arg_i32(c, 1));
  auto height = static_cast<std::uint32_t>(devrt_cpu_arg_i32(c, 2));
  for (std::uint32_t ty = 0; ty < c->block[1]; ++ty) {
    for (std::uint32_t tx = 0; tx < c->block[0]; ++tx) {
      std::uint32_t x = global_id(c, 0, tx);
      std::uint32_t y = global_id(c, 1, ty);
      if (x < width && y < height) values[y * width + x] = static_cast<float>(y * 1000 + x);
    }
  }
  return 0;
}

extern DEVRT_TEST_EXPORT const char reduce_devrt_signature[] = "buffer,buffer,int32";
DEVRT_TEST_EXPORT std::int32_t reduce(const devrt_cpu_kernel_context* c, devrt_error* err) {
  const auto* values = static_cast<const float*>(devrt_cpu_arg_pointer(c, 0));
  auto* partial = static_cast<float*>(devrt_cpu_arg_pointer(c, 1));
  auto n = static_cast<std::uint32_t>(devrt_cpu_arg_i32(c, 2));
  auto* scratch = static_cast<float*>(c->shared_memory);
  std::uint32_t block = c->block[0];
  if (scratch == nullptr || c->shared_memory_bytes < block * sizeof(float)) {
    const char reason[] = "reduce needs block * 4 bytes of shared memory";
    for (unsigned k = 0; k < sizeof reason; ++k) err->message[k] = reason[k];
    return 1;
  }
  for (std::uint32_t t = 0; t < block; ++t) {
    std::uint32_t i = global_id(c, 0, t);
    scratch[t] = i < n ? values[i] : 0.0f;
  }
  for (std::uint32_t stride = block / 2; stride > 0; stride /= 2) {
    for (std::uint32_t t = 0; t < stride; ++t) scratch[t] += scratch[t + stride];
  }
  partial[c->block_index[0]] = scratch[0];
  return 0;
}

extern DEVRT_TEST_EXPORT const char scale_devrt_signature[] = "buffer,float32,int32";
DEVRT_TEST_EXPORT std::int32_t scale(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* values = static_cast<float*>(devrt_cpu_arg_pointer(c, 0));
  float factor = devrt_cpu_arg_f32(c, 1);
  auto n = static_cast<std::uint32_t>(devrt_cpu_arg_i32(c, 2));
  for (std::uint32_t t = 0; t < c->block[0]; ++t) {
    std::uint32_t i = global_id(c, 0, t);
    if (i < n) values[i] *= factor;
  }
  return 0;
}

extern DEVRT_TEST_EXPORT const char spin_devrt_signature[] = "buffer,int32";
DEVRT_TEST_EXPORT std::int32_t spin(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* values = static_cast<float*>(devrt_cpu_arg_pointer(c, 0));
  const std::int32_t rounds = devrt_cpu_arg_i32(c, 1);
  if (global_id(c, 0, 0) != 0) return 0;
  std::uint32_t h = 1; // xorshift steps: nothing a compiler can fold
  std::memcpy(&h, values, sizeof h);
  h |= 1u;
  for (std::int32_t i = 0; i < rounds * 1024; ++i) { // 1024 steps a round, as the GPU kernels
    h ^= h << 13;
    h ^= h >> 17;
    h ^= h << 5;
  }
  values[0] = static_cast<float>(h & 0xFFFFu);
  return 0;
}

extern DEVRT_TEST_EXPORT const char power_devrt_signature[] = "buffer,buffer,buffer,int32";
DEVRT_TEST_EXPORT std::int32_t power(const devrt_cpu_kernel_context* c, devrt_error*) {
  const auto* base = static_cast<const float*>(devrt_cpu_arg_pointer(c, 0));
  const auto* exponent = static_cast<const float*>(devrt_cpu_arg_pointer(c, 1));
  auto* result = static_cast<float*>(devrt_cpu_arg_pointer(c, 2));
  auto n = static_cast<std::uint32_t>(devrt_cpu_arg_i32(c, 3));
  for (std::uint32_t t = 0; t < c->block[0]; ++t) {
    std::uint32_t i = global_id(c, 0, t);
    if (i < n) result[i] = std::pow(base[i], exponent[i]);
  }
  return 0;
}

} // extern "C"

const devrt_cpu_kernel_entry* conformance_cpu_kernels(std::size_t* count) {
  static const devrt_cpu_kernel_entry kEntries[] = {
      {"vadd", &vadd, vadd_devrt_signature},       {"saxpy", &saxpy, saxpy_devrt_signature},
      {"fill2d", &fill2d, fill2d_devrt_signature}, {"reduce", &reduce, reduce_devrt_signature},
      {"scale", &scale, scale_devrt_signature},    {"spin", &spin, spin_devrt_signature},
      {"power", &power, power_devrt_signature},
  };
  *count = sizeof kEntries / sizeof kEntries[0];
  return kEntries;
}
