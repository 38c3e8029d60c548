// SPDX-License-Identifier: Apache-2.0
// The argument checks of copies and allocations, shared by the run-time path (devrt::copy,
// Buffer::allocate) and the compile-time path (devrt/backend/direct.hpp), so that both refuse the same
// inputs with the same codes and messages. The tests are inline (a compile-time copy is a straight
// line); the errors are built out of line, in memory.cpp.
#ifndef DEVRT_BACKEND_DETAIL_MEMORY_CHECKS_HPP
#define DEVRT_BACKEND_DETAIL_MEMORY_CHECKS_HPP

#include <cstddef>
#include <cstdint>

#include <devrt/backend/backend_abi.h>
#include <devrt/device.hpp>
#include <devrt/memory.hpp>
#include <devrt/status.hpp>

namespace devrt::detail {

// True when [offset, offset + nbytes) lies inside the span and the span is not null (unless the
// copy is empty).
inline bool copy_range_ok(std::size_t span_size, const void* data, std::size_t offset, std::size_t nbytes) noexcept {
  return offset <= span_size && nbytes <= span_size - offset && (data != nullptr || nbytes == 0);
}

// True when [a, a + n) and [b, b + n) share a byte.
inline bool intersects(std::uintptr_t a, std::uintptr_t b, std::size_t n) noexcept { return a < b + n && b < a + n; }

// Whether a copy's source and destination ranges share a byte. `by_address` when both sides are
// addresses in one space (both host-accessible, or one device whose memory is addressable);
// otherwise they are opaque handles (cl_mem, VkBuffer) and only one allocation can overlap itself.
inline bool copy_ranges_overlap(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst,
                                std::size_t dst_offset, std::size_t nbytes, bool by_address) noexcept {
  if (by_address) {
    return intersects(reinterpret_cast<std::uintptr_t>(src.data) + src_offset,
                      reinterpret_cast<std::uintptr_t>(dst.data) + dst_offset, nbytes);
  }
  return src.device == dst.device && src.data == dst.data && intersects(src_offset, dst_offset, nbytes);
}

// The descriptor a backend's copy receives for a checked copy, its device objects not yet set
// (the caller sets those of the backend's sides).
inline devrt_copy_desc make_copy_desc(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst,
                                      std::size_t dst_offset, std::size_t nbytes, void* stream) noexcept {
  devrt_copy_desc desc;
  desc.src = src.data;
  desc.src_offset = src_offset;
  desc.src_kind = static_cast<std::int32_t>(src.device.kind);
  desc.dst_kind = static_cast<std::int32_t>(dst.device.kind);
  desc.dst = dst.data;
  desc.dst_offset = dst_offset;
  desc.nbytes = nbytes;
  desc.stream = stream;
  desc.src_device = nullptr;
  desc.dst_device = nullptr;
  return desc;
}

// out_of_range (the range leaves the span) or invalid_argument (a null span); `side` is "source"
// or "destination".
[[gnu::cold]] Status copy_range_error(const char* side, const MemorySpan& span, std::size_t offset,
                                      std::size_t nbytes) noexcept;
// invalid_argument: source and destination ranges overlap.
[[gnu::cold]] Status copy_overlap_error(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst,
                                        std::size_t dst_offset, std::size_t nbytes) noexcept;
// invalid_argument: the stream belongs to `stream_device`, the copy runs on `side`.
[[gnu::cold]] Status copy_stream_error(const MemorySpan& src, const MemorySpan& dst, Device stream_device, Device side,
                                       bool staged) noexcept;

// True for a power of two no larger than 1 MiB (kMaxAlignment).
inline bool alignment_ok(std::size_t alignment) noexcept {
  return alignment != 0 && (alignment & (alignment - 1)) == 0 && alignment <= (std::size_t{1} << 20);
}
// invalid_argument: the alignment is not a power of two up to kMaxAlignment.
[[gnu::cold]] Status allocation_alignment_error(Device device, std::size_t nbytes, std::size_t alignment) noexcept;
// out_of_memory: more than PTRDIFF_MAX bytes.
[[gnu::cold]] Status allocation_size_error(Device device, std::size_t nbytes, std::size_t alignment) noexcept;

} // namespace devrt::detail

#endif // DEVRT_BACKEND_DETAIL_MEMORY_CHECKS_HPP
