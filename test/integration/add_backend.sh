#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Adding a backend takes the edits src/backends/null/README.md lists, and no others: copy null/ to
# a new backend `foo` in a scratch tree, rename it, make the README's two edits outside the folder
# (the option, the name in all_backends), then configure, build and run the conformance suite
# against it. The copied backend answers "unsupported", so the suite must report foo as
# registered and dispatching into the copied code: skipped with foo's own reason.
# Usage: add_backend.sh <source root> <c++ compiler...>
set -eu
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/tree
mkdir -p "$tree"
(cd "$root" && cp -r meson.build meson_options.txt include src python test tools examples "$tree/")

# The copy: the folder, its file names and every null/Null/NULL in it become foo/Foo/FOO.
cp -r "$tree/src/backends/null" "$tree/src/backends/foo"
for file in "$tree"/src/backends/foo/*; do
  sed -i 's/null/foo/g; s/Null/Foo/g; s/NULL/FOO/g' "$file"
  case $file in *null*) mv "$file" "$(echo "$file" | sed 's/null_/foo_/')" ;; esac
done
# Edit 1 of the README: the option.
echo "option('foo', type: 'feature', value: 'auto', description: 'The foo backend')" >>"$tree/meson_options.txt"
# Edit 2: the name, in all_backends.
sed -i "s/^all_backends = \['cpu', /all_backends = ['cpu', 'foo', /" "$tree/meson.build"
grep -q "'foo'" "$tree/meson.build" || { echo "FAIL: all_backends not found in meson.build"; exit 1; }
# Edits 3 and 4 (the folder's meson.build and the registrar) are what the rename above wrote.
grep -q "DEVRT_REGISTER_BACKEND(foo," "$tree/src/backends/foo/foo_backend.cpp" ||
  { echo "FAIL: the copied sources do not end in foo's registrar"; exit 1; }

meson setup "$work/build" "$tree" -Dfoo=enabled -Dopencl=disabled -Dvulkan=disabled -Dcuda=disabled \
  -Drocm=disabled -Dtoolchain=disabled -Dbench=disabled -Dtests=enabled >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log"; exit 1; }
grep -E "^ +foo +: YES" "$work/setup.log" || { echo "FAIL: the summary does not build foo:"; cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" test/test-conformance tools/devrt-info >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
grep -q "#define DEVRT_WITH_FOO 1" "$work/build/include/devrt/config.hpp" ||
  { echo "FAIL: config.hpp has no DEVRT_WITH_FOO 1"; exit 1; }

status=0
output=$(meson test -C "$work/build" --no-rebuild conformance-foo 2>&1) || status=$?
echo "$output" | tail -5
log=$(cat "$work/build/meson-logs/testlog.txt")
case $log in
  *"SKIP conformance-foo: "*"the foo backend implements no availability"*) echo "ok: conformance-foo ran against foo" ;;
  *) echo "FAIL: conformance-foo did not reach the foo backend:"; echo "$log"; exit 1 ;;
esac
info=$("$work/build/tools/devrt-info" --json)
case $info in
  *'"backends": "cpu,foo"'*) echo "ok: build info lists foo" ;;
  *) echo "FAIL: devrt-info --json does not list foo:"; echo "$info"; exit 1 ;;
esac
case $info in
  *'"name": "foo"'*'"device_kind": "ext_dev"'*) echo "ok: the registry holds foo" ;;
  *) echo "FAIL: the registry does not hold foo:"; echo "$info"; exit 1 ;;
esac
