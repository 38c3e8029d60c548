// SPDX-License-Identifier: Apache-2.0
#version 450
// c[i] = a[i] + b[i] for i < n. A fixed local size (64): launches must use block 64.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params { int n; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(params.n)) c[i] = a[i] + b[i];
}
