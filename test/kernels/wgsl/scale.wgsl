// SPDX-License-Identifier: Apache-2.0
// values[i] *= factor for i < n (TVM's calling convention, as vadd.wgsl).
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read_write> values : array<f32>;
struct PODArgs { factor: f32, n: i32, packGridDimX: u32 }
@group(0) @binding(1) var<uniform> podArgs : PODArgs;
@compute @workgroup_size(block_x)
fn scale(@builtin(workgroup_id) blockIdx : vec3<u32>, @builtin(local_invocation_id) threadIdx : vec3<u32>) {
  let i = blockIdx.x * block_x + threadIdx.x;
  if (i < u32(podArgs.n)) { values[i] = values[i] * podArgs.factor; }
}
