// SPDX-License-Identifier: Apache-2.0
// values[y * width + x] = y * 1000 + x over a 2-D grid (TVM's calling convention, as vadd.wgsl).
override block_x: u32 = 8;
override block_y: u32 = 4;
@group(0) @binding(0) var<storage, read_write> values : array<f32>;
struct PODArgs { width: i32, height: i32, packGridDimX: u32 }
@group(0) @binding(1) var<uniform> podArgs : PODArgs;
@compute @workgroup_size(block_x, block_y)
fn fill2d(@builtin(global_invocation_id) id : vec3<u32>) {
  if (id.x < u32(podArgs.width) && id.y < u32(podArgs.height)) {
    values[id.y * u32(podArgs.width) + id.x] = f32(id.y * 1000u + id.x);
  }
}
