#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Stages a GPU build of the working tree for a machine with an NVIDIA GPU that has the driver,
# nvcc and python3 but none of Debian's packages and no network (the H100/H200 the device tool
# lends). Builds here (release, -Dcuda=enabled, OpenCL and Vulkan on) at the fixed path
# /tmp/devrt-gpu-lane so that Meson's absolute paths hold there too, then copies the tree, the
# build (without object files), the shared libraries the tests and benchmarks need, Debian's
# Meson, and the Vulkan/OpenCL loader packages into .gpu-lane/ (git-ignored; at most 64 MiB may
# travel with the checkout).
#
# Usage, from the project root:   [GPU_LANE_TVM_LIBRARY=gpt2-q0f16-cuda.so] tools/gpu-lane/stage.sh
# On the GPU machine, with .gpu-lane/ carried along:   bash .gpu-lane/run.sh [all|tests|bench|shell CMD]
set -eu
root=$(git rev-parse --show-toplevel)
lane=${GPU_LANE_DIR:-$root/.gpu-lane}
here=$(cd "$(dirname "$0")" && pwd)
src=/tmp/devrt-gpu-lane
mkdir -p "$src"
(cd "$root" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -xf - -C "$src"
if [ ! -f "$src/build-gpu/build.ninja" ]; then
  meson setup "$src/build-gpu" "$src" --buildtype=release -Dcuda=enabled -Dopencl=enabled -Dvulkan=enabled \
    -Dplugins=false -Dbench=enabled >/dev/null
fi
# No devrt_toolchain there: libarchive's dependency tree (ICU alone is 30 MB) is not on that
# machine, and libdevrt_c.so must load for the Python package.
meson configure "$src/build-gpu" -Dtoolchain=disabled >/dev/null
ninja -C "$src/build-gpu" >/dev/null
rm -rf "$lane"
mkdir -p "$lane/lib" "$lane/debs" "$lane/py"
cp -a "$src" "$lane/tree"
find "$lane/tree" -name '*.p' -type d -prune -exec rm -rf {} +
for l in libfmt.so.9 libbenchmark.so.1debian libbenchmark_main.so.1debian; do
  [ -e /usr/lib/x86_64-linux-gnu/$l ] && cp -L /usr/lib/x86_64-linux-gnu/$l "$lane/lib/"
done
# Dawn (tools/install-deps.sh put it in .deps/npm), for the WebGPU backend on the GPU's Vulkan.
dawn=$root/.deps/npm/node_modules/bun-webgpu-linux-x64/libwebgpu_wrapper.so
[ -f "$dawn" ] && cp "$dawn" "$lane/lib/"
cp -a /usr/lib/python3/dist-packages/mesonbuild "$lane/py/"
# A TVM-built library to run on the GPU (MLC's gpt2-q0f16-cuda.so, say: no licence, so fetched
# locally and carried, never committed).
if [ -n "${GPU_LANE_TVM_LIBRARY:-}" ]; then
  mkdir -p "$lane/tvm" && cp "$GPU_LANE_TVM_LIBRARY" "$lane/tvm/"
fi
lists=/tmp/gpu-lane-apt
mkdir -p $lists/partial
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
[ -n "$(ls $lists 2>/dev/null | grep -v partial)" ] || apt-get $o update >/dev/null
(cd "$lane/debs" && apt-get $o download libvulkan1 ocl-icd-libopencl1 vulkan-tools clinfo libwayland-client0 libx11-6 libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 \
  >/dev/null 2>&1) || echo "warning: some loader packages could not be downloaded"
cp "$here/run.sh" "$lane/run.sh"
exclude=$(git -C "$root" rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu-lane/' "$exclude" 2>/dev/null || echo '/.gpu-lane/' >>"$exclude"
echo "staged $(du -sh "$lane" | cut -f1) in $lane"
echo "on the GPU machine: bash .gpu-lane/run.sh all  (carry .gpu-lane)"
