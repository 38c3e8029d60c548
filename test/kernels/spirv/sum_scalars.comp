// SPDX-License-Identifier: Apache-2.0
#version 450
// TVM's sum_scalars_kernel (test/tvm/): 18 scalars take 144 bytes of 8-byte slots, past TVM's
// 128-byte push-constant budget, so TVM's code generator puts them in a uniform buffer at the
// binding after the buffers and sets the shader's kUseUBO flag. The fault sweep launches it too:
// the Vulkan backend's uniform-buffer pool under every driver fault.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { int out_values[]; };
layout(std140, set = 0, binding = 1) uniform Args {
  layout(offset = 0) int s0;
  layout(offset = 8) int s1;
  layout(offset = 16) int s2;
  layout(offset = 24) int s3;
  layout(offset = 32) int s4;
  layout(offset = 40) int s5;
  layout(offset = 48) int s6;
  layout(offset = 56) int s7;
  layout(offset = 64) int s8;
  layout(offset = 72) int s9;
  layout(offset = 80) int s10;
  layout(offset = 88) int s11;
  layout(offset = 96) int s12;
  layout(offset = 104) int s13;
  layout(offset = 112) int s14;
  layout(offset = 120) int s15;
  layout(offset = 128) int s16;
  layout(offset = 136) int n;
} args;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(args.n)) out_values[i] = args.s0 + args.s1 + args.s2 + args.s3 + args.s4 + args.s5 + args.s6 + args.s7 + args.s8 + args.s9 + args.s10 + args.s11 + args.s12 + args.s13 + args.s14 + args.s15 + args.s16;
}
