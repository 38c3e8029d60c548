// SPDX-License-Identifier: Apache-2.0
// The conformance kernels in OpenCL C 1.2 (PoCL's level). Same semantics as cpu_kernels.cpp and
// spirv/*.comp.
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}

__kernel void saxpy(__global const float* x, __global float* y, float alpha, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = alpha * x[i] + y[i];
}

__kernel void fill2d(__global float* values, int width, int height) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x < width && y < height) values[y * width + x] = (float)(y * 1000 + x);
}

// The block's sum in local memory (the dynamic shared bytes of the launch), with barriers.
__kernel void reduce(__global const float* values, __global float* partial, int n, __local float* scratch) {
  int t = get_local_id(0);
  int i = get_global_id(0);
  scratch[t] = i < n ? values[i] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (t < stride) scratch[t] += scratch[t + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) partial[get_group_id(0)] = scratch[0];
}

__kernel void scale(__global float* values, float factor, int n) {
  int i = get_global_id(0);
  if (i < n) values[i] *= factor;
}

// result[i] = pow(base[i], exponent[i]): OpenCL C's pow, defined as C's.
__kernel void power(__global const float* base, __global const float* exponent, __global float* result, int n) {
  int i = get_global_id(0);
  if (i < n) result[i] = pow(base[i], exponent[i]);
}

// values[0] after 1024 * `rounds` dependent steps: a kernel whose length is its argument.
__kernel void spin(__global float* values, int rounds) {
  if (get_global_id(0) != 0) return;
  uint h = as_uint(values[0]) | 1u; // xorshift steps: nothing a compiler can fold
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < 1024; ++i) {
      h ^= h << 13;
      h ^= h >> 17;
      h ^= h << 5;
    }
  }
  values[0] = (float)(h & 0xFFFFu);
}

// A scalar parameter declared through a typedef: the driver reports the typedef's name, so only
// the launch's clSetKernelArg can check its size (OpenCL only).
typedef int element_count;
__kernel void scale_counted(__global float* values, float factor, element_count n) {
  int i = get_global_id(0);
  if (i < n) values[i] *= factor;
}
