#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Autoload as a process sees it, through devrt-info: an out-of-tree plugin found on
# DEVRT_PLUGIN_PATH, autoload switched off, a backend disabled by name, a broken plugin and an
# unreadable search directory reported without stopping anything; with -Dplugins=true also a
# removed built-in plugin ("not installed"), the build's outputs (one module per backend, none of
# them inside libdevrt.a) and each plugin exporting nothing but its entry point; files that are
# not loadable shared objects (truncated, empty, another machine or class) refused before dlopen;
# DEVRT_DISABLE names that do nothing reported; the build tree's plugins found from inside it.
# Usage: plugins.sh <devrt-info> <libdevrt_example.so> <libdevrt.a> <plugin dir or ""> <plugin backends...>
set -u
info=$1; example=$2; core=$3; plugin_dir=$4; shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() { # description, text, expected
  case $2 in
    *"$3"*) echo "ok: $1" ;;
    *) echo "FAIL: $1: expected '$3' in:"; echo "$2"; failures=$((failures + 1)) ;;
  esac
}
check_not() { # description, text, unexpected
  case $2 in
    *"$3"*) echo "FAIL: $1: did not expect '$3' in:"; echo "$2"; failures=$((failures + 1)) ;;
    *) echo "ok: $1" ;;
  esac
}
run() { # env assignments..., then devrt-info's output and exit status
  out=$(env "$@" "$info" 2>&1); status=$?
  [ $status -eq 0 ] || { echo "FAIL: devrt-info exited $status with $*"; failures=$((failures + 1)); }
}
mkdir "$work/good" "$work/broken"
cp "$example" "$work/good/"
cp "$example" "$work/broken/"
head -c 3000 /dev/urandom >"$work/broken/libdevrt_junk.so"
path="$work/good"
[ -n "$plugin_dir" ] && path="$work/good:$plugin_dir"

run DEVRT_PLUGIN_PATH="$path"
check "an out-of-tree plugin on DEVRT_PLUGIN_PATH is autoloaded" "$out" "backend example (device kind ext_dev): available, 1 device"
run DEVRT_PLUGIN_PATH="$path" DEVRT_BACKEND_AUTOLOAD=0
check_not "DEVRT_BACKEND_AUTOLOAD=0 loads nothing" "$out" "backend example"
run DEVRT_PLUGIN_PATH="$path" DEVRT_DISABLE=example
check_not "DEVRT_DISABLE skips a plugin by name" "$out" "backend example"
run DEVRT_PLUGIN_PATH="$work/broken"
check "a broken plugin is reported with its path and cause" "$out" "plugins: plugin $work/broken/libdevrt_junk.so refused before dlopen: not an ELF file"
check "the good plugin next to it still loads" "$out" "backend example (device kind ext_dev): available"
# Files that would crash glibc's loader (a truncated one is mapped past its end: SIGBUS) or that
# it would refuse with a vaguer reason are checked first; the process goes on and exits 0.
mkdir "$work/bad"
size=$(wc -c <"$example")
head -c $((size / 2)) "$example" >"$work/bad/libdevrt_truncated.so"
: >"$work/bad/libdevrt_empty.so"
cp "$example" "$work/bad/libdevrt_arm64.so"
printf '\267\000' | dd of="$work/bad/libdevrt_arm64.so" bs=1 seek=18 conv=notrunc 2>/dev/null # e_machine = EM_AARCH64
cp "$example" "$work/bad/libdevrt_class32.so"
printf '\001' | dd of="$work/bad/libdevrt_class32.so" bs=1 seek=4 conv=notrunc 2>/dev/null # EI_CLASS = ELFCLASS32
# Section headers intact, the last loaded segment cut: what a copy interrupted mid-file can leave.
python3 - "$example" "$work/bad/libdevrt_cut_segment.so" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
phoff, = struct.unpack_from('<Q', data, 32)
phentsize, phnum = struct.unpack_from('<HH', data, 54)
loads = [phoff + i * phentsize for i in range(phnum) if struct.unpack_from('<I', data, phoff + i * phentsize)[0] == 1]
at = loads[-1]  # the last PT_LOAD, moved (offset and address alike) a page-aligned 1 MiB past the end
shift = (len(data) + (1 << 20)) & ~0xffff
for field in (8, 16, 24):  # p_offset, p_vaddr, p_paddr
    value, = struct.unpack_from('<Q', data, at + field)
    struct.pack_into('<Q', data, at + field, value + shift)
open(sys.argv[2], 'wb').write(data)
PY
cp "$example" "$work/bad/"
run DEVRT_PLUGIN_PATH="$work/bad"
check "a truncated plugin is refused before dlopen" "$out" "libdevrt_truncated.so refused before dlopen: the file is truncated or corrupt"
check "an empty plugin file is refused" "$out" "libdevrt_empty.so refused before dlopen: the file is empty (0 bytes)"
check "a plugin for another machine is refused" "$out" "libdevrt_arm64.so refused before dlopen: it is built for AArch64"
check "a plugin of another ELF class is refused" "$out" "libdevrt_class32.so refused before dlopen: it is a 32-bit ELF file"
check "a segment past the file's end is refused" "$out" "libdevrt_cut_segment.so refused before dlopen: the file is truncated or corrupt: its segment"
check "the good plugin among them still loads" "$out" "backend example (device kind ext_dev): available"
run DEVRT_PLUGIN_PATH="$path" DEVRT_DISABLE=examples
check "a DEVRT_DISABLE name that matches nothing is reported" "$out" "DEVRT_DISABLE names 'examples', which is no backend or plugin of this devrt"
check "and changes nothing" "$out" "backend example (device kind ext_dev): available"
if [ -z "$plugin_dir" ]; then
  run DEVRT_DISABLE=cpu
  check "DEVRT_DISABLE of a compiled-in backend says what it does" "$out" "DEVRT_DISABLE names 'cpu', which is compiled into this devrt, not a plugin"
fi
run DEVRT_PLUGIN_PATH="/etc/hostname:$work/good"
check "an unreadable search directory is reported and skipped" "$out" "cannot read plugin directory /etc/hostname"
check "the next directory is still searched" "$out" "backend example (device kind ext_dev): available"

if [ -n "$plugin_dir" ]; then
  for backend in "$@"; do
    [ -f "$plugin_dir/libdevrt_$backend.so" ] || { echo "FAIL: libdevrt_$backend.so was not built"; failures=$((failures + 1)); }
    exported=$(nm -D --defined-only "$plugin_dir/libdevrt_$backend.so" | awk '$2 == "T" {print $3}' | tr '\n' ' ')
    check "libdevrt_$backend.so exports only its entry point" "[$exported]" "[devrt_plugin_entry ]"
  done
  built=$(ls "$plugin_dir" | grep -c '^libdevrt_.*\.so$')
  [ "$built" -eq $# ] || { echo "FAIL: $built plugins built for $# backends"; failures=$((failures + 1)); }
  check_not "libdevrt.a holds no plugin backend" "$(nm -C "$core" 2>/dev/null | grep -E 'OpenclBackend|VulkanBackend|CudaBackend|RocmBackend' | head -1)" "Backend"
  # A removed plugin: that backend is unavailable, the others work.
  first=$1
  mkdir "$work/partial"
  for backend in "$@"; do
    [ "$backend" = "$first" ] || cp "$plugin_dir/libdevrt_$backend.so" "$work/partial/"
  done
  # From inside the build tree the plugins just built are found with no search path set.
  run DEVRT_PLUGIN_PATH=
  check "a build tree's devrt-info finds its plugins" "$out" "backend $first (device kind"
  check_not "none of them reads as not installed" "$out" "not installed"
  # Outside it (a copy of devrt-info), only the search path counts.
  cp "$info" "$work/devrt-info"
  info="$work/devrt-info"
  run DEVRT_PLUGIN_PATH="$work/partial"
  check "a removed plugin reads as not installed" "$out" "$first availability: plugin libdevrt_$first.so not installed"
  check "the cpu backend still works" "$out" "backend cpu (device kind cpu): available"
  run DEVRT_PLUGIN_PATH="$plugin_dir" DEVRT_BACKEND_AUTOLOAD=0
  check "with autoload off a built-in plugin says how to load it" "$out" "plugin autoload is off"
  run DEVRT_PLUGIN_PATH="$plugin_dir" DEVRT_DISABLE="$first"
  check "a disabled built-in plugin says so" "$out" "$first availability: disabled by DEVRT_DISABLE"
fi
exit $failures
