#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh SOURCE EXPECTED INCLUDE_DIR... -- COMPILER ARGS...
# SOURCE compiled with -DDEVRT_EXPECT_OK must compile; without it, it must fail with a diagnostic
# holding every comma-separated part of EXPECTED (so the test fails if the check stops catching
# the mistake, or stops saying what it is).
set -u
source=$1; expected=$2; shift 2
includes=""
while [ "$1" != "--" ]; do includes="$includes -I$1"; shift; done
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if ! "$@" -std=c++20 -fsyntax-only $includes -DDEVRT_EXPECT_OK "$source" >"$log" 2>&1; then
  echo "FAIL: the correct variant of $source does not compile:"; cat "$log"; exit 1
fi
if "$@" -std=c++20 -fsyntax-only $includes "$source" >"$log" 2>&1; then
  echo "FAIL: the mistake in $source compiled"; exit 1
fi
old_ifs=$IFS
IFS=,
for part in $expected; do
  if ! grep -q -- "$part" "$log"; then
    echo "FAIL: the diagnostic does not say \"$part\":"; cat "$log"; exit 1
  fi
done
IFS=$old_ifs
echo "PASS: $source rejected with:"
grep -m 3 -E "error" "$log"
