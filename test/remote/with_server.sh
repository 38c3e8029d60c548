#!/bin/sh
# with_server.sh SERVER [--keyed] [SERVER ARGUMENTS...] -- COMMAND [ARGUMENTS...]
# Starts devrt-server on a free loopback port, runs COMMAND with DEVRT_REMOTE naming it, stops the
# server, and exits with COMMAND's status (77, a skip, included). --keyed: the server has a new
# key (devrt-server --generate-key), and COMMAND gets it in DEVRT_REMOTE_KEY_FILE. The server's
# output goes to stderr, prefixed, so that a failing test shows what the server said.
set -u
server=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
server_args=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  if [ "$1" = --keyed ]; then
    "$server" --generate-key "$work/key" || exit 1
    server_args="$server_args --key-file $work/key"
    DEVRT_REMOTE_KEY_FILE=$work/key
    export DEVRT_REMOTE_KEY_FILE
  else
    server_args="$server_args $1"
  fi
  shift
done
[ $# -gt 0 ] && shift
# shellcheck disable=SC2086 # the arguments are words
"$server" $server_args --address-file "$work/address" > "$work/server.log" 2>&1 &
server_pid=$!
waited=0
while [ ! -s "$work/address" ]; do
  if ! kill -0 "$server_pid" 2> /dev/null; then
    echo "with_server.sh: devrt-server exited before listening:" >&2
    sed 's/^/  server: /' "$work/server.log" >&2
    exit 1
  fi
  waited=$((waited + 1))
  if [ "$waited" -gt 600 ]; then
    echo "with_server.sh: devrt-server did not listen within 60 s" >&2
    kill -9 "$server_pid"
    exit 1
  fi
  sleep 0.1
done
DEVRT_REMOTE=$(cat "$work/address")
export DEVRT_REMOTE
"$@"
status=$?
# The server stops cleanly on SIGTERM (and, in sanitizer builds, passes their checks at exit).
kill -TERM "$server_pid" 2> /dev/null
waited=0
while kill -0 "$server_pid" 2> /dev/null && [ "$waited" -lt 300 ]; do
  sleep 0.1
  waited=$((waited + 1))
done
if kill -0 "$server_pid" 2> /dev/null; then
  echo "with_server.sh: devrt-server did not stop within 30 s of SIGTERM" >&2
  kill -9 "$server_pid"
  status=1
fi
wait "$server_pid"
server_status=$?
sed 's/^/  server: /' "$work/server.log" >&2
if [ "$server_status" -ne 0 ] && [ "$status" -ne 1 ]; then
  echo "with_server.sh: devrt-server exited with status $server_status" >&2
  status=1
fi
exit "$status"
