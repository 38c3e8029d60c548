#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The package installed the two ways the README gives, then imported from the install alone (no
# DEVRT_LIBRARY, no source tree):
#   readme: the README's Python block, run as written (sh, Debian's python3 first on PATH, a new
#           HOME) in a copy of the source tree: a virtual environment with the system's packages,
#           pip install --no-build-isolation . (meson-python builds a cp311-abi3 wheel), and the
#           vector add example on every OpenCL and Vulkan device; the copy stays git-clean;
#   meson:  `meson install` of this build into a DESTDIR, the library found by the loader's path.
# usage: install.sh readme|meson <source root> <build root> <python>
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
  readme)
    # The block after the README's marker line, as a user would paste it.
    block=$(awk '/<!-- python-install:/ {armed = 1; next} armed && /^```sh/ {inside = 1; next}
                 inside && /^```/ {exit} inside {print}' "$source/README.md")
    [ -n "$block" ] || { echo "FAIL: no python-install block in README.md"; exit 1; }
    echo "$block"
    # The tree as a fresh clone has it (tracked and new files, nothing ignored), committed, so that
    # whatever the install leaves behind shows in git status.
    mkdir "$work/src" "$work/home"
    (cd "$source" && git ls-files -z -co --exclude-standard | xargs -0 tar cf - 2>/dev/null) | tar xf - -C "$work/src"
    git -C "$work/src" init -q && git -C "$work/src" add -A &&
      git -C "$work/src" -c user.name=t -c user.email=t@t commit -qm tree
    # With the PATH inherited: another python3 first on it (pyenv here) must not matter.
    out=$(cd "$work/src" && env -u DEVRT_LIBRARY -u PYTHONPATH -u VIRTUAL_ENV -u DEVRT_WEBGPU_LIBRARY HOME="$work/home" \
      sh -eu -c "$block" 2>&1) || { echo "$out"; echo "FAIL: the README's Python block failed"; exit 1; }
    echo "$out"
    case $out in
      *"vector add WRONG"*) echo "FAIL: a wrong sum"; exit 1 ;;
      *"opencl:0"*"vector add ok"*"vulkan:0"*"vector add ok"*) echo "ok: the vector add ran on OpenCL and Vulkan" ;;
      *) echo "FAIL: the vector add did not run on both OpenCL and Vulkan"; exit 1 ;;
    esac
    case $out in
      *"selftest: "*" passed, 0 failed"*) echo "ok: the package's devrt-info ran its selftest" ;;
      *) echo "FAIL: the package's devrt-info --selftest did not pass"; exit 1 ;;
    esac
    # Only meson-python 0.12's native file may stay (it writes it into the source tree; git
    # ignores it, and meson-python 0.13 moved it into its build directory).
    dirty=$(git -C "$work/src" status --porcelain --ignored | grep -v -x '!! .mesonpy-native-file.ini' || true)
    [ -z "$dirty" ] || { echo "FAIL: the install left files in the source tree:"; echo "$dirty"; exit 1; }
    echo "ok: the source tree is as it was (git status clean)"
    root=$(find "$work/home" -name pyvenv.cfg -exec dirname {} \; | head -n 1)
    python=$root/bin/python
    wheel=$(find "$root" -path '*/devrt-*.dist-info/WHEEL')
    grep -q '^Tag: cp311-abi3-linux_' "$wheel" && grep -q '^Root-Is-Purelib: false' "$wheel" ||
      { echo "FAIL: not a platform wheel:"; cat "$wheel"; exit 1; }
    echo "ok: $(grep '^Tag' "$wheel")"
    # A lean wheel: the package, its libraries and its metadata, nothing for C++ users, and no
    # path of this machine's build or source tree in any file.
    extra=$(cut -d, -f1 "$(dirname "$wheel")/RECORD" |
      grep -v -E '^(devrt/|devrt-[^/]*\.dist-info/|\.devrt\.mesonpy\.libs/|(\.\./)+bin/devrt-(info|server)$)' |
      grep -v '__pycache__' || true)
    [ -z "$extra" ] || { echo "FAIL: the wheel installed more than the package:"; echo "$extra"; exit 1; }
    if grep -rl --exclude=direct_url.json -e "$work/src" "$root"/lib/python3*/site-packages/devrt* \
      "$root"/lib/python3*/site-packages/.devrt.mesonpy.libs "$root/bin/devrt-info" "$root/bin/devrt-server" \
      2>/dev/null; then
      echo "FAIL: a build-machine path is recorded"; exit 1
    fi ;;
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
if [ "$mode" = readme ]; then # a wheel carries devrt-info; `meson install` puts it in <prefix>/bin
  out=$(env -u DEVRT_LIBRARY -u PYTHONPATH PYTHONPATH="$site" "$python" -m devrt --version)
  case $out in
    "devrt-info "*) echo "ok: python -m devrt runs the package's devrt-info ($out)" ;;
    *) echo "FAIL: python -m devrt: $out"; exit 1 ;;
  esac
  # devrt-server too, where this build has the remote backend (UCX's headers).
  if [ -e "$(dirname "$package")/devrt-server" ]; then
    out=$("$root/bin/devrt-server" --help 2>&1 || true)
    case $out in
      "usage: devrt-server"*) echo "ok: the devrt-server command runs the package's devrt-server" ;;
      *) echo "FAIL: devrt-server --help: $out"; exit 1 ;;
    esac
  fi
fi
