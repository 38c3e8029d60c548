// SPDX-License-Identifier: Apache-2.0
// devrt._ext: the library's facts (version, build, describe), device synchronization and targets,
// streams, and the backends and their plugins.
#include <cstdint>
#include <string>

#include "ext.hpp"

namespace devrt::python {
namespace {

constexpr const char* kStreamCapsule = "devrt_stream";

// A str argument as UTF-8 without NUL bytes (the C API takes C strings).
const char* to_name(PyObject* value, const char* what) noexcept {
  if (!PyUnicode_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s is a str", what);
    return nullptr;
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(value, &size);
  if (text == nullptr) return nullptr;
  if (std::char_traits<char>::length(text) != static_cast<std::size_t>(size)) {
    PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
    return nullptr;
  }
  return text;
}

PyObject* version(PyObject*, PyObject*) noexcept { return PyUnicode_FromString(devrt_version()); }

PyObject* describe(PyObject*, PyObject*) noexcept {
  char* text = nullptr;
  devrt_status status = devrt_describe(&text);
  return take_text(status, text);
}

PyObject* build_info_json(PyObject*, PyObject*) noexcept {
  char* text = nullptr;
  devrt_status status = devrt_build_info_json(&text);
  return take_text(status, text);
}

PyObject* detect_target(PyObject*, PyObject* device_object) noexcept {
  devrt_device device;
  if (!to_device(device_object, &device)) return nullptr;
  char* json = nullptr;
  devrt_status status = devrt_detect_target(device, &json);
  return take_text(status, json);
}

PyObject* remote_connect(PyObject*, PyObject* args) noexcept {
  const char* address = nullptr;
  const char* key_file = nullptr;
  if (!PyArg_ParseTuple(args, "sz:remote_connect", &address, &key_file)) return nullptr;
  std::int32_t first = 0, count = 0;
  if (devrt_status status = devrt_remote_connect_keyed(address, key_file, &first, &count); status != DEVRT_STATUS_OK) {
    return raise_status(status);
  }
  return Py_BuildValue("(ii)", first, count);
}

PyObject* remote_describe(PyObject*, PyObject* device_object) noexcept {
  devrt_device device;
  if (!to_device(device_object, &device)) return nullptr;
  char* json = nullptr;
  devrt_status status = devrt_remote_describe(device, &json);
  return take_text(status, json);
}

PyObject* device_count(PyObject*, PyObject* kind_object) noexcept {
  std::int64_t kind = 0;
  if (!to_int64(kind_object, "a device type", 0, INT32_MAX, &kind)) return nullptr;
  return PyLong_FromLong(devrt_device_count(static_cast<std::int32_t>(kind)));
}

// {name: (number, type)} of every devrt attribute, in number order (type: 0 bool, 1 int, 2 string,
// 3 dim3).
PyObject* attributes(PyObject*, PyObject*) noexcept {
  Ref dict(PyDict_New());
  if (!dict) return nullptr;
  for (std::int32_t number = 0;; ++number) {
    const char* name = devrt_attribute_name(number);
    if (name == nullptr || name[0] == '\0') break;
    Ref entry(Py_BuildValue("(ii)", number, devrt_attribute_type(number)));
    if (!entry || PyDict_SetItemString(dict.get(), name, entry.get()) != 0) return nullptr;
  }
  return dict.release();
}

// Waits for the device; where the backend cannot wait for all of a device's streams at once
// (OpenCL, Vulkan), for this thread's current stream of it.
PyObject* device_synchronize(PyObject*, PyObject* device_object) noexcept {
  devrt_device device;
  if (!to_device(device_object, &device)) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_device_synchronize(device);
  if (status == DEVRT_STATUS_UNSUPPORTED) status = devrt_stream_synchronize(devrt_current_stream(device));
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

// ---- Streams: a capsule owns one devrt_stream --------------------------------------------------

void release_stream(PyObject* capsule) noexcept {
  devrt_stream_release(static_cast<devrt_stream>(PyCapsule_GetPointer(capsule, kStreamCapsule)));
}

devrt_stream to_stream_handle(PyObject* capsule) noexcept {
  return static_cast<devrt_stream>(PyCapsule_GetPointer(capsule, kStreamCapsule)); // TypeError/ValueError set
}

PyObject* stream_create(PyObject*, PyObject* device_object) noexcept {
  devrt_device device;
  if (!to_device(device_object, &device)) return nullptr;
  devrt_stream stream = nullptr;
  devrt_status status = devrt_stream_create(device, &stream);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* capsule = PyCapsule_New(stream, kStreamCapsule, release_stream);
  if (capsule == nullptr) devrt_stream_release(stream);
  return capsule;
}

PyObject* stream_native_handle(PyObject*, PyObject* capsule) noexcept {
  devrt_stream stream = to_stream_handle(capsule);
  if (stream == nullptr) return nullptr;
  return PyLong_FromVoidPtr(devrt_stream_get_ref(stream).handle);
}

PyObject* stream_synchronize(PyObject*, PyObject* capsule) noexcept {
  devrt_stream stream = to_stream_handle(capsule);
  if (stream == nullptr) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_stream_synchronize(devrt_stream_get_ref(stream));
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

// ---- Backends and plugins ----------------------------------------------------------------------

PyObject* backends(PyObject*, PyObject*) noexcept {
  const std::size_t count = devrt_backend_count();
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    Ref entry(Py_BuildValue("(si)", devrt_backend_name(i), devrt_backend_kind(i)));
    if (!entry || PyList_Append(list.get(), entry.get()) != 0) return nullptr;
  }
  return list.release();
}

// None when the backend can be used, else the reason; an unknown name raises (NotFoundError).
PyObject* backend_availability(PyObject*, PyObject* name_object) noexcept {
  const char* name = to_name(name_object, "a backend name");
  if (name == nullptr) return nullptr;
  devrt_status status = devrt_backend_availability(name);
  if (status == DEVRT_STATUS_OK) Py_RETURN_NONE;
  if (status == DEVRT_STATUS_NOT_FOUND) return raise_status(status);
  return PyUnicode_DecodeUTF8(devrt_last_error(),
                              static_cast<Py_ssize_t>(std::char_traits<char>::length(devrt_last_error())), "replace");
}

PyObject* backend_load(PyObject*, PyObject* name_object) noexcept {
  const char* name = to_name(name_object, "a backend name");
  if (name == nullptr) return nullptr;
  std::int32_t outcome = 0;
  devrt_status status = devrt_backend_load(name, &outcome);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return PyLong_FromLong(outcome);
}

PyObject* plugin_load_file(PyObject*, PyObject* path_object) noexcept {
  Ref path;
  {
    PyObject* converted = nullptr;
    if (PyUnicode_FSConverter(path_object, &converted) == 0) return nullptr;
    path.reset(converted);
  }
  const char* text = PyBytes_AsString(path.get());
  if (text == nullptr) return nullptr;
  std::int32_t outcome = 0;
  devrt_status status = devrt_plugin_load_file(text, &outcome);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return PyLong_FromLong(outcome);
}

PyObject* backend_load_all(PyObject*, PyObject*) noexcept {
  std::size_t loaded = 0;
  devrt_status status = devrt_backend_load_all(&loaded);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return PyLong_FromSize_t(loaded);
}

// [(first, second)] from a C API pair accessor (path and backends, or path and reason).
using PairAccessor = devrt_status (*)(std::size_t, char*, std::size_t, char*, std::size_t);
PyObject* pairs(std::size_t count, PairAccessor accessor) noexcept {
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  std::string first(4096, '\0'), second(8192, '\0');
  for (std::size_t i = 0; i < count; ++i) {
    devrt_status status = accessor(i, first.data(), first.size(), second.data(), second.size());
    if (status == DEVRT_STATUS_OUT_OF_RANGE) break; // the list shrank meanwhile: it never does, but no guessing
    if (status != DEVRT_STATUS_OK) return raise_status(status);
    Ref entry(Py_BuildValue("(ss)", first.c_str(), second.c_str()));
    if (!entry || PyList_Append(list.get(), entry.get()) != 0) return nullptr;
  }
  return list.release();
}

PyObject* loaded_plugins(PyObject*, PyObject*) noexcept { return pairs(devrt_plugin_count(), devrt_plugin_loaded); }

PyObject* plugin_failures(PyObject*, PyObject*) noexcept {
  return pairs(devrt_plugin_failure_count(), devrt_plugin_failure);
}

PyObject* plugin_search_path(PyObject*, PyObject*) noexcept {
  char* text = nullptr;
  devrt_status status = devrt_plugin_search_path(&text);
  return take_text(status, text);
}

// environment_flag(name, fallback): the boolean DEVRT_* variable as the C++ library reads it.
PyObject* environment_flag(PyObject*, PyObject* args) noexcept {
  const char* name = nullptr;
  int fallback = 0;
  if (PyArg_ParseTuple(args, "sp", &name, &fallback) == 0) return nullptr;
  int value = 0;
  devrt_status status = devrt_environment_flag(name, fallback, &value);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return PyBool_FromLong(value);
}

} // namespace

PyMethodDef kRuntimeFunctions[] = {
    {"version", version, METH_NOARGS, "devrt's version, \"0.1.0\"."},
    {"describe", describe, METH_NOARGS, "devrt-info's table of build facts, backends and devices."},
    {"build_info_json", build_info_json, METH_NOARGS, "The build's facts as JSON (devrt-info --json's \"build\")."},
    {"detect_target", detect_target, METH_O, "detect_target(device) -> the device as a compiler target, JSON."},
    {"attributes", attributes, METH_NOARGS,
     "{name: (number, type)} of every attribute (0 bool, 1 int, 2 str, 3 dim3)."},
    {"device_count", device_count, METH_O, "device_count(device type number) -> devices of that type here."},
    {"remote_connect", remote_connect, METH_VARARGS,
     "remote_connect(\"host:port\", key_file or None) -> (first remote device index, count) of the server's devices."},
    {"remote_describe", remote_describe, METH_O, "remote_describe(device) -> the remote device's identity, JSON."},
    {"device_synchronize", device_synchronize, METH_O,
     "Waits for the device (for this thread's current stream where the backend cannot wait for all)."},
    {"stream_create", stream_create, METH_O, "stream_create(device) -> a capsule owning a new stream."},
    {"stream_native_handle", stream_native_handle, METH_O, "The backend's stream handle as an int (0: default)."},
    {"stream_synchronize", stream_synchronize, METH_O, "Waits for everything queued on the stream."},
    {"backends", backends, METH_NOARGS, "[(name, device type number)] of the registered backends, in order."},
    {"backend_availability", backend_availability, METH_O,
     "None when the named backend can be used here, else the reason; NotFoundError for an unknown name."},
    {"backend_load", backend_load, METH_O, "Loads the plugin providing the backend; returns PLUGIN_* (what happened)."},
    {"plugin_load_file", plugin_load_file, METH_O, "Loads one plugin file; returns PLUGIN_*."},
    {"backend_load_all", backend_load_all, METH_NOARGS, "Loads every plugin on the search path; returns how many."},
    {"loaded_plugins", loaded_plugins, METH_NOARGS, "[(path, comma-separated backends)] of the plugins loaded."},
    {"plugin_failures", plugin_failures, METH_NOARGS, "[(path, reason)] of the plugin files that failed to load."},
    {"plugin_search_path", plugin_search_path, METH_NOARGS, "The plugin search path, ':'-separated."},
    {"environment_flag", environment_flag, METH_VARARGS,
     "environment_flag(name, fallback) -> the boolean DEVRT_* variable as devrt's C++ reads it."},
    {nullptr, nullptr, 0, nullptr},
};

bool add_runtime_constants(PyObject* module) noexcept {
  return PyModule_AddIntConstant(module, "PLUGIN_LOADED", DEVRT_PLUGIN_LOADED) == 0 &&
         PyModule_AddIntConstant(module, "PLUGIN_ALREADY_LOADED", DEVRT_PLUGIN_ALREADY_LOADED) == 0 &&
         PyModule_AddIntConstant(module, "PLUGIN_BUILT_IN", DEVRT_PLUGIN_BUILT_IN) == 0;
}

} // namespace devrt::python
