#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh SOURCE INCLUDE_DIR... -- COMPILER ARGS...
# The complete variant must compile; the incomplete one must fail with a diagnostic naming
# devrt::Backend (so the test fails if the concept stops catching the missing operation).
set -u
source=$1; shift
includes=""
while [ "$1" != "--" ]; do includes="$includes -I$1"; shift; done
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if ! "$@" -std=c++20 -fsyntax-only $includes -DDEVRT_EXPECT_OK "$source" >"$log" 2>&1; then
  echo "FAIL: the complete backend does not compile:"; cat "$log"; exit 1
fi
if "$@" -std=c++20 -fsyntax-only $includes "$source" >"$log" 2>&1; then
  echo "FAIL: a backend without free() compiled"; exit 1
fi
if ! grep -q "devrt::Backend" "$log"; then
  echo "FAIL: the diagnostic does not name devrt::Backend:"; cat "$log"; exit 1
fi
if ! grep -q "free" "$log"; then
  echo "FAIL: the diagnostic does not name the missing operation:"; cat "$log"; exit 1
fi
echo "PASS: missing operation rejected with:"
grep -m 3 -E "devrt::Backend|free" "$log"
