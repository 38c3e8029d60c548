#!/bin/sh
# without_ucx.sh DEVRT_INFO: with no UCX to open, devrt-info lists the remote backend as unavailable
# naming the library, and its self-test still passes on the other devices.
set -u
info=$1
out=$(DEVRT_UCX_LIBRARY=/nonexistent/libucp.so.0 DEVRT_REMOTE=127.0.0.1:9 "$info" 2> /dev/null)
echo "$out" | grep "backend remote"
echo "$out" | grep -q "backend remote (device kind remote): unavailable: .*no UCX: DEVRT_UCX_LIBRARY=/nonexistent/libucp.so.0: /nonexistent/libucp.so.0: cannot open" || {
  echo "FAIL: devrt-info does not name the missing UCX library"
  exit 1
}
DEVRT_UCX_LIBRARY=/nonexistent/libucp.so.0 DEVRT_REMOTE=127.0.0.1:9 "$info" --selftest > /dev/null 2>&1 || {
  echo "FAIL: devrt-info --selftest fails without UCX"
  exit 1
}
echo "PASS"
