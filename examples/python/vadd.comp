// SPDX-License-Identifier: Apache-2.0
// c[i] = a[i] + b[i] for i < n, as a Vulkan compute shader. Bindings 0, 1, 2 are the kernel's
// first three arguments, in order (devrt binds buffer arguments to set 0, binding = their
// position among the buffers); the scalar n is a push constant. The entry point, `main`, is the
// function's name: module["main"].
#version 450
layout(local_size_x = 64) in; // the block size launches must use: block=64
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params { int n; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(params.n)) c[i] = a[i] + b[i];
}
