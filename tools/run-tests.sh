#!/bin/sh
# shellcheck disable=SC2086 # the option lists ($unity, $test_args) split on purpose
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, as CI runs it: a -Werror build, the same suite under ASan+UBSan, the unit
# and CPU suites under valgrind (the GPU drivers JIT with LLVM, far too slow there), the
# concurrent tests under TSan, and the libFuzzer targets (clang-14, ASan+UBSan) for
# DEVRT_FUZZ_SECONDS each (default 10). Ends with one line "N passed, N failed".
#
# The plugin variant (-Dplugins=true: every GPU-API backend a libdevrt_<name>.so) runs the same
# suite again, plus its loader tests.
#
# Firmware: two Cortex-M4 builds (cross/cortex-m4.ini, minsize; the second with -Dlogging=false)
# whose tests and size points run under qemu-system-arm, with the size budgets; a Hexagon build
# (cross/hexagon.ini) whose DSP-side tests, the hexagon backend's included, run under qemu-hexagon.
#
# DEVRT_TEST_CONFIGS selects configurations (default: "plain plugins asan valgrind tsan fuzz
# firmware hexagon"). Those in DEVRT_BACKGROUND_CONFIGS (default: "firmware hexagon", the cross
# builds, whose tests run on QEMU) run beside the others at the lowest CPU priority (nice 19), with
# ten times the tests' timeouts: they take the cores the others leave idle (their tests that run
# alone, the last units of a build) instead of a slot of their own.
set -u
cd "$(dirname "$0")/.." || exit 1
# Meson compiles through ccache when it is installed (tools/install-deps.sh installs it): keep its
# cache in this checkout, so that a run is timed from nothing and builds share what they can. With
# -g, ccache hashes the build directory by default: then no two configurations share anything.
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.ccache}" CCACHE_NOHASHDIR=1 CCACHE_BASEDIR="$PWD"
configs=${DEVRT_TEST_CONFIGS:-plain plugins asan valgrind tsan fuzz firmware hexagon}
failed_setup=0
# The nested run of the background configurations: no installing, no summary, the count of
# configurations that could not run as its exit status, timeouts stretched.
nested=${DEVRT_TEST_NESTED:-0}
test_args=""
[ "$nested" = 1 ] && test_args="--timeout-multiplier 10"
[ "$nested" = 1 ] || sh tools/install-deps.sh || exit 1

# The sanitizer and fuzz configurations compile in unity mode (Meson joins up to 16 sources of a
# target into one unit): half the compile time, the same code and the same tests. The plain
# configuration compiles each source alone, so it still proves that every file includes what it
# uses (and source-limits-vs-clang parses its units); the plugin variant too, because a plugin
# takes the core's units it needs whole, and a unit of 16 sources brings thread_local objects that
# a plugin must not (glibc's static TLS, which a Python process with every plugin loaded has little
# of). The two share most units through ccache: a unity plain build saves nothing overall, since
# the plugin variant then compiles every unit itself (measured: 393 + 347 s against 571 + 152 s).
unity="-Dunity=on -Dunity_size=16"

configure() { # dir, options... (benchmarks are off unless the options name -Dbench)
  dir=$1; shift
  bench=-Dbench=disabled
  case " $* " in *" -Dbench="*) bench="" ;; esac
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" --werror $bench "$@" >"$dir.setup.log" 2>&1 ||
      { cat "$dir.setup.log"; return 1; }
  fi
}

setup() { # dir, options...: configured and built whole
  configure "$@" && ninja -C "$1"
}

setup_suite() { # dir, suite, options...: configured, and only what that suite's tests need built
  dir=$1; suite=$2; shift 2
  configure "$dir" "$@" || return 1
  ninja -C "$dir" build.ninja >/dev/null || return 1 # Meson's introspection current with meson.build
  # shellcheck disable=SC2046
  targets=$(python3 tools/suite-targets.py "$dir" "$suite") && ninja -C "$dir" $targets
}

config_logs() { # config: the meson test logs it writes
  case $1 in
    plain) echo build-test/meson-logs/plain.json ;;
    plugins) echo build-plugins/meson-logs/plugins.json ;;
    asan) echo build-asan/meson-logs/asan.json ;;
    valgrind) echo build-test/meson-logs/memcheck-env.json ;; # meson appends the wrapper's name
    tsan) echo build-tsan/meson-logs/tsan.json ;;
    fuzz) echo build-fuzz/meson-logs/fuzz.json ;;
    firmware) echo build-cortex-m4/meson-logs/firmware.json build-cortex-m4-quiet/meson-logs/firmware-quiet.json ;;
    hexagon) echo build-hexagon/meson-logs/hexagon.json ;;
  esac
}

# A whole run writes about 5.5 GiB here (build directories and ccache's cache) and the compilers'
# temporaries in TMPDIR: a disk that fills shows only as "No space left on device" deep in one
# configuration's log, so say it before anything is built.
if [ "$nested" != 1 ]; then
  for where in . "${TMPDIR:-/tmp}"; do
    free_mib=$(df -Pm "$where" | awk 'NR == 2 { print $4 }')
    [ "${free_mib:-0}" -ge 8192 ] ||
      echo "=== warning: $free_mib MiB free in $where ($(cd "$where" && pwd)); a whole run needs about 5.5 GiB"
  done
fi

logs="" foreground="" background="" background_pid=""
for config in $configs; do
  logs="$logs $(config_logs "$config")"
  case " ${DEVRT_BACKGROUND_CONFIGS-firmware hexagon} " in
    *" $config "*) [ "$nested" = 1 ] && foreground="$foreground $config" || background="$background $config" ;;
    *) foreground="$foreground $config" ;;
  esac
done
if [ -n "$background" ]; then
  echo "=== in the background (nice 19, output in build-background.log):$background"
  DEVRT_TEST_CONFIGS="$background" DEVRT_TEST_NESTED=1 nice -n 19 sh tools/run-tests.sh >build-background.log 2>&1 &
  background_pid=$!
fi

timings=""
for config in $foreground; do
  echo "=== $config"
  # shellcheck disable=SC2046
  rm -f $(config_logs "$config") # a log from an earlier run must not count for this one
  started=$(date +%s)
  case $config in
    plain)
      # With the benchmarks built: bench-kernels is tested to skip missing drivers, not abort.
      setup build-test -Dbench=enabled && meson test -C build-test $test_args --print-errorlogs --logbase plain ;;
    plugins)
      # The remote backend is never a plugin: its suite (devrt-server against loopback) is the plain
      # build's, run there and under ASan.
      setup build-plugins -Dplugins=true && meson test -C build-plugins $test_args --print-errorlogs --logbase plugins \
        --no-suite remote ;;
    asan)
      # With the fault-injection seam: the fault sweep (test/fault) runs here, under ASan+UBSan+LSan.
      # Unoptimised: at -O2 the instrumented compiles take 5 to 10 times as long (cc.cpp: 25 s
      # against 2.3 s), and the tests' time is the drivers'.
      setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dfault_injection=true -Doptimization=0 $unity &&
        meson test -C build-asan $test_args --print-errorlogs --logbase asan ;;
    valgrind)
      # The GPU drivers are hidden (empty ICD directories, and WebGPU's library named away through
      # the wrapper, since the tests' environment names it) and NVRTC's own uninitialised reads are
      # suppressed (tools/valgrind.supp): their errors are not devrt's.
      empty_icd=$(mktemp -d)
      setup build-test -Dbench=enabled && OCL_ICD_VENDORS=$empty_icd VK_ICD_FILENAMES=$empty_icd/none.json \
        VK_DRIVER_FILES=$empty_icd/none.json meson test -C build-test $test_args --print-errorlogs --logbase memcheck \
        --suite unit --suite cpu --timeout-multiplier 4 \
        --wrap "env DEVRT_WEBGPU_LIBRARY=/nonexistent/libwebgpu.so valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --suppressions=$PWD/tools/valgrind.supp" ;;
    tsan)
      setup_suite build-tsan concurrency -Db_sanitize=thread -Db_lundef=false $unity &&
        meson test -C build-tsan --no-rebuild $test_args --print-errorlogs --logbase tsan --suite concurrency ;;
    fuzz)
      if [ ! -f build-fuzz/build.ninja ]; then
          # What the fuzz targets link and nothing else: the CPU backend (the SPIR-V target compiles
        # the Vulkan backend's reflection itself), no C API, Python, toolchain or collectives.
        CXX=clang++-14 meson setup build-fuzz --werror -Dbench=disabled -Dfuzzing=true -Dfault_injection=true \
          -Db_sanitize=address,undefined -Db_lundef=false -Dtests=disabled -Dtools=false $unity \
          -Dbackends=cpu -Dcapi=disabled -Dpython=disabled -Dtoolchain=disabled -Dcomm=disabled \
          >build-fuzz.setup.log 2>&1 || cat build-fuzz.setup.log
      fi
      ninja -C build-fuzz && meson test -C build-fuzz $test_args --print-errorlogs --logbase fuzz --suite fuzz ;;
    firmware)
      setup build-cortex-m4 --cross-file cross/cortex-m4.ini -Dbuildtype=minsize &&
        meson test -C build-cortex-m4 $test_args --print-errorlogs --logbase firmware &&
        cat build-cortex-m4/bench/firmware/firmware-size.json
      # Without error messages (-Dlogging=false): the compile-time round trip's 4 KiB budget.
      setup build-cortex-m4-quiet --cross-file cross/cortex-m4.ini -Dbuildtype=minsize -Dlogging=false &&
        meson test -C build-cortex-m4-quiet $test_args --print-errorlogs --logbase firmware-quiet &&
        cat build-cortex-m4-quiet/bench/firmware/firmware-size.json ;;
    hexagon)
      setup build-hexagon --cross-file cross/hexagon.ini -Dbuildtype=release &&
        meson test -C build-hexagon $test_args --print-errorlogs --logbase hexagon ;;
    *) echo "unknown configuration '$config'"; failed_setup=$((failed_setup + 1)) ;;
  esac
  timings="$timings $config=$(($(date +%s) - started))s"
done
echo "=== seconds per configuration (build and tests):$timings"
[ "$nested" = 1 ] && exit "$failed_setup"
if [ -n "$background_pid" ]; then
  waited=$(date +%s)
  wait "$background_pid" || failed_setup=$((failed_setup + $?))
  echo "=== the background configurations, $(($(date +%s) - waited)) s after the others:"
  cat build-background.log
fi

# shellcheck disable=SC2086
python3 tools/summarize-tests.py --extra-failed "$failed_setup" $logs
