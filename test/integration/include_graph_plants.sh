#!/bin/sh
# include-graph refuses what the rooms table forbids: a copy of the tree passes as it is, then
# fails once for each planted include, naming the file, its room and the room it reached.
# usage: include_graph_plants.sh SOURCE_ROOT
set -eu
root=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for d in docs include src tools python bench test; do cp -R "$root/$d" "$scratch/$d"; done

check() { # expected message, or "" for a pass
  if output=$(python3 "$root/tools/include-graph.py" "$scratch" 2>&1); then
    [ -z "$1" ] && return 0
    echo "include-graph passed; expected: $1"; exit 1
  fi
  if [ -z "$1" ]; then echo "the unplanted tree failed:"; echo "$output"; exit 1; fi
  case $output in
  *"$1"*) echo "refused as it should be: $1" ;;
  *) echo "include-graph failed without \"$1\":"; echo "$output"; exit 1 ;;
  esac
}

check ""
# Memory into graphs: only the hooks header (core/capture_hooks.hpp) joins them.
cp "$scratch/src/core/memory.cpp" "$scratch/memory.cpp.kept"
printf '#include "core/graphs/graph_state.hpp"\n' >>"$scratch/src/core/memory.cpp"
check "FAIL: src/core/memory.cpp (core) includes src/core/graphs/graph_state.hpp (graphs)"
cp "$scratch/memory.cpp.kept" "$scratch/src/core/memory.cpp"
# A backend into the server's sessions: only the remote backend reaches the remote room.
printf '#include "remote/session.hpp"\n' >>"$scratch/src/backends/opencl/opencl_backend.cpp"
check "FAIL: src/backends/opencl/opencl_backend.cpp (backend opencl) includes src/remote/session.hpp (remote)"
