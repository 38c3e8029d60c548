// SPDX-License-Identifier: Apache-2.0
// The OpenCL module of the TVM-layout test library ("cl" format: OpenCL C source), its kernels in
// TVM's argument order: buffers, then scalars; the launch's global size is grid * block.
__kernel void vadd_kernel(__global const float* restrict a, __global const float* restrict b,
                          __global float* restrict c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
__kernel void scale_kernel(__global float* restrict x, float factor, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] *= factor;
}
__kernel void sum_scalars_kernel(__global int* restrict out_values, int s0, int s1, int s2, int s3, int s4, int s5, int s6, int s7, int s8, int s9, int s10, int s11, int s12, int s13, int s14, int s15, int s16, int n) {
  int i = get_global_id(0);
  if (i < n) out_values[i] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9 + s10 + s11 + s12 + s13 + s14 + s15 + s16;
}
