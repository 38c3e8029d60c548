// SPDX-License-Identifier: Apache-2.0
// TVM's scale_kernel in its WebGPU convention.
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read_write> x : array<f32>;
struct PODArgs { factor: f32, n: i32, packGridDimX: u32 }
@group(0) @binding(1) var<uniform> podArgs : PODArgs;
@compute @workgroup_size(block_x)
fn scale_kernel(@builtin(workgroup_id) blockIdx : vec3<u32>, @builtin(num_workgroups) gridDim : vec3<u32>,
                @builtin(local_invocation_id) threadIdx : vec3<u32>) {
  let block = blockIdx.z * gridDim.x + blockIdx.x;
  if (block >= podArgs.packGridDimX) { return; }
  let i = block * block_x + threadIdx.x;
  if (i < u32(podArgs.n)) { x[i] = x[i] * podArgs.factor; }
}
