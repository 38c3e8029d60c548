// SPDX-License-Identifier: Apache-2.0
// The Buffer cache (devrt/memory.hpp): reuse, bounds, statistics, emptying, the opt-out, and
// threads sharing it. Runs on every device; devices whose backend can neither finish every
// operation on return nor wait for a whole device have no cache, and there the same calls must
// leave every figure at zero.
#include "conformance.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

using devrt::Buffer;
using devrt::PoolStats;

namespace {

PoolStats stats_of(devrt::Device device) {
  devrt::Result<PoolStats> stats = devrt::buffer_cache_stats(device);
  REQUIRE(stats.ok());
  return *stats;
}

bool env_turns_cache_off() {
  const char* text = std::getenv("DEVRT_BUFFER_CACHE");
  return text != nullptr && (std::strcmp(text, "0") == 0 || std::strcmp(text, "off") == 0);
}

} // namespace

TEST_CASE("DEVRT_BUFFER_CACHE=0 in the environment turns the cache off", "[conformance][buffer_cache]") {
  CHECK(devrt::buffer_cache_enabled() == !env_turns_cache_off());
}

TEST_CASE("a freed Buffer's memory is handed out again from the device's cache", "[conformance][buffer_cache]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    REQUIRE(devrt::empty_cache(device).ok());
    const PoolStats before = stats_of(device);
    void* first = nullptr;
    {
      Buffer buffer = std::move(Buffer::allocate(device, 1000)).value();
      first = buffer.data();
      CHECK(buffer.size() == 1000);
    }
    for (int i = 0; i < 100; ++i) {
      Buffer buffer = std::move(Buffer::allocate(device, 1024)).value();
      if (conformance::has_buffer_cache()) CHECK(buffer.data() == first);
    }
    const PoolStats after = stats_of(device);
    if (conformance::has_buffer_cache()) {
      CHECK(after.backend_allocations == before.backend_allocations + 1);
      CHECK(after.hits == before.hits + 100);
      CHECK(after.reserved_bytes == before.reserved_bytes + 1024);
      CHECK(after.cached_bytes == before.cached_bytes + 1024);
      REQUIRE(devrt::empty_cache(device).ok());
      const PoolStats emptied = stats_of(device);
      CHECK(emptied.cached_bytes == 0);
      CHECK(emptied.reserved_bytes == before.reserved_bytes);
      CHECK(emptied.backend_frees == after.backend_frees + 1);
    } else {
      CHECK(after.reserved_bytes == 0);
      CHECK(after.hits == 0);
      CHECK(after.backend_allocations == 0);
    }
  }
}

TEST_CASE("cached Buffers are real memory and keep their contents", "[conformance][buffer_cache]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    for (std::size_t n : {1u, 63u, 64u, 65u, 4095u, 4096u, 100000u}) {
      std::vector<unsigned char> bytes = conformance::pattern(n, static_cast<unsigned>(n));
      for (int round = 0; round < 3; ++round) {
        Buffer buffer = conformance::upload(device, bytes);
        CHECK(conformance::read_back(buffer) == bytes);
      }
    }
  }
}

TEST_CASE("allocations the cache does not serve go to the backend", "[conformance][buffer_cache]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    REQUIRE(devrt::empty_cache(device).ok());
    const PoolStats before = stats_of(device);
    {
      // Above kMaxCachedBufferBytes, and an alignment above the blocks' 64 bytes.
      Buffer big = std::move(Buffer::allocate(device, devrt::kMaxCachedBufferBytes + 1)).value();
      Buffer aligned = std::move(Buffer::allocate(device, 256, 4096)).value();
      if (conformance::backend().has_capability(DEVRT_CAP_ADDRESSABLE)) {
        CHECK(reinterpret_cast<std::uintptr_t>(aligned.data()) % 4096 == 0);
      }
    }
    const PoolStats after = stats_of(device);
    CHECK(after.backend_allocations == before.backend_allocations);
    CHECK(after.reserved_bytes == before.reserved_bytes);
    // Bad requests fail the same way with or without the cache.
    CHECK(Buffer::allocate(device, 64, 3).status().code() == devrt::ErrorCode::invalid_argument);
    CHECK(Buffer::allocate(device, std::size_t{1} << 62).status().code() == devrt::ErrorCode::out_of_memory);
    CHECK(Buffer::allocate(device, 0)->data() == nullptr);
  }
  CHECK(devrt::empty_cache(devrt::Device{conformance::backend().kind(), 1 << 20}).code() ==
        devrt::ErrorCode::invalid_argument);
  CHECK(devrt::buffer_cache_stats(devrt::Device{conformance::backend().kind(), -1}).status().code() ==
        devrt::ErrorCode::invalid_argument);
}

TEST_CASE("set_buffer_cache_enabled(false) sends allocations to the backend", "[conformance][buffer_cache]") {
  const bool was_enabled = devrt::buffer_cache_enabled();
  devrt::set_buffer_cache_enabled(false);
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    const PoolStats before = stats_of(device);
    for (int i = 0; i < 10; ++i) {
      Buffer buffer = std::move(Buffer::allocate(device, 512)).value();
      CHECK(buffer.data() != nullptr);
    }
    const PoolStats after = stats_of(device);
    CHECK(after.backend_allocations == before.backend_allocations);
    CHECK(after.hits == before.hits);
  }
  devrt::set_buffer_cache_enabled(was_enabled);
}

TEST_CASE("a pool keeps at most its limit in the shared list and gives the rest back", "[conformance][buffer_cache]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    // 8 MiB blocks are above the classes threads keep, so every free goes to the shared list.
    constexpr std::size_t kBlock = std::size_t{8} << 20;
    devrt::WorkspacePool pool(conformance::backend(), device, 2 * kBlock);
    {
      std::vector<devrt::Workspace> blocks;
      for (int i = 0; i < 5; ++i) blocks.push_back(std::move(pool.allocate(kBlock)).value());
      CHECK(pool.stats().reserved_bytes == 5 * kBlock);
    }
    PoolStats stats = pool.stats();
    CHECK(stats.cached_bytes == 2 * kBlock);
    CHECK(stats.reserved_bytes == 2 * kBlock);
    CHECK(stats.backend_frees == 3);
    CHECK(stats.cache_limit_bytes == 2 * kBlock);
    CHECK(pool.release().ok());
    CHECK(pool.stats().reserved_bytes == 0);
  }
}

TEST_CASE("threads share a device's Buffer cache", "[conformance][buffer_cache][concurrency]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    REQUIRE(devrt::empty_cache(device).ok());
    const std::size_t in_use_before = stats_of(device).reserved_bytes;
    constexpr int kThreads = 4;
    constexpr int kRounds = 300;
    // Buffers allocated on one thread and freed on another pass through here.
    std::mutex handoff_mutex;
    std::vector<Buffer> handoff;
    std::atomic<int> failures{0};
    std::string first_failure; // under handoff_mutex
    auto note_failure = [&](std::string what) {
      ++failures;
      std::lock_guard<std::mutex> lock(handoff_mutex);
      if (first_failure.empty()) first_failure = std::move(what);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < kRounds; ++round) {
          const std::size_t n = 1 + static_cast<std::size_t>((round * 7919 + t * 104729) % 20000);
          std::vector<unsigned char> bytes = conformance::pattern(n, static_cast<unsigned>(t * 1000 + round));
          devrt::Result<Buffer> buffer = Buffer::allocate(device, n);
          if (!buffer.ok()) {
            note_failure("allocate " + std::to_string(n) + " bytes: " + std::string(buffer.status().message()));
            continue;
          }
          std::vector<unsigned char> back(n);
          devrt::Status status = devrt::copy(devrt::host_span(bytes.data(), n), *buffer);
          if (status.ok()) status = devrt::copy(*buffer, devrt::host_span(back.data(), n));
          if (status.ok()) status = devrt::synchronize(devrt::current_stream(device));
          if (!status.ok()) {
            note_failure("copy or synchronize: " + std::string(status.message()));
          } else if (back != bytes) {
            const auto first = std::mismatch(bytes.begin(), bytes.end(), back.begin()).first - bytes.begin();
            note_failure("read back differs at byte " + std::to_string(first) + " of " + std::to_string(n) +
                         " (thread " + std::to_string(t) + ", round " + std::to_string(round) + ")");
          }
          std::lock_guard<std::mutex> lock(handoff_mutex);
          if (round % 3 == 0) {
            handoff.push_back(std::move(buffer).value());
          } else if (!handoff.empty()) {
            handoff.pop_back(); // freed here, perhaps allocated by another thread
          }
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    INFO("first failure: " << first_failure);
    CHECK(failures.load() == 0);
    handoff.clear();
    // The threads have exited: what they cached went to the shared list. Nothing is in use now.
    const PoolStats stats = stats_of(device);
    CHECK(stats.cached_bytes == stats.reserved_bytes - in_use_before);
    if (conformance::has_buffer_cache()) {
      CHECK(stats.hits > 0);
      CHECK(stats.backend_allocations < static_cast<std::uint64_t>(kThreads * kRounds));
    }
    REQUIRE(devrt::empty_cache(device).ok());
    CHECK(stats_of(device).reserved_bytes == in_use_before);
  }
}

TEST_CASE("a freed Buffer's memory is not handed out while queued work may still write it",
          "[conformance][buffer_cache]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    constexpr std::size_t kBytes = std::size_t{8} << 20;
    const std::vector<unsigned char> first = conformance::pattern(kBytes, 1);
    const std::vector<unsigned char> second = conformance::pattern(kBytes, 2);
    devrt::Result<devrt::Stream> side = devrt::Stream::create(device);
    REQUIRE(side.ok());
    devrt::Result<devrt::Device> runs_on = devrt::copy_device(devrt::kHostDevice, device);
    REQUIRE(runs_on.ok());
    {
      Buffer doomed = std::move(Buffer::allocate(device, kBytes)).value();
      // Queued on a stream of its own, not synchronized before the Buffer dies.
      devrt::StreamRef stream = *runs_on == device ? side->ref() : devrt::current_stream(*runs_on);
      REQUIRE(devrt::copy(devrt::host_span(first.data(), kBytes), doomed, stream).ok());
    }
    Buffer reused = std::move(Buffer::allocate(device, kBytes)).value();
    REQUIRE(devrt::copy(devrt::host_span(second.data(), kBytes), reused).ok());
    REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
    REQUIRE(side->synchronize().ok());
    CHECK(conformance::read_back(reused) == second);
  }
}

TEST_CASE("synchronize(device) waits for every stream of the device", "[conformance][stream]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    devrt::BackendRef backend = conformance::backend();
    if (!backend.has_capability(DEVRT_CAP_SYNCHRONOUS) && !backend.has_device_synchronize()) {
      devrt::Status status = devrt::synchronize(device);
      CHECK(status.code() == devrt::ErrorCode::unsupported);
      CHECK(conformance::contains(status.message(), backend.name()));
      continue;
    }
    constexpr std::size_t kBytes = std::size_t{4} << 20;
    const std::vector<unsigned char> bytes = conformance::pattern(kBytes, 5);
    devrt::Result<devrt::Stream> a = devrt::Stream::create(device);
    devrt::Result<devrt::Stream> b = devrt::Stream::create(device);
    REQUIRE((a.ok() && b.ok()));
    Buffer x = std::move(Buffer::allocate(device, kBytes)).value();
    Buffer y = std::move(Buffer::allocate(device, kBytes)).value();
    REQUIRE(devrt::copy(devrt::host_span(bytes.data(), kBytes), x, *a).ok());
    REQUIRE(devrt::copy(devrt::host_span(bytes.data(), kBytes), y, *b).ok());
    REQUIRE(devrt::synchronize(device).ok());
    // Device to device on another stream: it reads what the two copies wrote.
    Buffer z = std::move(Buffer::allocate(device, kBytes)).value();
    REQUIRE(devrt::copy(x, z).ok());
    REQUIRE(devrt::synchronize(device).ok());
    CHECK(conformance::read_back(z) == bytes);
    CHECK(conformance::read_back(y) == bytes);
    CHECK(devrt::synchronize(devrt::Device{device.kind, 1 << 20}).code() == devrt::ErrorCode::invalid_argument);
  }
}
