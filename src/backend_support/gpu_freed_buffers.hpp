// SPDX-License-Identifier: Apache-2.0
// The buffers a GPU backend freed lately, for backends whose memory handles are pointers the
// driver or the backend dereferences (OpenCL's cl_mem, Vulkan's allocation records). Not public
// API.
#ifndef DEVRT_SRC_BACKEND_SUPPORT_GPU_FREED_BUFFERS_HPP
#define DEVRT_SRC_BACKEND_SUPPORT_GPU_FREED_BUFFERS_HPP

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include <devrt/status.hpp>

namespace devrt::detail {

// The last kCapacity handles a backend freed, each forgotten when an allocation returns it again.
// A copy or launch checks its handles here before the driver sees them, so that a MemorySpan that
// outlived its Buffer is an error naming the handle, not a driver abort (PoCL aborts in
// can_run_command()) or a use after free. Handles the backend never allocated (another
// library's) pass. Each backend keeps its own. Thread-safe: a lock and, once anything was freed,
// a hash lookup per checked handle.
class FreedBuffers {
public:
  static constexpr std::size_t kCapacity = 4096;
  // After the driver returned `handle`.
  void allocated(const void* handle);
  // Before the handle's memory is released: once it is, another thread's allocation may return
  // the same address, and a mark made after that would refuse the live buffer.
  void freed(const void* handle);
  // invalid_argument when `handle` was freed: "<what> buffer 0x... was freed (...)", or for a
  // kernel argument (index given) "argument <index>: buffer 0x... was freed (...)".
  Status check(const void* handle, const char* what, std::uint32_t index = UINT32_MAX) const;

private:
  mutable std::mutex mutex_;
  std::unordered_set<const void*> freed_;
  const void* ring_[kCapacity] = {}; // the freed handles, oldest at next_
  std::size_t next_ = 0;
};

} // namespace devrt::detail

#endif // DEVRT_SRC_BACKEND_SUPPORT_GPU_FREED_BUFFERS_HPP
