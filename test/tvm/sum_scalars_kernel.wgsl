// SPDX-License-Identifier: Apache-2.0
// TVM's sum_scalars_kernel in its WebGPU convention: the scalars then packGridDimX in one uniform.
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read_write> out_values : array<i32>;
struct PODArgs { s0: i32, s1: i32, s2: i32, s3: i32, s4: i32, s5: i32, s6: i32, s7: i32, s8: i32, s9: i32, s10: i32, s11: i32, s12: i32, s13: i32, s14: i32, s15: i32, s16: i32, n: i32, packGridDimX: u32 }
@group(0) @binding(1) var<uniform> podArgs : PODArgs;
@compute @workgroup_size(block_x)
fn sum_scalars_kernel(@builtin(workgroup_id) blockIdx : vec3<u32>, @builtin(num_workgroups) gridDim : vec3<u32>,
                      @builtin(local_invocation_id) threadIdx : vec3<u32>) {
  let block = blockIdx.z * gridDim.x + blockIdx.x;
  if (block >= podArgs.packGridDimX) { return; }
  let i = block * block_x + threadIdx.x;
  if (i < u32(podArgs.n)) { out_values[i] = podArgs.s0 + podArgs.s1 + podArgs.s2 + podArgs.s3 + podArgs.s4 + podArgs.s5 + podArgs.s6 + podArgs.s7 + podArgs.s8 + podArgs.s9 + podArgs.s10 + podArgs.s11 + podArgs.s12 + podArgs.s13 + podArgs.s14 + podArgs.s15 + podArgs.s16; }
}
