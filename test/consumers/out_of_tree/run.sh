#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh BUILD_DIR EXAMPLE_SOURCE_DIR DEVRT_INFO TEST_CONFORMANCE
# Installs the build into a scratch prefix, builds examples/out_of_tree_backend as its own Meson
# project against it (pkg-config only), then checks that devrt-info discovers the plugin through
# DEVRT_PLUGIN_PATH and in <binary's directory>/devrt (run directly and through a symlink from
# elsewhere: the plugin is found next to the real binary), and that the conformance suite passes
# on it.
set -eu
build=$1 example=$2 info=$3 conformance=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >/dev/null
pc=$(find "$work/root" -name devrt.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: devrt.pc was not installed"; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$pc")
mkdir "$work/pkgconfig"
sed "s|^prefix=.*|prefix=$work/root$prefix|" "$pc" >"$work/pkgconfig/devrt.pc"
sanitize=""
if [ -n "${DEVRT_CONSUMER_SANITIZE:-}" ]; then sanitize="-Db_sanitize=$DEVRT_CONSUMER_SANITIZE -Db_lundef=false"; fi
# shellcheck disable=SC2086
PKG_CONFIG_PATH="$work/pkgconfig" meson setup "$work/example" "$example" --werror $sanitize >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log"; exit 1; }
ninja -C "$work/example" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
[ -f "$work/example/libdevrt_example.so" ] || { echo "FAIL: no libdevrt_example.so"; exit 1; }

out=$(DEVRT_PLUGIN_PATH="$work/example" "$info" 2>&1)
case $out in
  *"backend example (device kind ext_dev): available, 1 device"*) echo "ok: devrt-info lists the out-of-tree plugin" ;;
  *) echo "FAIL: devrt-info does not list it:"; echo "$out"; exit 1 ;;
esac
mkdir -p "$work/bin/devrt" "$work/elsewhere"
cp "$info" "$work/bin/devrt-info"
cp "$work/example/libdevrt_example.so" "$work/bin/devrt/"
ln -s "$work/bin/devrt-info" "$work/elsewhere/devrt-info"
for binary in "$work/bin/devrt-info" "$work/elsewhere/devrt-info"; do
  out=$("$binary" 2>&1)
  case $out in
    *"backend example (device kind ext_dev): available, 1 device"*) echo "ok: $binary finds the plugin in bin/devrt" ;;
    *) echo "FAIL: $binary does not find bin/devrt/libdevrt_example.so:"; echo "$out"; exit 1 ;;
  esac
done
# Under ASan, GCC 12's LeakSanitizer crashes in this run while walking dynamic TLS ("Tracer caught
# signal 11"; LSAN_OPTIONS=verbosity=1 shows a DTLS entry with a bogus range, after every test
# passed). The dlopened libraries with thread-local state this run loads besides the plugin are
# libamdhip64 (the rocm backend's device probe) and, where Dawn is installed for the user, Dawn
# and Mesa's EGL (the webgpu backend's); with TLS unscanned, the only allocations left
# unreferenced are theirs and glibc's loader and dlerror state, none of devrt's. So this run scans no TLS (use_tls=0) and suppresses by library name what only vendor
# and glibc TLS holds (lsan.supp); devrt's own allocations stay leak-checked.
lsan_options="${LSAN_OPTIONS:+$LSAN_OPTIONS:}use_tls=0:suppressions=$(dirname "$0")/lsan.supp"
LSAN_OPTIONS=$lsan_options DEVRT_PLUGIN_PATH="$work/example" DEVRT_CONFORMANCE_BACKEND=example "$conformance" || {
  echo "FAIL: the conformance suite fails on the out-of-tree plugin"; exit 1; }
echo "ok: the conformance suite passes on it"
