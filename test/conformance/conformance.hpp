// SPDX-License-Identifier: Apache-2.0
// The conformance suite runs once per backend: meson runs the same executable as
// conformance-<name> with DEVRT_CONFORMANCE_BACKEND=<name>. Each test iterates over every device
// of that backend.
#ifndef DEVRT_TEST_CONFORMANCE_HPP
#define DEVRT_TEST_CONFORMANCE_HPP

#include <devrt/backend/backend.hpp>
#include <devrt/devrt.hpp>

// Every unit of the suite sees Catch's listener interfaces (skips.cpp defines a listener): one
// configuration whichever unit includes Catch first, unity builds included.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace conformance {

// The backend under test (set by main before any test runs).
devrt::BackendRef backend();
// Every device of it.
std::vector<devrt::Device> devices();

// Whether Buffer::allocate on the backend's devices comes from a Buffer cache: caching is on and
// the backend can tell when freed memory is idle (devrt/memory.hpp).
inline bool has_buffer_cache() { return devrt::buffer_cache_enabled() && backend().can_synchronize_device(); }

// The running case cannot run here, on one device or at all, and why (test/conformance/skips.cpp:
// reported at the end of the run as a skip, not a pass). The caller then returns or continues.
void skip(const std::string& reason);
// True when every case that ran was skipped whole (conformance_main then exits 77).
bool every_case_skipped();

// Every device of every available backend: the other side of each cross-device pair.
inline std::vector<devrt::Device> all_present_devices() {
  std::vector<devrt::Device> out;
  const devrt::Registry& registry = devrt::Registry::global();
  for (std::size_t i = 0; i < registry.size(); ++i) {
    devrt::BackendRef backend = registry.at(i);
    if (!backend.availability().ok()) continue;
    std::int32_t count = backend.device_count().value_or(0);
    for (std::int32_t id = 0; id < count; ++id) out.push_back(devrt::Device{backend.kind(), id});
  }
  return out;
}

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A recognisable byte pattern; `seed` makes different buffers differ.
inline std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
  std::vector<unsigned char> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>((i * 2654435761u + seed * 97u) >> 7);
  return bytes;
}

// Reads a whole buffer back to the host (synchronously).
inline std::vector<unsigned char> read_back(const devrt::Buffer& buffer) {
  std::vector<unsigned char> bytes(buffer.size());
  devrt::Status s = devrt::copy(buffer, devrt::host_span(bytes.data(), bytes.size()));
  REQUIRE(s.ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(buffer.device())).ok());
  return bytes;
}

inline devrt::Buffer upload(devrt::Device device, const std::vector<unsigned char>& bytes) {
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(device, bytes.size());
  REQUIRE(buffer.ok());
  REQUIRE(devrt::copy(devrt::host_span(bytes.data(), bytes.size()), *buffer).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  return std::move(buffer).value();
}

} // namespace conformance

// CONFORMANCE_SKIP("no textures on " << device): conformance::skip with a streamed message.
#define CONFORMANCE_SKIP(message)                                                                                      \
  do {                                                                                                                 \
    std::ostringstream conformance_skip_text;                                                                          \
    conformance_skip_text << message;                                                                                  \
    conformance::skip(conformance_skip_text.str());                                                                    \
  } while (false)

#endif // DEVRT_TEST_CONFORMANCE_HPP
