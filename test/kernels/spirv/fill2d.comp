// SPDX-License-Identifier: Apache-2.0
#version 450
// out[y * width + x] = y * 1000 + x over a 2-D grid.
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(std430, binding = 0) writeonly buffer Out { float values[]; };
layout(push_constant) uniform Params { int width; int height; } params;
void main() {
  uint x = gl_GlobalInvocationID.x;
  uint y = gl_GlobalInvocationID.y;
  if (x < uint(params.width) && y < uint(params.height)) values[y * uint(params.width) + x] = float(y * 1000u + x);
}
