#!/bin/sh
# With the OpenCL and Vulkan loaders pointed at an empty driver directory, both backends must say
# "unavailable" with the reason, devrt-info must still work, and the conformance suite must skip
# (exit 77) with that reason. Usage: no_driver.sh <devrt-info> <test-conformance> <backends...>
set -u
info=$1; conformance=$2; shift 2
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
    *) continue ;;
  esac
  check "devrt-info reports $backend unavailable" "$out" "backend $backend (device kind $backend): unavailable: $backend availability: $reason"
  skip=$(DEVRT_CONFORMANCE_BACKEND=$backend "$conformance" 2>&1)
  status=$?
  [ $status -eq 77 ] || { echo "FAIL: conformance-$backend exited $status, not 77 (skip)"; failures=$((failures + 1)); }
  check "conformance-$backend skips with the reason" "$skip" "SKIP conformance-$backend: $backend availability: $reason"
done
json=$("$info" --json 2>&1) || { echo "FAIL: devrt-info --json failed"; exit 1; }
check "devrt-info --json still lists the cpu device" "$json" '"device": "cpu:0"'
exit $failures
