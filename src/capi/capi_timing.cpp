// SPDX-License-Identifier: Apache-2.0
// The C API's timed events and time_evaluator (include/devrt/devrt.h) over devrt/timing.hpp.
#include "capi_internal.hpp"

using namespace devrt;
using namespace devrt::capi;

namespace {

// A C callback as a TimedCall: its error becomes a Status naming the status it returned (and the
// message the callback recorded as this thread's last error, if any).
struct CallbackCall {
  devrt_timed_call call;
  void* data;
  const char* role;
};

Status call_back(void* context, StreamRef stream) noexcept {
  const auto& callback = *static_cast<const CallbackCall*>(context);
  const devrt_status status = callback.call(callback.data, capi::to_c(stream));
  if (status == DEVRT_STATUS_OK) return Status();
  if (status < 0 || status > DEVRT_STATUS_LAST) {
    return make_error(ErrorCode::invalid_argument, "the ", callback.role, " returned ", status,
                      ", which is no devrt_status");
  }
  return make_error(static_cast<ErrorCode>(status), "the ", callback.role, " returned ", devrt_status_name(status));
}

TimeEvaluatorOptions options_of(const devrt_time_evaluator_options& o) noexcept {
  return TimeEvaluatorOptions{o.number,
                              o.repeat,
                              o.min_repeat_ms,
                              o.limit_zero_time_iterations,
                              o.cooldown_interval_ms,
                              o.repeats_to_cooldown,
                              o.cache_flush_bytes};
}

} // namespace

extern "C" {

devrt_status devrt_event_create_timed(devrt_device device, devrt_event* out) {
  if (out == nullptr) return null_argument("devrt_event_create_timed", "out");
  Result<Event> event = Event::create(capi::to_cpp(device), {.timing = true});
  if (!event.ok()) return fail(event.status());
  return give_handle(out, "devrt_event_create_timed", std::move(*event));
}

devrt_status devrt_event_elapsed_ns(devrt_event start, devrt_event end, int64_t* out_ns) {
  if ((start = resolve(start, "devrt_event_elapsed_ns")) == nullptr) return devrt_last_error_code();
  if ((end = resolve(end, "devrt_event_elapsed_ns")) == nullptr) return devrt_last_error_code();
  if (out_ns == nullptr) return null_argument("devrt_event_elapsed_ns", "out_ns");
  Result<std::int64_t> elapsed = Event::elapsed_ns(start->event, end->event);
  if (!elapsed.ok()) return fail(elapsed.status());
  *out_ns = *elapsed;
  return DEVRT_STATUS_OK;
}

void devrt_time_evaluator_default_options(devrt_time_evaluator_options* options) {
  if (options == nullptr) return;
  const TimeEvaluatorOptions d;
  *options = devrt_time_evaluator_options{d.number,
                                          d.repeat,
                                          d.min_repeat_ms,
                                          d.limit_zero_time_iterations,
                                          d.cooldown_interval_ms,
                                          d.repeats_to_cooldown,
                                          d.cache_flush_bytes};
}

devrt_status devrt_time_evaluator_create(devrt_device device, const devrt_time_evaluator_options* options,
                                         const devrt_stream_ref* stream, devrt_time_evaluator_handle* out) {
  if (out == nullptr) return null_argument("devrt_time_evaluator_create", "out");
  const TimeEvaluatorOptions chosen = options != nullptr ? options_of(*options) : TimeEvaluatorOptions{};
  Result<TimeEvaluator> evaluator = TimeEvaluator::create(capi::to_cpp(device), chosen, capi::to_cpp(stream));
  if (!evaluator.ok()) return fail(evaluator.status());
  return give_handle(out, "devrt_time_evaluator_create", *evaluator);
}

void devrt_time_evaluator_release(devrt_time_evaluator_handle evaluator) {
  delete retire(evaluator, "devrt_time_evaluator_release");
}

devrt_status devrt_time_evaluator_run(devrt_time_evaluator_handle evaluator, devrt_timed_call call, void* call_data,
                                      devrt_timed_call preprocess, void* preprocess_data, double* results,
                                      size_t capacity) {
  if ((evaluator = resolve(evaluator, "devrt_time_evaluator_run")) == nullptr) return devrt_last_error_code();
  if (call == nullptr) return null_argument("devrt_time_evaluator_run", "call");
  if (results == nullptr) return null_argument("devrt_time_evaluator_run", "results");
  const int repeat = evaluator->evaluator.options().repeat;
  if (capacity < static_cast<std::size_t>(repeat)) {
    return fail(make_error(ErrorCode::out_of_range, "devrt_time_evaluator_run: room for ", capacity,
                           " results, and repeat = ", repeat));
  }
  CallbackCall timed{call, call_data, "timed call"}, before{preprocess, preprocess_data, "preprocess call"};
  Result<std::vector<double>> measured = evaluator->evaluator.run(
      TimedCall{&call_back, &timed}, preprocess != nullptr ? TimedCall{&call_back, &before} : TimedCall{});
  if (!measured.ok()) return fail(measured.status());
  std::copy(measured->begin(), measured->end(), results);
  return DEVRT_STATUS_OK;
}

devrt_status devrt_time_evaluator_state(devrt_time_evaluator_handle evaluator, int32_t* number, int32_t* repeat,
                                        int* device_side) {
  if ((evaluator = resolve(evaluator, "devrt_time_evaluator_state")) == nullptr) return devrt_last_error_code();
  if (number != nullptr) *number = evaluator->evaluator.number();
  if (repeat != nullptr) *repeat = evaluator->evaluator.options().repeat;
  if (device_side != nullptr) *device_side = evaluator->evaluator.device_side() ? 1 : 0;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_time_evaluator(devrt_device device, const devrt_time_evaluator_options* options,
                                  const devrt_stream_ref* stream, devrt_timed_call call, void* call_data,
                                  devrt_timed_call preprocess, void* preprocess_data, double* results,
                                  size_t capacity) {
  devrt_time_evaluator_handle evaluator = nullptr;
  DEVRT_CAPI_RETURN_IF_ERROR(devrt_time_evaluator_create(device, options, stream, &evaluator));
  const devrt_status status =
      devrt_time_evaluator_run(evaluator, call, call_data, preprocess, preprocess_data, results, capacity);
  devrt_time_evaluator_release(evaluator);
  return status;
}

} // extern "C"
