// SPDX-License-Identifier: Apache-2.0
// devrt.memory_stats and its kin (devrt/memory_stats.hpp through the C API), and devrt.shutdown.
#include <cstdint>
#include <string>

#include "ext.hpp"

namespace devrt::python {
namespace {

constexpr const char* kScopeNames[DEVRT_MEMORY_SCOPE_COUNT] = {"global", "global.texture", "global.texture-nhwc",
                                                               "global.texture-weight", "global.vtcm"};

bool put(PyObject* dict, const std::string& key, std::uint64_t value) noexcept {
  Ref number(PyLong_FromUnsignedLongLong(value));
  return number && PyDict_SetItemString(dict, key.c_str(), number.get()) == 0;
}

// PyTorch's flat keys: "allocated_bytes.all.current", "reserved_bytes.global.texture.peak", ...
bool put_scope(PyObject* dict, const char* scope, const devrt_scope_memory_stats& stats) noexcept {
  const std::string tail = std::string(".") + scope;
  return put(dict, "allocated_bytes" + tail + ".current", stats.allocated_bytes) &&
         put(dict, "allocated_bytes" + tail + ".peak", stats.allocated_bytes_peak) &&
         put(dict, "allocation" + tail + ".current", stats.allocations) &&
         put(dict, "reserved_bytes" + tail + ".current", stats.reserved_bytes) &&
         put(dict, "reserved_bytes" + tail + ".peak", stats.reserved_bytes_peak);
}

PyObject* memory_stats(PyObject*, PyObject* arg) noexcept {
  devrt_device device{};
  if (!to_device(arg, &device)) return nullptr;
  devrt_device_memory_stats stats{};
  if (devrt_status status = devrt_memory_stats(device, &stats); status != DEVRT_STATUS_OK) return raise_status(status);
  Ref dict(PyDict_New());
  if (!dict || !put_scope(dict.get(), "all", stats.total)) return nullptr;
  for (int scope = 0; scope < DEVRT_MEMORY_SCOPE_COUNT; ++scope) {
    if (!put_scope(dict.get(), kScopeNames[scope], stats.scopes[scope])) return nullptr;
  }
  if (!put(dict.get(), "cached_bytes", stats.cached_bytes) || !put(dict.get(), "cache.hits", stats.cache_hits) ||
      !put(dict.get(), "cache.misses", stats.cache_misses) ||
      PyDict_SetItemString(dict.get(), "history", stats.history != 0 ? Py_True : Py_False) != 0) {
    return nullptr;
  }
  devrt_stream_pool_figures pools{};
  if (devrt_status status = devrt_stream_pool_stats(device, &pools); status != DEVRT_STATUS_OK)
    return raise_status(status);
  if (!put(dict.get(), "stream_pool.bytes", pools.pool_bytes) ||
      !put(dict.get(), "stream_pool.cached_bytes", pools.cached_bytes) ||
      !put(dict.get(), "stream_pool.graph_bytes", pools.graph_pool_bytes) ||
      !put(dict.get(), "stream_pool.hits", pools.hits) || !put(dict.get(), "stream_pool.misses", pools.misses)) {
    return nullptr;
  }
  std::uint64_t held_bytes = 0;
  std::uint64_t held_allocations = 0;
  if (devrt_status status = devrt_graph_held_memory(device, &held_bytes, &held_allocations); status != DEVRT_STATUS_OK)
    return raise_status(status);
  if (!put(dict.get(), "graph.held_bytes", held_bytes) || !put(dict.get(), "graph.held_allocations", held_allocations))
    return nullptr;
  return dict.release();
}

PyObject* empty_cache(PyObject*, PyObject* arg) noexcept {
  devrt_device device{};
  if (!to_device(arg, &device)) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS;
  status = devrt_empty_cache(device);
  Py_END_ALLOW_THREADS;
  return none_or_raise(status);
}

PyObject* reset_peak_memory_stats(PyObject*, PyObject* arg) noexcept {
  devrt_device device{};
  if (!to_device(arg, &device)) return nullptr;
  if (devrt_status status = devrt_reset_peak_memory_stats(device); status != DEVRT_STATUS_OK)
    return raise_status(status);
  Py_RETURN_NONE;
}

PyObject* set_memory_history(PyObject*, PyObject* arg) noexcept {
  if (!PyBool_Check(arg)) {
    PyErr_Format(PyExc_TypeError, "set_memory_history takes True or False, not %R", arg);
    return nullptr;
  }
  if (devrt_status status = devrt_set_memory_history(arg == Py_True ? 1 : 0); status != DEVRT_STATUS_OK)
    return raise_status(status);
  Py_RETURN_NONE;
}

PyObject* memory_snapshot(PyObject*, PyObject* arg) noexcept {
  devrt_device device{};
  if (!to_device(arg, &device)) return nullptr;
  char* json = nullptr;
  if (devrt_status status = devrt_memory_snapshot(device, &json); status != DEVRT_STATUS_OK)
    return raise_status(status);
  PyObject* text = PyUnicode_FromString(json);
  devrt_string_free(json);
  return text;
}

PyObject* shutdown(PyObject*, PyObject*) noexcept {
  if (devrt_status status = devrt_shutdown(); status != DEVRT_STATUS_OK) return raise_status(status);
  Py_RETURN_NONE;
}

} // namespace

PyMethodDef kMemoryFunctions[] = {
    {"memory_stats", memory_stats, METH_O, "memory_stats(device) -> dict of the device's memory figures."},
    {"empty_cache", empty_cache, METH_O, "empty_cache(device): its cached, unused memory back to the backend."},
    {"reset_peak_memory_stats", reset_peak_memory_stats, METH_O, "Sets the device's peaks to their current figures."},
    {"set_memory_history", set_memory_history, METH_O, "Remember live allocations (True) or not (False)."},
    {"memory_snapshot", memory_snapshot, METH_O, "memory_snapshot(device) -> the remembered allocations as JSON."},
    {"shutdown", shutdown, METH_NOARGS, "Closes every device devrt opened."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace devrt::python
