// SPDX-License-Identifier: Apache-2.0
// Memory statistics (devrt/memory_stats.hpp) and shutdown on every device: what Buffers, pooled
// workspaces and textures hold, peaks and their reset, the caches' hits and misses, the history's
// snapshot, and closing every device with memory still held.
#include "conformance.hpp"

#include <devrt/backend/workspace_pool.hpp>
#include <devrt/memory_stats.hpp>

#include <atomic>
#include <cstdio>
#include <thread>

using devrt::Buffer;
using devrt::MemoryScope;
using devrt::MemoryStats;

namespace {

MemoryStats memory_stats_of(devrt::Device device) {
  devrt::Result<MemoryStats> stats = devrt::memory_stats(device);
  REQUIRE(stats.ok());
  return *stats;
}

std::string address_text(const void* address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(address)));
  return text;
}

} // namespace

TEST_CASE("memory_stats counts what Buffers hold, now and at the peak", "[conformance][memory_stats]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    REQUIRE(devrt::empty_cache(device).ok());
    REQUIRE(devrt::reset_peak_memory_stats(device).ok());
    const MemoryStats before = memory_stats_of(device);
    CHECK(before.total.allocated_bytes_peak == before.total.allocated_bytes);
    CHECK(before.total.reserved_bytes_peak == before.total.reserved_bytes);
    {
      // Powers of two from 64 B: the Buffer cache's size classes hold exactly these bytes.
      Buffer a = std::move(Buffer::allocate(device, 4096)).value();
      Buffer b = std::move(Buffer::allocate(device, 65536)).value();
      const MemoryStats held = memory_stats_of(device);
      CHECK(held.total.allocated_bytes == before.total.allocated_bytes + 4096 + 65536);
      CHECK(held.total.allocations == before.total.allocations + 2);
      CHECK(held.scopes[0].allocated_bytes == held.total.allocated_bytes);
      CHECK(held.total.reserved_bytes >= held.total.allocated_bytes);
      CHECK(held.total.allocated_bytes_peak >= held.total.allocated_bytes);
      CHECK(held.total.reserved_bytes_peak >= held.total.reserved_bytes);
    }
    const MemoryStats freed = memory_stats_of(device);
    CHECK(freed.total.allocated_bytes == before.total.allocated_bytes);
    CHECK(freed.total.allocations == before.total.allocations);
    CHECK(freed.total.allocated_bytes_peak >= before.total.allocated_bytes + 4096 + 65536);
    if (conformance::has_buffer_cache()) {
      // The cache keeps the two blocks: reserved, not allocated.
      CHECK(freed.cached_bytes == before.cached_bytes + 4096 + 65536);
      CHECK(freed.total.reserved_bytes == before.total.reserved_bytes + 4096 + 65536);
    } else {
      CHECK(freed.total.reserved_bytes == before.total.reserved_bytes);
    }
    REQUIRE(devrt::empty_cache(device).ok());
    REQUIRE(devrt::reset_peak_memory_stats(device).ok());
    const MemoryStats reset = memory_stats_of(device);
    CHECK(reset.total.allocated_bytes_peak == reset.total.allocated_bytes);
    CHECK(reset.total.reserved_bytes_peak == reset.total.reserved_bytes);
    CHECK(reset.total.reserved_bytes == before.total.reserved_bytes);
  }
}

TEST_CASE("memory_stats counts the Buffer cache's hits and misses", "[conformance][memory_stats]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    REQUIRE(devrt::empty_cache(device).ok());
    const MemoryStats before = memory_stats_of(device);
    for (int i = 0; i < 10; ++i) REQUIRE(Buffer::allocate(device, 2048).ok());
    const MemoryStats after = memory_stats_of(device);
    if (conformance::has_buffer_cache()) {
      CHECK(after.cache_misses == before.cache_misses + 1);
      CHECK(after.cache_hits == before.cache_hits + 9);
    } else {
      CHECK(after.cache_misses == before.cache_misses);
      CHECK(after.cache_hits == before.cache_hits);
    }
  }
}

TEST_CASE("memory_stats counts the device's workspace pool", "[conformance][memory_stats]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    const MemoryStats before = memory_stats_of(device);
    {
      devrt::Workspace block = std::move(devrt::allocate_workspace(device, 8192)).value();
      const MemoryStats held = memory_stats_of(device);
      CHECK(held.total.allocated_bytes == before.total.allocated_bytes + 8192);
      CHECK(held.total.allocations == before.total.allocations + 1);
    }
    CHECK(memory_stats_of(device).total.allocated_bytes == before.total.allocated_bytes);
  }
}

TEST_CASE("memory_stats counts textures in their own scope", "[conformance][memory_stats]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    if (!devrt::scope_limits(device, MemoryScope::texture).ok()) {
      CONFORMANCE_SKIP(devrt::to_string(device) << ": the device has no textures");
      continue;
    }
    const MemoryStats before = memory_stats_of(device);
    devrt::TensorOptions options;
    options.scope = MemoryScope::texture;
    {
      const std::int64_t shape[] = {3, 5, 4}; // 3 rows of 5 float32 texels: 240 bytes
      devrt::Tensor texture =
          std::move(devrt::Tensor::empty(shape, devrt::DataType::float32(), device, options)).value();
      const MemoryStats held = memory_stats_of(device);
      const auto scope = static_cast<std::size_t>(MemoryScope::texture);
      CHECK(held.scopes[scope].allocated_bytes == before.scopes[scope].allocated_bytes + 240);
      CHECK(held.scopes[scope].allocations == before.scopes[scope].allocations + 1);
      CHECK(held.total.allocated_bytes == before.total.allocated_bytes + 240);
      CHECK(held.scopes[0].allocated_bytes == before.scopes[0].allocated_bytes);
    }
    CHECK(memory_stats_of(device).total.allocated_bytes == before.total.allocated_bytes);
  }
}

TEST_CASE("the memory history remembers live allocations for the snapshot", "[conformance][memory_stats]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    devrt::set_memory_history(true);
    Buffer cached = std::move(Buffer::allocate(device, 1000)).value();
    Buffer large = std::move(Buffer::allocate(device, std::size_t{65} << 20)).value(); // never cached
    std::string snapshot = devrt::memory_snapshot(device).value();
    CHECK(memory_stats_of(device).history);
    CHECK(conformance::contains(snapshot, "\"history\":true"));
    CHECK(conformance::contains(snapshot, "{\"address\":\"" + address_text(cached.data()) + "\",\"bytes\":1000,"));
    CHECK(conformance::contains(snapshot, "{\"address\":\"" + address_text(large.data()) + "\",\"bytes\":68157440,"));
    CHECK(conformance::contains(snapshot, "\"scope\":\"global\",\"age_ns\":"));
    const std::string cached_address = address_text(cached.data());
    REQUIRE(cached.reset().ok());
    CHECK_FALSE(conformance::contains(devrt::memory_snapshot(device).value(), cached_address));
    devrt::set_memory_history(false);
    snapshot = devrt::memory_snapshot(device).value();
    CHECK(conformance::contains(snapshot, "\"history\":false,\"allocations\":[]"));
  }
}

TEST_CASE("memory_stats refuses a device that does not exist", "[conformance][memory_stats]") {
  const devrt::Device missing{conformance::backend().kind(), 1 << 20};
  devrt::Result<MemoryStats> stats = devrt::memory_stats(missing);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(conformance::contains(stats.status().message(), conformance::backend().name()));
  CHECK_FALSE(devrt::reset_peak_memory_stats(missing).ok());
  CHECK_FALSE(devrt::memory_snapshot(missing).ok());
}

TEST_CASE("shutdown closes every device once its last object is gone, and they open again", "[conformance][shutdown]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<unsigned char> bytes = conformance::pattern(4096, 7);
    Buffer survivor = conformance::upload(device, bytes);
    devrt::Workspace block = std::move(devrt::allocate_workspace(device, 4096)).value();
    REQUIRE(Buffer::allocate(device, 512).ok()); // leaves a cached block behind
    REQUIRE(devrt::shutdown().ok());
    REQUIRE(devrt::shutdown().ok()); // twice is fine
    // The device stays open for what the application holds: its cache is given back, and memory
    // held across shutdown stays valid.
    CHECK(memory_stats_of(device).cached_bytes == 0);
    CHECK(conformance::read_back(survivor) == bytes);
    // The last object closes the device; the next call opens it again, its figures new.
    REQUIRE(survivor.reset().ok());
    block.reset();
    CHECK(memory_stats_of(device).total.allocated_bytes == 0);
    CHECK(memory_stats_of(device).total.reserved_bytes == 0);
    Buffer again = conformance::upload(device, bytes);
    CHECK(conformance::read_back(again) == bytes);
    CHECK(memory_stats_of(device).total.allocated_bytes == 4096);
  }
}

TEST_CASE("a Buffer freed after shutdown, a stream and an event kept across it", "[conformance][shutdown]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<unsigned char> bytes = conformance::pattern(1024, 3);
    Buffer kept = conformance::upload(device, bytes);
    devrt::Result<devrt::Stream> stream = devrt::Stream::create(device);
    REQUIRE(stream.ok());
    REQUIRE(devrt::shutdown().ok());
    // Still usable after shutdown: a copy on the kept stream, then the frees, which close the device.
    Buffer copy = std::move(Buffer::allocate(device, bytes.size())).value();
    REQUIRE(devrt::copy(kept, copy, stream->ref()).ok());
    REQUIRE(stream->synchronize().ok());
    CHECK(conformance::read_back(copy) == bytes);
    REQUIRE(devrt::shutdown().ok()); // the copy made the device used again: still open
    REQUIRE(copy.reset().ok());
    REQUIRE(kept.reset().ok());
    stream->reset();
    Buffer again = conformance::upload(device, bytes);
    CHECK(conformance::read_back(again) == bytes);
  }
}

TEST_CASE("memory_stats and the history under concurrent allocation", "[conformance][memory_stats][concurrency]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    const MemoryStats before = memory_stats_of(device);
    std::atomic<bool> failed{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([device, t, &failed] {
        for (int i = 0; i < 200; ++i) {
          std::size_t bytes = (t % 2 == 0) ? 256 : std::size_t{65} << 20 >> 10; // cached, and unpooled sizes
          devrt::Result<Buffer> buffer =
              t == 3 ? Buffer::allocate(devrt::Registry::global(), device, bytes) : Buffer::allocate(device, bytes);
          devrt::Result<devrt::Workspace> block = devrt::allocate_workspace(device, 512);
          if (!buffer.ok() || !block.ok()) failed = true;
        }
      });
    }
    threads.emplace_back([device, &failed] {
      for (int i = 0; i < 50; ++i) {
        devrt::set_memory_history(i % 2 == 0);
        if (!devrt::memory_stats(device).ok() || !devrt::memory_snapshot(device).ok()) failed = true;
      }
      devrt::set_memory_history(false);
    });
    for (std::thread& thread : threads) thread.join();
    CHECK_FALSE(failed);
    const MemoryStats after = memory_stats_of(device);
    CHECK(after.total.allocated_bytes == before.total.allocated_bytes);
    CHECK(after.total.allocations == before.total.allocations);
    CHECK(after.total.allocated_bytes_peak >= after.total.allocated_bytes);
  }
}
