// SPDX-License-Identifier: Apache-2.0
// TVM's vadd_kernel in its WebGPU convention: buffers at bindings 0..2, the scalars then
// packGridDimX in one uniform buffer after them.
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage, read> b : array<f32>;
@group(0) @binding(2) var<storage, read_write> c : array<f32>;
struct PODArgs { n: i32, packGridDimX: u32 }
@group(0) @binding(3) var<uniform> podArgs : PODArgs;
@compute @workgroup_size(block_x)
fn vadd_kernel(@builtin(workgroup_id) blockIdx : vec3<u32>, @builtin(num_workgroups) gridDim : vec3<u32>,
               @builtin(local_invocation_id) threadIdx : vec3<u32>) {
  let block = blockIdx.z * gridDim.x + blockIdx.x;
  if (block >= podArgs.packGridDimX) { return; }
  let i = block * block_x + threadIdx.x;
  if (i < u32(podArgs.n)) { c[i] = a[i] + b[i]; }
}
