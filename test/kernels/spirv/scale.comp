// SPDX-License-Identifier: Apache-2.0
#version 450
// values[i] *= factor for i < n.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Values { float values[]; };
layout(push_constant) uniform Params { float factor; int n; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(params.n)) values[i] *= params.factor;
}
