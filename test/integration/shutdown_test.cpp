// SPDX-License-Identifier: Apache-2.0
// devrt::shutdown() from outside the conformance suite, as a program uses it. Two modes:
//   live       on every present device, Buffers (cached and not), a Workspace, a texture where the
//              device has them, Streams and Events stay alive in static storage; shutdown() runs
//              from atexit, twice; the static destructors then free everything after it. The
//              test is that the process exits 0 (under ASan: no error, no leak).
//   everything on the CPU alone, everything freed and then shutdown(): run under valgrind with
//              every leak kind an error, nothing of devrt's may still be reachable.
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/memory_stats.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Held {
  std::vector<devrt::Buffer> buffers;
  std::vector<devrt::Workspace> workspaces;
  std::vector<devrt::Tensor> tensors;
  std::vector<devrt::Stream> streams;
  std::vector<devrt::Event> events;
};
Held g_held; // destroyed after the atexit handler below has shut devrt down

void shut_down_twice() {
  devrt::Status first = devrt::shutdown();
  devrt::Status second = devrt::shutdown();
  if (!first.ok() || !second.ok()) {
    std::fprintf(stderr, "shutdown failed: %s / %s\n", first.message().data(), second.message().data());
    std::_Exit(1);
  }
}

bool fail(const devrt::Status& status) {
  std::fprintf(stderr, "FAIL: %.*s\n", static_cast<int>(status.message().size()), status.message().data());
  return false;
}

bool hold_on(devrt::Device device) {
  for (std::size_t bytes : {std::size_t{256}, std::size_t{65} << 20}) {
    devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(device, bytes);
    if (!buffer.ok()) return fail(buffer.status());
    g_held.buffers.push_back(std::move(buffer).value());
  }
  devrt::Result<devrt::Workspace> block = devrt::allocate_workspace(device, 4096);
  if (!block.ok()) return fail(block.status());
  g_held.workspaces.push_back(std::move(block).value());
  if (devrt::scope_limits(device, devrt::MemoryScope::texture).ok()) {
    devrt::TensorOptions options;
    options.scope = devrt::MemoryScope::texture;
    devrt::Result<devrt::Tensor> texture = devrt::Tensor::empty({4, 8, 4}, devrt::DataType::float32(), device, options);
    if (!texture.ok()) return fail(texture.status());
    g_held.tensors.push_back(std::move(texture).value());
  }
  devrt::Result<devrt::Stream> stream = devrt::Stream::create(device);
  if (!stream.ok()) return fail(stream.status());
  if (devrt::Registry::global().find(device.kind).has_events()) {
    devrt::Result<devrt::Event> event = devrt::Event::create(device);
    if (!event.ok()) return fail(event.status());
    if (devrt::Status recorded = event->record(*stream); !recorded.ok()) return fail(recorded);
    g_held.events.push_back(std::move(event).value());
  }
  g_held.streams.push_back(std::move(stream).value());
  return true;
}

int live_objects_at_exit() {
  std::atexit(shut_down_twice);
  int devices = 0;
  const devrt::Registry& registry = devrt::Registry::global();
  for (std::size_t i = 0; i < registry.size(); ++i) {
    devrt::BackendRef backend = registry.at(i);
    if (!backend.availability().ok()) continue;
    std::int32_t count = backend.device_count().value_or(0);
    for (std::int32_t id = 0; id < count; ++id, ++devices) {
      if (!hold_on(devrt::Device{backend.kind(), id})) return 1;
    }
  }
  std::printf("holding Buffers, Workspaces, textures, Streams and Events on %d devices at exit\n", devices);
  return 0;
}

int everything_freed() {
  {
    devrt::set_memory_history(true);
    devrt::Buffer cached = std::move(devrt::Buffer::allocate(devrt::kHostDevice, 1000)).value();
    devrt::Buffer large = std::move(devrt::Buffer::allocate(devrt::kHostDevice, std::size_t{65} << 20)).value();
    devrt::Workspace block = std::move(devrt::allocate_workspace(devrt::kHostDevice, 4096)).value();
    if (!devrt::detect_target(devrt::kHostDevice).ok() || !devrt::memory_snapshot(devrt::kHostDevice).ok()) return 1;
  }
  devrt::Status status = devrt::shutdown();
  if (!status.ok()) return fail(status) ? 0 : 1;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "live") == 0) return live_objects_at_exit();
  if (argc == 2 && std::strcmp(argv[1], "everything") == 0) return everything_freed();
  std::fprintf(stderr, "usage: shutdown_test live|everything\n");
  return 2;
}
