// SPDX-License-Identifier: Apache-2.0
// Timer and TimeEvaluator (devrt/timing.hpp): TVM's time_evaluator rules on the CPU device, whose
// timed events read the monotonic clock, and the host-clock fallback on a backend without timed
// events. TVM's own expectations (tests/python/runtime/test_runtime_measure.py) are here as
// call counts; BenchmarkResult's are in test/python/test_timing.py.
#include <devrt/backend/backend.hpp>
#include <devrt/backend/cpu.hpp>
#include <devrt/devrt.hpp>
#include <devrt/timing.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using devrt::ErrorCode;
using devrt::StreamRef;
using devrt::TimeEvaluator;
using devrt::TimeEvaluatorOptions;

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// TVM's my_debug: one call lasts `ms` on the host (the CPU device's streams are synchronous, so
// its timed events see it) and is counted.
struct SleepingCall {
  int ms = 100;
  int calls = 0;
  devrt::Status operator()(StreamRef) noexcept {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ++calls;
    return devrt::Status();
  }
};

// The CPU backend without timed events, on the vpi kind: what a backend that cannot time gives a
// Timer.
class UntimedBackend {
public:
  static constexpr std::string_view name = "untimed";
  static constexpr devrt::DeviceKind kind = devrt::DeviceKind::vpi;
  static constexpr bool synchronous = true;
  devrt::Status availability() noexcept { return devrt::Status(); }
  devrt::Result<std::int32_t> device_count() noexcept { return 1; }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice& d, devrt::Attribute a) noexcept {
    return cpu_.get_attribute(d, a);
  }
  devrt::Result<void*> allocate(const devrt::BackendDevice& d, std::size_t n, std::size_t a) noexcept {
    return cpu_.allocate(d, n, a);
  }
  devrt::Status free(const devrt::BackendDevice& d, void* p) noexcept { return cpu_.free(d, p); }
  devrt::Status copy(const devrt::CopyDesc& desc) noexcept { return cpu_.copy(desc); }
  devrt::Result<void*> stream_create(const devrt::BackendDevice& d) noexcept { return cpu_.stream_create(d); }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
  devrt::Result<void*> event_create(const devrt::BackendDevice& d) noexcept { return cpu_.event_create(d); }
  devrt::Status event_destroy(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
  devrt::Status event_record(const devrt::BackendDevice&, void*, void*) noexcept { return devrt::Status(); }
  devrt::Status event_synchronize(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
  devrt::Result<bool> event_query(const devrt::BackendDevice&, void*) noexcept { return true; }
  devrt::Status stream_wait_event(const devrt::BackendDevice&, void*, void*) noexcept { return devrt::Status(); }

private:
  devrt::cpu::CpuBackend cpu_;
};
static_assert(devrt::BackendEvents<UntimedBackend> && !devrt::BackendEventTiming<UntimedBackend>);
constexpr devrt_backend_table kUntimedTable = devrt::make_backend_table<UntimedBackend>();

struct Captured {
  std::vector<std::string> warnings;
};
void capture(devrt::LogLevel level, std::string_view message, void* user) {
  if (level == devrt::LogLevel::warning) static_cast<Captured*>(user)->warnings.emplace_back(message);
}

} // namespace

TEST_CASE("time_evaluator refuses parameters TVM would divide by or loop on", "[timing]") {
  const auto refused = [](TimeEvaluatorOptions options, std::string_view what) {
    devrt::Result<TimeEvaluator> made = TimeEvaluator::create(devrt::kHostDevice, options);
    INFO(made.status().message());
    CHECK(made.status().code() == ErrorCode::invalid_argument);
    CHECK(contains(made.status().message(), what));
  };
  refused({.number = 0}, "number = 0");
  refused({.number = -3}, "number = -3");
  refused({.repeat = 0}, "repeat = 0");
  refused({.min_repeat_ms = -1}, "min_repeat_ms = -1");
  refused({.limit_zero_time_iterations = -1}, "limit_zero_time_iterations");
  refused({.cooldown_interval_ms = -5}, "cooldown_interval_ms");
  refused({.repeats_to_cooldown = 0}, "repeats_to_cooldown = 0");
  refused({.cache_flush_bytes = -1}, "cache_flush_bytes");
  CHECK(TimeEvaluator::create(devrt::Device{devrt::DeviceKind::cpu, 7}).status().code() == ErrorCode::invalid_argument);
  TimeEvaluator evaluator = std::move(TimeEvaluator::create(devrt::kHostDevice)).value();
  CHECK(evaluator.run(devrt::TimedCall{}).status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("time_evaluator makes TVM's calls: one untimed, then number per batch, grown to min_repeat_ms", "[timing]") {
  SleepingCall call{100};
  TimeEvaluator once = std::move(TimeEvaluator::create(devrt::kHostDevice, {.number = 1, .repeat = 1})).value();
  devrt::Result<std::vector<double>> results = once.run(call);
  REQUIRE(results.ok());
  CHECK(call.calls == 2); // TVM: ct == 2
  REQUIRE(results->size() == 1);
  CHECK(results->front() >= 0.1);
  CHECK(once.device_side());

  TimeEvaluator grown =
      std::move(TimeEvaluator::create(devrt::kHostDevice, {.number = 1, .repeat = 1, .min_repeat_ms = 1000})).value();
  results = grown.run(call);
  REQUIRE(results.ok());
  CHECK(call.calls > 10 + 2); // TVM: "make sure we get more than 10 calls", in the same log
  // 1 untimed, a batch of 1 (100 ms), then max(1000 / ms + 1, 1.618): 11 for exactly 100 ms, 10
  // or 9 when the sleep ran over (a loaded machine, valgrind).
  CHECK(grown.number() >= 9);
  CHECK(grown.number() <= 11);
  CHECK(call.calls == 2 + 2 + grown.number());
  CHECK(results->front() >= 0.1);
}

namespace {

// The calls each repeat makes, from a preprocess that notes where each repeat starts; from the
// second repeat on it makes each call last `later_ms`.
struct RepeatLog {
  SleepingCall* call = nullptr;
  int later_ms = 0;
  std::vector<int> starts;
  static devrt::Status note(void* self, StreamRef) noexcept {
    auto* log = static_cast<RepeatLog*>(self);
    log->starts.push_back(log->call->calls);
    if (log->starts.size() > 1) log->call->ms = log->later_ms;
    return devrt::Status();
  }
  std::vector<int> calls_per_repeat() const {
    std::vector<int> counts;
    for (std::size_t i = 0; i < starts.size(); ++i) {
      counts.push_back((i + 1 < starts.size() ? starts[i + 1] : call->calls) - starts[i]);
    }
    return counts;
  }
};

} // namespace

TEST_CASE("time_evaluator keeps the grown number for later repeats and runs, as TVM's closure does", "[timing]") {
  // Repeat 0 grows the number from 1 with 1 ms calls (about 51); later repeats make 10 ms calls,
  // so one batch of the kept number lasts past min_repeat_ms however loaded the machine is (a
  // sleep only ever overruns), while a number started over from 1 would need more batches.
  SleepingCall call{1};
  RepeatLog log{&call, 10, {}};
  const devrt::TimedCall timed{[](void* c, StreamRef s) noexcept { return (*static_cast<SleepingCall*>(c))(s); },
                               &call};
  const devrt::TimedCall noting{&RepeatLog::note, &log};
  TimeEvaluator evaluator =
      std::move(TimeEvaluator::create(devrt::kHostDevice, {.number = 1, .repeat = 3, .min_repeat_ms = 50})).value();
  REQUIRE(evaluator.run(timed, noting).ok());
  REQUIRE(log.starts.size() == 3);
  CHECK(log.starts[0] == 1); // the untimed call first
  const int grown = evaluator.number();
  CHECK(grown >= 2);
  const std::vector<int> first = log.calls_per_repeat();
  CHECK(first[0] > grown); // a batch of 1, then grown batches
  CHECK(first[1] == grown);
  CHECK(first[2] == grown);
  // A second run starts from the number the first one reached: one batch per repeat.
  call.calls = 0;
  log.starts.clear();
  REQUIRE(evaluator.run(timed, noting).ok());
  CHECK(evaluator.number() == grown);
  CHECK(log.calls_per_repeat() == std::vector<int>{grown, grown, grown});
  CHECK(call.calls == 1 + 3 * grown);
}

TEST_CASE("time_evaluator runs preprocess before each repeat and cools down when i % repeats_to_cooldown is 0",
          "[timing]") {
  SleepingCall call{1};
  int preprocessed = 0;
  auto preprocess = [&](StreamRef) noexcept {
    ++preprocessed;
    return devrt::Status();
  };
  TimeEvaluator evaluator = std::move(TimeEvaluator::create(devrt::kHostDevice, {.number = 2,
                                                                                 .repeat = 3,
                                                                                 .cooldown_interval_ms = 60,
                                                                                 .repeats_to_cooldown = 2,
                                                                                 .cache_flush_bytes = 1 << 20}))
                                .value();
  const auto start = std::chrono::steady_clock::now();
  devrt::Result<std::vector<double>> results = evaluator.run(
      devrt::TimedCall{[](void* c, StreamRef s) noexcept { return (*static_cast<SleepingCall*>(c))(s); }, &call},
      devrt::TimedCall{[](void* c, StreamRef s) noexcept { return (*static_cast<decltype(preprocess)*>(c))(s); },
                       &preprocess});
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE(results.ok());
  CHECK(results->size() == 3);
  CHECK(preprocessed == 3);
  CHECK(call.calls == 1 + 3 * 2);
  // Cooldowns after repeats 0 and 2 (TVM's rule includes repeat 0): at least 120 ms asleep.
  CHECK(waited >= std::chrono::milliseconds(120));
}

TEST_CASE("time_evaluator returns the error of the timed call", "[timing]") {
  int calls = 0;
  auto failing = [&](StreamRef) noexcept {
    return ++calls == 2 ? devrt::make_error(ErrorCode::out_of_memory, "the second call failed") : devrt::Status();
  };
  TimeEvaluator evaluator = std::move(TimeEvaluator::create(devrt::kHostDevice)).value();
  devrt::Result<std::vector<double>> results = evaluator.run(failing);
  CHECK(results.status().code() == ErrorCode::out_of_memory);
  CHECK(contains(results.status().message(), "the second call failed"));
}

TEST_CASE("a Timer on the device's clock, and its misuse refused", "[timing]") {
  devrt::Result<devrt::Timer> timer = devrt::Timer::start(devrt::kHostDevice);
  REQUIRE(timer.ok());
  CHECK(timer->device_side());
  CHECK(timer->elapsed_ns().status().code() == ErrorCode::invalid_argument);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(timer->stop().ok());
  CHECK(timer->stop().code() == ErrorCode::invalid_argument);
  devrt::Result<std::int64_t> elapsed = timer->elapsed_ns();
  REQUIRE(elapsed.ok());
  CHECK(*elapsed >= 20'000'000);
  CHECK(*timer->elapsed_ns() == *elapsed); // read once, the same afterwards
  CHECK(devrt::Timer().stop().code() == ErrorCode::invalid_argument);
}

TEST_CASE("a Timer where the backend cannot time reads the host clock and says so once", "[timing]") {
  static const devrt::Status added = devrt::Registry::global().add(&kUntimedTable);
  REQUIRE(added.ok());
  Captured captured;
  devrt::set_log_sink(&capture, &captured);
  const devrt::Device device{devrt::DeviceKind::vpi, 0};
  for (int i = 0; i < 2; ++i) {
    devrt::Result<devrt::Timer> timer = devrt::Timer::start(device);
    INFO(timer.status().message());
    REQUIRE(timer.ok());
    CHECK_FALSE(timer->device_side());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(timer->stop().ok());
    CHECK(*timer->elapsed_ns() >= 10'000'000);
  }
  devrt::set_log_sink(nullptr);
  REQUIRE(captured.warnings.size() == 1);
  CHECK(contains(captured.warnings.front(), "host clock"));
  CHECK(contains(captured.warnings.front(), "vpi:0"));
}
