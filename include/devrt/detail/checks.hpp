// SPDX-License-Identifier: Apache-2.0
// The argument checks of copies, allocations and launches, shared by the run-time path
// (devrt::copy, Buffer::allocate, Function::launch) and the compile-time path (devrt/direct.hpp),
// so that both refuse the same inputs with the same codes and messages. The tests are inline (a
// compile-time copy is a straight line); the errors are built out of line, in libdevrt.
#ifndef DEVRT_DETAIL_CHECKS_HPP
#define DEVRT_DETAIL_CHECKS_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <devrt/device.hpp>
#include <devrt/module.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>

namespace devrt {
struct MemorySpan;
namespace detail {

// True when [offset, offset + nbytes) lies inside the span and the span is not null (unless the
// copy is empty).
inline bool copy_range_ok(std::size_t span_size, const void* data, std::size_t offset, std::size_t nbytes) noexcept {
  return offset <= span_size && nbytes <= span_size - offset && (data != nullptr || nbytes == 0);
}

// True when [a, a + n) and [b, b + n) share a byte.
inline bool intersects(std::uintptr_t a, std::uintptr_t b, std::size_t n) noexcept { return a < b + n && b < a + n; }

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
// Checks a launch of `function_name` on `device` and fills `desc` (whose args point at `raw`,
// kMaxKernelArgs entries): extents >= 1 whose product fits 32 bits, at most kMaxKernelArgs
// arguments, buffers on `device` with offsets inside them, valid scalar types, the stream on
// `device`. Errors name the kernel, grid and block.
Status check_launch(Device device, std::string_view function_name, const LaunchConfig& config,
                    std::span<const KernelArg> args, StreamRef stream, devrt_kernel_arg* raw,
                    devrt_launch_desc& desc) noexcept;

} // namespace detail
} // namespace devrt

#endif // DEVRT_DETAIL_CHECKS_HPP
