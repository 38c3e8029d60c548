#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench-kernels never aborts: without any OpenCL or Vulkan driver it exits 0, says what it skipped
# and why, and writes JSON that bench/report.py reads; with the drivers here it measures every
# present device (a short run) and report.py prints rows for each.
# Usage: bench_kernels.sh <bench-kernels> <report.py> <python3>
set -u
bench=$1; report=$2; python=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

OCL_ICD_VENDORS=/nonexistent VK_DRIVER_FILES=/nonexistent VK_ICD_FILENAMES=/nonexistent \
  "$bench" --benchmark_out="$dir/none.json" --benchmark_out_format=json >"$dir/none.txt" 2>&1
rc=$?
cat "$dir/none.txt"
[ "$rc" -eq 0 ] || fail "bench-kernels without drivers exited $rc"
for backend in opencl vulkan; do
  grep -q "skipping $backend: .*no .* \(platform\|driver\)" "$dir/none.txt" || fail "no skip reason for $backend"
done
"$python" "$report" "$dir/none.json" >"$dir/none-report.txt" 2>&1 || fail "report.py failed on the no-driver run"
cat "$dir/none-report.txt"
grep -q "skipped" "$dir/none-report.txt" || fail "report.py does not show the skipped backends"

"$bench" --benchmark_min_time=0.001 --benchmark_filter='launch_sync|alloc_free|/1048576' \
  --benchmark_out="$dir/some.json" --benchmark_out_format=json >"$dir/some.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$dir/some.txt"; fail "bench-kernels with drivers exited $rc"; }
"$python" "$report" "$dir/some.json" >"$dir/some-report.txt" 2>&1 || fail "report.py failed"
cat "$dir/some-report.txt"
devices=$(grep -o '^device [a-z]*:[0-9]*' "$dir/some.txt" | cut -d' ' -f2)
[ -n "$devices" ] || echo "note: no OpenCL or Vulkan device here; only the no-driver run was checked"
for device in $devices; do
  rows='launch_sync/devrt launch_sync/raw write/devrt/1048576 read/raw/1048576'
  # A device without textures (WebGPU) says so in its devrt texture row; the others time them.
  textures=yes
  if grep -q "^$device/texture_write/devrt/1048576.*ERROR.*has no memory scope 'global.texture'" "$dir/some.txt"; then
    textures=no
    echo "note: $device has no textures: its texture rows are skipped with that reason"
  else
    rows="$rows texture_write/devrt/1048576 texture_read/devrt/1048576 texture_write/raw/1048576"
  fi
  for row in $rows; do
    grep -q "^$device/$row.*ERROR" "$dir/some.txt" && fail "$device/$row reported an error"
    grep -q "^$device/$row" "$dir/some.txt" || fail "$device/$row did not run"
  done
  grep -q "^$device \[.*read 1 MiB" "$dir/some-report.txt" || fail "report.py has no read row for $device"
  if [ "$textures" = yes ]; then
    grep -q "^$device \[.*texture write 1 MiB" "$dir/some-report.txt" || fail "report.py has no texture row for $device"
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "bench-kernels: ok"
