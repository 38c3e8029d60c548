// SPDX-License-Identifier: Apache-2.0
// The memory devrt allocates for itself and for host buffers: malloc and posix_memalign on a
// hosted platform; on bare metal, the firmware heap's two functions (devrt/firmware_heap.h), so
// that a firmware image links no malloc and its integrator decides where the memory comes from.
#ifndef DEVRT_SRC_SUPPORT_HEAP_HPP
#define DEVRT_SRC_SUPPORT_HEAP_HPP

#include <devrt/config.hpp>

#include <cstddef>
#include <cstdlib>

#if DEVRT_BARE_METAL
#include <devrt/firmware_heap.h>
#endif

namespace devrt::detail {

// `nbytes` (> 0) aligned to `alignment` (a power of two), or nullptr. Free with heap_free.
// Thread-safe where malloc is (hosted); bare-metal devrt is single-threaded.
inline void* heap_allocate(std::size_t nbytes, std::size_t alignment = alignof(std::max_align_t)) noexcept {
#if DEVRT_BARE_METAL
  return devrt_firmware_allocate(nbytes, alignment < 8 ? 8 : alignment);
#elif defined(__unix__) || defined(__APPLE__)
  if (alignment <= alignof(std::max_align_t)) return std::malloc(nbytes);
  void* pointer = nullptr;
  return posix_memalign(&pointer, alignment, nbytes) == 0 ? pointer : nullptr;
#else
  if (alignment <= alignof(std::max_align_t)) return std::malloc(nbytes);
  if (nbytes > SIZE_MAX - (alignment - 1)) return nullptr;
  return std::aligned_alloc(alignment, (nbytes + alignment - 1) & ~(alignment - 1)); // C11 wants a multiple
#endif
}

// Gives back what heap_allocate returned; nullptr is ignored.
inline void heap_free(void* pointer) noexcept {
#if DEVRT_BARE_METAL
  devrt_firmware_free(pointer);
#else
  std::free(pointer);
#endif
}

} // namespace devrt::detail

#endif // DEVRT_SRC_SUPPORT_HEAP_HPP
