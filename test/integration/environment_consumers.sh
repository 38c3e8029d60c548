#!/bin/sh
# environment_consumers.sh DEVRT_INFO: the number variables devrt-info reaches, each set to a bad
# value, are named once in a warning with the default used, and devrt-info still works: the
# staging chunk of Vulkan (which refused to open the device before the one rule) and the remote
# reply timeout. The other number variables are tried in test-environment and comm-engines. Then
# the rule of every read, secure_getenv: a set-user-ID copy of devrt-info sees no variable.
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
# Secure execution: a copy owned by another user with its set-user-ID bit runs with AT_SECURE, so
# devrt reads no variable at all (the bad value above goes unseen) and still works.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if findmnt -no OPTIONS -T "$scratch" 2>/dev/null | grep -q nosuid; then
  echo "note: $scratch is on a nosuid filesystem; the set-user-ID case is not checked"
elif [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
  chmod 755 "$scratch"
  cp "$info" "$scratch/devrt-info" && chown nobody "$scratch/devrt-info" && chmod 4755 "$scratch/devrt-info"
  out=$(DEVRT_BUFFER_CACHE_LIMIT=12x "$scratch/devrt-info" --selftest 2>&1)
  status=$?
  case $out in
    *"Sanitizer has encountered a fatal error"*)
      echo "note: the sanitizers do not run set-user-ID programs; secure execution is checked in the plain build" ;;
    *)
      [ $status -eq 0 ] || { echo "FAIL: the set-user-ID devrt-info exited $status:"; echo "$out"; failures=$((failures + 1)); }
      case $out in
        *DEVRT_BUFFER_CACHE_LIMIT*) echo "FAIL: a set-user-ID devrt-info read DEVRT_BUFFER_CACHE_LIMIT"; failures=$((failures + 1)) ;;
        *) echo "ok: a set-user-ID devrt-info reads no variable" ;;
      esac ;;
  esac
  out=$(DEVRT_BUFFER_CACHE_LIMIT=12x "$info" --selftest 2>&1)
  expect "the same variable is read by the program run normally" "$out" "DEVRT_BUFFER_CACHE_LIMIT=12x is not a whole number"
else
  echo "note: not root; the set-user-ID case is not checked"
fi
[ $failures -eq 0 ] && echo "PASS"
exit $failures
