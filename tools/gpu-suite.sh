#!/bin/sh
# The GPU suite, for a machine with an NVIDIA GPU (the H200 the device tool lends): builds devrt
# in release with -Dcuda=enabled, runs the Meson suite `gpu` (CUDA conformance incl. kernels,
# cuda_host, NVRTC, image checks) with DEVRT_REQUIRE_GPU=1 so that a missing device fails instead
# of skipping, then the CUDA and kernel benchmarks, and prints bench/report.py's ratios.
# Results go to ${OUT:-build-gpu/results}: test log, benchmark JSON, report.txt, nvidia-smi.
# Needs meson, ninja, g++, Catch2, Google Benchmark and the CUDA Toolkit on that machine; with
# -n it only runs an existing build-gpu (for example one carried from the build machine).
set -u
cd "$(dirname "$0")/.."
build=build-gpu
results=${OUT:-$build/results}
mkdir -p "$results"
if [ "${1:-}" != "-n" ]; then
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" --buildtype=release -Dcuda=enabled -Dopencl=auto -Dvulkan=auto >"$results/setup.log" 2>&1 ||
      { tail -30 "$results/setup.log"; exit 1; }
  fi
  ninja -C "$build" >"$results/build.log" 2>&1 || { tail -30 "$results/build.log"; exit 1; }
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; date -u; } >"$results/machine.txt"
cat "$results/machine.txt"
"$build/tools/devrt-info" >"$results/devrt-info.txt" 2>&1
grep -A3 "backend cuda" "$results/devrt-info.txt"
DEVRT_REQUIRE_GPU=1 meson test -C "$build" --no-rebuild --suite gpu --print-errorlogs >"$results/gpu-tests.log" 2>&1
status=$?
tail -15 "$results/gpu-tests.log"
for b in cuda kernels; do
  [ -x "$build/bench/bench-$b" ] || continue
  "$build/bench/bench-$b" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out_format=json --benchmark_out="$results/bench-$b.json" >"$results/bench-$b.txt" 2>&1
done
python3 bench/report.py "$results"/bench-*.json | tee "$results/report.txt"
exit $status
