// SPDX-License-Identifier: Apache-2.0
// devrt._ext's graphs (devrt/_graph.py): capture on a stream, a graph capsule over devrt_graph,
// replay and update.
#include "ext.hpp"

#include <cstdint>

namespace devrt::python {
namespace {

constexpr const char* kGraphCapsule = "devrt.graph";

void release_graph(PyObject* capsule) noexcept {
  devrt_graph_release(static_cast<devrt_graph>(PyCapsule_GetPointer(capsule, kGraphCapsule)));
}

devrt_graph to_graph(PyObject* capsule) noexcept {
  return static_cast<devrt_graph>(PyCapsule_GetPointer(capsule, kGraphCapsule));
}

// A stream that must be given: (kind, index, handle).
bool to_given_stream(PyObject* value, devrt_stream_ref* out) noexcept {
  bool use = false;
  if (!to_stream(value, out, &use)) return false;
  if (!use) PyErr_SetString(PyExc_ValueError, "a capture needs a devrt.Stream, not None");
  return use;
}

// graph_begin_capture(stream)
PyObject* graph_begin_capture(PyObject*, PyObject* stream_object) noexcept {
  devrt_stream_ref stream{};
  if (!to_given_stream(stream_object, &stream)) return nullptr;
  devrt_status status = devrt_graph_begin_capture(&stream);
  return none_or_raise(status);
}

// graph_end_capture(stream) -> capsule
PyObject* graph_end_capture(PyObject*, PyObject* stream_object) noexcept {
  devrt_stream_ref stream{};
  if (!to_given_stream(stream_object, &stream)) return nullptr;
  devrt_graph graph = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_graph_end_capture(&stream, &graph);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* capsule = PyCapsule_New(graph, kGraphCapsule, release_graph);
  if (capsule == nullptr) devrt_graph_release(graph);
  return capsule;
}

// graph_launch(capsule, stream or None)
PyObject* graph_launch(PyObject*, PyObject* args) noexcept {
  PyObject *capsule = nullptr, *stream_object = nullptr;
  if (PyArg_ParseTuple(args, "OO", &capsule, &stream_object) == 0) return nullptr;
  devrt_graph graph = to_graph(capsule);
  devrt_stream_ref stream{};
  bool use_stream = false;
  if (graph == nullptr || !to_stream(stream_object, &stream, &use_stream)) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_graph_launch(graph, use_stream ? &stream : nullptr);
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

// graph_update(capsule, launch_index, args: tuple)
PyObject* graph_update(PyObject*, PyObject* args) noexcept {
  PyObject *capsule = nullptr, *index_object = nullptr, *values = nullptr;
  if (PyArg_ParseTuple(args, "OOO!", &capsule, &index_object, &PyTuple_Type, &values) == 0) return nullptr;
  devrt_graph graph = to_graph(capsule);
  std::int64_t index = 0;
  if (graph == nullptr || !to_int64(index_object, "launch_index", 0, INT64_MAX, &index)) return nullptr;
  const Py_ssize_t count = PyTuple_Size(values);
  if (count > 64) {
    PyErr_Format(PyExc_ValueError, "%zd kernel arguments (at most 64)", count);
    return nullptr;
  }
  devrt_kernel_arg converted[64];
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (!to_kernel_arg(PyTuple_GetItem(values, i), static_cast<std::size_t>(i), &converted[i])) return nullptr;
  }
  devrt_status status =
      devrt_graph_update(graph, static_cast<std::size_t>(index), converted, static_cast<std::size_t>(count));
  return none_or_raise(status);
}

// graph_info(capsule) -> (node_count, launch_count, mode name)
PyObject* graph_info(PyObject*, PyObject* capsule) noexcept {
  devrt_graph graph = to_graph(capsule);
  if (graph == nullptr) return nullptr;
  std::size_t nodes = 0, launches = 0;
  std::int32_t mode = 0;
  devrt_status status = devrt_graph_info(graph, &nodes, &launches, &mode);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  static const char* const kModes[] = {"native", "recorded", "mixed"};
  return Py_BuildValue("(nns)", static_cast<Py_ssize_t>(nodes), static_cast<Py_ssize_t>(launches),
                       mode >= 0 && mode <= 2 ? kModes[mode] : "unknown");
}

} // namespace

PyMethodDef kGraphFunctions[] = {
    {"graph_begin_capture", graph_begin_capture, METH_O, "graph_begin_capture(stream): starts capturing the stream."},
    {"graph_end_capture", graph_end_capture, METH_O,
     "graph_end_capture(stream) -> a capsule owning what the capture recorded."},
    {"graph_launch", graph_launch, METH_VARARGS, "graph_launch(graph, stream or None): queues a replay."},
    {"graph_update", graph_update, METH_VARARGS,
     "graph_update(graph, launch_index, args): new arguments for one captured launch."},
    {"graph_info", graph_info, METH_O, "graph_info(graph) -> (node_count, launch_count, mode)."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace devrt::python
