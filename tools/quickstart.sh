#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fresh Debian 12 machine -> devrt built -> devrt-info --selftest over every available backend.
set -eu
cd "$(dirname "$0")/.."
# Meson compiles through ccache when it is installed (tools/install-deps.sh installs it): keep its
# cache in this checkout, so that a run is timed from nothing and builds share what they can
# (tools/run-tests.sh says why the build directory is not hashed).
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.ccache}" CCACHE_NOHASHDIR=1 CCACHE_BASEDIR="$PWD"
sh tools/install-deps.sh
# In unity mode (up to 16 sources a unit): the same program, compiled in two thirds of the time.
[ -f build/build.ninja ] || meson setup build --buildtype=release -Dunity=on -Dunity_size=16
# The selftest needs devrt-info alone (this configuration links its backends in); the tests are
# tools/run-tests.sh's.
ninja -C build tools/devrt-info
# WebGPU needs no variable: install-deps.sh installed Dawn for this user where devrt looks
# (~/.local/share/devrt/webgpu), so a new shell's devrt-info finds it too.
./build/tools/devrt-info
./build/tools/devrt-info --selftest
