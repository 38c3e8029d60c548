// SPDX-License-Identifier: Apache-2.0
// Timer and TimeEvaluator (devrt/timing.hpp): TVM's semantics over devrt's timed events.
#include <devrt/timing.hpp>

#include <devrt/backend/registry.hpp>
#include <devrt/graph.hpp>
#include <devrt/log.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <optional>
#include <thread>

namespace devrt {
namespace {

std::int64_t host_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Warns once per device kind (of the first 64) that its timers read the host clock.
void warn_host_timing(Device device) noexcept {
  static std::atomic<std::uint64_t> warned{0};
  const std::uint64_t bit = std::uint64_t{1} << (static_cast<std::uint32_t>(device.kind) % 64);
  if ((warned.fetch_or(bit, std::memory_order_relaxed) & bit) != 0) return;
  DEVRT_LOG(warning, "Timer: ", device,
            " cannot time events on the device: its timers synchronize the stream and read the host clock, "
            "which counts the launch path and the synchronization as well");
}

// `stream`, or the thread's current stream of `device` for none; one of another device refused.
Result<StreamRef> stream_for(const char* call, Device device, StreamRef stream) noexcept {
  if (stream.handle == nullptr) return current_stream(device);
  if (stream.device != device) {
    return make_error(ErrorCode::invalid_argument, call, ": a stream of ", stream.device, " for ", device);
  }
  return stream;
}

} // namespace

Result<Timer> Timer::start(Device device, StreamRef stream) noexcept {
  DEVRT_ASSIGN_OR_RETURN(stream, stream_for("Timer::start", device, stream));
  Timer timer;
  timer.device_ = device;
  timer.stream_ = stream;
  Result<Event> start = Event::create(device, {.timing = true});
  if (start.ok()) {
    DEVRT_ASSIGN_OR_RETURN(timer.stop_, Event::create(device, {.timing = true}));
    timer.start_ = std::move(start).value();
    DEVRT_RETURN_IF_ERROR(timer.start_.record(stream));
    timer.device_side_ = true;
  } else if (start.status().code() == ErrorCode::unsupported) {
    warn_host_timing(device);
    DEVRT_RETURN_IF_ERROR(synchronize(stream));
    timer.host_start_ns_ = host_now_ns();
  } else {
    return std::move(start).status();
  }
  timer.started_ = true;
  return timer;
}

Status Timer::stop() noexcept {
  if (!started_) return Status(ErrorCode::invalid_argument, "Timer::stop: the timer was not started");
  if (stopped_) return make_error(ErrorCode::invalid_argument, "Timer::stop(", device_, "): already stopped");
  if (device_side_) {
    DEVRT_RETURN_IF_ERROR(stop_.record(stream_));
  } else {
    DEVRT_RETURN_IF_ERROR(synchronize(stream_));
    host_stop_ns_ = host_now_ns();
  }
  stopped_ = true;
  return Status();
}

Result<std::int64_t> Timer::elapsed_ns() noexcept {
  if (!stopped_) return Status(ErrorCode::invalid_argument, "Timer::elapsed_ns: the timer was not stopped");
  if (measured_) return elapsed_;
  if (device_side_) {
    DEVRT_RETURN_IF_ERROR(stop_.synchronize());
    DEVRT_ASSIGN_OR_RETURN(elapsed_, Event::elapsed_ns(start_, stop_));
  } else {
    elapsed_ = host_stop_ns_ - host_start_ns_;
  }
  measured_ = true;
  return elapsed_;
}

// ---- TimeEvaluator ---------------------------------------------------------------------------

Result<TimeEvaluator> TimeEvaluator::create(Device device, const TimeEvaluatorOptions& options,
                                            StreamRef stream) noexcept {
  const auto refuse = [&](const char* what, std::int64_t value, const char* rule) {
    return make_error(ErrorCode::invalid_argument, "time_evaluator(", device, "): ", what, " = ", value, " ", rule);
  };
  if (options.number < 1) return refuse("number", options.number, "(must be 1 or more)");
  if (options.repeat < 1) return refuse("repeat", options.repeat, "(must be 1 or more)");
  if (options.repeats_to_cooldown < 1) {
    return refuse("repeats_to_cooldown", options.repeats_to_cooldown, "(must be 1 or more)");
  }
  if (options.min_repeat_ms < 0) return refuse("min_repeat_ms", options.min_repeat_ms, "(must not be negative)");
  if (options.limit_zero_time_iterations < 0) {
    return refuse("limit_zero_time_iterations", options.limit_zero_time_iterations, "(must not be negative)");
  }
  if (options.cooldown_interval_ms < 0) {
    return refuse("cooldown_interval_ms", options.cooldown_interval_ms, "(must not be negative)");
  }
  if (options.cache_flush_bytes < 0) {
    return refuse("cache_flush_bytes", options.cache_flush_bytes, "(must not be negative)");
  }
  DEVRT_ASSIGN_OR_RETURN(BackendRef backend, backend_for(device));
  DEVRT_ASSIGN_OR_RETURN(stream, stream_for("time_evaluator", device, stream));
  TimeEvaluator evaluator;
  evaluator.out_of_process_ = backend.has_capability(DEVRT_CAP_OUT_OF_PROCESS);
  evaluator.device_ = device;
  evaluator.stream_ = stream;
  evaluator.options_ = options;
  return evaluator;
}

// On a stream of its own (the default stream cannot be captured), destroyed once the graph is
// made; the graph then replays on the evaluator's stream.
Result<Graph> TimeEvaluator::capture_batch(TimedCall call) noexcept {
  DEVRT_ASSIGN_OR_RETURN(Stream capturing, Stream::create(device_));
  DEVRT_RETURN_IF_ERROR(begin_capture(capturing.ref()));
  Status issued;
  for (int j = 0; j < options_.number && issued.ok(); ++j) issued = call.call(call.context, capturing.ref());
  Result<Graph> graph = end_capture(capturing.ref());
  DEVRT_RETURN_IF_ERROR(issued);
  return graph;
}

Status TimeEvaluator::timed_batch(TimedCall call, double& duration_ms) noexcept {
  DEVRT_RETURN_IF_ERROR(synchronize(stream_));
  // A device in another process (remote): the batch is captured first and replayed by one message,
  // so the server runs its calls back to back and the timer reads no network between them, as
  // TVM's RPCTimeEvaluator runs the loop on the server.
  std::optional<Graph> batch;
  if (out_of_process_) {
    DEVRT_ASSIGN_OR_RETURN(Graph captured, capture_batch(call));
    batch.emplace(std::move(captured));
  }
  DEVRT_ASSIGN_OR_RETURN(Timer timer, Timer::start(device_, stream_));
  device_side_ = timer.device_side();
  if (batch) {
    DEVRT_RETURN_IF_ERROR(batch->launch(stream_));
  } else {
    for (int j = 0; j < options_.number; ++j) DEVRT_RETURN_IF_ERROR(call.call(call.context, stream_));
  }
  DEVRT_RETURN_IF_ERROR(timer.stop());
  DEVRT_ASSIGN_OR_RETURN(std::int64_t nanos, timer.elapsed_ns());
  duration_ms = static_cast<double>(nanos) / 1e6;
  return Status();
}

Result<std::vector<double>> TimeEvaluator::run(TimedCall call, TimedCall preprocess) noexcept {
  if (call.call == nullptr) return Status(ErrorCode::invalid_argument, "time_evaluator: no call to time");
  DEVRT_RETURN_IF_ERROR(call.call(call.context, stream_)); // untimed: lazy initialisation
  Buffer flush_target, flush_source;
  if (options_.cache_flush_bytes > 0) {
    const auto bytes = static_cast<std::size_t>(options_.cache_flush_bytes);
    DEVRT_ASSIGN_OR_RETURN(flush_target, Buffer::allocate(device_, bytes));
    DEVRT_ASSIGN_OR_RETURN(flush_source, Buffer::allocate(device_, bytes));
  }
  DEVRT_RETURN_IF_ERROR(synchronize(stream_));
  std::vector<double> results;
  for (int i = 0; i < options_.repeat; ++i) {
    if (preprocess.call != nullptr) DEVRT_RETURN_IF_ERROR(preprocess.call(preprocess.context, stream_));
    double duration_ms = 0.0;
    int zero_times = 0;
    do {
      if (duration_ms > 0.0) {
        const double grown =
            std::max(options_.min_repeat_ms / (duration_ms / options_.number) + 1, options_.number * 1.618);
        if (!(grown <= static_cast<double>(INT_MAX))) {
          return make_error(ErrorCode::out_of_range, "time_evaluator(", device_,
                            "): min_repeat_ms = ", options_.min_repeat_ms, " needs more than ", INT_MAX,
                            " calls in a batch");
        }
        options_.number = static_cast<int>(grown);
      }
      if (options_.cache_flush_bytes > 0) DEVRT_RETURN_IF_ERROR(copy(flush_source, flush_target, stream_));
      DEVRT_RETURN_IF_ERROR(timed_batch(call, duration_ms));
      if (duration_ms == 0.0) ++zero_times;
    } while (duration_ms < options_.min_repeat_ms && zero_times < options_.limit_zero_time_iterations);
    results.push_back(duration_ms / 1e3 / options_.number);
    if (options_.cooldown_interval_ms > 0 && i % options_.repeats_to_cooldown == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.cooldown_interval_ms));
    }
  }
  return results;
}

Result<std::vector<double>> TimeEvaluator::run(const Function& function, const LaunchConfig& config,
                                               std::span<const KernelArg> args) noexcept {
  return run([&](StreamRef stream) { return function.launch(config, args, stream); });
}

} // namespace devrt
