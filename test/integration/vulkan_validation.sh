#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Vulkan conformance suite under Khronos' validation layer with synchronization validation:
# every API use valid, and no hazard between the commands devrt records (its barriers go only
# where ranges overlap, so a missing one shows as SYNC-HAZARD-*). Run as lavapipe runs it, and
# the way a discrete GPU without push descriptors does (never mapped, staging ring, pools).
# Skips (77) where the layer is not installed. Usage: vulkan_validation.sh <test-conformance>
set -u
conformance=$1
if ! ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >/dev/null 2>&1; then
  echo "SKIP: the Khronos validation layer is not installed (Debian: vulkan-validationlayers)"
  exit 77
fi
export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
export VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
export DEVRT_CONFORMANCE_BACKEND=vulkan
failures=0
for mode in plain staged; do
  log=$(mktemp)
  if [ $mode = staged ]; then
    DEVRT_VULKAN_FORCE_STAGING=1 DEVRT_VULKAN_NO_PUSH_DESCRIPTORS=1 "$conformance" >"$log" 2>&1
  else
    "$conformance" >"$log" 2>&1
  fi
  rc=$?
  tail -2 "$log"
  if [ $rc -eq 77 ]; then
    echo "SKIP: no Vulkan device"
    rm -f "$log"
    exit 77
  fi
  [ $rc -eq 0 ] || { echo "FAIL ($mode): the suite exited $rc"; failures=$((failures + 1)); }
  if grep -q -E "Validation Error|SYNC-HAZARD" "$log"; then
    echo "FAIL ($mode): the validation layer reported:"
    grep -E "Validation Error|SYNC-HAZARD" "$log" | cut -c1-400 | sort | uniq -c | head -20
    failures=$((failures + 1))
  fi
  rm -f "$log"
done
[ $failures -eq 0 ] || exit 1
echo "vulkan validation: clean"
