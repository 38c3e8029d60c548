// SPDX-License-Identifier: Apache-2.0
#include "conformance.hpp"

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

using devrt::ErrorCode;
using devrt::Workspace;
using devrt::WorkspacePool;

TEST_CASE("workspace blocks are reused instead of reallocated", "[conformance][workspace]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    WorkspacePool pool(conformance::backend(), device);
    void* first = nullptr;
    {
      Workspace w = std::move(pool.allocate(4000)).value();
      first = w.data();
      CHECK(w.size() == 4000);
      CHECK(pool.reserved_bytes() == 4096);
    }
    for (int i = 0; i < 1000; ++i) {
      Workspace w = std::move(pool.allocate(4096)).value();
      CHECK(w.data() == first);
    }
    CHECK(pool.reserved_bytes() == 4096);
    CHECK(pool.release().ok());
    CHECK(pool.reserved_bytes() == 0);
  }
}

TEST_CASE("workspace blocks may be freed in any order", "[conformance][workspace]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    WorkspacePool pool(conformance::backend(), device);
    std::mt19937 rng(42);
    std::uniform_int_distribution<std::size_t> size(1, 200000);
    std::vector<std::size_t> sizes(64);
    for (std::size_t& s : sizes) s = size(rng);
    std::size_t reserved_after_first_round = 0;
    for (int round = 0; round < 5; ++round) {
      std::vector<Workspace> blocks;
      for (std::size_t s : sizes) {
        devrt::Result<Workspace> w = pool.allocate(s);
        REQUIRE(w.ok());
        REQUIRE(w->data() != nullptr);
        blocks.push_back(std::move(w).value());
      }
      std::shuffle(blocks.begin(), blocks.end(), rng);
      blocks.clear();
      if (round == 0) reserved_after_first_round = pool.reserved_bytes();
      CHECK(pool.reserved_bytes() == reserved_after_first_round);
    }
    CHECK(pool.release().ok());
    CHECK(pool.reserved_bytes() == 0);
  }
}

TEST_CASE("workspace memory is real device memory", "[conformance][workspace]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<unsigned char> source = conformance::pattern(10000, 11);
    std::vector<unsigned char> result(source.size());
    Workspace w = std::move(devrt::allocate_workspace(device, source.size())).value();
    devrt::MemorySpan span{device, w.data(), w.size()};
    REQUIRE(devrt::copy(devrt::host_span(source.data(), source.size()), span).ok());
    REQUIRE(devrt::copy(span, devrt::host_span(result.data(), result.size())).ok());
    REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
    CHECK(result == source);
  }
}

TEST_CASE("workspace edge cases: zero, huge, beyond the largest class, bad device", "[conformance][workspace]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    WorkspacePool pool(conformance::backend(), device);
    Workspace empty = std::move(pool.allocate(0)).value();
    CHECK(empty.data() == nullptr);
    devrt::Result<Workspace> huge = pool.allocate(std::size_t{1} << 62);
    REQUIRE_FALSE(huge.ok());
    CHECK(huge.status().code() == ErrorCode::out_of_memory);
    CHECK(pool.reserved_bytes() == 0);
  }
  devrt::Device past{conformance::backend().kind(), static_cast<std::int32_t>(conformance::devices().size())};
  CHECK(devrt::allocate_workspace(past, 64).status().code() == ErrorCode::invalid_argument);
  CHECK(devrt::workspace_pool(conformance::devices().front()).value() ==
        devrt::workspace_pool(conformance::devices().front()).value());
}

TEST_CASE("workspace pools under concurrent use, with cross-thread frees", "[conformance][workspace][concurrency]") {
  devrt::Device device = conformance::devices().front();
  WorkspacePool pool(conformance::backend(), device);
  constexpr int kThreads = 6;
  constexpr int kIterations = 3000;
  std::vector<std::vector<Workspace>> handoff(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<Workspace> mine;
      for (int i = 0; i < kIterations; ++i) {
        std::size_t size = std::size_t{64} << (rng() % 12);
        devrt::Result<Workspace> w = pool.allocate(size);
        if (!w.ok() || w->data() == nullptr) {
          ++failures;
          continue;
        }
        mine.push_back(std::move(w).value());
        if (mine.size() > 16) mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(rng() % mine.size()));
      }
      handoff[static_cast<std::size_t>(t)] = std::move(mine); // freed by another thread below
    });
  }
  for (std::thread& thread : threads) thread.join();
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { handoff[static_cast<std::size_t>((t + 1) % kThreads)].clear(); });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures == 0);
  CHECK(pool.release().ok());
  // Every thread that used the pool has exited, so its cache went back to the shared list.
  CHECK(pool.reserved_bytes() == 0);
}
