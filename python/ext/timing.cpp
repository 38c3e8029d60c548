// SPDX-License-Identifier: Apache-2.0
// devrt._ext's time_evaluator (devrt/_timing.py): an evaluator capsule over
// devrt_time_evaluator_*, whose timed call and preprocess are Python callables. A callable that
// raises ends the measurement, and its exception is raised again as it was.
#include "ext.hpp"

#include <cstdint>
#include <vector>

namespace devrt::python {
namespace {

constexpr const char* kEvaluatorCapsule = "devrt.time_evaluator";

void release_evaluator(PyObject* capsule) noexcept {
  devrt_time_evaluator_release(
      static_cast<devrt_time_evaluator_handle>(PyCapsule_GetPointer(capsule, kEvaluatorCapsule)));
}

devrt_time_evaluator_handle to_evaluator(PyObject* capsule) noexcept {
  return static_cast<devrt_time_evaluator_handle>(PyCapsule_GetPointer(capsule, kEvaluatorCapsule));
}

// time_evaluator_create(device, stream, number, repeat, min_repeat_ms, limit_zero_time_iterations,
// cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes) -> capsule.
PyObject* time_evaluator_create(PyObject*, PyObject* args) noexcept {
  PyObject *device_object = nullptr, *stream_object = nullptr;
  PyObject* values[7] = {};
  if (PyArg_ParseTuple(args, "OOOOOOOOO", &device_object, &stream_object, &values[0], &values[1], &values[2],
                       &values[3], &values[4], &values[5], &values[6]) == 0) {
    return nullptr;
  }
  devrt_device device;
  devrt_stream_ref stream{};
  bool use_stream = false;
  if (!to_device(device_object, &device) || !to_stream(stream_object, &stream, &use_stream)) return nullptr;
  static const char* const kNames[] = {"number",
                                       "repeat",
                                       "min_repeat_ms",
                                       "limit_zero_time_iterations",
                                       "cooldown_interval_ms",
                                       "repeats_to_cooldown",
                                       "cache_flush_bytes"};
  std::int64_t numbers[7] = {};
  for (int i = 0; i < 7; ++i) {
    const std::int64_t bound = i == 6 ? INT64_MAX : INT32_MAX;
    if (!to_int64(values[i], kNames[i], i == 6 ? INT64_MIN : INT32_MIN, bound, &numbers[i])) return nullptr;
  }
  devrt_time_evaluator_options options{static_cast<std::int32_t>(numbers[0]),
                                       static_cast<std::int32_t>(numbers[1]),
                                       static_cast<std::int32_t>(numbers[2]),
                                       static_cast<std::int32_t>(numbers[3]),
                                       static_cast<std::int32_t>(numbers[4]),
                                       static_cast<std::int32_t>(numbers[5]),
                                       numbers[6]};
  devrt_time_evaluator_handle evaluator = nullptr;
  devrt_status status = devrt_time_evaluator_create(device, &options, use_stream ? &stream : nullptr, &evaluator);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* capsule = PyCapsule_New(evaluator, kEvaluatorCapsule, release_evaluator);
  if (capsule == nullptr) devrt_time_evaluator_release(evaluator);
  return capsule;
}

// A Python callable as a devrt_timed_call: called with no arguments; an exception is kept (the
// first one) and the run ends with DEVRT_STATUS_INTERNAL.
struct PythonCall {
  PyObject* callable;
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
};

// While it runs, the stream the evaluator gives is the device's current stream on this thread:
// the stream being timed, or the one a remote device's batch is captured on. So the callable's
// work on the current stream (a launch with stream=None, a TVM library's operators) goes there.
devrt_status call_python(void* data, devrt_stream_ref stream) noexcept {
  auto* call = static_cast<PythonCall*>(data);
  const devrt_stream_ref previous = devrt_current_stream(stream.device);
  const devrt_status set = devrt_set_current_stream(stream);
  if (set != DEVRT_STATUS_OK) return set;
  PyObject* result = PyObject_CallObject(call->callable, nullptr);
  static_cast<void>(devrt_set_current_stream(previous));
  if (result != nullptr) {
    Py_DECREF(result);
    return DEVRT_STATUS_OK;
  }
  PyErr_Fetch(&call->type, &call->value, &call->traceback);
  return DEVRT_STATUS_INTERNAL;
}

// time_evaluator_run(capsule, call, preprocess or None) -> [seconds per call of each repeat].
PyObject* time_evaluator_run(PyObject*, PyObject* args) noexcept {
  PyObject *capsule = nullptr, *callable = nullptr, *preprocess = nullptr;
  if (PyArg_ParseTuple(args, "OOO", &capsule, &callable, &preprocess) == 0) return nullptr;
  devrt_time_evaluator_handle evaluator = to_evaluator(capsule);
  if (evaluator == nullptr) return nullptr;
  if (PyCallable_Check(callable) == 0 || (preprocess != Py_None && PyCallable_Check(preprocess) == 0)) {
    PyErr_SetString(PyExc_TypeError, "time_evaluator: the timed function and f_preproc must be callable");
    return nullptr;
  }
  std::int32_t repeat = 0;
  devrt_status status = devrt_time_evaluator_state(evaluator, nullptr, &repeat, nullptr);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  PythonCall timed{callable}, before{preprocess};
  std::vector<double> results(static_cast<std::size_t>(repeat));
  status = devrt_time_evaluator_run(evaluator, call_python, &timed, preprocess != Py_None ? call_python : nullptr,
                                    &before, results.data(), results.size());
  for (PythonCall* raised : {&timed, &before}) {
    if (raised->type != nullptr) {
      PyErr_Restore(raised->type, raised->value, raised->traceback);
      return nullptr;
    }
  }
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return float_list(results.data(), results.size());
}

// time_evaluator_state(capsule) -> (number, device_side).
PyObject* time_evaluator_state(PyObject*, PyObject* capsule) noexcept {
  devrt_time_evaluator_handle evaluator = to_evaluator(capsule);
  if (evaluator == nullptr) return nullptr;
  std::int32_t number = 0;
  int device_side = 0;
  devrt_status status = devrt_time_evaluator_state(evaluator, &number, nullptr, &device_side);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return Py_BuildValue("(iO)", number, device_side != 0 ? Py_True : Py_False);
}

} // namespace

PyMethodDef kTimingFunctions[] = {
    {"time_evaluator_create", time_evaluator_create, METH_VARARGS,
     "time_evaluator_create(device, stream, number, repeat, min_repeat_ms, limit_zero_time_iterations, "
     "cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes) -> a capsule owning an evaluator."},
    {"time_evaluator_run", time_evaluator_run, METH_VARARGS,
     "time_evaluator_run(evaluator, call, preprocess or None) -> [seconds per call of each repeat]."},
    {"time_evaluator_state", time_evaluator_state, METH_O,
     "time_evaluator_state(evaluator) -> (calls per batch now, whether the last run timed on the device)."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace devrt::python
