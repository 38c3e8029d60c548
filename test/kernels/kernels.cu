// SPDX-License-Identifier: Apache-2.0
// The conformance kernels in CUDA C++ (also compiled as HIP). Same semantics as kernels.cl,
// cpu_kernels.cpp and spirv/*.comp; extern "C" keeps the names unmangled.
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(const float* x, float* y, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

extern "C" __global__ void fill2d(float* values, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) values[y * width + x] = (float)(y * 1000 + x);
}

// The block's sum in dynamic shared memory (the launch's dynamic_shared_bytes).
extern "C" __global__ void reduce(const float* values, float* partial, int n) {
  extern __shared__ float scratch[];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  scratch[t] = i < n ? values[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) scratch[t] += scratch[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = scratch[0];
}

extern "C" __global__ void scale(float* values, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] *= factor;
}

// result[i] = pow(base[i], exponent[i]): CUDA's powf, defined as C's.
extern "C" __global__ void power(const float* base, const float* exponent, float* result, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) result[i] = powf(base[i], exponent[i]);
}

// values[0] after 1024 * `rounds` dependent steps: a kernel whose length is its argument.
extern "C" __global__ void spin(float* values, int rounds) {
  if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
  unsigned h = __float_as_uint(values[0]) | 1u; // xorshift steps: nothing a compiler can fold
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < 1024; ++i) {
      h ^= h << 13;
      h ^= h >> 17;
      h ^= h << 5;
    }
  }
  values[0] = static_cast<float>(h & 0xFFFFu);
}

// Does nothing: launch-overhead benchmarks.
extern "C" __global__ void empty() {}
