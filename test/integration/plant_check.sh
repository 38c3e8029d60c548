# Sourced by the plant tests (include_graph_plants.sh, environment_plants.sh): check EXPECTED runs
# $checker (a tools/ script) on the copy of the tree in $scratch; it must pass when EXPECTED is
# empty, and otherwise fail with a message holding EXPECTED.
check() {
  if output=$(python3 "$root/tools/$checker" "$scratch" 2>&1); then
    [ -z "$1" ] && return 0
    echo "$checker passed; expected: $1"; exit 1
  fi
  if [ -z "$1" ]; then echo "the unplanted tree failed:"; echo "$output"; exit 1; fi
  case $output in
  *"$1"*) echo "refused as it should be: $1" ;;
  *) echo "$checker failed without \"$1\":"; echo "$output"; exit 1 ;;
  esac
}
