// SPDX-License-Identifier: Apache-2.0
// The module devrt._ext: its state, errors, and the strict argument conversions every call uses.
#include <cstring>
#include <string>

#include "ext.hpp"

namespace devrt::python {

State& state() noexcept {
  static State instance;
  return instance;
}

PyObject* raise_status(devrt_status status) noexcept {
  const char* message = devrt_last_error();
  PyObject* type = nullptr;
  if (state().error_types != nullptr) {
    Ref code(PyLong_FromLong(status));
    if (code) type = PyDict_GetItemWithError(state().error_types, code.get()); // borrowed
    if (PyErr_Occurred()) return nullptr;
  }
  if (type == nullptr) {
    PyErr_Format(PyExc_RuntimeError, "devrt: %s: %s", devrt_status_name(status), message);
    return nullptr;
  }
  Ref error(PyObject_CallFunction(type, "ss", devrt_status_name(status), message));
  if (error) PyErr_SetObject(type, error.get());
  return nullptr;
}

int raise_status_int(devrt_status status) noexcept {
  raise_status(status);
  return -1;
}

PyObject* none_or_raise(devrt_status status) noexcept {
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  Py_RETURN_NONE;
}

PyObject* take_text(devrt_status status, char* text) noexcept {
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* out = PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(std::strlen(text)), "replace");
  devrt_string_free(text);
  return out;
}

PyObject* float_list(const double* values, std::size_t count) noexcept {
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    Ref value(PyFloat_FromDouble(values[i]));
    if (!value || PyList_Append(list.get(), value.get()) != 0) return nullptr;
  }
  return list.release();
}

bool to_int64(PyObject* value, const char* what, std::int64_t minimum, std::int64_t maximum,
              std::int64_t* out) noexcept {
  if (PyBool_Check(value) || !PyIndex_Check(value)) {
    Ref type_name(PyType_GetName(Py_TYPE(value)));
    if (type_name) PyErr_Format(PyExc_TypeError, "%s must be an int, not %U (%R)", what, type_name.get(), value);
    return false;
  }
  Ref index(PyNumber_Index(value));
  if (!index) return false;
  int overflow = 0;
  long long number = PyLong_AsLongLongAndOverflow(index.get(), &overflow);
  if (number == -1 && PyErr_Occurred()) return false;
  if (overflow != 0 || number > maximum || (number < minimum && minimum == INT64_MIN)) {
    PyErr_Format(PyExc_OverflowError, "%s %R is out of range [%lld, %lld]", what, index.get(),
                 static_cast<long long>(minimum), static_cast<long long>(maximum));
    return false;
  }
  if (number < minimum) {
    PyErr_Format(PyExc_ValueError, "%s must be >= %lld, not %lld", what, static_cast<long long>(minimum), number);
    return false;
  }
  *out = number;
  return true;
}

bool to_shape(PyObject* shape, std::int64_t (&dims)[64], std::int32_t* ndim) noexcept {
  if (!PyBool_Check(shape) && PyIndex_Check(shape)) {
    *ndim = 1;
    return to_int64(shape, "a shape's extent", 0, INT64_MAX, &dims[0]);
  }
  if (PyUnicode_Check(shape) || PyBytes_Check(shape)) {
    PyErr_SetString(PyExc_TypeError, "a shape is an int or a sequence of ints, not a string");
    return false;
  }
  Ref items(PySequence_Tuple(shape));
  if (!items) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_SetString(PyExc_TypeError, "a shape is an int or a sequence of ints");
    }
    return false;
  }
  Py_ssize_t count = PyTuple_Size(items.get());
  if (count > 64) {
    PyErr_Format(PyExc_ValueError, "a shape has at most 64 dimensions, not %zd", count);
    return false;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (!to_int64(PyTuple_GetItem(items.get(), i), "a shape's extent", 0, INT64_MAX, &dims[i])) return false;
  }
  *ndim = static_cast<std::int32_t>(count);
  return true;
}

bool to_dtype(PyObject* name, DLDataType* out) noexcept {
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "a dtype is a name such as 'float32'");
    return false;
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name, &size);
  if (text == nullptr) return false;
  if (std::strlen(text) != static_cast<std::size_t>(size)) {
    PyErr_SetString(PyExc_ValueError, "a dtype name holds no NUL character");
    return false;
  }
  devrt_status status = devrt_dtype_parse(text, out);
  if (status != DEVRT_STATUS_OK) {
    raise_status(status); // devrt.InvalidArgumentError, a ValueError
    return false;
  }
  return true;
}

bool to_device(PyObject* value, devrt_device* out) noexcept {
  if (PyObject_TypeCheck(value, state().device_base)) {
    *out = reinterpret_cast<DeviceObject*>(value)->device;
    return true;
  }
  Ref device(PyObject_CallFunctionObjArgs(reinterpret_cast<PyObject*>(state().device_type), value, nullptr));
  if (!device) return false;
  *out = reinterpret_cast<DeviceObject*>(device.get())->device;
  return true;
}

bool to_stream(PyObject* value, devrt_stream_ref* out, bool* use) noexcept {
  *use = false;
  if (value == Py_None) return true;
  std::int64_t kind = 0;
  std::int64_t id = 0;
  PyObject* handle = nullptr;
  if (!PyTuple_Check(value) || PyTuple_Size(value) != 3) {
    PyErr_SetString(PyExc_TypeError, "a stream is None or a devrt.Stream");
    return false;
  }
  if (!to_int64(PyTuple_GetItem(value, 0), "a stream's device type", 1, INT32_MAX, &kind) ||
      !to_int64(PyTuple_GetItem(value, 1), "a stream's device index", 0, INT32_MAX, &id)) {
    return false;
  }
  handle = PyTuple_GetItem(value, 2);
  void* pointer = handle == Py_None ? nullptr : PyLong_AsVoidPtr(handle);
  if (pointer == nullptr && PyErr_Occurred()) return false;
  out->device = devrt_device{static_cast<std::int32_t>(kind), static_cast<std::int32_t>(id)};
  out->handle = pointer;
  *use = true;
  return true;
}

PyTypeObject* add_type(PyObject* module, PyType_Spec* spec) noexcept {
  PyObject* type = PyType_FromModuleAndSpec(module, spec, nullptr);
  if (type == nullptr) return nullptr;
  const int added = PyModule_AddType(module, reinterpret_cast<PyTypeObject*>(type));
  Py_DECREF(type); // the module holds it once added
  return added == 0 ? reinterpret_cast<PyTypeObject*>(type) : nullptr;
}

PyObject* alloc_instance(PyTypeObject* type) noexcept {
  auto alloc = reinterpret_cast<allocfunc>(PyType_GetSlot(type, Py_tp_alloc));
  return alloc(type, 0);
}

void free_instance(PyObject* self) noexcept {
  PyTypeObject* type = Py_TYPE(self);
  auto free_slot = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free_slot(self);
  Py_DECREF(reinterpret_cast<PyObject*>(type));
}

namespace {

PyObject* register_types(PyObject*, PyObject* args) noexcept {
  PyObject* device_type = nullptr;
  PyObject* tensor_type = nullptr;
  PyObject* errors = nullptr;
  if (!PyArg_ParseTuple(args, "OOO!:register_types", &device_type, &tensor_type, &PyDict_Type, &errors)) return nullptr;
  if (!PyType_Check(device_type) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(device_type), state().device_base) ||
      !PyType_Check(tensor_type) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(tensor_type), state().tensor_base)) {
    PyErr_SetString(PyExc_TypeError, "register_types: subclasses of _ext.Device and _ext.Tensor");
    return nullptr;
  }
  State& s = state();
  Py_INCREF(device_type);
  Py_INCREF(tensor_type);
  Py_INCREF(errors);
  Py_XDECREF(reinterpret_cast<PyObject*>(s.device_type));
  Py_XDECREF(reinterpret_cast<PyObject*>(s.tensor_type));
  Py_XDECREF(s.error_types);
  s.device_type = reinterpret_cast<PyTypeObject*>(device_type);
  s.tensor_type = reinterpret_cast<PyTypeObject*>(tensor_type);
  s.error_types = errors;
  Py_RETURN_NONE;
}

PyMethodDef kModuleFunctions[] = {
    {"register_types", register_types, METH_VARARGS,
     "register_types(Device, Tensor, errors): the subclasses new objects are made of, and the "
     "exception class for each status code."},
    {nullptr, nullptr, 0, nullptr},
};

bool add_functions(PyObject* module, PyMethodDef* functions) noexcept {
  return PyModule_AddFunctions(module, functions) == 0;
}

// STATUS_CODES: {"ok": 0, "invalid_argument": 1, ...}, the C API's status names and numbers, for
// the package's devrt.Status.
bool add_status_codes(PyObject* module) noexcept {
  Ref codes(PyDict_New());
  if (!codes) return false;
  for (devrt_status status = DEVRT_STATUS_OK; status <= DEVRT_STATUS_LAST; ++status) {
    Ref number(PyLong_FromLong(status));
    if (!number || PyDict_SetItemString(codes.get(), devrt_status_name(status), number.get()) != 0) return false;
  }
  return PyModule_AddObjectRef(module, "STATUS_CODES", codes.get()) == 0;
}

int exec_module(PyObject* module) noexcept {
  State& s = state();
  s.device_base = make_device_type(module);
  if (s.device_base == nullptr) return -1;
  s.tensor_base = make_tensor_type(module);
  if (s.tensor_base == nullptr) return -1;
  // The state's references: the bases, and the classes objects are made of until
  // register_types names the package's subclasses.
  for (PyTypeObject* type : {s.device_base, s.tensor_base, s.device_base, s.tensor_base}) {
    Py_INCREF(reinterpret_cast<PyObject*>(type));
  }
  s.device_type = s.device_base;
  s.tensor_type = s.tensor_base;
  s.legacy_producers = PySet_New(nullptr);
  if (s.legacy_producers == nullptr) return -1;
  if (!add_functions(module, kModuleFunctions) || !add_functions(module, kDeviceFunctions) ||
      !add_functions(module, kTensorFunctions) || !add_functions(module, kDlpackFunctions) ||
      !add_functions(module, kMemoryFunctions) || !add_functions(module, kRuntimeFunctions) ||
      !add_functions(module, kKernelFunctions) || !add_functions(module, kTimingFunctions) ||
      !add_functions(module, kGraphFunctions) || !add_functions(module, kTvmFunctions) ||
      !add_functions(module, kTvmVmFunctions) || !add_functions(module, kToolchainFunctions) ||
      !add_toolchain_constants(module) || !add_kernel_types(module) || !add_runtime_constants(module) ||
      !add_dlpack(module, s.tensor_base)) {
    return -1;
  }
  if (!add_status_codes(module)) return -1;
  return PyModule_AddIntConstant(module, "C_API_VERSION", devrt_api_version());
}

PyModuleDef_Slot kSlots[] = {
    {Py_mod_exec, reinterpret_cast<void*>(exec_module)},
    {0, nullptr},
};

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT,
    "devrt._ext",
    "devrt's compiled hot paths (stable ABI, over libdevrt_c.so).",
    0,
    nullptr,
    kSlots,
    nullptr,
    nullptr,
    nullptr,
};

} // namespace
} // namespace devrt::python

PyMODINIT_FUNC PyInit__ext(void) { return PyModuleDef_Init(&devrt::python::kModule); }
