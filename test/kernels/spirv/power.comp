// SPDX-License-Identifier: Apache-2.0
#version 450
// result[i] = pow(base[i], exponent[i]) for i < n: GLSL.std.450 Pow of a computed 32-bit exponent,
// which devrt defines as C's pow for a negative or zero base (docs/tvm-libraries.md).
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Bases { float base[]; };
layout(std430, binding = 1) readonly buffer Exponents { float exponent[]; };
layout(std430, binding = 2) writeonly buffer Results { float result[]; };
layout(push_constant) uniform Params { int n; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(params.n)) result[i] = pow(base[i], exponent[i]);
}
