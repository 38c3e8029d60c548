// SPDX-License-Identifier: Apache-2.0
#version 450
// y[i] = alpha * x[i] + y[i] for i < n.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Params { float alpha; int n; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(params.n)) y[i] = params.alpha * x[i] + y[i];
}
