#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh SOURCE_ROOT BACKEND...
# Builds test/consumers/subproject with devrt as its subproject (plain link_with, as Meson does
# it) and runs it: every backend enabled in the subproject must be registered.
set -eu
root=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project/subprojects/devrt"
cp "$root/test/consumers/consumer.cpp" "$root/test/consumers/subproject/meson.build" \
  "$root/test/consumers/subproject/meson_options.txt" "$work/project/"
(cd "$root" && cp -r meson.build meson_options.txt include src python "$work/project/subprojects/devrt/")

options=""
for name in "$@"; do
  case "$name" in cpu) ;; *) options="$options,$name=enabled" ;; esac
done
# Unoptimised, and devrt in unity mode: the test is the embedding, and -O2 would double its compile
# time, one unit per source double it again.
meson setup "$work/build" "$work/project" --force-fallback-for=devrt --buildtype=debug -Dunity=subprojects \
  "-Ddevrt_options=tests=disabled,bench=disabled$options" >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log"; exit 1; }
# The consumer and what it links, not devrt's own tools, C library and Python module.
ninja -C "$work/build" consumer >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/consumer" "$@"
