#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh BUILD_DIR SOURCE [LINK_ALSO...] -- CXX... -- COMPILE_FLAGS... -- LINK_FLAGS... -- WRAPPER...
# A firmware integrator's build of a cross-built devrt: `meson install` into a staging prefix,
# then SOURCE compiled and linked with the cross compiler, the target's own flags (the cross
# file's compile and link arguments, nothing of devrt's) and `pkg-config --cflags` and `--libs
# devrt` alone, plus LINK_ALSO (the Hexagon test's SDK stand-ins), and run through WRAPPER (the
# cross file's exe_wrapper).
set -eu
build=$1 source=$2
shift 2
# Words quoted for a later `eval "set -- ..."`.
quote() { printf "'%s' " "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
link_also=""
while [ "$1" != "--" ]; do link_also="$link_also $1"; shift; done
shift
cxx=""
while [ "$1" != "--" ]; do cxx="$cxx$(quote "$1")"; shift; done
shift
compile_flags=""
while [ "$1" != "--" ]; do compile_flags="$compile_flags$(quote "$1")"; shift; done
shift
link_flags=""
while [ "$1" != "--" ]; do link_flags="$link_flags$(quote "$1")"; shift; done
shift
wrapper=""
for word in "$@"; do wrapper="$wrapper$(quote "$word")"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >/dev/null
pc=$(find "$work/root" -name devrt.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: devrt.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_LIBDIR="$(dirname "$pc")"
prefix=$(pkg-config --variable=prefix devrt)
cflags=$(pkg-config --define-variable=prefix="$work/root$prefix" --cflags devrt)
libs=$(pkg-config --define-variable=prefix="$work/root$prefix" --libs devrt)
echo "pkg-config --cflags devrt: $cflags"
echo "pkg-config --libs devrt: $libs"
# pkg-config drops -I/usr/include itself; an integrator's build system may not: read the file.
for flag in $(sed -n 's/^\(Cflags\|Libs\): //p' "$pc") $cflags $libs; do
  case "$flag" in
    -I/usr/include|-I/usr/include/*|-I/usr/local/include|-L/usr/lib*)
      echo "FAIL: devrt.pc names the build machine's $flag, which a cross compiler must not see"; exit 1 ;;
  esac
done

eval "set -- $cxx $compile_flags"
"$@" -std=c++20 -Os -c -o "$work/consumer.o" "$source" $cflags
eval "set -- $cxx $link_flags"
"$@" -o "$work/consumer.elf" "$work/consumer.o" $link_also $libs
# No hidden heap, exit-time destructor or throwing path (docs/firmware.md, "The firmware heap"):
# the program uses devrt and printf alone, so none of these may be in it.
forbidden=$(nm "$work/consumer.elf" | awk '{print $NF}' |
  grep -E '^(_Zn[wa][jm]|__cxa_atexit|__aeabi_atexit|_ZSt[0-9]+__throw_[a-z_]+|malloc|aligned_alloc|memalign|_?sbrk)$' || true)
if [ -n "$forbidden" ]; then
  echo "FAIL: the program links $(echo "$forbidden" | tr '\n' ' ')"; exit 1
fi
echo "linked, with no operator new, exit-time destructor, throwing path or malloc"
eval "set -- $wrapper"
"$@" "$work/consumer.elf"
