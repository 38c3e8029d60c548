#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# usage: run.sh SOURCE_ROOT
# The README's subproject recipe, built as written: a project whose meson.build is a project()
# line and the README's block after its `subproject-recipe` marker, with ../consumer.cpp as app.cpp
# and devrt in subprojects/devrt/. A plain `ninja` (every default target) must compile devrt's
# core and the two backends the recipe names and nothing else of devrt (no C library, toolchain,
# collectives, tools, tests); the application must see exactly cpu and opencl; `meson install`
# must install the application alone. Prints the number of compile steps.
set -eu
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
project=$work/project
mkdir -p "$project/subprojects/devrt"
cp "$root/test/consumers/consumer.cpp" "$project/app.cpp"
(cd "$root" && cp -r meson.build meson_options.txt include src python "$project/subprojects/devrt/")
recipe=$(awk '/<!-- subproject-recipe:/ {armed = 1; next} armed && /^```meson/ {inside = 1; next}
              inside && /^```/ {exit} inside {print}' "$root/README.md")
[ -n "$recipe" ] || { echo "FAIL: no subproject-recipe block in README.md"; exit 1; }
{
  echo "project('app', 'cpp', default_options: ['cpp_std=c++20'], meson_version: '>= 1.0.1')"
  echo "$recipe"
} >"$project/meson.build"
cat "$project/meson.build"
# Unoptimised, and devrt in unity mode, to keep the test short: neither changes what is built.
meson setup "$work/build" "$project" --buildtype=debug -Dunity=subprojects --prefix=/usr \
  >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
failures=0
for probe in catch2 benchmark libarchive mpi fmt; do
  if grep -q -i "Run-time dependency $probe found\|Dependency $probe found\|Found pkg-config.*$probe\|dependency $probe.*found" "$work/setup.log"; then
    echo "FAIL: the subproject looked for $probe"; failures=$((failures + 1))
  fi
done
ninja -C "$work/build" -v >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
steps=$(grep -c -E ' -c [^ ]+\.(cpp|c)( |$)' "$work/build.log" || true)
unity_sources=$(cat "$work"/build/subprojects/devrt/src/*.p/*-unity*.cpp 2>/dev/null | grep -c '#include' || true)
echo "compile steps: $steps ($unity_sources devrt sources in unity files)"
# The figures the README states for this recipe: its sources of devrt, and those plus app.cpp.
readme=$(tr '\n' ' ' <"$root/README.md")
stated_sources=$(echo "$readme" | sed -n 's/.*recipe above compiles \([0-9][0-9]*\) sources of devrt.*/\1/p')
stated_steps=$(echo "$readme" | sed -n 's/.*application: \([0-9][0-9]*\) compile steps.*/\1/p')
if [ "$stated_sources" != "$unity_sources" ] || [ "$stated_steps" != "$((unity_sources + 1))" ]; then
  echo "FAIL: README.md says $stated_sources sources and $stated_steps compile steps; the recipe compiles" \
    "$unity_sources sources of devrt and the application ($((unity_sources + 1)) steps)"
  failures=$((failures + 1))
fi
for unwanted in devrt_c toolchain comm devrt-info vulkan cuda rocm catch; do
  if grep -E ' -c ' "$work/build.log" | grep -q -i "$unwanted"; then
    echo "FAIL: compiled something of '$unwanted':"; grep -E ' -c ' "$work/build.log" | grep -i "$unwanted" | head -3
    failures=$((failures + 1))
  fi
done
"$work/build/app" cpu opencl || failures=$((failures + 1))
# devrt::tvm is off in a subproject unless asked for: a consumer including its header learns that
# when it compiles, with the option to turn on (not from an undefined reference at link time).
printf '#include <devrt/tvm.hpp>\nint main() { return 0; }\n' >"$work/uses_tvm.cpp"
tvm_compile=$(python3 -c 'import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    if entry["file"].endswith("app.cpp"):
        words = shlex.split(entry["command"])
        words = [sys.argv[2] if w == entry["file"] else w for w in words]
        words[words.index("-o") + 1] = sys.argv[2] + ".o"
        print(shlex.join(words))' "$work/build/compile_commands.json" "$work/uses_tvm.cpp")
if (cd "$work/build" && eval "$tvm_compile") >"$work/tvm.log" 2>&1; then
  echo "FAIL: <devrt/tvm.hpp> compiled in a build without devrt::tvm"; failures=$((failures + 1))
elif ! grep -q "configure devrt with -Dtvm=enabled" "$work/tvm.log"; then
  echo "FAIL: <devrt/tvm.hpp> without devrt::tvm did not name the option:"; cat "$work/tvm.log"
  failures=$((failures + 1))
else
  echo "devrt/tvm.hpp refused as it should be: $(grep -m1 'Dtvm=enabled' "$work/tvm.log")"
fi
DESTDIR="$work/dest" meson install -C "$work/build" --no-rebuild --quiet >/dev/null
installed=$(cd "$work/dest" && find . -type f | sort)
echo "installed: $installed"
[ "$installed" = "./usr/bin/app" ] || { echo "FAIL: installed more than the application"; failures=$((failures + 1)); }
exit $failures
