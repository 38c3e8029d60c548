// SPDX-License-Identifier: Apache-2.0
#version 450
// TVM's scale_kernel: x *= factor; the float32 and int32 scalars in 8-byte slots.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform Params { layout(offset = 0) float factor; layout(offset = 8) int n; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(params.n)) x[i] *= params.factor;
}
