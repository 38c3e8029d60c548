// SPDX-License-Identifier: Apache-2.0
// Streams (in-order queues of work on one device) and events (markers recorded on a stream).
#ifndef DEVRT_STREAM_HPP
#define DEVRT_STREAM_HPP

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

// A non-owning reference to a stream of one device; handle == nullptr is the device's default
// stream. A plain value; thread-safe to copy.
struct StreamRef {
  Device device;
  void* handle = nullptr;
  friend constexpr bool operator==(const StreamRef&, const StreamRef&) = default;
};

// An owned stream; destroyed (without waiting) with the object. Move-only. Using one Stream from
// several threads is as safe as the backend's stream (in-order queues are thread-safe on CUDA,
// OpenCL and the CPU backend).
class Stream {
public:
  Stream() noexcept = default;
  Stream(Stream&& other) noexcept
      : backend_(detail::exchange(other.backend_, nullptr)), ref_(detail::exchange(other.ref_, StreamRef{})) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      reset();
      backend_ = detail::exchange(other.backend_, nullptr);
      ref_ = detail::exchange(other.ref_, StreamRef{});
    }
    return *this;
  }
  ~Stream() { reset(); }

  // Creates a stream on `device` in the global registry.
  static Result<Stream> create(Device device) noexcept;
  static Result<Stream> create(const Registry& registry, Device device) noexcept;

  StreamRef ref() const noexcept { return ref_; }
  operator StreamRef() const noexcept { return ref_; }
  Device device() const noexcept { return ref_.device; }
  // Blocks until all work queued so far has finished.
  Status synchronize() const noexcept;
  // Destroys the stream now; errors are logged.
  void reset() noexcept;

private:
  const devrt_backend_table* backend_ = nullptr;
  StreamRef ref_;
};

// Blocks until all work queued on `stream` has finished. Thread-safe.
Status synchronize(StreamRef stream) noexcept;

// Blocks until all work queued so far on every stream of `device` has finished (cuCtxSynchronize).
// unsupported on a backend that cannot (see BackendRef::device_synchronize). Thread-safe.
Status synchronize(Device device) noexcept;

// Makes work queued on `to` after this call wait for work queued on `from` before it (TVM's
// SyncStreamFromTo). Both on the same device. Uses events where the backend has them, else
// synchronizes `from`. Thread-safe.
Status sync_stream_from_to(StreamRef from, StreamRef to) noexcept;

// The calling thread's current stream for `device` (its default stream unless set). Thread-safe:
// each thread has its own.
StreamRef current_stream(Device device) noexcept;
// Sets the calling thread's current stream for stream.device (handle nullptr restores the
// default). Any number of devices may have one (a firmware build: up to 16, out_of_range
// beyond); out_of_memory when there is no host memory to remember it. The device is not looked up (the C API's
// devrt_set_current_stream refuses one that does not exist). The stream must outlive its use as current.
Status set_current_stream(StreamRef stream) noexcept;

// An owned event. Move-only; `unsupported` on backends without events.
// How an event is made. `timing`: its record() also takes the time at which the stream reaches it,
// on the device's clock (elapsed() below); `unsupported` where the backend cannot time.
struct EventOptions {
  bool timing = false;
};

class Event {
public:
  Event() noexcept = default;
  Event(Event&& other) noexcept
      : backend_(detail::exchange(other.backend_, nullptr)), device_(other.device_),
        handle_(detail::exchange(other.handle_, nullptr)), timed_(other.timed_) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      reset();
      backend_ = detail::exchange(other.backend_, nullptr);
      device_ = other.device_;
      handle_ = detail::exchange(other.handle_, nullptr);
      timed_ = other.timed_;
    }
    return *this;
  }
  ~Event() { reset(); }

  // A new event of `device`, owned by the returned object. Thread-safe.
  static Result<Event> create(Device device, EventOptions options = {}) noexcept;

  Device device() const noexcept { return device_; }
  // Whether the event was made with EventOptions::timing.
  bool timed() const noexcept { return timed_; }
  // The nanoseconds on `start`'s device from the point `start` marks to the point `end` marks
  // (negative when `end`'s point came first). Both must be timed events of one device, recorded,
  // and complete: invalid_argument otherwise (naming which), `unavailable` while one has not
  // completed (synchronize `end` first). Never blocks. Thread-safe.
  static Result<std::int64_t> elapsed_ns(const Event& start, const Event& end) noexcept;
  // Marks the point in `stream` (same device) that synchronize()/query() refer to.
  Status record(StreamRef stream) const noexcept;
  // Blocks until the recorded work has finished.
  Status synchronize() const noexcept;
  // True when the recorded work has finished; never blocks.
  Result<bool> query() const noexcept;
  // Makes later work on `stream` wait for this event.
  Status wait_on(StreamRef stream) const noexcept;
  void reset() noexcept;

private:
  const devrt_backend_table* backend_ = nullptr;
  Device device_;
  void* handle_ = nullptr;
  bool timed_ = false;
};

} // namespace devrt

#endif // DEVRT_STREAM_HPP
