// SPDX-License-Identifier: Apache-2.0
// The memory rule of captured graphs (devrt/graph.hpp, docs/graphs.md "Memory a graph touches"):
// memory a live graph touches is not given to anyone else, whoever frees it, until the graph is
// destroyed. The sequence a user met (issue 53): capture c = a + a, drop c, allocate a new buffer
// of the same size (the Buffer cache's first choice is c's memory), fill it with 7s, replay.
#include <devrt/backend/cpu.hpp>
#include <devrt/backend/direct.hpp>
#include <devrt/graph.hpp>
#include <devrt/memory_stats.hpp>
#include <devrt/tensor.hpp>
#include <devrt/workspace.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "conformance.hpp"
#include "kernels.hpp"

using devrt::Buffer;
using devrt::Device;
using devrt::KernelArg;
using namespace conformance_kernels; // NOLINT(google-build-using-namespace)

namespace {

constexpr std::size_t kHeldFloats = 1024;
constexpr std::size_t kHeldBytes = kHeldFloats * sizeof(float);
const auto kHeldCount = static_cast<std::int32_t>(kHeldFloats);

devrt::LaunchConfig held_config() { return {.grid = {blocks_for(kHeldFloats)}, .block = {kBlock}}; }

devrt::Stream held_stream(Device device) {
  devrt::Result<devrt::Stream> stream = devrt::Stream::create(device);
  INFO(stream.status().message());
  REQUIRE(stream.ok());
  return std::move(stream).value();
}

// c = a + b, captured on `stream`.
devrt::Graph held_capture_vadd(const Kernel& vadd, KernelArg a, KernelArg b, KernelArg c, devrt::StreamRef stream) {
  REQUIRE(devrt::begin_capture(stream).ok());
  devrt::Status issued = vadd.function.launch(held_config(), {a, b, c, kHeldCount}, stream);
  devrt::Result<devrt::Graph> graph = devrt::end_capture(stream);
  INFO(issued.message() << " / " << graph.status().message());
  REQUIRE(issued.ok());
  REQUIRE(graph.ok());
  return std::move(graph).value();
}

std::uint64_t held_bytes(Device device) {
  devrt::Result<devrt::MemoryStats> stats = devrt::memory_stats(device);
  REQUIRE(stats.ok());
  return stats->graph_held_bytes;
}

std::vector<float> held_filled(float value) { return std::vector<float>(kHeldFloats, value); }

void held_replay(const devrt::Graph& graph, devrt::StreamRef stream) {
  devrt::Status replayed = graph.launch(stream);
  INFO(replayed.message());
  REQUIRE(replayed.ok());
  REQUIRE(devrt::synchronize(stream).ok());
}

} // namespace

TEST_CASE("a live graph keeps the memory it writes: a dropped output's memory goes to no one else",
          "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream stream = held_stream(device);
    Buffer a = upload_floats(device, held_filled(1.0f));
    for (int round = 0; round < 3; ++round) {
      INFO("round " << round);
      Buffer c = upload_floats(device, held_filled(0.0f));
      const std::uint64_t held_before = held_bytes(device);
      devrt::Graph graph = held_capture_vadd(vadd, a, a, c, stream);
      REQUIRE(c.reset().ok()); // the user drops the output
      CHECK(held_bytes(device) == held_before + kHeldBytes);
      Buffer fresh = upload_floats(device, held_filled(7.0f)); // same size: c's memory if anyone's
      held_replay(graph, stream);
      CHECK(download_floats(fresh, kHeldFloats) == held_filled(7.0f));
      graph.reset(); // c's memory goes back now
      CHECK(held_bytes(device) == held_before);
    }
  }
}

TEST_CASE("a live graph keeps the memory it reads: a dropped input is not overwritten by its next owner",
          "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream stream = held_stream(device);
    Buffer a = upload_floats(device, held_filled(1.0f));
    Buffer c = upload_floats(device, held_filled(0.0f));
    devrt::Graph graph = held_capture_vadd(vadd, a, a, c, stream);
    REQUIRE(a.reset().ok());
    Buffer fresh = upload_floats(device, held_filled(100.0f));
    held_replay(graph, stream);
    CHECK(download_floats(c, kHeldFloats) == held_filled(2.0f));
    CHECK(download_floats(fresh, kHeldFloats) == held_filled(100.0f));
  }
}

TEST_CASE("memory freed during the capture, tensors, workspaces and stream-ordered buffers are kept too",
          "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream stream = held_stream(device);
    Buffer a = upload_floats(device, held_filled(1.0f));
    const std::uint64_t held_before = held_bytes(device);

    devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({kHeldCount}, devrt::DataType::float32(), device);
    devrt::Result<devrt::Workspace> workspace = devrt::allocate_workspace(device, kHeldBytes);
    devrt::Result<Buffer> ordered = Buffer::allocate(device, kHeldBytes, stream);
    REQUIRE(tensor.ok());
    REQUIRE(workspace.ok());
    REQUIRE(ordered.ok());
    const devrt::MemorySpan workspace_span{device, workspace->data(), kHeldBytes};
    Buffer during = upload_floats(device, held_filled(0.0f));

    REQUIRE(devrt::begin_capture(stream).ok());
    REQUIRE(vadd.function.launch(held_config(), {a, a, tensor->storage_span(), kHeldCount}, stream).ok());
    REQUIRE(vadd.function.launch(held_config(), {a, a, workspace_span, kHeldCount}, stream).ok());
    REQUIRE(vadd.function.launch(held_config(), {a, a, *ordered, kHeldCount}, stream).ok());
    REQUIRE(vadd.function.launch(held_config(), {a, a, during, kHeldCount}, stream).ok());
    REQUIRE(during.reset().ok()); // freed before the capture ends
    devrt::Result<devrt::Graph> graph = devrt::end_capture(stream);
    REQUIRE(graph.ok());
    *tensor = devrt::Tensor();
    workspace->reset();
    REQUIRE(ordered->reset().ok());
    CHECK(held_bytes(device) >= held_before + 4 * kHeldBytes);

    std::vector<Buffer> fresh;
    for (int i = 0; i < 6; ++i) fresh.push_back(upload_floats(device, held_filled(7.0f)));
    devrt::Result<devrt::Workspace> next_workspace = devrt::allocate_workspace(device, kHeldBytes);
    devrt::Result<Buffer> next_ordered = Buffer::allocate(device, kHeldBytes, stream);
    REQUIRE(next_workspace.ok());
    REQUIRE(next_ordered.ok());
    const devrt::MemorySpan next_span{device, next_workspace->data(), kHeldBytes};
    REQUIRE(devrt::copy(fresh[0], next_span, stream).ok());
    REQUIRE(devrt::copy(fresh[0], *next_ordered, stream).ok());
    held_replay(*graph, stream);
    for (const Buffer& b : fresh) CHECK(download_floats(b, kHeldFloats, 0, stream) == held_filled(7.0f));
    std::vector<float> got(kHeldFloats);
    REQUIRE(devrt::copy(next_span, devrt::host_span(got.data(), kHeldBytes), stream).ok());
    REQUIRE(devrt::synchronize(stream).ok());
    CHECK(got == held_filled(7.0f));
    CHECK(download_floats(*next_ordered, kHeldFloats, 0, stream) == held_filled(7.0f));
    graph->reset();
    CHECK(held_bytes(device) == held_before);
  }
}

TEST_CASE("an update lets go of the memory it replaced and keeps what it names", "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream stream = held_stream(device);
    Buffer a = upload_floats(device, held_filled(1.0f));
    Buffer first = upload_floats(device, held_filled(0.0f)), second = upload_floats(device, held_filled(0.0f));
    const std::uint64_t held_before = held_bytes(device);
    devrt::Graph graph = held_capture_vadd(vadd, a, a, first, stream);
    REQUIRE(graph.update(0, {a, a, second, kHeldCount}).ok());
    REQUIRE(first.reset().ok()); // no launch names it now: freed at once
    CHECK(held_bytes(device) == held_before);
    REQUIRE(second.reset().ok()); // named by the update: kept
    CHECK(held_bytes(device) == held_before + kHeldBytes);
    Buffer fresh = upload_floats(device, held_filled(7.0f));
    held_replay(graph, stream);
    CHECK(download_floats(fresh, kHeldFloats) == held_filled(7.0f));
  }
}

namespace {

// A DLPack producer of device memory that devrt does not own: its deleter frees the memory and
// says when.
struct HeldProducer {
  Buffer memory;
  std::int64_t shape[1] = {kHeldCount};
  DLManagedTensor managed{};
  bool deleted = false;
};

void held_producer_deleter(DLManagedTensor* managed) {
  auto* producer = static_cast<HeldProducer*>(managed->manager_ctx);
  producer->deleted = true;
  REQUIRE(producer->memory.reset().ok());
}

} // namespace

TEST_CASE("a graph keeps an imported DLPack tensor: the producer's deleter runs when the graph goes",
          "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream stream = held_stream(device);
    Buffer a = upload_floats(device, held_filled(1.0f));
    HeldProducer producer;
    producer.memory = upload_floats(device, held_filled(0.0f));
    DLTensor& dl = producer.managed.dl_tensor;
    dl.data = producer.memory.data();
    dl.device = device.to_dlpack();
    dl.ndim = 1;
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    dl.shape = producer.shape;
    producer.managed.manager_ctx = &producer;
    producer.managed.deleter = &held_producer_deleter;
    devrt::Result<devrt::Tensor> imported =
        devrt::Tensor::from_dlpack(&producer.managed, {.allocation_bytes = kHeldBytes});
    INFO(imported.status().message());
    REQUIRE(imported.ok());
    devrt::Graph graph = held_capture_vadd(vadd, a, a, imported->storage_span(), stream);
    *imported = devrt::Tensor();
    CHECK_FALSE(producer.deleted); // the graph holds the import
    held_replay(graph, stream);
    graph.reset();
    CHECK(producer.deleted);
  }
}

TEST_CASE("a graph keeps a compile-time path buffer it touches (direct::Buffer)",
          "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  if (conformance::backend().name() != "cpu") {
    CONFORMANCE_SKIP("direct::Buffer<CpuBackend> is the CPU backend's");
    return;
  }
  using Cpu = devrt::cpu::CpuBackend;
  const Device device = devrt::kHostDevice;
  Kernel vadd = load_kernel(device, "vadd");
  devrt::Stream stream = held_stream(device);
  Buffer a = upload_floats(device, held_filled(1.0f));
  devrt::Result<devrt::direct::Buffer<Cpu>> out = devrt::direct::Buffer<Cpu>::allocate(device, kHeldBytes);
  REQUIRE(out.ok());
  const std::uint64_t held_before = held_bytes(device);
  devrt::Graph graph = held_capture_vadd(vadd, a, a, out->span(), stream);
  REQUIRE(out->reset().ok());
  CHECK(held_bytes(device) == held_before + kHeldBytes);
  held_replay(graph, stream); // writes memory that is still the graph's (ASan would report a freed one)
  graph.reset();
  CHECK(held_bytes(device) == held_before);
}

TEST_CASE("graphs keep and let go of memory while other threads allocate and free",
          "[conformance][graph][graph-memory][concurrency]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream capturing = held_stream(device), replaying = held_stream(device);
    Buffer a = upload_floats(device, held_filled(1.0f));
    const std::uint64_t held_before = held_bytes(device);
    // A graph that lives through the whole case, touching eight buffers another thread frees.
    std::vector<Buffer> outputs;
    for (int i = 0; i < 8; ++i) outputs.push_back(upload_floats(device, held_filled(0.0f)));
    REQUIRE(devrt::begin_capture(capturing).ok());
    for (const Buffer& out : outputs)
      REQUIRE(vadd.function.launch(held_config(), {a, a, out, kHeldCount}, capturing).ok());
    devrt::Result<devrt::Graph> lasting = devrt::end_capture(capturing);
    REQUIRE(lasting.ok());

    std::atomic<int> failures{0};
    std::atomic<bool> start{false};
    auto wait_for_start = [&] {
      while (!start.load()) std::this_thread::yield();
    };
    std::thread maker([&] { // short-lived graphs over buffers dropped at once
      wait_for_start();
      for (int i = 0; i < 30; ++i) {
        devrt::Result<Buffer> c = Buffer::allocate(device, kHeldBytes);
        if (!c.ok() || !devrt::begin_capture(capturing).ok()) {
          failures++;
          continue;
        }
        if (!vadd.function.launch(held_config(), {a, a, *c, kHeldCount}, capturing).ok()) failures++;
        devrt::Result<devrt::Graph> graph = devrt::end_capture(capturing);
        if (!graph.ok() || !c->reset().ok() || !graph->launch(replaying).ok()) failures++;
      }
    });
    std::thread churner([&] { // the Buffer cache's traffic, beside the graphs
      wait_for_start();
      for (int i = 0; i < 1000; ++i) {
        if (!Buffer::allocate(device, kHeldBytes).ok()) failures++;
      }
    });
    std::thread dropper([&] { // frees what the lasting graph touches
      wait_for_start();
      for (Buffer& out : outputs) {
        if (!out.reset().ok()) failures++;
      }
    });
    start = true;
    maker.join();
    churner.join();
    dropper.join();
    CHECK(failures.load() == 0);
    REQUIRE(replaying.synchronize().ok());
    CHECK(held_bytes(device) == held_before + 8 * kHeldBytes);
    lasting->reset();
    CHECK(held_bytes(device) == held_before);
  }
}
