#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh BUILD_DIR CONSUMER_SOURCE CXX BACKEND...
# Installs the build into a scratch prefix, then builds the consumer with nothing but
# `pkg-config --cflags --libs devrt` (plain -ldevrt, no --whole-archive): once plainly and once
# with LTO and --gc-sections. Each binary must see every enabled backend.
set -eu
build=$1 source=$2 cxx=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >/dev/null
pc=$(find "$work/root" -name devrt.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: devrt.pc was not installed"; exit 1; }
[ -n "$(find "$work/root" -name libdevrt.a)" ] || { echo "FAIL: libdevrt.a was not installed"; exit 1; }
[ -f "$(find "$work/root" -path '*/devrt/devrt.hpp' | head -n 1)" ] || { echo "FAIL: headers not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
prefix=$(pkg-config --variable=prefix devrt)
flags=$(pkg-config --define-variable=prefix="$work/root$prefix" --cflags --libs devrt)
echo "pkg-config --cflags --libs devrt: $flags"
case "$flags" in *whole-archive*) echo "FAIL: .pc asks for --whole-archive"; exit 1 ;; esac

sanitize=""
if [ -n "${DEVRT_CONSUMER_SANITIZE:-}" ]; then sanitize="-fsanitize=$DEVRT_CONSUMER_SANITIZE"; fi

$cxx -std=c++20 -O2 $sanitize "$source" $flags -o "$work/plain"
"$work/plain" "$@"
$cxx -std=c++20 -Os $sanitize -flto -ffunction-sections -fdata-sections "$source" $flags -Wl,--gc-sections -o "$work/lto"
"$work/lto" "$@"
