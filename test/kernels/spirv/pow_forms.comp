// SPDX-License-Identifier: Apache-2.0
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
// GLSL.std.450 Pow in every form devrt rewrites (test/backends/vulkan/spirv_pow_test.cpp validates
// the rewritten module with spirv-val): 16- and 32-bit floats, scalars and vectors of 2, 3 and 4
// lanes, computed exponents, constant ones that become multiplications (1 to 4) and constant ones
// that do not (0, 2.5, -2, 5), and an exponent converted from a constant of the other width.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Floats { float f32[]; };
layout(std430, binding = 1) buffer Halves { float16_t f16[]; };
layout(push_constant) uniform Params { float e; } params;
void main() {
  uint i = gl_GlobalInvocationID.x;
  float x = f32[i], y = f32[i + 1];
  vec2 x2 = vec2(x, y);
  vec3 x3 = vec3(x, y, x);
  vec4 x4 = vec4(x, y, x, y);
  float16_t h = f16[i], g = f16[i + 1];
  f16vec4 h4 = f16vec4(h, g, h, g);
  float sum = pow(x, y) + pow(x, params.e) + pow(x, 1.0) + pow(x, 2.0) + pow(x, 3.0) + pow(x, 4.0) +
              pow(x, 0.0) + pow(x, 2.5) + pow(x, -2.0) + pow(x, 5.0);
  sum += dot(pow(x2, x2.yx), vec2(1.0)) + dot(pow(x3, vec3(3.0)), vec3(1.0)) + dot(pow(x4, vec4(2.0, 3.0, 2.0, 3.0)), vec4(1.0));
  f32[i] = sum;
  f16[i] = pow(h, g) + pow(h, float16_t(3.0)) + pow(h, float16_t(float(params.e))) + pow(h, float16_t(0.5)) +
           dot(pow(h4, h4.wzyx), f16vec4(1.0)) + dot(pow(h4, f16vec4(float16_t(2.0))), f16vec4(1.0));
}
