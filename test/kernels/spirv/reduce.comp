// SPDX-License-Identifier: Apache-2.0
#version 450
// partial[block] = sum of the block's elements, a tree reduction in shared memory with barriers.
// The block size (a power of two, at most 1024) is specialisation constant 0.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer In { float values[]; };
layout(std430, binding = 1) writeonly buffer Partial { float partial[]; };
layout(push_constant) uniform Params { int n; } params;
shared float scratch[1024];
void main() {
  uint t = gl_LocalInvocationID.x;
  uint i = gl_GlobalInvocationID.x;
  scratch[t] = i < uint(params.n) ? values[i] : 0.0;
  barrier();
  for (uint stride = gl_WorkGroupSize.x / 2u; stride > 0u; stride /= 2u) {
    if (t < stride) scratch[t] += scratch[t + stride];
    barrier();
  }
  if (t == 0u) partial[gl_WorkGroupID.x] = scratch[0];
}
