// SPDX-License-Identifier: Apache-2.0
#include "conformance.hpp"

#include <cstdint>
#include <limits>
#include <thread>

using conformance::contains;
using devrt::Buffer;
using devrt::ErrorCode;

TEST_CASE("allocations of 0, 1, odd and large sizes", "[conformance][memory]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4097},
                             std::size_t{(1u << 20) + 1}, std::size_t{64u << 20}}) {
      INFO("size " << size);
      devrt::Result<Buffer> buffer = Buffer::allocate(device, size);
      REQUIRE(buffer.ok());
      CHECK(buffer->size() == size);
      CHECK(buffer->device() == device);
      CHECK(buffer->empty() == (size == 0));
      CHECK((buffer->data() == nullptr) == (size == 0));
    }
  }
}

TEST_CASE("allocations honour power-of-two alignments and refuse others", "[conformance][memory]") {
  devrt::BackendRef backend = conformance::backend();
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    for (std::size_t alignment = 1; alignment <= 4096; alignment *= 2) {
      devrt::Result<Buffer> buffer = Buffer::allocate(device, 100, alignment);
      REQUIRE(buffer.ok());
      if (backend.has_capability(DEVRT_CAP_ADDRESSABLE)) {
        CHECK(reinterpret_cast<std::uintptr_t>(buffer->data()) % alignment == 0);
      }
    }
    for (std::size_t alignment : {std::size_t{0}, std::size_t{3}, std::size_t{48}, devrt::kMaxAlignment * 2}) {
      INFO("alignment " << alignment);
      devrt::Result<Buffer> buffer = Buffer::allocate(device, 64, alignment);
      REQUIRE_FALSE(buffer.ok());
      CHECK(buffer.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(buffer.status().message(), "alignment"));
    }
  }
}

TEST_CASE("huge allocations fail with out_of_memory and name the call", "[conformance][memory]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    for (std::size_t size : {std::numeric_limits<std::size_t>::max(), std::size_t{1} << 62, std::size_t{1} << 50}) {
      devrt::Result<Buffer> buffer = Buffer::allocate(device, size);
      REQUIRE_FALSE(buffer.ok());
      CHECK(buffer.status().code() == ErrorCode::out_of_memory);
      CHECK(contains(buffer.status().message(), devrt::to_string(device)));
      CHECK(contains(buffer.status().message(), "allocate"));
    }
    // The device still works afterwards.
    CHECK(Buffer::allocate(device, 4096).ok());
  }
}

TEST_CASE("allocations on devices that do not exist fail with invalid_argument", "[conformance][memory]") {
  devrt::BackendRef backend = conformance::backend();
  auto count = static_cast<std::int32_t>(conformance::devices().size());
  for (std::int32_t id : {-1, count, count + 100}) {
    devrt::Result<Buffer> buffer = Buffer::allocate(devrt::Device{backend.kind(), id}, 64);
    REQUIRE_FALSE(buffer.ok());
    CHECK(buffer.status().code() == ErrorCode::invalid_argument);
    CHECK(contains(buffer.status().message(), std::string(backend.name())));
  }
}

TEST_CASE("a Buffer frees once, moves cleanly and resets", "[conformance][memory]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Buffer a = std::move(Buffer::allocate(device, 256)).value();
    void* data = a.data();
    Buffer b = std::move(a);
    CHECK(a.data() == nullptr); // NOLINT(bugprone-use-after-move)
    CHECK(a.size() == 0);       // NOLINT(bugprone-use-after-move)
    CHECK(b.data() == data);
    Buffer c = std::move(Buffer::allocate(device, 64)).value();
    c = std::move(b);
    CHECK(c.data() == data);
    CHECK(c.reset().ok());
    CHECK(c.data() == nullptr);
    CHECK(c.reset().ok());
    // A copy into or out of the emptied buffer says the buffer is empty, not "0 bytes".
    std::byte host[64] = {};
    devrt::Status into = devrt::copy(devrt::host_span(host, sizeof host), c);
    CHECK(into.code() == devrt::ErrorCode::invalid_argument);
    CHECK_THAT(std::string(into.message()),
               Catch::Contains("the destination is empty (no memory: a Buffer after reset()"));
    devrt::Status out_of = devrt::copy(c, devrt::host_span(host, sizeof host));
    CHECK_THAT(std::string(out_of.message()), Catch::Contains("the source is empty"));
  }
}

TEST_CASE("copies in every direction with offsets round-trip exactly", "[conformance][copy]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    // 17 MiB: more than two chunks of a staging ring (Vulkan on discrete GPUs, and with
    // DEVRT_VULKAN_FORCE_STAGING=1), so chunks are pipelined and the ring's slots reused.
    for (std::size_t size : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{(1u << 20) + 3},
                             std::size_t{(17u << 20) + 3}}) {
      INFO("size " << size);
      std::vector<unsigned char> source = conformance::pattern(size + 11, 1);
      Buffer a = std::move(Buffer::allocate(device, size + 5)).value();
      Buffer b = std::move(Buffer::allocate(device, size + 9)).value();
      // host -> device at offset 5, device -> device to offset 9, device -> host
      REQUIRE(devrt::copy(devrt::host_span(source.data(), source.size()), 11, a, 5, size).ok());
      REQUIRE(devrt::copy(a, 5, b, 9, size).ok());
      std::vector<unsigned char> result(size + 2, 0xEE);
      REQUIRE(devrt::copy(b, 9, devrt::host_span(result.data(), result.size()), 1, size).ok());
      REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
      CHECK(result[0] == 0xEE);
      CHECK(result[size + 1] == 0xEE);
      CHECK(
          std::equal(result.begin() + 1, result.begin() + 1 + static_cast<std::ptrdiff_t>(size), source.begin() + 11));
    }
  }
}

TEST_CASE("copies between devices of the backend", "[conformance][copy]") {
  std::vector<devrt::Device> all = conformance::devices();
  if (all.size() < 2) {
    CONFORMANCE_SKIP(conformance::backend().name() << " has one device; peer copies need two");
    return;
  }
  std::vector<unsigned char> source = conformance::pattern(1 << 16, 2);
  Buffer a = conformance::upload(all[0], source);
  Buffer b = std::move(Buffer::allocate(all[1], source.size())).value();
  REQUIRE(devrt::copy(a, b, devrt::current_stream(all[1])).ok());
  CHECK(conformance::read_back(b) == source);
}

TEST_CASE("zero-byte copies are no-ops, even at the end of a buffer", "[conformance][copy]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<unsigned char> source = conformance::pattern(64, 3);
    Buffer a = conformance::upload(device, source);
    Buffer empty = std::move(Buffer::allocate(device, 0)).value();
    CHECK(devrt::copy(a, 64, a, 0, 0).ok());
    CHECK(devrt::copy(empty, a).code() == ErrorCode::invalid_argument); // sizes differ
    CHECK(devrt::copy(empty, 0, a, 10, 0).ok());
    CHECK(devrt::copy(devrt::host_span(nullptr, 0), 0, a, 0, 0).ok());
    CHECK(conformance::read_back(a) == source);
  }
}

TEST_CASE("out-of-range copies are refused and change nothing", "[conformance][copy]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<unsigned char> source = conformance::pattern(128, 4);
    Buffer a = conformance::upload(device, source);
    Buffer b = conformance::upload(device, conformance::pattern(128, 5));
    std::vector<unsigned char> host(128, 0);
    const std::size_t huge = std::numeric_limits<std::size_t>::max();
    struct Case {
      devrt::MemorySpan src;
      std::size_t src_offset;
      devrt::MemorySpan dst;
      std::size_t dst_offset;
      std::size_t n;
    };
    const Case cases[] = {
        {a, 0, b, 0, 129},
        {a, 1, b, 0, 128},
        {a, 0, b, 1, 128},
        {a, 129, b, 0, 0},
        {a, huge, b, 0, 1},
        {a, 1, b, 0, huge},
        {a, 0, b, huge - 1, 2},
        {devrt::host_span(host.data(), 128), 64, b, 0, 65},
        {a, 100, devrt::host_span(host.data(), 128), 0, 29},
    };
    for (const Case& c : cases) {
      INFO("src_offset " << c.src_offset << " dst_offset " << c.dst_offset << " n " << c.n);
      devrt::Status s = devrt::copy(c.src, c.src_offset, c.dst, c.dst_offset, c.n);
      CHECK(s.code() == ErrorCode::out_of_range);
      CHECK(contains(s.message(), "exceeds"));
    }
    CHECK(conformance::read_back(a) == source);
    CHECK(conformance::read_back(b) == conformance::pattern(128, 5));
  }
}

TEST_CASE("overlapping copies within one allocation are refused; disjoint ones work", "[conformance][copy]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<unsigned char> source = conformance::pattern(256, 6);
    Buffer a = conformance::upload(device, source);
    for (auto [from, to, n] : {std::tuple{0, 0, 16}, std::tuple{0, 8, 16}, std::tuple{8, 0, 16}, std::tuple{0, 255, 1},
                               std::tuple{100, 50, 51}, std::tuple{100, 49, 51}}) {
      if (from + n > 256 || to + n > 256) continue;
      INFO("from " << from << " to " << to << " n " << n);
      devrt::Status s =
          devrt::copy(a, static_cast<std::size_t>(from), a, static_cast<std::size_t>(to), static_cast<std::size_t>(n));
      bool overlaps = from < to + n && to < from + n;
      if (overlaps) {
        CHECK(s.code() == ErrorCode::invalid_argument);
        CHECK(contains(s.message(), "overlap"));
      } else {
        CHECK(s.ok());
      }
    }
    std::vector<unsigned char> expected = source;
    std::copy(source.begin(), source.begin() + 1, expected.begin() + 255);
    std::copy(source.begin() + 100, source.begin() + 151, expected.begin() + 49);
    CHECK(conformance::read_back(a) == expected);
  }
}

TEST_CASE("null data with a non-zero size is refused", "[conformance][copy]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Buffer a = std::move(Buffer::allocate(device, 64)).value();
    devrt::Status s = devrt::copy(devrt::host_span(nullptr, 64), 0, a, 0, 64);
    CHECK(s.code() == ErrorCode::invalid_argument);
    CHECK(contains(s.message(), "null"));
    s = devrt::copy(devrt::MemorySpan{device, nullptr, 64}, 0, devrt::host_span(&s, 1), 0, 1);
    CHECK(s.code() == ErrorCode::invalid_argument);
  }
}

TEST_CASE("a copy on another device's stream is refused", "[conformance][copy][stream]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Buffer a = std::move(Buffer::allocate(device, 64)).value();
    std::vector<unsigned char> host(64);
    devrt::StreamRef foreign{devrt::Device{device.kind, device.id + 1000}, nullptr};
    devrt::Status s = devrt::copy(devrt::host_span(host.data(), 64), a, foreign);
    CHECK(s.code() == ErrorCode::invalid_argument);
    CHECK(contains(s.message(), "stream"));
  }
}

// The stream rule of devrt::copy, tested as a user relies on it: after synchronizing only the
// stream of copy_device(src, dst), the destination holds the bytes, read at once through its
// pointer where the host can reach it. Both directions between every device of this backend and
// every present device (cpu, the other backends, this backend's other devices).
TEST_CASE("a copy is complete once the stream of copy_device is synchronized", "[conformance][copy][stream]") {
  const std::vector<devrt::Device> others = conformance::all_present_devices();
  const devrt::Registry& registry = devrt::Registry::global();
  auto host_reachable = [&](devrt::Device d) { return registry.find(d.kind).host_accessible(); };
  const std::size_t size = (std::size_t{4} << 20) + 12; // large enough for a real DMA
  for (const devrt::Device device : conformance::devices()) {
    for (const devrt::Device other : others) {
      for (bool outward : {true, false}) {
        const devrt::Device src_device = outward ? device : other;
        const devrt::Device dst_device = outward ? other : device;
        INFO(devrt::to_string(src_device) << " -> " << devrt::to_string(dst_device));
        devrt::Result<devrt::Device> runs_on = devrt::copy_device(src_device, dst_device);
        REQUIRE(runs_on.ok());
        // The rule itself: the destination, unless the destination is host-accessible and the
        // source is another kind of device than cpu.
        const bool source_side = host_reachable(dst_device) && src_device.kind != devrt::DeviceKind::cpu &&
                                 src_device.kind != dst_device.kind;
        CHECK(*runs_on == (source_side ? src_device : dst_device));

        std::vector<unsigned char> bytes = conformance::pattern(size, static_cast<unsigned>(src_device.id + 7));
        Buffer src = conformance::upload(src_device, bytes);
        Buffer dst = std::move(Buffer::allocate(dst_device, size)).value();
        REQUIRE(devrt::copy(src, dst).ok());
        REQUIRE(devrt::synchronize(devrt::current_stream(*runs_on)).ok());
        if (host_reachable(dst_device)) {
          const auto* got = static_cast<const unsigned char*>(dst.data());
          CHECK(std::equal(bytes.begin(), bytes.end(), got));
        } else {
          CHECK(conformance::read_back(dst) == bytes);
        }

        // A stream of a device that does not run the copy is refused before anything happens.
        const devrt::Device wrong = *runs_on == dst_device ? src_device : dst_device;
        if (wrong != *runs_on) {
          devrt::Result<devrt::Stream> foreign = devrt::Stream::create(wrong);
          REQUIRE(foreign.ok());
          devrt::Status s = devrt::copy(src, dst, *foreign);
          CHECK(s.code() == ErrorCode::invalid_argument);
          CHECK(contains(s.message(), "stream"));
        }
      }
    }
  }
}

// Threads sharing the device's default stream (and so, on Vulkan, one staging ring) each move
// buffers larger than a staging chunk to the device and back; every thread gets its own bytes.
TEST_CASE("concurrent host copies on a shared stream keep every thread's bytes", "[conformance][copy][concurrency]") {
  constexpr int kThreads = 3;
  constexpr int kRounds = 4;
  const std::size_t size = (std::size_t{9} << 20) + 20;
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        devrt::StreamRef stream{device, nullptr}; // the device's default stream, shared by all
        for (int round = 0; round < kRounds; ++round) {
          std::vector<unsigned char> bytes = conformance::pattern(size, static_cast<unsigned>(t * 16 + round));
          std::vector<unsigned char> back(size, 0);
          devrt::Result<Buffer> buffer = Buffer::allocate(device, size);
          if (!buffer.ok() || !devrt::copy(devrt::host_span(bytes.data(), size), *buffer, stream).ok() ||
              !devrt::copy(*buffer, devrt::MemorySpan{devrt::kHostDevice, back.data(), size}, stream).ok() ||
              !devrt::synchronize(stream).ok()) {
            ++failures[static_cast<std::size_t>(t)];
            continue;
          }
          if (back != bytes) ++mismatches[static_cast<std::size_t>(t)];
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) {
      CHECK(failures[static_cast<std::size_t>(t)] == 0);
      CHECK(mismatches[static_cast<std::size_t>(t)] == 0);
    }
  }
}

TEST_CASE("a copy through a span whose buffer was freed is refused, naming the handle", "[conformance][copy]") {
  const std::string_view name = conformance::backend().name();
  if (name != "opencl" && name != "vulkan" && name != "webgpu") {
    CONFORMANCE_SKIP("the " << name
                            << " backend's handles are host or device addresses, which it cannot tell "
                               "from live ones once freed (OpenCL, Vulkan and WebGPU can)");
    return;
  }
  const bool cached = devrt::buffer_cache_enabled();
  devrt::set_buffer_cache_enabled(false); // the free must reach the backend
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    devrt::Buffer buffer = std::move(devrt::Buffer::allocate(device, 256)).value();
    const devrt::MemorySpan stale = buffer.span();
    REQUIRE(buffer.reset().ok());
    std::byte host[256] = {};
    devrt::Status into = devrt::copy(devrt::host_span(host, sizeof host), stale);
    CHECK(into.code() == devrt::ErrorCode::invalid_argument);
    CHECK_THAT(std::string(into.message()), Catch::Contains("the destination buffer") && Catch::Contains("was freed"));
    devrt::Status out_of = devrt::copy(stale, devrt::host_span(host, sizeof host));
    CHECK_THAT(std::string(out_of.message()), Catch::Contains("the source buffer") && Catch::Contains("was freed"));
    // A new allocation that reuses the handle is live again.
    devrt::Buffer again = std::move(devrt::Buffer::allocate(device, 256)).value();
    CHECK(devrt::copy(devrt::host_span(host, sizeof host), again).ok());
    CHECK(devrt::synchronize(devrt::current_stream(device)).ok());
  }
  devrt::set_buffer_cache_enabled(cached);
}
