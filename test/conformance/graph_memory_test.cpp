// SPDX-License-Identifier: Apache-2.0
// The memory rule of captured graphs (devrt/graph.hpp, docs/graphs.md "Memory a graph touches"):
// memory a live graph touches is not given to anyone else, whoever frees it, until the graph is
// destroyed. The sequence a user met (issue 53): capture c = a + a, drop c, allocate a new buffer
// of the same size (the Buffer cache's first choice is c's memory), fill it with 7s, replay.
#include <devrt/backends/cpu.hpp>
#include <devrt/direct.hpp>
#include <devrt/graph.hpp>
#include <devrt/memory_stats.hpp>
#include <devrt/tensor.hpp>
#include <devrt/workspace.hpp>

#include <cstdint>
#include <functional>
#include <vector>

#include "conformance.hpp"
#include "kernels.hpp"

using devrt::Buffer;
using devrt::Device;
using devrt::KernelArg;
using namespace conformance_kernels; // NOLINT(google-build-using-namespace)

namespace {

constexpr std::size_t kElements = 1024;
constexpr std::size_t kBytes = kElements * sizeof(float);
const auto kCount = static_cast<std::int32_t>(kElements);

devrt::LaunchConfig config() { return {.grid = {blocks_for(kElements)}, .block = {kBlock}}; }

devrt::Stream new_stream(Device device) {
  devrt::Result<devrt::Stream> stream = devrt::Stream::create(device);
  INFO(stream.status().message());
  REQUIRE(stream.ok());
  return std::move(stream).value();
}

// c = a + b, captured on `stream`.
devrt::Graph capture_vadd(const Kernel& vadd, KernelArg a, KernelArg b, KernelArg c, devrt::StreamRef stream) {
  REQUIRE(devrt::begin_capture(stream).ok());
  devrt::Status issued = vadd.function.launch(config(), {a, b, c, kCount}, stream);
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

std::vector<float> filled(float value) { return std::vector<float>(kElements, value); }

void replay(const devrt::Graph& graph, devrt::StreamRef stream) {
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
    devrt::Stream stream = new_stream(device);
    Buffer a = upload_floats(device, filled(1.0f));
    for (int round = 0; round < 3; ++round) {
      INFO("round " << round);
      Buffer c = upload_floats(device, filled(0.0f));
      const std::uint64_t held_before = held_bytes(device);
      devrt::Graph graph = capture_vadd(vadd, a, a, c, stream);
      REQUIRE(c.reset().ok()); // the user drops the output
      CHECK(held_bytes(device) == held_before + kBytes);
      Buffer fresh = upload_floats(device, filled(7.0f)); // same size: c's memory if anyone's
      replay(graph, stream);
      CHECK(download_floats(fresh, kElements) == filled(7.0f));
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
    devrt::Stream stream = new_stream(device);
    Buffer a = upload_floats(device, filled(1.0f));
    Buffer c = upload_floats(device, filled(0.0f));
    devrt::Graph graph = capture_vadd(vadd, a, a, c, stream);
    REQUIRE(a.reset().ok());
    Buffer fresh = upload_floats(device, filled(100.0f));
    replay(graph, stream);
    CHECK(download_floats(c, kElements) == filled(2.0f));
    CHECK(download_floats(fresh, kElements) == filled(100.0f));
  }
}

TEST_CASE("memory freed during the capture, tensors, workspaces and stream-ordered buffers are kept too",
          "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream stream = new_stream(device);
    Buffer a = upload_floats(device, filled(1.0f));
    const std::uint64_t held_before = held_bytes(device);

    devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({kCount}, devrt::DataType::float32(), device);
    devrt::Result<devrt::Workspace> workspace = devrt::allocate_workspace(device, kBytes);
    devrt::Result<Buffer> ordered = Buffer::allocate(device, kBytes, stream);
    REQUIRE(tensor.ok());
    REQUIRE(workspace.ok());
    REQUIRE(ordered.ok());
    const devrt::MemorySpan workspace_span{device, workspace->data(), kBytes};
    Buffer during = upload_floats(device, filled(0.0f));

    REQUIRE(devrt::begin_capture(stream).ok());
    REQUIRE(vadd.function.launch(config(), {a, a, tensor->storage_span(), kCount}, stream).ok());
    REQUIRE(vadd.function.launch(config(), {a, a, workspace_span, kCount}, stream).ok());
    REQUIRE(vadd.function.launch(config(), {a, a, *ordered, kCount}, stream).ok());
    REQUIRE(vadd.function.launch(config(), {a, a, during, kCount}, stream).ok());
    REQUIRE(during.reset().ok()); // freed before the capture ends
    devrt::Result<devrt::Graph> graph = devrt::end_capture(stream);
    REQUIRE(graph.ok());
    *tensor = devrt::Tensor();
    workspace->reset();
    REQUIRE(ordered->reset().ok());
    CHECK(held_bytes(device) >= held_before + 4 * kBytes);

    std::vector<Buffer> fresh;
    for (int i = 0; i < 6; ++i) fresh.push_back(upload_floats(device, filled(7.0f)));
    devrt::Result<devrt::Workspace> next_workspace = devrt::allocate_workspace(device, kBytes);
    devrt::Result<Buffer> next_ordered = Buffer::allocate(device, kBytes, stream);
    REQUIRE(next_workspace.ok());
    REQUIRE(next_ordered.ok());
    const devrt::MemorySpan next_span{device, next_workspace->data(), kBytes};
    REQUIRE(devrt::copy(fresh[0], next_span, stream).ok());
    REQUIRE(devrt::copy(fresh[0], *next_ordered, stream).ok());
    replay(*graph, stream);
    for (const Buffer& b : fresh) CHECK(download_floats(b, kElements, 0, stream) == filled(7.0f));
    std::vector<float> got(kElements);
    REQUIRE(devrt::copy(next_span, devrt::host_span(got.data(), kBytes), stream).ok());
    REQUIRE(devrt::synchronize(stream).ok());
    CHECK(got == filled(7.0f));
    CHECK(download_floats(*next_ordered, kElements, 0, stream) == filled(7.0f));
    graph->reset();
    CHECK(held_bytes(device) == held_before);
  }
}

TEST_CASE("an update lets go of the memory it replaced and keeps what it names", "[conformance][graph][graph-memory]") {
  SKIP_WITHOUT_KERNELS();
  for (const Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    Kernel vadd = load_kernel(device, "vadd");
    devrt::Stream stream = new_stream(device);
    Buffer a = upload_floats(device, filled(1.0f));
    Buffer first = upload_floats(device, filled(0.0f)), second = upload_floats(device, filled(0.0f));
    const std::uint64_t held_before = held_bytes(device);
    devrt::Graph graph = capture_vadd(vadd, a, a, first, stream);
    REQUIRE(graph.update(0, {a, a, second, kCount}).ok());
    REQUIRE(first.reset().ok()); // no launch names it now: freed at once
    CHECK(held_bytes(device) == held_before);
    REQUIRE(second.reset().ok()); // named by the update: kept
    CHECK(held_bytes(device) == held_before + kBytes);
    Buffer fresh = upload_floats(device, filled(7.0f));
    replay(graph, stream);
    CHECK(download_floats(fresh, kElements) == filled(7.0f));
  }
}

namespace {

// A DLPack producer of device memory that devrt does not own: its deleter frees the memory and
// says when.
struct Producer {
  Buffer memory;
  std::int64_t shape[1] = {kCount};
  DLManagedTensor managed{};
  bool deleted = false;
};

void producer_deleter(DLManagedTensor* managed) {
  auto* producer = static_cast<Producer*>(managed->manager_ctx);
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
    devrt::Stream stream = new_stream(device);
    Buffer a = upload_floats(device, filled(1.0f));
    Producer producer;
    producer.memory = upload_floats(device, filled(0.0f));
    DLTensor& dl = producer.managed.dl_tensor;
    dl.data = producer.memory.data();
    dl.device = device.to_dlpack();
    dl.ndim = 1;
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    dl.shape = producer.shape;
    producer.managed.manager_ctx = &producer;
    producer.managed.deleter = &producer_deleter;
    devrt::Result<devrt::Tensor> imported = devrt::Tensor::from_dlpack(&producer.managed, {.allocation_bytes = kBytes});
    INFO(imported.status().message());
    REQUIRE(imported.ok());
    devrt::Graph graph = capture_vadd(vadd, a, a, imported->storage_span(), stream);
    *imported = devrt::Tensor();
    CHECK_FALSE(producer.deleted); // the graph holds the import
    replay(graph, stream);
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
  devrt::Stream stream = new_stream(device);
  Buffer a = upload_floats(device, filled(1.0f));
  devrt::Result<devrt::direct::Buffer<Cpu>> out = devrt::direct::Buffer<Cpu>::allocate(device, kBytes);
  REQUIRE(out.ok());
  const std::uint64_t held_before = held_bytes(device);
  devrt::Graph graph = capture_vadd(vadd, a, a, out->span(), stream);
  REQUIRE(out->reset().ok());
  CHECK(held_bytes(device) == held_before + kBytes);
  replay(graph, stream); // writes memory that is still the graph's (ASan would report a freed one)
  graph.reset();
  CHECK(held_bytes(device) == held_before);
}
