#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer target for DEVRT_FUZZ_SECONDS (default 10) from its seed corpus.
# usage: run.sh <fuzzer> <seed corpus dir> <work dir>
set -eu
fuzzer=$1 seeds=$2 work=$3
seconds=${DEVRT_FUZZ_SECONDS:-10}
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$seeds"/* "$work/corpus/"
# libFuzzer's own failure exit code is 77, which meson reads as "skipped": a finding must fail.
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -error_exitcode=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus"
