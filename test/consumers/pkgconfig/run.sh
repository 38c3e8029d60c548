#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh BUILD_DIR CONSUMER_SOURCE CXX BACKEND... (CXX may be several words: "ccache c++")
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
# The forwarding headers of 0.1.0's paths are installed and build without a warning.
$cxx -std=c++20 -fsyntax-only -Wall -Wextra -Werror -DDEVRT_EXPECT_OK "$(dirname "$source")/moved_headers.cpp" \
  $(pkg-config --define-variable=prefix="$work/root$prefix" --cflags devrt)
"$work/plain" "$@"
$cxx -std=c++20 -Os $sanitize -flto -ffunction-sections -fdata-sections "$source" $flags -Wl,--gc-sections -o "$work/lto"
"$work/lto" "$@"

# devrt-c, when built: a C99 program builds from `pkg-config --cflags --libs devrt-c` alone (its
# Cflags name DLPack's directory, since devrt.h includes <dlpack/dlpack.h>) and runs.
c_pc=$(find "$work/root" -name devrt-c.pc | head -n 1)
if [ -n "$c_pc" ]; then
  grep -q '^Cflags:.*-I[^ ]*' "$c_pc" || { echo "FAIL: devrt-c.pc has no include path"; exit 1; }
  dlpack_dir=$(sed -n 's/^Cflags:.* -I\(\/[^ ]*\).*$/\1/p' "$c_pc")
  [ -f "$dlpack_dir/dlpack/dlpack.h" ] || { echo "FAIL: devrt-c.pc does not name DLPack's directory ($dlpack_dir)"; exit 1; }
  c_flags=$(pkg-config --define-variable=prefix="$work/root$prefix" --cflags --libs devrt-c)
  echo "pkg-config --cflags --libs devrt-c: $c_flags (DLPack from $dlpack_dir)"
  cat >"$work/c_consumer.c" <<'C'
#include <devrt/devrt.h>
#include <stdio.h>
int main(void) {
  DLDataType f32;
  if (devrt_dtype_parse("float32", &f32) != DEVRT_STATUS_OK || f32.bits != 32) return 1;
  printf("devrt-c consumer: devrt %s, %d cpu device(s)\n", devrt_version(), (int)devrt_device_count(kDLCPU));
  return 0;
}
C
  cc -std=c99 -Wall -Werror $sanitize "$work/c_consumer.c" $c_flags -o "$work/c_consumer"
  LD_LIBRARY_PATH="$(dirname "$(find "$work/root" -name 'libdevrt_c.so.0' | head -n 1)")" "$work/c_consumer"
fi

# devrt-comm, when built: a program using it builds from `pkg-config --cflags --libs devrt-comm`
# alone (MPI comes through the .pc's Requires) and reports the MPI engine.
if [ -n "$(find "$work/root" -name devrt-comm.pc)" ]; then
  comm_flags=$(pkg-config --define-variable=prefix="$work/root$prefix" --cflags --libs devrt-comm)
  # --define-variable moved MPI's own prefix into the scratch root too: add MPI's real flags.
  for required in $(pkg-config --print-requires devrt-comm | cut -d' ' -f1); do
    [ "$required" = devrt ] || comm_flags="$comm_flags $(pkg-config --cflags --libs "$required")"
  done
  echo "pkg-config --cflags --libs devrt-comm: $comm_flags"
  cat >"$work/comm.cpp" <<'CPP'
#include <cstdio>
#include <devrt/comm.hpp>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  auto probe = devrt::comm::probe_engine(devrt::comm::Engine::mpi);
  auto comm = devrt::comm::create(MPI_COMM_WORLD, devrt::kHostDevice);
  std::printf("devrt-comm consumer: %s, %d rank(s)\n", probe.ok() ? probe->c_str() : "no MPI", comm.ok() ? comm->size() : 0);
  bool ok = probe.ok() && comm.ok() && comm->size() == 1;
  if (comm.ok()) *comm = devrt::comm::Communicator();
  MPI_Finalize();
  return ok ? 0 : 1;
}
CPP
  $cxx -std=c++20 -O2 $sanitize "$work/comm.cpp" $comm_flags -o "$work/comm"
  # Open MPI keeps allocations past MPI_Finalize; they are its own, not devrt's.
  ASAN_OPTIONS=detect_leaks=0 "$work/comm"
fi
