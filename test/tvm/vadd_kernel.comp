// SPDX-License-Identifier: Apache-2.0
#version 450
// TVM's vadd_kernel as its SPIR-V code generator lays it out: the buffers at bindings 0..2 of set
// 0, the scalars in a push-constant block, each in an 8-byte slot (ArgUnion64).
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params { layout(offset = 0) int n; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(params.n)) c[i] = a[i] + b[i];
}
