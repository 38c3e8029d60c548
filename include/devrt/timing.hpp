// SPDX-License-Identifier: Apache-2.0
// Measuring work on a device, as a compiler's tuning loop does (TVM's Timer and time_evaluator,
// src/runtime/timer.cc and profiling.cc): a Timer around work on a stream, on the device's own
// clock where its backend can time events (docs/timing.md), else synchronizing and reading the
// host's clock, and saying so; and TimeEvaluator, TVM's WrapTimeEvaluator with its exact rules.
// Hosted builds only (bare-metal builds have neither threads to sleep nor a clock).
#ifndef DEVRT_TIMING_HPP
#define DEVRT_TIMING_HPP

#include <cstdint>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <devrt/device.hpp>
#include <devrt/module.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>

namespace devrt {

class Graph; // devrt/graph.hpp

// TVM's Timer: start() marks the stream, stop() marks it again, elapsed_ns() synchronizes with the
// stop mark on its first call and answers the nanoseconds between the marks (the same value on
// later calls). On a backend whose events can be timed the marks are timed events (the device's
// clock); elsewhere start() and stop() synchronize the stream and read the host's monotonic clock,
// device_side() is false, and the first such timer of each backend logs a warning (as TVM warns).
// Move-only; one thread at a time.
class Timer {
public:
  Timer() noexcept = default;
  // Starts a timer on `stream` (its device's; default: the calling thread's current stream of
  // `device`). Thread-safe.
  static Result<Timer> start(Device device, StreamRef stream = {}) noexcept;
  // Marks the end; invalid_argument when not started or already stopped.
  Status stop() noexcept;
  // Nanoseconds from start to stop; invalid_argument before stop(). Synchronizes once.
  Result<std::int64_t> elapsed_ns() noexcept;
  // Whether the marks are read on the device's clock.
  bool device_side() const noexcept { return device_side_; }
  Device device() const noexcept { return device_; }

private:
  Device device_;
  StreamRef stream_;
  Event start_, stop_;
  bool started_ = false, stopped_ = false, device_side_ = false, measured_ = false;
  std::int64_t host_start_ns_ = 0, host_stop_ns_ = 0, elapsed_ = 0;
};

// TVM's time_evaluator parameters, with its defaults (python/tvm/runtime/module.py).
struct TimeEvaluatorOptions {
  int number = 10;                      // calls per timed batch (grown to reach min_repeat_ms)
  int repeat = 1;                       // timed batches, one result each
  int min_repeat_ms = 0;                // a batch is repeated with more calls until it lasts this long
  int limit_zero_time_iterations = 100; // ... or until this many batches measured exactly 0
  int cooldown_interval_ms = 0;         // a sleep after repeat i when i % repeats_to_cooldown == 0
  int repeats_to_cooldown = 1;
  std::int64_t cache_flush_bytes = 0; // a copy between two buffers of this size before each batch
};

// One call to time: enqueues its work on `stream` and returns its status. `context` is the
// caller's. A plain C shape, so that the C API and Python can hand theirs over.
struct TimedCall {
  Status (*call)(void* context, StreamRef stream) noexcept = nullptr;
  void* context = nullptr;
};

// TVM's WrapTimeEvaluator: one untimed call first (lazy initialisation), the two cache-flush
// buffers allocated, the stream synchronized; then for each repeat: `preprocess` (when given),
// batches of `number` calls, each batch after the cache-flush copy and a synchronize, timed by a
// Timer, while the batch lasts less than min_repeat_ms (and fewer than
// limit_zero_time_iterations batches read 0), `number` growing between batches to
// max(min_repeat_ms / (ms / number) + 1, number * 1.618); its result the batch's seconds per call;
// then the cooldown. The grown `number` stays for later repeats and later runs of this evaluator,
// as in TVM (whose evaluator captures it). On a device in another process (remote) each batch is
// captured into a Graph first and timed as one replay, which the server runs without the network
// between the calls (TVM's RPCTimeEvaluator); a call must then be one a capture accepts. One
// thread at a time.
class TimeEvaluator {
public:
  // invalid_argument for number or repeat below 1, repeats_to_cooldown below 1, or any other
  // option negative. Thread-safe.
  static Result<TimeEvaluator> create(Device device, const TimeEvaluatorOptions& options = {},
                                      StreamRef stream = {}) noexcept;

  // Seconds per call of each repeat. Errors of `call` or `preprocess` are returned as they are;
  // out_of_range when min_repeat_ms would need more than 2^31 - 1 calls in a batch.
  Result<std::vector<double>> run(TimedCall call, TimedCall preprocess = {}) noexcept;
  // The same over any callable taking the StreamRef and returning Status.
  template <class Call>
  requires(!std::is_same_v<std::decay_t<Call>, TimedCall>) Result<std::vector<double>> run(Call&& call)
  noexcept { return run(TimedCall{&invoke<std::remove_reference_t<Call>>, &call}); }
  // A kernel launch with its configuration and arguments (which must outlive the run).
  Result<std::vector<double>> run(const Function& function, const LaunchConfig& config,
                                  std::span<const KernelArg> args) noexcept;
  // The same with the arguments written in place, as Function::launch takes them.
  Result<std::vector<double>> run(const Function& function, const LaunchConfig& config,
                                  std::initializer_list<KernelArg> args) noexcept {
    return run(function, config, std::span<const KernelArg>(args.begin(), args.size()));
  }

  // The calls a batch makes now.
  int number() const noexcept { return options_.number; }
  const TimeEvaluatorOptions& options() const noexcept { return options_; }
  // Whether the last run timed on the device's clock.
  bool device_side() const noexcept { return device_side_; }
  // The device it measures, and whether its batches are captured and replayed (a remote device).
  Device device() const noexcept { return device_; }
  bool replays_captures() const noexcept { return out_of_process_; }

private:
  template <class Call>
  static Status invoke(void* context, StreamRef stream) noexcept {
    return (*static_cast<Call*>(context))(stream);
  }
  Status timed_batch(TimedCall call, double& duration_ms) noexcept;
  Result<Graph> capture_batch(TimedCall call) noexcept;

  Device device_;
  StreamRef stream_;
  TimeEvaluatorOptions options_;
  bool device_side_ = false;
  bool out_of_process_ = false; // batches are captured and replayed by one message
};

} // namespace devrt

#endif // DEVRT_TIMING_HPP
