// SPDX-License-Identifier: Apache-2.0
// The buffers a GPU backend freed lately (backend_support/gpu_freed_buffers.hpp).
#include "backend_support/gpu_freed_buffers.hpp"

namespace devrt::detail {

void FreedBuffers::allocated(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  freed_.erase(handle); // its ring slot stays, and is ignored when evicted
}

void FreedBuffers::freed(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const void* oldest = ring_[next_]; oldest != nullptr) freed_.erase(oldest);
  ring_[next_] = handle;
  next_ = (next_ + 1) % kCapacity;
  freed_.insert(handle);
}

Status FreedBuffers::check(const void* handle, const char* what, std::uint32_t index) const {
  bool stale = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stale = !freed_.empty() && freed_.count(handle) != 0;
  }
  if (!stale) [[likely]]
    return Status();
  if (index != UINT32_MAX) {
    return make_error(ErrorCode::invalid_argument, "argument ", index, ": buffer ", handle,
                      " was freed (a MemorySpan or handle that outlived its Buffer)");
  }
  return make_error(ErrorCode::invalid_argument, what, " buffer ", handle,
                    " was freed (a MemorySpan or handle that outlived its Buffer)");
}

} // namespace devrt::detail
