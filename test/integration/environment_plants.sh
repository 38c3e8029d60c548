#!/bin/sh
# check-environment refuses what docs/environment.md's rules forbid: a copy of the tree passes as
# it is, then fails once for each plant (a getenv in the library, a docs row that drifted, a
# variable listed but read nowhere, one the Python package reads unlisted), naming what is wrong.
# usage: environment_plants.sh SOURCE_ROOT
set -eu
root=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for d in docs include src python; do cp -R "$root/$d" "$scratch/$d"; done

checker=check-environment.py
. "$(dirname "$0")/plant_check.sh"
keep() { cp "$scratch/$1" "$scratch/kept"; }
restore() { cp "$scratch/kept" "$scratch/$1"; }

check ""
# A plain getenv of a library's name (what remote/auth.cpp did before the one loader).
keep src/remote/auth.cpp
printf 'const char* chosen_library() { return std::getenv("DEVRT_SODIUM_LIBRARY"); }\n' >>"$scratch/src/remote/auth.cpp"
check "FAIL: src/remote/auth.cpp:$(wc -l <"$scratch/src/remote/auth.cpp"): reads the environment with getenv"
restore src/remote/auth.cpp
# secure_getenv outside the readers is refused too: the name would skip the table.
keep src/nvrtc/nvrtc.cpp
printf 'const char* cuda() { return ::secure_getenv("CUDA_PATH"); }\n' >>"$scratch/src/nvrtc/nvrtc.cpp"
check "src/nvrtc/nvrtc.cpp:$(wc -l <"$scratch/src/nvrtc/nvrtc.cpp"): reads the environment with getenv"
restore src/nvrtc/nvrtc.cpp
# The docs' table drifting from the code's: a row's meaning changed.
keep docs/environment.md
sed -i 's/| `DEVRT_REMOTE_TIMEOUT_MS` | number, 1 to 3600000 |/| `DEVRT_REMOTE_TIMEOUT_MS` | number, 0 to 3600000 |/' "$scratch/docs/environment.md"
check "docs/environment.md: lacks the row | \`DEVRT_REMOTE_TIMEOUT_MS\` | number, 1 to 3600000 |"
restore docs/environment.md
# A variable listed that nothing reads.
keep src/support/environment_variables.hpp
sed -i 's|^  // Memory and copies$|  {"DEVRT_UNREAD", EnvKind::text, 0, 0, "planted"},\n  // Memory and copies|' \
  "$scratch/src/support/environment_variables.hpp"
check "DEVRT_UNREAD is listed but nothing in src/ or python/devrt/ reads it"
restore src/support/environment_variables.hpp
# The Python package reading a variable the table lacks.
printf 'import os\nX = os.environ.get("DEVRT_PLANTED")\n' >"$scratch/python/devrt/planted.py"
check "python/devrt/planted.py: reads DEVRT_PLANTED, which src/support/environment_variables.hpp does not list"
echo "PASS"
