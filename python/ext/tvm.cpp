// SPDX-License-Identifier: Apache-2.0
// devrt._ext's libraries TVM built (devrt/tvm.py): a capsule over devrt_tvm_library, its listings,
// and calls with devrt.Tensor, int and float arguments.
#include "ext.hpp"

#include <cstdint>
#include <vector>

namespace devrt::python {
namespace {

constexpr const char* kLibraryCapsule = "devrt.tvm_library";

void release_library(PyObject* capsule) noexcept {
  devrt_tvm_library_release(static_cast<devrt_tvm_library>(PyCapsule_GetPointer(capsule, kLibraryCapsule)));
}

devrt_tvm_library to_library(PyObject* capsule) noexcept {
  return static_cast<devrt_tvm_library>(PyCapsule_GetPointer(capsule, kLibraryCapsule));
}

// tvm_library_load(path: str, device) -> capsule
PyObject* tvm_library_load(PyObject*, PyObject* args) noexcept {
  const char* path = nullptr;
  PyObject* device_object = nullptr;
  if (PyArg_ParseTuple(args, "sO", &path, &device_object) == 0) return nullptr;
  devrt_device device{};
  if (!to_device(device_object, &device)) return nullptr;
  devrt_tvm_library library = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_library_load(path, device, &library);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* capsule = PyCapsule_New(library, kLibraryCapsule, release_library);
  if (capsule == nullptr) devrt_tvm_library_release(library);
  return capsule;
}

// A list of the strings `get(library, i, &text, &count)` gives.
template <class Get>
PyObject* listing(PyObject* capsule, Get get) noexcept {
  devrt_tvm_library library = to_library(capsule);
  if (library == nullptr) return nullptr;
  std::size_t count = 0;
  const char* text = nullptr;
  devrt_status first = get(library, 0, &text, &count);
  if (first != DEVRT_STATUS_OK && first != DEVRT_STATUS_OUT_OF_RANGE) return raise_status(first);
  Ref list(PyList_New(static_cast<Py_ssize_t>(count)));
  if (!list) return nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    if (devrt_status status = get(library, i, &text, &count); status != DEVRT_STATUS_OK) return raise_status(status);
    PyObject* item = PyUnicode_FromString(text);
    if (item == nullptr) return nullptr;
    PyList_SetItem(list.get(), static_cast<Py_ssize_t>(i), item);
  }
  return list.release();
}

PyObject* tvm_library_functions(PyObject*, PyObject* capsule) noexcept {
  return listing(capsule, [](devrt_tvm_library l, std::size_t i, const char** text, std::size_t* count) {
    return devrt_tvm_library_function(l, i, text, count);
  });
}

PyObject* tvm_library_skipped(PyObject*, PyObject* capsule) noexcept {
  return listing(capsule, [](devrt_tvm_library l, std::size_t i, const char** text, std::size_t* count) {
    return devrt_tvm_library_skipped(l, i, text, count);
  });
}

// tvm_library_rewritten_instructions(capsule) -> int
PyObject* tvm_library_rewritten_instructions(PyObject*, PyObject* capsule) noexcept {
  devrt_tvm_library library = to_library(capsule);
  if (library == nullptr) return nullptr;
  std::uint32_t count = 0;
  if (devrt_status status = devrt_tvm_library_rewritten_instructions(library, &count); status != DEVRT_STATUS_OK) {
    return raise_status(status);
  }
  return PyLong_FromUnsignedLong(count);
}

// tvm_library_kernels(capsule) -> [(name, launch tags: str joined by ',')]
PyObject* tvm_library_kernels(PyObject*, PyObject* capsule) noexcept {
  devrt_tvm_library library = to_library(capsule);
  if (library == nullptr) return nullptr;
  std::size_t count = 0;
  const char* name = nullptr;
  devrt_status first = devrt_tvm_library_kernel(library, 0, &name, nullptr, &count);
  if (first != DEVRT_STATUS_OK && first != DEVRT_STATUS_OUT_OF_RANGE) return raise_status(first);
  Ref list(PyList_New(static_cast<Py_ssize_t>(count)));
  if (!list) return nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    char* tags = nullptr;
    if (devrt_status status = devrt_tvm_library_kernel(library, i, &name, &tags, &count); status != DEVRT_STATUS_OK)
      return raise_status(status);
    PyObject* item = Py_BuildValue("(ss)", name, tags);
    devrt_string_free(tags);
    if (item == nullptr) return nullptr;
    PyList_SetItem(list.get(), static_cast<Py_ssize_t>(i), item);
  }
  return list.release();
}

// tvm_library_call(capsule, name: str, args: tuple of devrt.Tensor, int, float)
PyObject* tvm_library_call(PyObject*, PyObject* args) noexcept {
  PyObject *capsule = nullptr, *values = nullptr;
  const char* name = nullptr;
  if (PyArg_ParseTuple(args, "OsO!", &capsule, &name, &PyTuple_Type, &values) == 0) return nullptr;
  devrt_tvm_library library = to_library(capsule);
  if (library == nullptr) return nullptr;
  const Py_ssize_t count = PyTuple_Size(values);
  std::vector<devrt_tvm_arg> converted(static_cast<std::size_t>(count));
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* value = PyTuple_GetItem(values, i);
    devrt_tvm_arg& out = converted[static_cast<std::size_t>(i)];
    if (PyBool_Check(value)) {
      PyErr_Format(PyExc_TypeError, "argument %zd is a bool: pass an int or a float, as TVM's functions take", i);
      return nullptr;
    }
    if (PyLong_Check(value)) {
      out.kind = DEVRT_TVM_ARG_INT;
      if (!to_int64(value, "an int argument", INT64_MIN, INT64_MAX, &out.value.i64)) return nullptr;
    } else if (PyFloat_Check(value)) {
      out.kind = DEVRT_TVM_ARG_FLOAT;
      out.value.f64 = PyFloat_AsDouble(value);
    } else {
      out.kind = DEVRT_TVM_ARG_TENSOR;
      if (!to_tensor(value, &out.value.tensor)) {
        PyErr_Format(PyExc_TypeError, "argument %zd: expected a devrt.Tensor, an int or a float", i);
        return nullptr;
      }
    }
  }
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_library_call(library, name, converted.data(), converted.size());
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

PyObject* tvm_library_synchronize(PyObject*, PyObject* capsule) noexcept {
  devrt_tvm_library library = to_library(capsule);
  if (library == nullptr) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_library_synchronize(library);
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

} // namespace

PyMethodDef kTvmFunctions[] = {
    {"tvm_library_load", tvm_library_load, METH_VARARGS,
     "tvm_library_load(path, device) -> a capsule over the library TVM built."},
    {"tvm_library_functions", tvm_library_functions, METH_O,
     "tvm_library_functions(library) -> its exported functions."},
    {"tvm_library_kernels", tvm_library_kernels, METH_O,
     "tvm_library_kernels(library) -> [(kernel name, launch tags joined by ',')]."},
    {"tvm_library_skipped", tvm_library_skipped, METH_O,
     "tvm_library_skipped(library) -> what its blob's parse skipped."},
    {"tvm_library_rewritten_instructions", tvm_library_rewritten_instructions, METH_O,
     "tvm_library_rewritten_instructions(library) -> the instructions devrt rewrote in its kernels."},
    {"tvm_library_call", tvm_library_call, METH_VARARGS, "tvm_library_call(library, name, args): calls a function."},
    {"tvm_library_synchronize", tvm_library_synchronize, METH_O,
     "tvm_library_synchronize(library): waits for what this thread's calls queued."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace devrt::python
