#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages devrt needs to build, test and benchmark, and the npm package
# that carries Dawn (the WebGPU implementation the webgpu backend is tested on) into this checkout's
# .deps/npm (ignored by git; nothing global). Idempotent.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
webgpu_package=bun-webgpu-linux-x64@0.1.7 # Dawn 29b45b55 as libwebgpu_wrapper.so (docs/webgpu.md)
packages="meson ninja-build pkg-config g++ python3 libfmt-dev libdlpack-dev catch2 libbenchmark-dev valgrind
  clang-14 libclang-rt-14-dev python3-numpy python3-pytest python3-torch python3-mesonpy python3-pip python3-venv python3-cloudpickle ccache universal-ctags python3-clang-14
  python3-setuptools python3-wheel patchelf
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo libvulkan-dev mesa-vulkan-drivers glslc spirv-tools vulkan-tools vulkan-validationlayers
  libamdhip64-dev hipcc
  gcc-arm-none-eabi picolibc-arm-none-eabi libstdc++-arm-none-eabi-picolibc libnewlib-dev qemu-system-arm qemu-user lld-14 llvm-14
  libarchive-dev libopenmpi-dev openmpi-bin libucx-dev ucx-utils libsodium-dev
  cmake spirv-headers"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 || missing="$missing npm"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ -n "$missing" ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
webgpu=$root/.deps/npm/node_modules/bun-webgpu-linux-x64/libwebgpu_wrapper.so
if [ ! -f "$webgpu" ]; then
  echo "installing: $webgpu_package (npm, into .deps/npm)"
  npm install --prefix "$root/.deps/npm" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
    "$webgpu_package" >/dev/null
fi
# ... and for this user where devrt looks by default (src/backends/webgpu/webgpu_backend.cpp):
# $XDG_DATA_HOME/devrt/webgpu when that is an absolute path, else ~/.local/share/devrt/webgpu. Every
# shell, virtual environment and subproject build of this user then finds it, wherever it runs.
case ${XDG_DATA_HOME:-} in
  /*) user_webgpu=$XDG_DATA_HOME/devrt/webgpu ;;
  *) user_webgpu=${HOME:?HOME is not set}/.local/share/devrt/webgpu ;;
esac
if ! cmp -s "$webgpu" "$user_webgpu/libwebgpu_wrapper.so"; then
  echo "installing: Dawn's libwebgpu_wrapper.so for this user, into $user_webgpu"
  mkdir -p "$user_webgpu"
  cp "$webgpu" "$user_webgpu/libwebgpu_wrapper.so.tmp" && mv "$user_webgpu/libwebgpu_wrapper.so.tmp" "$user_webgpu/libwebgpu_wrapper.so"
fi
