// SPDX-License-Identifier: Apache-2.0
#version 450
// values[0] after 1024 * `rounds` dependent steps from values[0]: a kernel whose length is its
// argument (the timing tests). The steps of a round are written out, not looped: llvmpipe
// (lavapipe) ends a shader's loops after 65535 iterations in all.
#define STEP h ^= h << 13; h ^= h >> 17; h ^= h << 5;
#define STEP4 STEP STEP STEP STEP
#define STEP16 STEP4 STEP4 STEP4 STEP4
#define STEP64 STEP16 STEP16 STEP16 STEP16
#define STEP256 STEP64 STEP64 STEP64 STEP64
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Values { float values[]; };
layout(push_constant) uniform Params { int rounds; } params;
void main() {
  if (gl_GlobalInvocationID.x != 0) return;
  uint h = floatBitsToUint(values[0]) | 1u; // xorshift steps: nothing a compiler can fold
  for (int round = 0; round < params.rounds; ++round) {
    STEP256 STEP256 STEP256 STEP256
  }
  values[0] = float(h & 0xFFFFu);
}
