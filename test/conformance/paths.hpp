// SPDX-License-Identifier: Apache-2.0
// The two ways to reach a backend, as types the core cases (core_cases.hpp) are instantiated with:
// RuntimePath goes through the registry and the C table (devrt::Buffer, devrt::copy ...),
// DirectPath<B> through devrt/backend/direct.hpp (no table, no registry). One source, two instantiations.
#ifndef DEVRT_TEST_CONFORMANCE_PATHS_HPP
#define DEVRT_TEST_CONFORMANCE_PATHS_HPP

#include <devrt/backend/direct.hpp>
#include <devrt/memory.hpp>
#include <devrt/module.hpp>
#include <devrt/stream.hpp>

#include <cstddef>

namespace conformance {

struct RuntimePath {
  static constexpr const char* name = "run-time";
  using Buffer = devrt::Buffer;
  using Stream = devrt::Stream;
  using Event = devrt::Event;
  using Module = devrt::Module;

  static devrt::Status copy(const devrt::MemorySpan& src, std::size_t src_offset, const devrt::MemorySpan& dst,
                            std::size_t dst_offset, std::size_t nbytes, devrt::StreamRef stream = {}) {
    return devrt::copy(src, src_offset, dst, dst_offset, nbytes, stream);
  }
  static devrt::Status copy(const devrt::MemorySpan& src, const devrt::MemorySpan& dst) {
    return devrt::copy(src, dst);
  }
  static devrt::Status synchronize(devrt::StreamRef stream) { return devrt::synchronize(stream); }
  // The stream an omitted stream argument means.
  static devrt::StreamRef default_stream(devrt::Device device) { return devrt::current_stream(device); }
};

template <class B>
struct DirectPath {
  static constexpr const char* name = "compile-time";
  using Buffer = devrt::direct::Buffer<B>;
  using Stream = devrt::direct::Stream<B>;
  using Event = devrt::direct::Event<B>;
  using Module = devrt::direct::Module<B>;

  static devrt::Status copy(const devrt::MemorySpan& src, std::size_t src_offset, const devrt::MemorySpan& dst,
                            std::size_t dst_offset, std::size_t nbytes, devrt::StreamRef stream = {}) {
    return devrt::direct::copy<B>(src, src_offset, dst, dst_offset, nbytes, stream);
  }
  static devrt::Status copy(const devrt::MemorySpan& src, const devrt::MemorySpan& dst) {
    return devrt::direct::copy<B>(src, dst);
  }
  static devrt::Status synchronize(devrt::StreamRef stream) { return devrt::direct::synchronize<B>(stream); }
  static devrt::StreamRef default_stream(devrt::Device device) { return devrt::StreamRef{device, nullptr}; }
};

} // namespace conformance

#endif // DEVRT_TEST_CONFORMANCE_PATHS_HPP
