#!/bin/sh
# environment_consumers.sh DEVRT_INFO: the number variables devrt-info reaches, each set to a bad
# value, are named once in a warning with the default used, and devrt-info still works: the
# staging chunk of Vulkan (which refused to open the device before the one rule) and the remote
# reply timeout. The other number variables are tried in test-environment and comm-engines.
set -u
info=$1
failures=0
expect() { # description, output, text
  case $2 in
    *"$3"*) echo "ok: $1" ;;
    *) echo "FAIL: $1: expected '$3' in:"; echo "$2"; failures=$((failures + 1)) ;;
  esac
}
if "$info" 2>/dev/null | grep -q "^  vulkan:0"; then
  out=$(DEVRT_VULKAN_STAGING_CHUNK=4095 "$info" --selftest 2>&1) || {
    echo "FAIL: devrt-info --selftest failed with a bad DEVRT_VULKAN_STAGING_CHUNK:"; echo "$out"; failures=$((failures + 1))
  }
  expect "a bad staging chunk is named with the default" "$out" \
    "DEVRT_VULKAN_STAGING_CHUNK=4095 is not a whole number from 4096 to 8388608; using 8388608"
  [ "$(printf '%s\n' "$out" | grep -c 'DEVRT_VULKAN_STAGING_CHUNK=')" -eq 1 ] || {
    echo "FAIL: the staging chunk's warning is not given once"; failures=$((failures + 1))
  }
else
  echo "note: no Vulkan device here; DEVRT_VULKAN_STAGING_CHUNK is tried only in test-environment"
fi
out=$(DEVRT_REMOTE=127.0.0.1:9 DEVRT_REMOTE_TIMEOUT_MS=1h "$info" 2>&1)
case $out in
  *"no UCX"*) echo "note: no UCX here; DEVRT_REMOTE_TIMEOUT_MS is tried only in test-environment" ;;
  *) expect "a bad remote timeout is named with the default" "$out" \
       "DEVRT_REMOTE_TIMEOUT_MS=1h is not a whole number from 1 to 3600000; using 10000" ;;
esac
[ $failures -eq 0 ] && echo "PASS"
exit $failures
