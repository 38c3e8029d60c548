// SPDX-License-Identifier: Apache-2.0
// devrt._ext's Relax VM (devrt/tvm.py): capsules over devrt_tvm_vm and devrt_tvm_value, values
// made from Python's and unpacked into them; devrt.tvm converts between these and Python objects.
#include "ext.hpp"

#include <cstdint>
#include <vector>

namespace devrt::python {
namespace {

constexpr const char* kVmCapsule = "devrt.tvm_vm";
constexpr const char* kValueCapsule = "devrt.tvm_value";
constexpr const char* kVmLibraryCapsule = "devrt.tvm_library";

void release_vm(PyObject* capsule) noexcept {
  devrt_tvm_vm_release(static_cast<devrt_tvm_vm>(PyCapsule_GetPointer(capsule, kVmCapsule)));
}

void release_value(PyObject* capsule) noexcept {
  devrt_tvm_value_release(static_cast<devrt_tvm_value>(PyCapsule_GetPointer(capsule, kValueCapsule)));
}

PyObject* value_capsule(devrt_tvm_value value) noexcept {
  PyObject* capsule = PyCapsule_New(value, kValueCapsule, release_value);
  if (capsule == nullptr) devrt_tvm_value_release(value);
  return capsule;
}

devrt_tvm_value to_value(PyObject* capsule) noexcept {
  return static_cast<devrt_tvm_value>(PyCapsule_GetPointer(capsule, kValueCapsule));
}

// tvm_vm_create(library capsule) -> capsule
PyObject* tvm_vm_create(PyObject*, PyObject* capsule) noexcept {
  auto library = static_cast<devrt_tvm_library>(PyCapsule_GetPointer(capsule, kVmLibraryCapsule));
  if (library == nullptr) return nullptr;
  devrt_tvm_vm vm = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_vm_create(library, &vm);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* out = PyCapsule_New(vm, kVmCapsule, release_vm);
  if (out == nullptr) devrt_tvm_vm_release(vm);
  return out;
}

// tvm_vm_functions(vm) -> [str]
PyObject* tvm_vm_functions(PyObject*, PyObject* capsule) noexcept {
  auto vm = static_cast<devrt_tvm_vm>(PyCapsule_GetPointer(capsule, kVmCapsule));
  if (vm == nullptr) return nullptr;
  std::size_t count = 0;
  devrt_tvm_vm_function(vm, 0, nullptr, &count);
  Ref list(PyList_New(static_cast<Py_ssize_t>(count)));
  if (!list) return nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    if (devrt_status status = devrt_tvm_vm_function(vm, i, &name, nullptr); status != DEVRT_STATUS_OK) {
      return raise_status(status);
    }
    PyObject* item = PyUnicode_FromString(name);
    if (item == nullptr) return nullptr;
    PyList_SetItem(list.get(), static_cast<Py_ssize_t>(i), item);
  }
  return list.release();
}

// tvm_vm_call(vm, name: str, args: tuple of value capsules) -> value capsule
PyObject* tvm_vm_call(PyObject*, PyObject* args) noexcept {
  PyObject *capsule = nullptr, *values = nullptr;
  const char* name = nullptr;
  if (PyArg_ParseTuple(args, "OsO!", &capsule, &name, &PyTuple_Type, &values) == 0) return nullptr;
  auto vm = static_cast<devrt_tvm_vm>(PyCapsule_GetPointer(capsule, kVmCapsule));
  if (vm == nullptr) return nullptr;
  std::vector<devrt_tvm_value> converted(static_cast<std::size_t>(PyTuple_Size(values)));
  for (std::size_t i = 0; i < converted.size(); ++i) {
    if ((converted[i] = to_value(PyTuple_GetItem(values, static_cast<Py_ssize_t>(i)))) == nullptr) return nullptr;
  }
  devrt_tvm_value result = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_vm_call(vm, name, converted.data(), converted.size(), &result);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  return value_capsule(result);
}

// tvm_vm_time_function(vm, evaluator capsule, name: str, args: tuple of value capsules)
//   -> [seconds per call of each repeat]
PyObject* tvm_vm_time_function(PyObject*, PyObject* args) noexcept {
  PyObject *vm_capsule = nullptr, *evaluator_capsule = nullptr, *values = nullptr;
  const char* name = nullptr;
  if (PyArg_ParseTuple(args, "OOsO!", &vm_capsule, &evaluator_capsule, &name, &PyTuple_Type, &values) == 0) {
    return nullptr;
  }
  auto vm = static_cast<devrt_tvm_vm>(PyCapsule_GetPointer(vm_capsule, kVmCapsule));
  auto evaluator =
      static_cast<devrt_time_evaluator_handle>(PyCapsule_GetPointer(evaluator_capsule, "devrt.time_evaluator"));
  if (vm == nullptr || evaluator == nullptr) return nullptr;
  std::vector<devrt_tvm_value> converted(static_cast<std::size_t>(PyTuple_Size(values)));
  for (std::size_t i = 0; i < converted.size(); ++i) {
    if ((converted[i] = to_value(PyTuple_GetItem(values, static_cast<Py_ssize_t>(i)))) == nullptr) return nullptr;
  }
  std::int32_t repeat = 0;
  devrt_status status = devrt_time_evaluator_state(evaluator, nullptr, &repeat, nullptr);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  std::vector<double> results(static_cast<std::size_t>(repeat));
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_vm_time_function(vm, evaluator, name, converted.data(), converted.size(),
                                                             results.data(), results.size());
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  return float_list(results.data(), results.size());
}

// tvm_load_params(directory: str, device) -> value capsule (a tuple of (name, tensor) tuples)
PyObject* tvm_load_params(PyObject*, PyObject* args) noexcept {
  const char* directory = nullptr;
  PyObject* device_object = nullptr;
  if (PyArg_ParseTuple(args, "sO", &directory, &device_object) == 0) return nullptr;
  devrt_device device{};
  if (!to_device(device_object, &device)) return nullptr;
  devrt_tvm_value params = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_load_params(directory, device, &params);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  return value_capsule(params);
}

// tvm_vm_model_params(vm, params capsule) -> value capsule (a tuple of tensors)
PyObject* tvm_vm_model_params(PyObject*, PyObject* args) noexcept {
  PyObject *vm_capsule = nullptr, *params_capsule = nullptr;
  if (PyArg_ParseTuple(args, "OO", &vm_capsule, &params_capsule) == 0) return nullptr;
  auto vm = static_cast<devrt_tvm_vm>(PyCapsule_GetPointer(vm_capsule, kVmCapsule));
  devrt_tvm_value params = to_value(params_capsule);
  if (vm == nullptr || params == nullptr) return nullptr;
  devrt_tvm_value ordered = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tvm_vm_model_params(vm, params, &ordered);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  return value_capsule(ordered);
}

// A shape's or a tuple's items from a Python sequence.
template <class Convert>
bool each_item(PyObject* sequence, Convert convert) noexcept {
  const Py_ssize_t n = PySequence_Size(sequence);
  if (n < 0) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Ref item(PySequence_GetItem(sequence, i));
    if (!item || !convert(item.get())) return false;
  }
  return true;
}

// tvm_value_new(kind: int, payload) -> capsule (int, float, str, shape: ints, tensor, tuple: capsules)
PyObject* tvm_value_new(PyObject*, PyObject* args) noexcept {
  int kind = 0;
  PyObject* payload = nullptr;
  if (PyArg_ParseTuple(args, "iO", &kind, &payload) == 0) return nullptr;
  devrt_tvm_value value = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  switch (kind) {
  case DEVRT_TVM_VALUE_INT: {
    std::int64_t v = 0;
    if (!to_int64(payload, "an int", INT64_MIN, INT64_MAX, &v)) return nullptr;
    status = devrt_tvm_value_from_int(v, &value);
    break;
  }
  case DEVRT_TVM_VALUE_FLOAT: status = devrt_tvm_value_from_float(PyFloat_AsDouble(payload), &value); break;
  case DEVRT_TVM_VALUE_STRING: {
    Py_ssize_t length = 0;
    const char* text = PyUnicode_AsUTF8AndSize(payload, &length);
    if (text == nullptr) return nullptr;
    status = devrt_tvm_value_from_string(text, static_cast<std::size_t>(length), &value);
    break;
  }
  case DEVRT_TVM_VALUE_SHAPE: {
    std::vector<std::int64_t> dims;
    if (!each_item(payload, [&](PyObject* item) {
          std::int64_t d = 0;
          if (!to_int64(item, "a shape's dimension", INT64_MIN, INT64_MAX, &d)) return false;
          dims.push_back(d);
          return true;
        })) {
      return nullptr;
    }
    status = devrt_tvm_value_from_shape(dims.data(), dims.size(), &value);
    break;
  }
  case DEVRT_TVM_VALUE_TENSOR: {
    devrt_tensor tensor = nullptr;
    if (!to_tensor(payload, &tensor)) {
      PyErr_SetString(PyExc_TypeError, "a devrt.Tensor is needed");
      return nullptr;
    }
    status = devrt_tvm_value_from_tensor(tensor, &value);
    break;
  }
  case DEVRT_TVM_VALUE_TUPLE: {
    std::vector<devrt_tvm_value> items;
    if (!each_item(payload, [&](PyObject* item) {
          devrt_tvm_value v = to_value(item);
          items.push_back(v);
          return v != nullptr;
        })) {
      return nullptr;
    }
    status = devrt_tvm_value_from_tuple(items.data(), items.size(), &value);
    break;
  }
  default: PyErr_Format(PyExc_ValueError, "no VM value of kind %d is made from Python", kind); return nullptr;
  }
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return value_capsule(value);
}

// What a value holds, for Python: shapes as a list of ints, tuples as a list of capsules.
PyObject* payload_of(devrt_tvm_value value, std::int32_t kind) noexcept {
  switch (kind) {
  case DEVRT_TVM_VALUE_INT: {
    std::int64_t v = 0;
    devrt_tvm_value_int(value, &v);
    return PyLong_FromLongLong(v);
  }
  case DEVRT_TVM_VALUE_FLOAT: {
    double v = 0;
    devrt_tvm_value_float(value, &v);
    return PyFloat_FromDouble(v);
  }
  case DEVRT_TVM_VALUE_DTYPE: {
    DLDataType type{};
    char text[64];
    devrt_tvm_value_dtype(value, &type);
    if (devrt_status s = devrt_dtype_to_string(type, text, sizeof text); s != DEVRT_STATUS_OK) return raise_status(s);
    return PyUnicode_FromString(text);
  }
  case DEVRT_TVM_VALUE_STRING: {
    const char* text = nullptr;
    std::size_t length = 0;
    devrt_tvm_value_string(value, &text, &length);
    return PyUnicode_FromStringAndSize(text, static_cast<Py_ssize_t>(length));
  }
  case DEVRT_TVM_VALUE_SHAPE: {
    const std::int64_t* dims = nullptr;
    std::size_t ndim = 0;
    devrt_tvm_value_shape(value, &dims, &ndim);
    Ref list(PyList_New(static_cast<Py_ssize_t>(ndim)));
    for (std::size_t i = 0; list && i < ndim; ++i) {
      PyObject* d = PyLong_FromLongLong(dims[i]);
      if (d == nullptr) return nullptr;
      PyList_SetItem(list.get(), static_cast<Py_ssize_t>(i), d);
    }
    return list.release();
  }
  case DEVRT_TVM_VALUE_TENSOR: {
    devrt_tensor tensor = nullptr;
    if (devrt_status s = devrt_tvm_value_tensor(value, &tensor); s != DEVRT_STATUS_OK) return raise_status(s);
    return new_tensor(tensor);
  }
  case DEVRT_TVM_VALUE_TUPLE: {
    std::size_t count = 0;
    devrt_tvm_value_tuple_item(value, 0, nullptr, &count);
    Ref list(PyList_New(static_cast<Py_ssize_t>(count)));
    for (std::size_t i = 0; list && i < count; ++i) {
      devrt_tvm_value item = nullptr;
      if (devrt_status s = devrt_tvm_value_tuple_item(value, i, &item, nullptr); s != DEVRT_STATUS_OK) {
        return raise_status(s);
      }
      PyObject* capsule = value_capsule(item);
      if (capsule == nullptr) return nullptr;
      PyList_SetItem(list.get(), static_cast<Py_ssize_t>(i), capsule);
    }
    return list.release();
  }
  default: Py_RETURN_NONE;
  }
}

// tvm_value_unpack(capsule) -> (kind, payload, type_key)
PyObject* tvm_value_unpack(PyObject*, PyObject* capsule) noexcept {
  devrt_tvm_value value = to_value(capsule);
  if (value == nullptr) return nullptr;
  std::int32_t kind = 0;
  const char* type_key = nullptr;
  if (devrt_status s = devrt_tvm_value_kind(value, &kind, &type_key); s != DEVRT_STATUS_OK) return raise_status(s);
  Ref payload(payload_of(value, kind));
  if (!payload) return nullptr;
  return Py_BuildValue("(iOs)", kind, payload.get(), type_key);
}

} // namespace

PyMethodDef kTvmVmFunctions[] = {
    {"tvm_vm_create", tvm_vm_create, METH_O, "tvm_vm_create(library) -> a capsule over the library's Relax VM."},
    {"tvm_vm_functions", tvm_vm_functions, METH_O, "tvm_vm_functions(vm) -> its VM functions."},
    {"tvm_vm_call", tvm_vm_call, METH_VARARGS, "tvm_vm_call(vm, name, args) -> the result's value capsule."},
    {"tvm_vm_time_function", tvm_vm_time_function, METH_VARARGS,
     "tvm_vm_time_function(vm, evaluator, name, args) -> [seconds per call of each repeat]."},
    {"tvm_value_new", tvm_value_new, METH_VARARGS, "tvm_value_new(kind, payload) -> a value capsule."},
    {"tvm_load_params", tvm_load_params, METH_VARARGS,
     "tvm_load_params(directory, device) -> a value capsule: ((name, tensor), ...)."},
    {"tvm_vm_model_params", tvm_vm_model_params, METH_VARARGS,
     "tvm_vm_model_params(vm, params) -> a value capsule: the tensors in the model's order."},
    {"tvm_value_unpack", tvm_value_unpack, METH_O, "tvm_value_unpack(value) -> (kind, payload, type_key)."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace devrt::python
