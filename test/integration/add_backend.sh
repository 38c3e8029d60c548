#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Adding a backend takes the steps src/backends/null/README.md lists, and no others: copy null/ to
# a new backend `foo` in a scratch tree and rename it, then the README's steps (the option, the
# name in all_backends, foo's own device kind), selected with -Dbackends=cpu,foo,null (null beside
# it): the list accepts a backend as soon as all_backends names it. Before step 1 the
# copy still has null's kind: configure must refuse that, naming both. Then configure, build and
# run the conformance suite against foo. The copied backend answers "unsupported", so the suite
# must report foo as registered and dispatching into the copied code: skipped with foo's own
# reason.
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
# Step 2 of the README: the option.
echo "option('foo', type: 'feature', value: 'auto', description: 'The foo backend')" >>"$tree/meson_options.txt"
# Step 3: the name, in all_backends.
sed -i "s/^all_backends = \['cpu', /all_backends = ['cpu', 'foo', /" "$tree/meson.build"
grep -q "'foo'" "$tree/meson.build" || { echo "FAIL: all_backends not found in meson.build"; exit 1; }
grep -q "DEVRT_REGISTER_BACKEND(foo," "$tree/src/backends/foo/foo_backend.cpp" ||
  { echo "FAIL: the copied sources do not end in foo's registrar"; exit 1; }
# Unoptimised and in unity mode: the test is the README's steps, and -O2 would double its compile
# time, one unit per source (the plain build's way) double it again.
common="-Dtoolchain=disabled -Dcomm=disabled -Dbench=disabled -Dtests=enabled --buildtype=debug -Dunity=on -Dunity_size=16"
options="-Dbackends=cpu,foo,null $common"

# A name that is no backend is refused by -Dbackends, naming the backends there are.
# shellcheck disable=SC2086
if meson setup "$work/unknown" "$tree" -Dbackends=cpu,fooo $common >"$work/unknown.log" 2>&1; then
  echo "FAIL: configure accepted -Dbackends=cpu,fooo"; exit 1
fi
grep -q '"fooo" is no backend of devrt; the backends are auto or any of cpu, foo, null' "$work/unknown.log" ||
  { echo "FAIL: the refusal of fooo does not list the backends:"; tail -5 "$work/unknown.log"; exit 1; }
echo "ok: -Dbackends refuses a name that is no backend"

# Without step 1 the copy keeps null's kind: refused at configure time, naming both backends.
# shellcheck disable=SC2086
if meson setup "$work/clash" "$tree" $options >"$work/clash.log" 2>&1; then
  echo "FAIL: configure accepted two backends with one device kind"; exit 1
fi
refusal=$(grep -o "Backends .* both declare device kind 31" "$work/clash.log" || true)
case $refusal in
  *"null (src/backends/null)"*"foo (src/backends/foo)"* | *"foo (src/backends/foo)"*"null (src/backends/null)"*)
    echo "ok: a copy that keeps null's kind is refused: $refusal" ;;
  *) echo "FAIL: the refusal does not name both backends:"; tail -5 "$work/clash.log"; exit 1 ;;
esac
# Step 1: foo's own kind, in its meson.build and nowhere else.
sed -i "s/'kinds': {'foo': 31}/'kinds': {'foo': 30}/" "$tree/src/backends/foo/meson.build"
grep -q "'kinds': {'foo': 30}" "$tree/src/backends/foo/meson.build" || { echo "FAIL: no kinds in foo's meson.build"; exit 1; }

# shellcheck disable=SC2086
meson setup "$work/build" "$tree" $options >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
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
  *'"backends": "cpu,foo,null"'*) echo "ok: build info lists foo beside null" ;;
  *) echo "FAIL: devrt-info --json does not list foo and null:"; echo "$info"; exit 1 ;;
esac
case $info in
  *'"name": "foo"'*'"device_kind_id": 30'*'"name": "null"'*'"device_kind_id": 31'*) echo "ok: the registry holds foo and null" ;;
  *) echo "FAIL: the registry does not hold foo (kind 30) and null (kind 31):"; echo "$info"; exit 1 ;;
esac
