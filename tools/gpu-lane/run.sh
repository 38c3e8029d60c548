#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The GPU lane, on a machine with an NVIDIA GPU (see stage.sh). Modes:
#   all (default)  tests, then benchmarks
#   tests          devrt-info; the Meson suite `gpu` with DEVRT_REQUIRE_GPU=1 (a missing device
#                  fails instead of skipping); the conformance suite for cuda, cuda_host, vulkan
#                  (as is, and staged with descriptor pools) and opencl (every OpenCL device there: the
#                  NVIDIA GPU, and PoCL's CPU device, opencl:0, on the lent machines)
#                  and webgpu (Dawn on the GPU's Vulkan driver) when Dawn was staged; test-tvm
#                  (TVM-layout libraries, CUDA fixtures included); a staged TVM library's
#                  operators against NumPy (tools/tvm-gpt2-check.py on cuda:0), and a GPT-2
#                  library whole through the Relax VM (tools/tvm-gpt2-model.py against the
#                  NumPy GPT-2, examples/generate's tokens and per-token time)
#   bench          bench-cuda, bench-kernels (every device, GPUs first) and bench-tvm, bench/report.py
#   shell CMD...   CMD in the staged tree with this environment
# Results under $OUT (default /tmp/gpu-lane-out): machine.txt, gpu-tests.log, conformance.txt,
# python.log, webgpu-adapter.txt, tvm.log, tvm-gpt2.txt, tvm-gpt2-model.txt, tvm-generate.txt,
# bench-cuda.json, bench-kernels.json,
# bench-tvm.json, report.txt. Exits non-zero
# when anything failed.
set -u
lane=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpu-lane-out}
mkdir -p "$out"
# Loaders the device image lacks (the NVIDIA driver brings only its ICDs).
if ! ldconfig -p | grep -q 'libvulkan.so.1 ' || ! ldconfig -p | grep -q 'libOpenCL.so.1 '; then
  for f in "$lane"/debs/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
  ldconfig
fi
ln -sfn "$lane/tree" /tmp/devrt-gpu-lane
export LD_LIBRARY_PATH="$lane/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$lane/py${PYTHONPATH:+:$PYTHONPATH}"
meson() { python3 -c "import sys; from mesonbuild import mesonmain; sys.argv[0]='meson'; sys.exit(mesonmain.main())" "$@"; }
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
           /etc/vulkan/icd.d/nvidia_icd.json; do
  [ -f "$icd" ] && { export VK_DRIVER_FILES=$icd; break; }
done
ocl=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 \
  /usr/lib/libnvidia-opencl.so.1 2>/dev/null | head -1)
[ -n "$ocl" ] && { mkdir -p /etc/OpenCL/vendors; [ -f /etc/OpenCL/vendors/nvidia.icd ] || echo "$ocl" >/etc/OpenCL/vendors/nvidia.icd; }
b=/tmp/devrt-gpu-lane/build-gpu
mode=${1:-all}
[ $# -gt 0 ] && shift
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; date -u; } >"$out/machine.txt"
cat "$out/machine.txt"
status=0
conformance() { # label, environment assignments...
  label=$1; shift
  echo "=== conformance $label" >>"$out/conformance.txt"
  env "$@" timeout 300 "$b/test/test-conformance" -r compact >"$out/c.txt" 2>&1 || status=1
  cut -c1-2000 "$out/c.txt" >>"$out/conformance.txt"
  echo "conformance $label: $(grep -E "^(Passed|Failed|All tests|test cases|SKIP)" "$out/c.txt" | tail -1 | cut -c1-200)"
  rm -f "$out/c.txt"
}
if [ "$mode" = all ] || [ "$mode" = tests ]; then
  "$b/tools/devrt-info" >>"$out/machine.txt" 2>&1
  grep -E "^backend|^  device" "$out/machine.txt"
  # toolchain tests need libarchive's dependency tree, which the device image lacks
  DEVRT_REQUIRE_GPU=1 meson test -C "$b" --no-rebuild --suite gpu --no-suite toolchain --print-errorlogs \
    >"$out/gpu-tests.log" 2>&1 || status=1
  grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Skipped:" "$out/gpu-tests.log"
  for backend in cuda cuda_host vulkan opencl; do
    conformance "$backend" DEVRT_CONFORMANCE_BACKEND=$backend
  done
  # WebGPU on the GPU's Vulkan driver (Dawn from npm, staged in lib/): its conformance, and the
  # adapter's record for test/fixtures/ (webgpu_target.hpp's format).
  if [ -f "$lane/lib/libwebgpu_wrapper.so" ]; then
    export DEVRT_WEBGPU_LIBRARY="$lane/lib/libwebgpu_wrapper.so"
    conformance webgpu DEVRT_CONFORMANCE_BACKEND=webgpu
    "$b/test/webgpu-adapter-record" >"$out/webgpu-adapter.txt" 2>&1 || status=1
    head -3 "$out/webgpu-adapter.txt"
  fi
  conformance "vulkan (descriptor pools, never mapped)" DEVRT_CONFORMANCE_BACKEND=vulkan \
    DEVRT_VULKAN_FORCE_STAGING=1 DEVRT_VULKAN_NO_PUSH_DESCRIPTORS=1
  # The Python package on that machine's own CPython and PyTorch (with CUDA): libdevrt_c.so and
  # devrt._ext (an abi3 module of CPython's stable ABI, built here against Debian's 3.11) carried
  # from this build: devices, and DLPack with CUDA tensors both ways on torch's streams.
  export DEVRT_LIBRARY=$b/src/capi/libdevrt_c.so.0 PYTHONPATH=/tmp/devrt-gpu-lane/python:$b/python:$PYTHONPATH
  if python3 -c "import pytest" 2>/dev/null; then
    python3 -m pytest -q -rs -p no:cacheprovider /tmp/devrt-gpu-lane/test/python/test_device.py \
      /tmp/devrt-gpu-lane/test/python/test_tensor.py >"$out/python.log" 2>&1 || status=1
  else
    python3 - >"$out/python.log" 2>&1 <<'PY' || status=1
import devrt, torch
print("no pytest here: the CUDA exchange checked directly")
print(devrt.cuda(0).exist, devrt.cuda(0).compute_version, devrt.cuda(0).device_name)
source = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
tensor = devrt.from_dlpack(source)
assert tensor.device == devrt.cuda(0) and tensor.data_ptr() == source.data_ptr()
copy = devrt.empty(tensor.shape, "float32", devrt.cuda(0))
copy.copyfrom(tensor)
with torch.cuda.stream(torch.cuda.Stream()):
    assert torch.equal(torch.from_dlpack(copy), source)
print("ok: CUDA tensors both ways")
PY
  fi
  tail -n 5 "$out/python.log"
  # TVM-built libraries: the test build's fixtures (CUDA's included), then a real library when
  # stage.sh carried one (GPU_LANE_TVM_LIBRARY): its operators on the GPU against NumPy.
  "$b/test/tvm/test-tvm" >"$out/tvm.log" 2>&1 || status=1
  tail -n 2 "$out/tvm.log"
  for library in "$lane"/tvm/*.so; do
    [ -e "$library" ] || continue
    python3 /tmp/devrt-gpu-lane/tools/tvm-gpt2-check.py "$library" cuda:0 >>"$out/tvm-gpt2.txt" 2>&1 || status=1
    tail -n 1 "$out/tvm-gpt2.txt"
    # A GPT-2 library whole: its Relax VM program step by step against the NumPy GPT-2, then
    # examples/generate's tokens and per-token time on the GPU.
    case $(basename "$library") in
      gpt2-*)
        python3 /tmp/devrt-gpu-lane/tools/tvm-gpt2-model.py "$library" cuda:0 >>"$out/tvm-gpt2-model.txt" 2>&1 ||
          status=1
        tail -n 3 "$out/tvm-gpt2-model.txt"
        python3 /tmp/devrt-gpu-lane/examples/generate/generate.py "$library" cuda:0 --random-weights \
          --prompt 464,2068,7586,21831,18045,625,262,16931 --tokens 64 >>"$out/tvm-generate.txt" 2>&1 || status=1
        tail -n 3 "$out/tvm-generate.txt"
        ;;
    esac
  done
fi
if [ "$mode" = all ] || [ "$mode" = bench ]; then
  for x in cuda kernels tvm; do
    [ -x "$b/bench/bench-$x" ] || continue
    timeout 280 "$b/bench/bench-$x" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out_format=json --benchmark_out="$out/bench-$x.json" >"$out/b.txt" 2>&1 ||
      { status=1; echo "bench-$x failed: $(tail -3 "$out/b.txt")"; }
    grep "skipping" "$out/b.txt"
    rm -f "$out/b.txt"
  done
  python3 /tmp/devrt-gpu-lane/bench/report.py "$out"/bench-*.json >"$out/report.txt" 2>&1
  cat "$out/report.txt"
fi
if [ "$mode" = shell ]; then
  cd /tmp/devrt-gpu-lane && bash -c "$*"
  status=$?
fi
exit $status
