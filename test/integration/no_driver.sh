#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# With the OpenCL and Vulkan loaders pointed at an empty driver directory, no libcuda.so.1 and no
# AMD GPU, every GPU backend must say "unavailable" with the root cause, devrt-info must still work
# and exit cleanly, and the conformance suite must skip (exit 77) with that reason. The CUDA
# toolkit's stub libcuda must read as "no driver" too. Nothing may be linked against a vendor
# runtime. Usage: no_driver.sh <devrt-info> <test-conformance> <cuda-stub-dir or ""> <backends...>
set -u
info=$1; conformance=$2; cuda_stubs=$3; shift 3
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
export OCL_ICD_VENDORS="$empty" OPENCL_VENDOR_PATH="$empty"
export VK_ICD_FILENAMES="$empty/none.json" VK_DRIVER_FILES="$empty/none.json"
failures=0
check() { # description, command output, expected text
  case $2 in
    *"$3"*) echo "ok: $1" ;;
    *) echo "FAIL: $1: expected '$3' in:"; echo "$2"; failures=$((failures + 1)) ;;
  esac
}
out=$("$info" 2>&1) || { echo "FAIL: devrt-info exited $? without drivers"; echo "$out"; exit 1; }
for backend in "$@"; do
  case $backend in
    opencl) reason="no OpenCL platform" ;;
    vulkan) reason="no Vulkan driver" ;;
    cuda | cuda_host) reason="no CUDA driver: libcuda.so.1: cannot open shared object file" ;;
    rocm) reason="no ROCm device" ;;
    *) continue ;;
  esac
  if [ "$backend" = cuda ] && ldconfig -p | grep -q 'libcuda.so.1 '; then
    echo "note: a CUDA driver is installed here; the no-libcuda case is not checked"
    continue
  fi
  check "devrt-info reports $backend unavailable" "$out" "backend $backend (device kind $backend): unavailable: $backend availability: $reason"
  skip=$(DEVRT_CONFORMANCE_BACKEND=$backend "$conformance" 2>&1)
  status=$?
  [ $status -eq 77 ] || { echo "FAIL: conformance-$backend exited $status, not 77 (skip)"; failures=$((failures + 1)); }
  check "conformance-$backend skips with the reason" "$skip" "SKIP conformance-$backend: $backend availability: $reason"
done
# The toolkit's stub library answers CUDA_ERROR_STUB_LIBRARY: still "no driver", never a device.
case " $* " in
  *" cuda "*)
    if [ -n "$cuda_stubs" ] && [ -f "$cuda_stubs/libcuda.so" ]; then
      ln -s "$cuda_stubs/libcuda.so" "$empty/libcuda.so.1"
      stub=$(LD_LIBRARY_PATH="$empty" "$info" 2>&1) || { echo "FAIL: devrt-info exited $? with the stub"; failures=$((failures + 1)); }
      check "the CUDA stub library reads as no driver" "$stub" "no CUDA driver: the libcuda.so.1 found is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY)"
      rm "$empty/libcuda.so.1"
    else
      echo "note: no CUDA toolkit stub library found; the stub case is not checked"
    fi ;;
esac
# No vendor runtime is a link-time dependency of anything devrt builds.
for binary in "$info" "$conformance"; do
  needed=$(readelf -d "$binary" | grep NEEDED)
  case $needed in
    *libcuda* | *libcudart* | *libnvrtc* | *libOpenCL* | *libvulkan* | *libamdhip64* | *libhsa*)
      echo "FAIL: $binary links a vendor runtime:"; echo "$needed"; failures=$((failures + 1)) ;;
    *) echo "ok: $(basename "$binary") links no vendor runtime" ;;
  esac
done
json=$("$info" --json 2>&1) || { echo "FAIL: devrt-info --json failed"; exit 1; }
check "devrt-info --json still lists the cpu device" "$json" '"device": "cpu:0"'
exit $failures
