#!/bin/sh
# include-graph refuses what the rooms table forbids: a copy of the tree passes as it is, then
# fails once for each plant (an include, a declaration, a direction, a meson.build line, a loose
# file), naming what is wrong.
# usage: include_graph_plants.sh SOURCE_ROOT
set -eu
root=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for d in docs include src tools python bench test; do cp -R "$root/$d" "$scratch/$d"; done

checker=include-graph.py
. "$(dirname "$0")/plant_check.sh"

check ""
# Memory into graphs: only the hooks header (core/execution/capture_hooks.hpp) joins them.
cp "$scratch/src/core/memory/memory.cpp" "$scratch/memory.cpp.kept"
printf '#include "core/graphs/graph_state.hpp"\n' >>"$scratch/src/core/memory/memory.cpp"
check "FAIL: src/core/memory/memory.cpp (memory) includes src/core/graphs/graph_state.hpp (graphs)"
cp "$scratch/memory.cpp.kept" "$scratch/src/core/memory/memory.cpp"
# A backend into the server's sessions: only the remote backend reaches the remote room.
printf '#include "remote/session.hpp"\n' >>"$scratch/src/backends/opencl/opencl_backend.cpp"
check "FAIL: src/backends/opencl/opencl_backend.cpp (backend opencl) includes src/remote/session.hpp (remote)"
# A call across rooms that no include shows: devices declaring a function that memory defines.
cp "$scratch/src/core/devices/device_record.hpp" "$scratch/device_record.hpp.kept"
printf 'namespace devrt::detail {\nvoid close_stream_pool(DeviceRecord& record) noexcept;\n}\n' \
  >>"$scratch/src/core/devices/device_record.hpp"
check "FAIL: src/core/devices/device_record.hpp (devices) declares close_stream_pool(), which only another room defines: src/core/memory/stream_pool.cpp (memory)"
cp "$scratch/device_record.hpp.kept" "$scratch/src/core/devices/device_record.hpp"
# Directions that loop: registry allowed to include tensors, which reaches registry.
cp "$scratch/docs/architecture.md" "$scratch/architecture.md.kept"
sed -i 's/^| registry | `src\/core\/registry\/\*` | \(.*\) |$/| registry | `src\/core\/registry\/*` | \1, tensors |/' "$scratch/docs/architecture.md"
check "FAIL: the rooms table's directions make a cycle: "
cp "$scratch/architecture.md.kept" "$scratch/docs/architecture.md"
# A room's meson.build naming a room its row does not give it.
sed -i 's/^# Uses: platform, registry, devices$/# Uses: platform, registry, devices, graphs/' "$scratch/src/core/execution/meson.build"
check "FAIL: src/core/execution/meson.build: \"# Uses: devices, graphs, platform, registry\" but the rooms table gives execution"
sed -i 's/^# Uses: platform, registry, devices, graphs$/# Uses: platform, registry, devices/' "$scratch/src/core/execution/meson.build"
# A file loose in src/core.
printf '// loose\n' >"$scratch/src/core/loose.cpp"
check "FAIL: src/core/loose.cpp: in no room of docs/architecture.md"
