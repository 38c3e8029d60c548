// SPDX-License-Identifier: Apache-2.0
// Captured work graphs (devrt/graph.hpp) on every backend with kernel modules: replay gives the
// bytes issuing the same calls gives, beside other streams' work; updates; what a capture refuses.
#include <devrt/graph.hpp>
#include <devrt/memory_stats.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "conformance.hpp"
#include "kernels.hpp"

using conformance::contains;
using devrt::Buffer;
using devrt::Device;
using devrt::ErrorCode;
using devrt::KernelArg;
using devrt::LaunchConfig;
using namespace conformance_kernels; // NOLINT(google-build-using-namespace)

namespace {

constexpr std::size_t kElements = 1024;

LaunchConfig graph_config() { return {.grid = {blocks_for(kElements)}, .block = {kBlock}}; }

// One step of a decoder-like loop: new input from the host, a = (a + input) * 0.5 through c, and
// a device copy back into a.
devrt::Status step(const Kernel& vadd, const Kernel& scale, const std::vector<float>& input, const Buffer& a,
                   const Buffer& b, const Buffer& c, devrt::StreamRef stream) {
  const auto n = static_cast<std::int32_t>(kElements);
  DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(input.data(), kElements * sizeof(float)), b, stream));
  DEVRT_RETURN_IF_ERROR(vadd.function.launch(graph_config(), {a, b, c, n}, stream));
  DEVRT_RETURN_IF_ERROR(scale.function.launch(graph_config(), {c, 0.5f, n}, stream));
  return devrt::copy(c, a, stream);
}

devrt::Stream new_stream(Device device) {
  devrt::Result<devrt::Stream> stream = devrt::Stream::create(device);
  INFO(stream.status().message());
  REQUIRE(stream.ok());
  return std::move(stream).value();
}

devrt::Graph capture(devrt::StreamRef stream, const std::function<devrt::Status()>& work) {
  REQUIRE(devrt::begin_capture(stream).ok());
  CHECK(devrt::is_capturing(stream));
  devrt::Status issued = work();
  devrt::Result<devrt::Graph> graph = devrt::end_capture(stream);
  INFO(issued.message() << " / " << graph.status().message());
  REQUIRE(issued.ok());
  REQUIRE(graph.ok());
  CHECK_FALSE(devrt::is_capturing(stream));
  return std::move(graph).value();
}

} // namespace

TEST_CASE("a captured sequence replayed 1000 times gives the bytes of issuing it 1000 times", "[conformance][graph]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd"), scale = load_kernel(device, "scale");
    devrt::Stream stream = new_stream(device);
    const std::vector<float> input = iota_values(kElements, 1.0f, 0.25f);
    Buffer issued_a = upload_floats(device, iota_values(kElements, 3.0f, 1.0f));
    Buffer replayed_a = upload_floats(device, iota_values(kElements, 3.0f, 1.0f));
    Buffer b = upload_floats(device, std::vector<float>(kElements)),
           c = upload_floats(device, std::vector<float>(kElements));
    for (int i = 0; i < 1000; ++i) REQUIRE(step(vadd, scale, input, issued_a, b, c, stream).ok());
    devrt::Graph graph = capture(stream, [&] { return step(vadd, scale, input, replayed_a, b, c, stream); });
    CHECK(graph.node_count() == 4);
    CHECK(graph.launch_count() == 2);
    CHECK(graph.device() == device);
    UNSCOPED_INFO(devrt::to_string(device) << " replays a " << devrt::graph_mode_name(graph.mode()) << " graph");
    if (conformance::backend().has_graphs() && conformance::backend().name() == "vulkan") {
      CHECK(graph.mode() == devrt::GraphMode::mixed); // the host copy is devrt's, the rest one command buffer
    }
    // Nothing ran while capturing.
    CHECK(download_floats(replayed_a, kElements, 0, stream) == iota_values(kElements, 3.0f, 1.0f));
    for (int i = 0; i < 1000; ++i) REQUIRE(graph.launch(stream).ok());
    const std::vector<float> expected = download_floats(issued_a, kElements, 0, stream);
    const std::vector<float> got = download_floats(replayed_a, kElements, 0, stream);
    REQUIRE(got == expected);
  }
}

TEST_CASE("a graph of launches only replays beside another stream's work", "[conformance][graph]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel scale = load_kernel(device, "scale");
    devrt::Stream first = new_stream(device), second = new_stream(device);
    const auto n = static_cast<std::int32_t>(kElements);
    const std::vector<float> ones(kElements, 1.0f);
    Buffer x = upload_floats(device, ones), y = upload_floats(device, ones);
    devrt::Graph doubling = capture(first, [&] {
      DEVRT_RETURN_IF_ERROR(scale.function.launch(graph_config(), {x, 2.0f, n}, first));
      return scale.function.launch(graph_config(), {x, 1.0f, n}, first);
    });
    if (conformance::backend().has_graphs() && conformance::backend().name() == "vulkan") {
      CHECK(doubling.mode() == devrt::GraphMode::native);
    }
    // A remote device's graph is the server's: each replay one message (docs/remote.md, "Graphs").
    if (conformance::backend().name() == "remote") CHECK(doubling.mode() == devrt::GraphMode::native);
    for (int i = 0; i < 20; ++i) {
      REQUIRE(doubling.launch(first).ok());
      REQUIRE(scale.function.launch(graph_config(), {y, 3.0f, n}, second).ok());
    }
    CHECK(download_floats(x, kElements, 0, first) == std::vector<float>(kElements, 1048576.0f));     // 2^20
    CHECK(download_floats(y, kElements, 0, second) == std::vector<float>(kElements, 3486784401.0f)); // 3^20
  }
}

TEST_CASE("a captured launch takes new scalars and buffers; a change of shape is refused", "[conformance][graph]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel scale = load_kernel(device, "scale");
    devrt::Stream stream = new_stream(device);
    const auto n = static_cast<std::int32_t>(kElements);
    Buffer x = upload_floats(device, std::vector<float>(kElements, 1.0f));
    Buffer y = upload_floats(device, std::vector<float>(kElements, 1.0f));
    devrt::Graph graph = capture(stream, [&] { return scale.function.launch(graph_config(), {x, 2.0f, n}, stream); });
    REQUIRE(graph.launch(stream).ok());
    REQUIRE(graph.update(0, {y, 5.0f, n}).ok());
    REQUIRE(graph.launch(stream).ok());
    REQUIRE(graph.launch(stream).ok());
    REQUIRE(graph.update(0, {x, 3.0f, n / 2}).ok());
    REQUIRE(graph.launch(stream).ok());
    std::vector<float> got_x = download_floats(x, kElements, 0, stream);
    CHECK(got_x[0] == 6.0f);
    CHECK(got_x[kElements - 1] == 2.0f);
    CHECK(download_floats(y, kElements, 0, stream) == std::vector<float>(kElements, 25.0f));

    devrt::Status fewer = graph.update(0, {x, 3.0f});
    CHECK(fewer.code() == ErrorCode::invalid_argument);
    CHECK(contains(fewer.message(), "shape"));
    CHECK(graph.update(0, {x, std::int32_t(3), n}).code() == ErrorCode::invalid_argument); // int where float was
    CHECK(graph.update(0, {3.0f, 3.0f, n}).code() == ErrorCode::invalid_argument);         // scalar for a buffer
    CHECK(graph.update(1, {x, 3.0f, n}).code() == ErrorCode::out_of_range);
    // A refused update changes nothing.
    REQUIRE(graph.launch(stream).ok());
    got_x = download_floats(x, kElements, 0, stream);
    CHECK(got_x[0] == 18.0f);
  }
}

TEST_CASE("a capture refuses what it cannot record, naming the call", "[conformance][graph]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel scale = load_kernel(device, "scale");
    devrt::Stream stream = new_stream(device), other = new_stream(device);
    const auto n = static_cast<std::int32_t>(kElements);
    Buffer x = upload_floats(device, std::vector<float>(kElements, 1.0f));
    std::vector<float> host(kElements);

    CHECK(devrt::begin_capture(devrt::StreamRef{device, nullptr}).code() == ErrorCode::invalid_argument);
    CHECK(devrt::end_capture(stream).status().code() == ErrorCode::invalid_argument);
    REQUIRE(devrt::begin_capture(stream).ok());
    devrt::Status second = devrt::begin_capture(other);
    CHECK(second.code() == ErrorCode::invalid_argument);
    CHECK(contains(second.message(), "already capturing"));
    devrt::Status elsewhere = scale.function.launch(graph_config(), {x, 2.0f, n}, other);
    CHECK(elsewhere.code() == ErrorCode::invalid_argument);
    CHECK(contains(elsewhere.message(), "other streams"));
    CHECK(devrt::synchronize(stream.ref()).code() == ErrorCode::invalid_argument);
    CHECK(stream.synchronize().code() == ErrorCode::invalid_argument);
    CHECK(devrt::synchronize(device).code() == ErrorCode::invalid_argument);
    REQUIRE(scale.function.launch(graph_config(), {x, 2.0f, n}, stream).ok());
    if (device.kind != devrt::DeviceKind::cpu) { // the CPU's memory is host memory: a copy like any
      devrt::Status read = devrt::copy(x, devrt::host_span(host.data(), kElements * sizeof(float)), stream);
      CHECK(read.code() == ErrorCode::invalid_argument);
      CHECK(contains(read.message(), "host read"));
      // The refused read ended the capture in error: a graph without it would be wrong.
      devrt::Result<devrt::Graph> broken = devrt::end_capture(stream);
      CHECK(broken.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(broken.status().message(), "host read"));
    } else {
      REQUIRE(devrt::end_capture(stream).ok());
    }
    // Nothing was run, and the device works normally again.
    CHECK(download_floats(x, kElements, 0, stream) == std::vector<float>(kElements, 1.0f));

    if (conformance::backend().has_events()) {
      devrt::Result<devrt::Event> outside = devrt::Event::create(device);
      REQUIRE(outside.ok());
      REQUIRE(outside->record(other).ok());
      REQUIRE(devrt::begin_capture(stream).ok());
      CHECK(outside->wait_on(stream).code() == ErrorCode::invalid_argument);
      CHECK(devrt::end_capture(stream).status().code() == ErrorCode::invalid_argument);
    }
  }
}

TEST_CASE("a graph records its events, outlives its stream, and refuses to outlive its module",
          "[conformance][graph]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel scale = load_kernel(device, "scale");
    const auto n = static_cast<std::int32_t>(kElements);
    Buffer x = upload_floats(device, std::vector<float>(kElements, 1.0f));
    devrt::Stream replay = new_stream(device), waiter = new_stream(device);
    const bool events = conformance::backend().has_events();
    devrt::Event done;
    if (events) {
      devrt::Result<devrt::Event> made = devrt::Event::create(device);
      REQUIRE(made.ok());
      done = std::move(made).value();
    }
    devrt::Graph graph;
    {
      devrt::Stream captured = new_stream(device);
      graph = capture(captured, [&] {
        DEVRT_RETURN_IF_ERROR(scale.function.launch(graph_config(), {x, 2.0f, n}, captured));
        if (!events) return devrt::Status();
        DEVRT_RETURN_IF_ERROR(done.record(captured));
        return done.wait_on(captured); // recorded in the capture: in order already
      });
    }
    REQUIRE(graph.launch(replay).ok());
    if (events) {
      REQUIRE(done.wait_on(waiter).ok());
      REQUIRE(scale.function.launch(graph_config(), {x, 3.0f, n}, waiter).ok());
      CHECK(download_floats(x, kElements, 0, waiter) == std::vector<float>(kElements, 6.0f));
    }
    REQUIRE(replay.synchronize().ok()); // a module outlives the launches queued from it
    scale.module.reset();
    devrt::Status orphaned = graph.launch(replay);
    CHECK(orphaned.code() == ErrorCode::invalid_argument);
    CHECK(contains(orphaned.message(), "unloaded"));
  }
}

TEST_CASE("stream-ordered buffers are reused in stream order, and across streams once freed", "[conformance][graph]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel scale = load_kernel(device, "scale");
    devrt::Stream first = new_stream(device), second = new_stream(device);
    const auto n = static_cast<std::int32_t>(kElements);
    const std::size_t bytes = kElements * sizeof(float);
    REQUIRE(devrt::empty_cache(device).ok());
    devrt::Result<devrt::MemoryStats> before = devrt::memory_stats(device);
    REQUIRE(before.ok());

    devrt::Result<Buffer> a = Buffer::allocate(device, bytes, first);
    REQUIRE(a.ok());
    CHECK(a->size() == bytes);
    const std::vector<float> ones(kElements, 1.0f);
    REQUIRE(devrt::copy(devrt::host_span(ones.data(), bytes), *a, first).ok());
    REQUIRE(scale.function.launch(graph_config(), {*a, 4.0f, n}, first).ok());
    CHECK(download_floats(*a, kElements, 0, first) == std::vector<float>(kElements, 4.0f));
    void* address = a->data();
    REQUIRE(scale.function.launch(graph_config(), {*a, 2.0f, n}, first).ok()); // still queued at the free
    REQUIRE(a->reset().ok());
    // The same stream takes the block at once: its work runs after the free in stream order.
    devrt::Result<Buffer> again = Buffer::allocate(device, bytes - 4, first);
    REQUIRE(again.ok());
    CHECK(again->data() == address);
    REQUIRE(again->reset().ok());
    REQUIRE(first.synchronize().ok());
    // Another stream takes it once the free has completed (an event, or a synchronous backend).
    devrt::Result<Buffer> other = Buffer::allocate(device, bytes, second);
    REQUIRE(other.ok());
    if (conformance::backend().has_events() || conformance::backend().has_capability(DEVRT_CAP_SYNCHRONOUS)) {
      CHECK(other->data() == address);
    }
    devrt::Result<devrt::MemoryStats> during = devrt::memory_stats(device);
    REQUIRE(during.ok());
    CHECK(during->stream_pool_bytes >= before->stream_pool_bytes + bytes);
    CHECK(during->stream_pool_misses == before->stream_pool_misses + 1);
    CHECK(during->stream_pool_hits >= before->stream_pool_hits + 1);
    REQUIRE(other->reset().ok());
    REQUIRE(second.synchronize().ok());
    REQUIRE(devrt::empty_cache(device).ok());
    devrt::Result<devrt::MemoryStats> after = devrt::memory_stats(device);
    REQUIRE(after.ok());
    CHECK(after->stream_pool_cached_bytes == 0);
    CHECK(after->stream_pool_bytes == before->stream_pool_bytes);

    CHECK(Buffer::allocate(device, bytes, devrt::StreamRef{devrt::kHostDevice, nullptr}).status().code() ==
          (device == devrt::kHostDevice ? ErrorCode::ok : ErrorCode::invalid_argument));
    devrt::Result<Buffer> empty = Buffer::allocate(device, 0, first);
    REQUIRE(empty.ok());
    CHECK(empty->empty());
  }
}

TEST_CASE("allocations made while capturing come from the graph's pool and stay valid", "[conformance][graph]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd"), scale = load_kernel(device, "scale");
    devrt::Stream stream = new_stream(device), other = new_stream(device);
    const auto n = static_cast<std::int32_t>(kElements);
    const std::size_t bytes = kElements * sizeof(float);
    Buffer a = upload_floats(device, iota_values(kElements, 1.0f, 1.0f));
    Buffer out = upload_floats(device, std::vector<float>(kElements));
    const std::uint64_t graph_bytes_before = devrt::memory_stats(device)->graph_pool_bytes;
    devrt::Graph graph = capture(stream, [&]() -> devrt::Status {
      CHECK(Buffer::allocate(device, bytes, other).status().code() == ErrorCode::invalid_argument);
      DEVRT_ASSIGN_OR_RETURN(Buffer temporary, Buffer::allocate(device, bytes, stream));
      DEVRT_RETURN_IF_ERROR(vadd.function.launch(graph_config(), {a, a, temporary, n}, stream));
      DEVRT_RETURN_IF_ERROR(scale.function.launch(graph_config(), {temporary, 0.5f, n}, stream));
      DEVRT_RETURN_IF_ERROR(devrt::copy(temporary, out, stream));
      DEVRT_RETURN_IF_ERROR(temporary.reset()); // the graph keeps the memory
      DEVRT_ASSIGN_OR_RETURN(Buffer reused, Buffer::allocate(device, bytes, stream));
      return scale.function.launch(graph_config(), {reused, 1.0f, n}, stream);
    });
    devrt::Result<devrt::MemoryStats> held = devrt::memory_stats(device);
    REQUIRE(held.ok());
    CHECK(held->graph_pool_bytes == graph_bytes_before + bytes); // the second allocation reused the first
    // Memory the device's pool hands out meanwhile is other memory: the graph's stays its own.
    devrt::Result<Buffer> unrelated = Buffer::allocate(device, bytes, stream);
    REQUIRE(unrelated.ok());
    const std::vector<float> sevens(kElements, -7.0f); // read until the stream is synchronized
    REQUIRE(devrt::copy(devrt::host_span(sevens.data(), bytes), *unrelated, stream).ok());
    for (int i = 0; i < 5; ++i) REQUIRE(graph.launch(stream).ok());
    CHECK(download_floats(out, kElements, 0, stream) == iota_values(kElements, 1.0f, 1.0f));
    CHECK(download_floats(*unrelated, kElements, 0, stream) == std::vector<float>(kElements, -7.0f));
    graph.reset();
    CHECK(devrt::memory_stats(device)->graph_pool_bytes == graph_bytes_before);
  }
}

TEST_CASE("replays, stream-ordered allocations and captures from several threads at once",
          "[conformance][graph][concurrency]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel scale = load_kernel(device, "scale");
    devrt::Stream replaying = new_stream(device), allocating = new_stream(device), capturing = new_stream(device);
    const auto n = static_cast<std::int32_t>(kElements);
    Buffer x = upload_floats(device, std::vector<float>(kElements, 1.0f));
    Buffer y = upload_floats(device, std::vector<float>(kElements, 1.0f));
    devrt::Graph graph = capture(replaying, [&] {
      return scale.function.launch(graph_config(), {x, 1.0f, n}, replaying);
    });
    std::atomic<int> failures{0}, refused{0}, captured{0};
    std::atomic<bool> start{false}; // the three begin together
    auto wait_for_start = [&] {
      while (!start.load()) std::this_thread::yield();
    };
    // Refused because another thread captures the device meanwhile, or else it must succeed.
    auto judge = [&](const devrt::Status& status) {
      if (status.ok()) return;
      (status.code() == ErrorCode::invalid_argument && contains(status.message(), "capturing") ? refused : failures)++;
    };
    std::thread replayer([&] {
      wait_for_start();
      for (int i = 0; i < 200; ++i) judge(graph.launch(replaying));
    });
    std::thread allocator([&] {
      wait_for_start();
      for (int i = 0; i < 1000; ++i) {
        devrt::Result<Buffer> block = Buffer::allocate(device, 4096 + 64 * (i % 4), allocating);
        judge(block.status());
      }
    });
    std::thread capturer([&] {
      wait_for_start();
      for (int i = 0; i < 50; ++i) {
        devrt::Status begun = devrt::begin_capture(capturing);
        if (!begun.ok()) {
          failures++;
          continue;
        }
        judge(scale.function.launch(graph_config(), {y, 1.0f, n}, capturing));
        devrt::Result<devrt::Graph> made = devrt::end_capture(capturing);
        judge(made.status());
        if (made.ok()) captured++;
      }
    });
    start = true;
    replayer.join();
    allocator.join();
    capturer.join();
    UNSCOPED_INFO(refused.load() << " calls were refused while another thread captured");
    // And for certain: another thread's work on the device while a capture is open.
    const int refused_before = refused.load();
    REQUIRE(devrt::begin_capture(capturing).ok());
    std::thread([&] {
      judge(Buffer::allocate(device, 4096, allocating).status());
      judge(scale.function.launch(graph_config(), {y, 1.0f, n}, allocating));
    }).join();
    REQUIRE(devrt::end_capture(capturing).ok());
    CHECK(refused.load() == refused_before + 2);
    CHECK(failures.load() == 0);
    CHECK(captured.load() == 50);
    REQUIRE(replaying.synchronize().ok());
    REQUIRE(allocating.synchronize().ok());
  }
}
