// SPDX-License-Identifier: Apache-2.0
// Transfers between host memory and device memory the host cannot map, through a stream's staging
// rings, band by band: the one loop that buffer writes and reads (vulkan_stream.cpp) and texture
// writes and reads (vulkan_image.cpp) share. Not public API.
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_STAGING_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_STAGING_HPP

#include <cstddef>
#include <cstring>

#include "vulkan_state.hpp"

namespace devrt::vulkan {

// `bands(each)` calls each(bytes, record) for every band of the transfer in order, and stops at
// the first error; record(VkBuffer staging) records the band's device copy from or into `staging`
// at offset 0. Bands are at most d.staging_chunk bytes and follow each other in host memory.

// The bands of `total` contiguous bytes: chunks of `chunk` bytes, the last one shorter;
// record(staging, at, bytes) records the device copy of the chunk at `at`.
template <class Record>
auto chunked_bands(std::size_t total, std::size_t chunk, Record record) {
  return [=](auto&& each) -> Status {
    for (std::size_t done = 0; done < total;) {
      const std::size_t bytes = total - done < chunk ? total - done : chunk;
      DEVRT_RETURN_IF_ERROR(each(bytes, [&](VkBuffer staging) { return record(staging, done, bytes); }));
      done += bytes;
    }
    return Status();
  };
}

// Host -> device: each band is copied into a slot of the upload ring and submitted, so that the
// device copies it while the host fills the next; the host's `total` bytes at `src` are taken when
// this returns. Caller holds the lock.
template <class Bands>
Status upload_in_bands(StreamState& s, const std::byte* src, std::size_t total, Bands bands) {
  DeviceState& d = *s.device;
  std::size_t done = 0;
  return bands([&](std::size_t bytes, auto&& record) -> Status {
    DEVRT_ASSIGN_OR_RETURN(StagingSlot * slot, acquire_staging(s, s.upload, MemoryUsage::upload));
    std::memcpy(slot->allocation->mapped, src + done, bytes);
    flush_mapping(d, *slot->allocation, true);
    DEVRT_RETURN_IF_ERROR(record(slot->allocation->buffer));
    slot->busy_until = staging_busy_until(s);
    done += bytes;
    return done < total ? flush(s) : Status();
  });
}

// Device -> host, complete on return: band i is copied by the device into a slot of the readback
// ring while the host copies band i-1 out to `dst`. Caller holds the lock.
template <class Bands>
Status read_back_in_bands(StreamState& s, std::byte* dst, Bands bands) {
  DeviceState& d = *s.device;
  StagingSlot* previous = nullptr;
  std::size_t previous_at = 0, previous_bytes = 0, done = 0;
  auto drain_previous = [&]() -> Status {
    DEVRT_RETURN_IF_ERROR(wait_value(d, s.timeline->semaphore, previous->busy_until));
    flush_mapping(d, *previous->allocation, false);
    std::memcpy(dst + previous_at, previous->allocation->mapped, previous_bytes);
    return Status();
  };
  DEVRT_RETURN_IF_ERROR(bands([&](std::size_t bytes, auto&& record) -> Status {
    DEVRT_ASSIGN_OR_RETURN(StagingSlot * slot, acquire_staging(s, s.readback, MemoryUsage::readback));
    DEVRT_RETURN_IF_ERROR(record(slot->allocation->buffer));
    DEVRT_RETURN_IF_ERROR(flush(s));
    slot->busy_until = s.submitted;
    if (previous != nullptr) DEVRT_RETURN_IF_ERROR(drain_previous());
    previous = slot;
    previous_at = done;
    previous_bytes = bytes;
    done += bytes;
    return Status();
  }));
  if (previous != nullptr) DEVRT_RETURN_IF_ERROR(drain_previous());
  retire(s);
  return Status();
}

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_STAGING_HPP
