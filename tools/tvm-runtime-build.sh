#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds TVM's own runtime (libtvm_runtime.so, Vulkan on, no compiler) of the era MLC's model
# libraries were built with, to run the same library beside devrt (tools/tvm-runtime-gpt2.cc,
# docs/benchmarks.md). Nothing of TVM enters this repository: the sources come from git
# repositories given on the command line (the fetch tool's mirrors), the build goes to a cache
# outside the tree. Needs cmake, libvulkan-dev, spirv-headers and spirv-tools (apt).
#
# usage: tvm-runtime-build.sh TVM_GIT DMLC_CORE_GIT DLPACK_GIT [TAG]   (TAG: v0.19.0)
# prints the build directory (libtvm_runtime.so) and the source directory (include/) on its last
# two lines; a second run with the same tag reuses the build.
set -eu
tvm_git=$1 dmlc_git=$2 dlpack_git=$3 tag=${4:-v0.19.0}
cache=${DEVRT_TVM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/devrt-tvm}
src=$cache/tvm-$tag
build=$cache/build-$tag
if [ ! -f "$src/CMakeLists.txt" ]; then
  rm -rf "$src"
  mkdir -p "$src"
  git -C "$tvm_git" archive "refs/tags/$tag" | tar -xf - -C "$src"
  # The submodules the runtime needs, at the commits the tag records.
  for sub in dmlc-core:$dmlc_git dlpack:$dlpack_git; do
    name=${sub%%:*} repo=${sub#*:}
    commit=$(git -C "$tvm_git" ls-tree "refs/tags/$tag" "3rdparty/$name" | awk '{print $3}')
    rm -rf "$src/3rdparty/$name"
    mkdir -p "$src/3rdparty/$name"
    git -C "$repo" archive "$commit" | tar -xf - -C "$src/3rdparty/$name"
  done
fi
mkdir -p "$build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DUSE_VULKAN=ON -DUSE_LLVM=OFF -DUSE_LIBBACKTRACE=OFF \
    -DUSE_OPENCL=OFF -DUSE_CUDA=OFF -DUSE_RPC=OFF -DUSE_GRAPH_EXECUTOR=OFF -DUSE_PROFILER=OFF \
    -DUSE_AOT_EXECUTOR=OFF -DUSE_MICRO=OFF -DUSE_RELAY_DEBUG=OFF >"$build/configure.log" 2>&1 ||
    { tail -n 30 "$build/configure.log"; exit 1; }
fi
cmake --build "$build" --target tvm_runtime -j "$(nproc)" >"$build/build.log" 2>&1 ||
  { tail -n 40 "$build/build.log"; exit 1; }
echo "$build"
echo "$src"
