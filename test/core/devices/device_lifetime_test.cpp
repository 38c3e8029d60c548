// SPDX-License-Identifier: Apache-2.0
// The core's per-device state over a backend of many devices (counted objects, current streams)
// and the rule of a device's lifetime: open from first use until shutdown() finds none of its
// objects left, or else until the last of them goes. The backend counts what devrt opens and
// closes, and the objects it makes.
#include <devrt/backend/backend.hpp>
#include <devrt/devrt.hpp>
#include <devrt/graph.hpp>
#include <devrt/memory_stats.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace {

constexpr std::int32_t kDevices = 70; // beyond 64: the list the core keeps for large ids too

struct Counts {
  std::atomic<int> open{0}, opened{0}, objects{0};
};
Counts g_counts;

// A synchronous backend of kDevices devices on the ext_dev kind: memory from the heap, streams
// and events as tokens; each device's state is an object open_device makes.
class ManyDevices {
public:
  static constexpr std::string_view name = "many";
  static constexpr devrt::DeviceKind kind = devrt::DeviceKind::ext_dev;
  static constexpr bool synchronous = true;
  devrt::Status availability() noexcept { return devrt::Status(); }
  devrt::Result<std::int32_t> device_count() noexcept { return kDevices; }
  devrt::Status open_device(devrt::BackendDevice& device) noexcept {
    device.state = new (std::nothrow) int(device.index);
    if (device.state == nullptr) return devrt::Status(devrt::ErrorCode::out_of_memory, "no memory");
    ++g_counts.open;
    ++g_counts.opened;
    return devrt::Status();
  }
  devrt::Status close_device(devrt::BackendDevice& device) noexcept {
    delete static_cast<int*>(device.state);
    device.state = nullptr;
    --g_counts.open;
    return devrt::Status();
  }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice&, devrt::Attribute) noexcept {
    return devrt::AttributeValue();
  }
  devrt::Result<void*> allocate(const devrt::BackendDevice& device, std::size_t n, std::size_t) noexcept {
    REQUIRE(devrt::backend_state<int>(device) == device.index);
    ++g_counts.objects;
    return static_cast<void*>(new (std::nothrow) std::byte[n]);
  }
  devrt::Status free(const devrt::BackendDevice&, void* p) noexcept {
    --g_counts.objects;
    delete[] static_cast<std::byte*>(p);
    return devrt::Status();
  }
  devrt::Status copy(const devrt::CopyDesc&) noexcept { return devrt::Status(); }
  devrt::Result<void*> stream_create(const devrt::BackendDevice& device) noexcept {
    ++g_counts.objects;
    return static_cast<void*>(new (std::nothrow) int(device.index));
  }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void* stream) noexcept {
    --g_counts.objects;
    delete static_cast<int*>(stream);
    return devrt::Status();
  }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
};
constexpr devrt_backend_table kManyTable = devrt::make_backend_table<ManyDevices>();

void register_many() {
  static const devrt::Status added = devrt::Registry::global().add(&kManyTable);
  REQUIRE(added.ok());
}

devrt::Device many(std::int32_t id) { return devrt::Device{ManyDevices::kind, id}; }

} // namespace

TEST_CASE("every device of 70 has its own current stream on a thread, and another thread its own", "[streams]") {
  register_many();
  std::vector<devrt::Stream> streams;
  for (std::int32_t id = 0; id < kDevices; ++id) {
    streams.push_back(std::move(devrt::Stream::create(many(id))).value());
    REQUIRE(devrt::set_current_stream(streams.back().ref()).ok());
  }
  for (std::int32_t id = 0; id < kDevices; ++id) CHECK(devrt::current_stream(many(id)) == streams[id].ref());
  std::thread([] {
    for (std::int32_t id = 0; id < kDevices; ++id) CHECK(devrt::current_stream(many(id)).handle == nullptr);
  }).join();
  // Back to the default, one by one, in another order than they were set.
  for (std::int32_t id = kDevices - 1; id >= 0; id -= 2) REQUIRE(devrt::set_current_stream({many(id), nullptr}).ok());
  for (std::int32_t id = 0; id < kDevices; ++id) {
    CHECK(devrt::current_stream(many(id)).handle == (id % 2 == 1 ? nullptr : streams[id].ref().handle));
  }
  streams.clear(); // a destroyed stream stops being current
  for (std::int32_t id = 0; id < kDevices; ++id) CHECK(devrt::current_stream(many(id)).handle == nullptr);
  CHECK(devrt::set_current_stream({devrt::Device{static_cast<devrt::DeviceKind>(1000), 0}, &g_counts}).code() ==
        devrt::ErrorCode::invalid_argument);
  REQUIRE(devrt::shutdown().ok());
}

TEST_CASE("shutdown closes each device once its last object is gone; a later call opens it again", "[lifetime]") {
  register_many();
  REQUIRE(devrt::shutdown().ok());
  REQUIRE(g_counts.open == 0);
  const int opened_before = g_counts.opened;
  std::vector<devrt::Buffer> buffers;
  for (std::int32_t id = 0; id < kDevices; ++id) {
    buffers.push_back(std::move(devrt::Buffer::allocate(many(id), 100 << 10)).value()); // beyond the cache
  }
  devrt::Stream stream = std::move(devrt::Stream::create(many(5))).value();
  CHECK(g_counts.open == kDevices);
  REQUIRE(devrt::shutdown().ok());
  CHECK(g_counts.open == kDevices); // every device still has an object
  buffers.erase(buffers.begin() + 10, buffers.end());
  CHECK(g_counts.open == 10); // devices 0..9 (5 has its stream too)
  buffers[5] = devrt::Buffer();
  CHECK(g_counts.open == 10); // 5's stream
  stream.reset();
  CHECK(g_counts.open == 9);
  // Used again after shutdown: device 3 is no longer closing, its last Buffer leaves it open.
  devrt::Buffer more = std::move(devrt::Buffer::allocate(many(3), 100 << 10)).value();
  buffers.clear();
  CHECK(g_counts.open == 1); // 3
  more = devrt::Buffer();
  CHECK(g_counts.open == 1);
  REQUIRE(devrt::shutdown().ok());
  CHECK(g_counts.open == 0);
  CHECK(g_counts.objects == 0);
  // A later call opens a closed device again.
  devrt::Buffer again = std::move(devrt::Buffer::allocate(many(69), 100 << 10)).value();
  CHECK(g_counts.open == 1);
  CHECK(g_counts.opened == opened_before + kDevices + 1);
  again = devrt::Buffer();
  REQUIRE(devrt::shutdown().ok());
  CHECK(g_counts.open == 0);
}

TEST_CASE("a graph keeps its device open across shutdown, as the device's other objects do", "[lifetime]") {
  register_many();
  REQUIRE(devrt::shutdown().ok());
  devrt::Graph graph;
  {
    devrt::Stream stream = std::move(devrt::Stream::create(many(7))).value();
    devrt::Buffer a = std::move(devrt::Buffer::allocate(many(7), 100 << 10)).value();
    devrt::Buffer b = std::move(devrt::Buffer::allocate(many(7), 100 << 10)).value();
    REQUIRE(devrt::begin_capture(stream.ref()).ok());
    REQUIRE(devrt::copy(a, b, stream.ref()).ok());
    graph = std::move(devrt::end_capture(stream.ref())).value();
  }
  CHECK(g_counts.open == 1);
  REQUIRE(devrt::shutdown().ok());
  CHECK(g_counts.open == 1); // the graph (and the memory it touched, which it keeps) hold device 7
  graph = devrt::Graph();
  CHECK(g_counts.open == 0);
  CHECK(g_counts.objects == 0);
}

TEST_CASE("after shutdown, threads that free a device's last objects race threads that use it again",
          "[lifetime][concurrency]") {
  register_many();
  for (int round = 0; round < 20; ++round) {
    std::vector<devrt::Buffer> held;
    for (int i = 0; i < 4; ++i) held.push_back(std::move(devrt::Buffer::allocate(many(11), 100 << 10)).value());
    REQUIRE(devrt::shutdown().ok()); // device 11 stays open for `held`
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) { // each frees two of the held Buffers: the last one closes the device
      threads.emplace_back([&, t] {
        held[static_cast<std::size_t>(2 * t)] = devrt::Buffer();
        held[static_cast<std::size_t>(2 * t + 1)] = devrt::Buffer();
      });
    }
    for (int t = 0; t < 2; ++t) { // meanwhile others allocate and free on it: it opens again if it closed
      threads.emplace_back([&] {
        for (int i = 0; i < 20; ++i) {
          devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(many(11), 100 << 10);
          if (!buffer.ok()) ++failures;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(failures == 0);
    REQUIRE(devrt::shutdown().ok());
    CHECK(g_counts.open == 0);
    CHECK(g_counts.objects == 0);
  }
}
