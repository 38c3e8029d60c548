#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fresh Debian 12 machine -> devrt built -> devrt-info --selftest over every available backend.
set -eu
cd "$(dirname "$0")/.."
sh tools/install-deps.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release
ninja -C build
./build/tools/devrt-info
./build/tools/devrt-info --selftest
