// SPDX-License-Identifier: Apache-2.0
// Timed events of a backend whose streams are synchronous (cpu, hexagon): every operation has
// finished when its call returns, so a clock read at record() is the time the stream reaches the
// event. A timed event is an allocation (an even handle); the backend's untimed events stay odd
// tokens, which these functions tell apart. The backend supplies the clock, in nanoseconds.
// Thread-safe as the backend's events are. Not public API.
#ifndef DEVRT_SRC_BACKEND_SUPPORT_CLOCK_EVENTS_HPP
#define DEVRT_SRC_BACKEND_SUPPORT_CLOCK_EVENTS_HPP

#include <atomic>
#include <cstdint>
#include <new>

#include <devrt/status.hpp>

namespace devrt::detail {

// The clock's nanoseconds at the event's last record(), -1 before the first.
struct ClockEvent {
  std::atomic<std::int64_t> ns{-1};
};

inline bool is_clock_event(void* event) noexcept { return (reinterpret_cast<std::uintptr_t>(event) & 1u) == 0; }

inline Result<void*> create_clock_event() noexcept {
  auto* event = new (std::nothrow) ClockEvent();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no memory for a timed event");
  return static_cast<void*>(event);
}

// Frees `event` when it is a timed one; a token is left alone.
inline void destroy_clock_event(void* event) noexcept {
  if (is_clock_event(event)) delete static_cast<ClockEvent*>(event);
}

// Records `now_ns` (read only for a timed event: `now` is called then) into `event`.
template <class Now>
void record_clock_event(void* event, Now now_ns) noexcept {
  if (is_clock_event(event)) static_cast<ClockEvent*>(event)->ns.store(now_ns(), std::memory_order_release);
}

inline Result<std::int64_t> clock_events_elapsed(void* start, void* end) noexcept {
  if (!is_clock_event(start) || !is_clock_event(end)) {
    return make_error(ErrorCode::invalid_argument, "an event was created without timing");
  }
  const std::int64_t from = static_cast<ClockEvent*>(start)->ns.load(std::memory_order_acquire);
  const std::int64_t to = static_cast<ClockEvent*>(end)->ns.load(std::memory_order_acquire);
  if (from < 0 || to < 0) {
    return make_error(ErrorCode::invalid_argument, "the ", from < 0 ? "start" : "end", " event was never recorded");
  }
  return to - from;
}

} // namespace devrt::detail

#endif // DEVRT_SRC_BACKEND_SUPPORT_CLOCK_EVENTS_HPP
