#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# MLC's GPT-2 library through TVM's own runtime and through devrt, on the same Vulkan device, the
# same weights and tokens, in one run (docs/benchmarks.md, "The Relax VM"): builds TVM's runtime
# of the libraries' era (tools/tvm-runtime-build.sh, cached outside the tree), builds
# tools/tvm-gpt2-side-by-side.cpp against it and against this build of devrt, and runs them in
# turn (devrt, TVM, TVM, devrt), ROUNDS rounds each time (each round: prefill 8 tokens, 16 decode
# steps, every step's logits against NumPy's), printing each run's summary line.
#
# usage: tvm-runtime-compare.sh LIBRARY DUMP_DIR DEVRT_BUILD TVM_GIT DMLC_CORE_GIT DLPACK_GIT [ROUNDS]
#   DUMP_DIR: tools/tvm-gpt2-model.py LIBRARY vulkan:0 --dump DUMP_DIR
set -eu
library=$1 dump=$2 devrt_build=$3 tvm_git=$4 dmlc_git=$5 dlpack_git=$6 rounds=${7:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cxx=${CXX:-c++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
built=$(sh "$here/tvm-runtime-build.sh" "$tvm_git" "$dmlc_git" "$dlpack_git")
tvm_build=$(echo "$built" | tail -n 2 | head -n 1)
tvm_src=$(echo "$built" | tail -n 1)
$cxx -std=c++17 -O2 -DWITH_TVM_RUNTIME -I"$tvm_src/include" -I"$tvm_src/3rdparty/dlpack/include" \
  -I"$tvm_src/3rdparty/dmlc-core/include" "-DDMLC_USE_LOGGING_LIBRARY=<tvm/runtime/logging.h>" \
  "$here/tvm-gpt2-side-by-side.cpp" -L"$tvm_build" -ltvm_runtime -Wl,-rpath,"$tvm_build" -o "$work/with-tvm"
devrt_libs=$(PKG_CONFIG_PATH="$devrt_build/meson-uninstalled" pkg-config --libs devrt-uninstalled)
# shellcheck disable=SC2086 # pkg-config's words
$cxx -std=c++20 -O2 -I"$root/include" -I"$devrt_build/include" "$here/tvm-gpt2-side-by-side.cpp" $devrt_libs \
  -o "$work/with-devrt"
# Interleaved, so that the machine's drift falls on both: devrt, TVM, TVM, devrt.
"$work/with-devrt" "$dump" "$library" "$rounds" | tail -n 1
"$work/with-tvm" "$dump" "$library" "$rounds" | tail -n 1
"$work/with-tvm" "$dump" "$library" "$rounds" | tail -n 1
"$work/with-devrt" "$dump" "$library" "$rounds" | tail -n 1
