// SPDX-License-Identifier: Apache-2.0
#include "conformance.hpp"

#include <thread>

using conformance::contains;
using devrt::Buffer;
using devrt::ErrorCode;

TEST_CASE("work on one stream runs in order", "[conformance][stream]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    devrt::Stream stream = std::move(devrt::Stream::create(device)).value();
    CHECK(stream.device() == device);
    std::vector<unsigned char> source = conformance::pattern(1 << 16, 7);
    Buffer a = std::move(Buffer::allocate(device, source.size())).value();
    Buffer b = std::move(Buffer::allocate(device, source.size())).value();
    Buffer c = std::move(Buffer::allocate(device, source.size())).value();
    std::vector<unsigned char> result(source.size(), 0);
    // Each step reads what the previous step wrote.
    REQUIRE(devrt::copy(devrt::host_span(source.data(), source.size()), a, stream).ok());
    for (int round = 0; round < 20; ++round) {
      REQUIRE(devrt::copy(a, b, stream).ok());
      REQUIRE(devrt::copy(b, c, stream).ok());
      REQUIRE(devrt::copy(c, a, stream).ok());
    }
    REQUIRE(devrt::copy(a, devrt::host_span(result.data(), result.size()), stream).ok());
    REQUIRE(stream.synchronize().ok());
    CHECK(result == source);
  }
}

TEST_CASE("streams: create many, destroy, and synchronize idle ones", "[conformance][stream]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    std::vector<devrt::Stream> streams;
    for (int i = 0; i < 8; ++i) {
      devrt::Result<devrt::Stream> s = devrt::Stream::create(device);
      REQUIRE(s.ok());
      CHECK(s->synchronize().ok());
      streams.push_back(std::move(s).value());
    }
    CHECK(devrt::synchronize(devrt::StreamRef{device, nullptr}).ok());
    streams.clear();
    devrt::Stream moved = std::move(devrt::Stream::create(device)).value();
    devrt::Stream target = std::move(moved);
    CHECK(target.synchronize().ok());
    CHECK(moved.synchronize().code() == ErrorCode::invalid_argument); // NOLINT(bugprone-use-after-move)
  }
  devrt::Device past{conformance::backend().kind(), static_cast<std::int32_t>(conformance::devices().size())};
  CHECK(devrt::Stream::create(past).status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("sync_stream_from_to orders a second stream after the first", "[conformance][stream]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    devrt::Stream producer = std::move(devrt::Stream::create(device)).value();
    devrt::Stream consumer = std::move(devrt::Stream::create(device)).value();
    std::vector<unsigned char> source = conformance::pattern(1 << 20, 8);
    Buffer a = std::move(Buffer::allocate(device, source.size())).value();
    Buffer b = std::move(Buffer::allocate(device, source.size())).value();
    REQUIRE(devrt::copy(devrt::host_span(source.data(), source.size()), a, producer).ok());
    REQUIRE(devrt::sync_stream_from_to(producer, consumer).ok());
    REQUIRE(devrt::copy(a, b, consumer).ok());
    std::vector<unsigned char> result(source.size());
    REQUIRE(devrt::copy(b, devrt::host_span(result.data(), result.size()), consumer).ok());
    REQUIRE(consumer.synchronize().ok());
    CHECK(result == source);
    CHECK(devrt::sync_stream_from_to(producer, producer).ok());
    devrt::StreamRef elsewhere{devrt::Device{device.kind, device.id + 1}, nullptr};
    CHECK(devrt::sync_stream_from_to(producer, elsewhere).code() == ErrorCode::invalid_argument);
  }
}

TEST_CASE("the current stream is per thread and per device", "[conformance][stream]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    CHECK(devrt::current_stream(device) == devrt::StreamRef{device, nullptr});
    devrt::Stream stream = std::move(devrt::Stream::create(device)).value();
    REQUIRE(devrt::set_current_stream(stream).ok());
    CHECK(devrt::current_stream(device) == stream.ref());
    devrt::StreamRef seen_elsewhere{};
    std::thread other([&] { seen_elsewhere = devrt::current_stream(device); });
    other.join();
    CHECK(seen_elsewhere == devrt::StreamRef{device, nullptr});

    // Copies without an explicit stream use the current one.
    std::vector<unsigned char> source = conformance::pattern(4096, 9);
    Buffer a = std::move(Buffer::allocate(device, source.size())).value();
    REQUIRE(devrt::copy(devrt::host_span(source.data(), source.size()), a).ok());
    REQUIRE(stream.synchronize().ok());

    // Destroying the stream restores the default as current.
    stream.reset();
    CHECK(devrt::current_stream(device) == devrt::StreamRef{device, nullptr});
    CHECK(conformance::read_back(a) == source);
  }
}

TEST_CASE("a thread may set current streams on any number of devices", "[conformance][stream]") {
  devrt::Device device = conformance::devices().front();
  std::thread worker([&] {
    // Ids beyond those the backend has: set_current_stream does not look devices up.
    for (int i = 0; i < 80; ++i) {
      CHECK(devrt::set_current_stream(devrt::StreamRef{devrt::Device{device.kind, 30 + i}, &device}).ok());
    }
    for (int i = 0; i < 80; ++i) CHECK(devrt::current_stream(devrt::Device{device.kind, 30 + i}).handle == &device);
    for (int i = 0; i < 80; ++i) {
      CHECK(devrt::set_current_stream(devrt::StreamRef{devrt::Device{device.kind, 30 + i}, nullptr}).ok());
    }
    CHECK(devrt::current_stream(devrt::Device{device.kind, 100}).handle == nullptr);
  });
  worker.join();
}

TEST_CASE("events mark points in a stream", "[conformance][event]") {
  devrt::BackendRef backend = conformance::backend();
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    devrt::Result<devrt::Event> created = devrt::Event::create(device);
    if (!backend.has_events()) {
      REQUIRE_FALSE(created.ok());
      CHECK(created.status().code() == ErrorCode::unsupported);
      CONFORMANCE_SKIP("the " << backend.name() << " backend has no events");
      continue;
    }
    REQUIRE(created.ok());
    devrt::Event event = std::move(created).value();
    devrt::Stream first = std::move(devrt::Stream::create(device)).value();
    devrt::Stream second = std::move(devrt::Stream::create(device)).value();
    std::vector<unsigned char> source = conformance::pattern(1 << 18, 10);
    Buffer a = std::move(Buffer::allocate(device, source.size())).value();
    Buffer b = std::move(Buffer::allocate(device, source.size())).value();
    REQUIRE(devrt::copy(devrt::host_span(source.data(), source.size()), a, first).ok());
    REQUIRE(event.record(first).ok());
    REQUIRE(event.wait_on(second).ok());
    REQUIRE(devrt::copy(a, b, second).ok());
    REQUIRE(event.synchronize().ok());
    devrt::Result<bool> done = event.query();
    REQUIRE(done.ok());
    CHECK(*done);
    REQUIRE(second.synchronize().ok());
    CHECK(conformance::read_back(b) == source);

    devrt::StreamRef foreign{devrt::Device{device.kind, device.id + 1}, nullptr};
    CHECK(event.record(foreign).code() == ErrorCode::invalid_argument);
    CHECK(event.wait_on(foreign).code() == ErrorCode::invalid_argument);
    devrt::Event moved = std::move(event);
    CHECK(event.synchronize().code() == ErrorCode::invalid_argument); // NOLINT(bugprone-use-after-move)
    CHECK(moved.synchronize().ok());
  }
}
