#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The package installed the two ways the README gives, then imported from the install alone (no
# DEVRT_LIBRARY, no source tree):
#   pip:   python3 -m pip install --no-build-isolation . (meson-python builds a wheel in a
#          .mesonpy-* directory of the source tree, ignored by git, and removes it) into a temporary
#          prefix;
#   meson: `meson install` of this build into a DESTDIR, the library found by the loader's path.
# usage: install.sh pip|meson <source root> <build root> <python>
set -eu
mode=$1; source=$2; build=$3; python=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check='import devrt
print(devrt.cuda(0).exist, devrt.cpu(0).max_threads_per_block)
assert devrt.cpu(0).max_threads_per_block > 0
assert devrt.empty((3,), "int32").shape == (3,)
print(next(line.split()[-1] for line in open("/proc/self/maps") if "libdevrt_c.so" in line))'
case $mode in
  pip)
    "$python" -m pip install --no-build-isolation --no-deps --no-index --disable-pip-version-check --quiet \
      --prefix "$work/prefix" "$source"
    root=$work/prefix
    # A lean wheel: the package, its libraries and its metadata, nothing for C++ users, and no
    # path of this machine's build or source tree in any file.
    extra=$(cd "$root" && find . -type f | grep -v -E '/(dist|site)-packages/(devrt/|devrt-[^/]*\.dist-info/|\.devrt\.mesonpy\.libs/)' || true)
    [ -z "$extra" ] || { echo "FAIL: the wheel installed more than the package:"; echo "$extra"; exit 1; }
    find "$root" -name '*.so*' -path '*devrt*' | grep -q '_ext.abi3.so' || { echo "FAIL: no devrt/_ext.abi3.so"; exit 1; }
    # (pip's own direct_url.json records where it installed from: that is pip's, not the wheel's.)
    if grep -rl --exclude=direct_url.json -e "$source" -e "$build" "$root" 2>/dev/null; then
      echo "FAIL: a build-machine path is recorded"; exit 1
    fi
    echo "ok: the wheel holds $(cd "$root" && find . -type f | wc -l) files, the package's only" ;;
  meson)
    meson install -C "$build" --no-rebuild --quiet --destdir "$work/dest" >/dev/null
    root=$work/dest
    libdir=$(sed -n 's/^LIBDIR = "\(.*\)"$/\1/p' "$(find "$root" -path '*/devrt/_install.py')")
    [ -e "$root$libdir/libdevrt_c.so.0" ] || { echo "FAIL: no libdevrt_c.so.0 in $libdir"; exit 1; }
    export LD_LIBRARY_PATH="$root$libdir" ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
package=$(find "$root" -path '*/devrt/__init__.py' | head -n 1)
[ -n "$package" ] || { echo "FAIL: the install holds no devrt package"; exit 1; }
site=$(dirname "$(dirname "$package")")
cd "$work"
out=$(env -u DEVRT_LIBRARY -u PYTHONPATH PYTHONPATH="$site" "$python" -c "$check")
echo "$out"
case $out in
  *"$root"*) echo "ok: $mode install imports and loads its own libdevrt_c.so" ;;
  *) echo "FAIL: the package loaded a library from outside the install"; exit 1 ;;
esac
out=$(env -u DEVRT_LIBRARY -u PYTHONPATH PYTHONPATH="$site" DEVRT_BACKEND_AUTOLOAD=0 "$python" -c \
  'import devrt; print(len(devrt.backend.loaded_plugins()), devrt.cpu(0).exist)')
[ "$out" = "0 True" ] || { echo "FAIL: with DEVRT_BACKEND_AUTOLOAD=0: $out"; exit 1; }
echo "ok: DEVRT_BACKEND_AUTOLOAD=0 loads nothing"
