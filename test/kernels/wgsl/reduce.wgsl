// SPDX-License-Identifier: Apache-2.0
// partial[block] = the sum of its block's values, through workgroup memory and barriers (TVM's
// calling convention, as vadd.wgsl). The workgroup array holds the largest block, 1024.
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read> values : array<f32>;
@group(0) @binding(1) var<storage, read_write> partial : array<f32>;
struct PODArgs { n: i32, packGridDimX: u32 }
@group(0) @binding(2) var<uniform> podArgs : PODArgs;
var<workgroup> scratch : array<f32, 1024>;
@compute @workgroup_size(block_x)
fn reduce(@builtin(workgroup_id) blockIdx : vec3<u32>, @builtin(local_invocation_id) threadIdx : vec3<u32>) {
  let t = threadIdx.x;
  let i = blockIdx.x * block_x + t;
  scratch[t] = select(0.0, values[min(i, arrayLength(&values) - 1u)], i < u32(podArgs.n));
  workgroupBarrier();
  var stride = block_x / 2u;
  loop {
    if (stride == 0u) { break; }
    if (t < stride) { scratch[t] = scratch[t] + scratch[t + stride]; }
    workgroupBarrier();
    stride = stride / 2u;
  }
  if (t == 0u) { partial[blockIdx.x] = scratch[0]; }
}
