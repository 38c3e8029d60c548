// SPDX-License-Identifier: Apache-2.0
// Modules and launches (devrt_module_*, devrt_function_launch): the handles behind devrt.Module
// and devrt.Function (python/devrt/_module.py), and the conversion of Python launch arguments
// (tensors, ints, floats, NumPy scalars) into kernel arguments, strictly: out of range is an error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ext.hpp"

namespace devrt::python {
namespace {

struct ModuleObject {
  PyObject_HEAD devrt_module handle;
  devrt_device device;
};
struct FunctionObject {
  PyObject_HEAD devrt_function handle;
  PyObject* module; // the ModuleObject: kept alive while the function lives
};

// DLPack's kDLBool (1.0; Debian's DLPack 0.6 headers lack the name).
constexpr std::uint8_t kBoolCode = 6;

PyTypeObject* g_module_type = nullptr;
PyTypeObject* g_function_type = nullptr;

// ---- Modules ---------------------------------------------------------------------------------

void module_dealloc(PyObject* self) noexcept {
  auto* object = reinterpret_cast<ModuleObject*>(self);
  if (object->handle != nullptr) {
    // Launches of its kernels may still be queued (Python gives no other moment to wait): Vulkan
    // must not destroy a pipeline a pending command buffer uses. Errors were reported by the
    // launches themselves.
    Py_BEGIN_ALLOW_THREADS devrt_device_synchronize(object->device);
    Py_END_ALLOW_THREADS devrt_module_release(object->handle);
  }
  free_instance(self);
}

// load_module(device, format, data, path, options): from bytes-like `data`, or the file `path`.
PyObject* load_module(PyObject*, PyObject* const* args, Py_ssize_t nargs) noexcept {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "load_module(device, format, data, path, options)");
    return nullptr;
  }
  devrt_device device{};
  std::int64_t format = 0;
  if (!to_device(args[0], &device) ||
      !to_int64(args[1], "a module format", 1, DEVRT_MODULE_FORMAT_COUNT - 1, &format)) {
    return nullptr;
  }
  const char* options = nullptr;
  if (args[4] != Py_None && (options = PyUnicode_AsUTF8AndSize(args[4], nullptr)) == nullptr) return nullptr;
  devrt_module module = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  if (args[3] != Py_None) {
    const char* path = PyUnicode_AsUTF8AndSize(args[3], nullptr);
    if (path == nullptr) return nullptr;
    Py_BEGIN_ALLOW_THREADS status =
        devrt_module_load_file(device, static_cast<std::int32_t>(format), path, options, &module);
    Py_END_ALLOW_THREADS
  } else {
    Py_buffer view{};
    if (PyObject_GetBuffer(args[2], &view, PyBUF_SIMPLE) != 0) return nullptr;
    Py_BEGIN_ALLOW_THREADS status = devrt_module_load(device, static_cast<std::int32_t>(format), view.buf,
                                                      static_cast<std::size_t>(view.len), options, &module);
    Py_END_ALLOW_THREADS PyBuffer_Release(&view);
  }
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* self = alloc_instance(g_module_type);
  if (self == nullptr) {
    devrt_module_release(module);
    return nullptr;
  }
  reinterpret_cast<ModuleObject*>(self)->handle = module;
  reinterpret_cast<ModuleObject*>(self)->device = device;
  return self;
}

PyObject* module_function(PyObject* self, PyObject* name) noexcept {
  const char* text = PyUnicode_Check(name) ? PyUnicode_AsUTF8AndSize(name, nullptr) : nullptr;
  if (text == nullptr) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "a kernel name is a str, not %R", name);
    return nullptr;
  }
  devrt_function function = nullptr;
  if (devrt_status status = devrt_module_function(reinterpret_cast<ModuleObject*>(self)->handle, text, &function);
      status != DEVRT_STATUS_OK) {
    return raise_status(status);
  }
  PyObject* out = alloc_instance(g_function_type);
  if (out == nullptr) {
    devrt_function_release(function);
    return nullptr;
  }
  Py_INCREF(self);
  reinterpret_cast<FunctionObject*>(out)->handle = function;
  reinterpret_cast<FunctionObject*>(out)->module = self;
  return out;
}

PyObject* module_rewritten_instructions(PyObject* self, PyObject*) noexcept {
  std::uint32_t count = 0;
  if (devrt_status status = devrt_module_rewritten_instructions(reinterpret_cast<ModuleObject*>(self)->handle, &count);
      status != DEVRT_STATUS_OK) {
    return raise_status(status);
  }
  return PyLong_FromUnsignedLong(count);
}

PyMethodDef kModuleMethods[] = {
    {"function", module_function, METH_O, "function(name) -> the kernel's handle; NotFoundError when absent."},
    {"rewritten_instructions", module_rewritten_instructions, METH_NOARGS,
     "rewritten_instructions() -> the instructions devrt rewrote in the module at load."},
    {nullptr, nullptr, 0, nullptr},
};

// ---- Launch arguments ------------------------------------------------------------------------

// A scalar of `type` holding `value` (a Python int or float), refused when it does not fit.
bool to_scalar(PyObject* value, DLDataType type, std::size_t position, devrt_kernel_arg* out) noexcept {
  out->kind = DEVRT_ARG_SCALAR;
  out->type_code = type.code;
  out->type_bits = type.bits;
  out->value.u64 = 0;
  char what[64];
  std::snprintf(what, sizeof what, "kernel argument %zu", position);
  if (type.lanes != 1) {
    PyErr_Format(PyExc_TypeError, "%s: vector scalars (%d lanes) are not kernel arguments", what, type.lanes);
    return false;
  }
  if (type.code == kDLInt || type.code == kBoolCode) {
    const int bits = type.code == kBoolCode ? 1 : type.bits;
    if (type.code == kBoolCode && !PyBool_Check(value) && !PyLong_Check(value)) {
      PyErr_Format(PyExc_TypeError, "%s: a bool scalar from %R", what, value);
      return false;
    }
    const std::int64_t maximum = bits >= 64 ? INT64_MAX : (std::int64_t{1} << (bits - 1)) - 1;
    const std::int64_t minimum = type.code == kBoolCode ? 0 : (bits >= 64 ? INT64_MIN : -maximum - 1);
    std::int64_t number = 0;
    if (type.code == kBoolCode) {
      number = PyObject_IsTrue(value);
      if (number < 0) return false;
    } else if (!to_int64(value, what, minimum, maximum, &number)) {
      return false;
    }
    out->value.i64 = number; // little-endian: the low type.bits / 8 bytes are the value
    return true;
  }
  if (type.code == kDLUInt) {
    if (type.bits == 64) {
      if (PyBool_Check(value) || !PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %R", what, value);
        return false;
      }
      unsigned long long number = PyLong_AsUnsignedLongLong(value);
      if (number == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "%s %R is out of range [0, 18446744073709551615]", what, value);
        return false;
      }
      out->value.u64 = number;
      return true;
    }
    std::int64_t number = 0;
    if (!to_int64(value, what, 0, (std::int64_t{1} << type.bits) - 1, &number)) return false;
    out->value.u64 = static_cast<std::uint64_t>(number);
    return true;
  }
  if (type.code == kDLFloat && (type.bits == 32 || type.bits == 64)) {
    if (PyBool_Check(value) || (!PyFloat_Check(value) && !PyLong_Check(value))) {
      PyErr_Format(PyExc_TypeError, "%s must be a float, not %R", what, value);
      return false;
    }
    const double number = PyFloat_AsDouble(value);
    if (number == -1.0 && PyErr_Occurred()) return false;
    if (type.bits == 64) {
      out->value.f64 = number;
      return true;
    }
    if (std::isfinite(number) && std::fabs(number) > std::numeric_limits<float>::max()) {
      PyErr_Format(PyExc_OverflowError, "%s %R does not fit a float32 (pass numpy.float64 for a double)", what, value);
      return false;
    }
    out->value.f32 = static_cast<float>(number);
    return true;
  }
  PyErr_Format(PyExc_TypeError, "%s: scalars of type code %d with %d bits are not kernel arguments here", what,
               type.code, type.bits);
  return false;
}

} // namespace

// One launch argument: a devrt.Tensor (its memory), a Python int (int32), float (float32) or a
// NumPy scalar (its own dtype). bool and other objects are refused.
bool to_kernel_arg(PyObject* value, std::size_t position, devrt_kernel_arg* out) noexcept {
  if (PyObject_TypeCheck(value, state().tensor_base)) {
    devrt_tensor tensor = reinterpret_cast<TensorObject*>(value)->handle;
    if (devrt_tensor_is_contiguous(tensor) == 0) {
      PyErr_Format(PyExc_ValueError,
                   "kernel argument %zu is a non-contiguous tensor: a kernel gets its memory, not its strides "
                   "(pass a contiguous copy)",
                   position);
      return false;
    }
    if (devrt_tensor_read_only(tensor) != 0) {
      PyErr_Format(PyExc_ValueError,
                   "kernel argument %zu is a read-only tensor (imported with DLPack's read-only "
                   "flag): a kernel could write it",
                   position);
      return false;
    }
    const std::uint64_t offset = devrt_tensor_byte_offset(tensor);
    devrt_span span{devrt_tensor_device(tensor), devrt_tensor_data(tensor),
                    static_cast<std::size_t>(offset) + devrt_tensor_nbytes(tensor)};
    *out = devrt_arg_span(span, static_cast<std::size_t>(offset));
    return true;
  }
  if (PyBool_Check(value)) {
    PyErr_Format(PyExc_TypeError, "kernel argument %zu is a bool: pass numpy.bool_(x) or an int of the kernel's type",
                 position);
    return false;
  }
  if (PyLong_Check(value)) return to_scalar(value, DLDataType{kDLInt, 32, 1}, position, out);
  if (PyFloat_Check(value)) return to_scalar(value, DLDataType{kDLFloat, 32, 1}, position, out);
  // A NumPy (or any) scalar with a dtype and item(): its dtype decides.
  Ref dtype(PyObject_GetAttrString(value, "dtype"));
  Ref item(dtype ? PyObject_CallMethod(value, "item", nullptr) : nullptr);
  if (!dtype || !item) {
    PyErr_Clear();
    Ref type_name(PyType_GetName(Py_TYPE(value)));
    PyErr_Format(PyExc_TypeError,
                 "kernel argument %zu is a %U: arguments are devrt.Tensor, int (int32), float (float32) or "
                 "NumPy scalars (numpy.int64(x), ...)",
                 position, type_name.get());
    return false;
  }
  Ref name(PyObject_Str(dtype.get()));
  DLDataType type{};
  if (!name || !to_dtype(name.get(), &type)) return false;
  return to_scalar(item.get(), type, position, out);
}

namespace {

// An extent: an int or a tuple of one to three ints, each in [1, 2^32).
bool to_extent(PyObject* value, const char* what, std::uint32_t (&out)[3]) noexcept {
  out[0] = out[1] = out[2] = 1;
  if (!PyTuple_Check(value)) {
    std::int64_t number = 0;
    if (!to_int64(value, what, 1, UINT32_MAX, &number)) return false;
    out[0] = static_cast<std::uint32_t>(number);
    return true;
  }
  const Py_ssize_t size = PyTuple_Size(value);
  if (size < 1 || size > 3) {
    PyErr_Format(PyExc_ValueError, "%s has %zd dimensions (want 1 to 3)", what, size);
    return false;
  }
  for (Py_ssize_t i = 0; i < size; ++i) {
    std::int64_t number = 0;
    if (!to_int64(PyTuple_GetItem(value, i), what, 1, UINT32_MAX, &number)) return false;
    out[i] = static_cast<std::uint32_t>(number);
  }
  return true;
}

// ---- Functions -------------------------------------------------------------------------------

void function_dealloc(PyObject* self) noexcept {
  auto* object = reinterpret_cast<FunctionObject*>(self);
  devrt_function_release(object->handle);
  Py_XDECREF(object->module);
  free_instance(self);
}

// launch(args, grid, block, dynamic_shared_bytes, stream)
PyObject* function_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) noexcept {
  if (nargs != 5 || !PyTuple_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "launch(args: tuple, grid, block, dynamic_shared_bytes, stream)");
    return nullptr;
  }
  const Py_ssize_t count = PyTuple_Size(args[0]);
  devrt_kernel_arg converted[64];
  if (count > 64) {
    PyErr_Format(PyExc_ValueError, "%zd kernel arguments (at most 64)", count);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (!to_kernel_arg(PyTuple_GetItem(args[0], i), static_cast<std::size_t>(i), &converted[i])) return nullptr;
  }
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::int64_t shared = 0;
  devrt_stream_ref stream{};
  bool use_stream = false;
  if (!to_extent(args[1], "grid", grid) || !to_extent(args[2], "block", block) ||
      !to_int64(args[3], "dynamic_shared_bytes", 0, INT64_MAX, &shared) || !to_stream(args[4], &stream, &use_stream)) {
    return nullptr;
  }
  devrt_function function = reinterpret_cast<FunctionObject*>(self)->handle;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status =
      devrt_function_launch(function, grid, block, static_cast<std::size_t>(shared), converted,
                            static_cast<std::size_t>(count), use_stream ? &stream : nullptr);
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

PyMethodDef kFunctionMethods[] = {
    {"launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(function_launch)), METH_FASTCALL,
     "launch(args, grid, block, dynamic_shared_bytes, stream): queues one launch."},
    {nullptr, nullptr, 0, nullptr},
};

PyObject* module_formats(PyObject*, PyObject*) noexcept {
  static const struct {
    const char* name;
    int value;
  } kFormats[] = {
      {"host_table", DEVRT_MODULE_HOST_TABLE}, {"shared_object", DEVRT_MODULE_SHARED_OBJECT},
      {"opencl_c", DEVRT_MODULE_OPENCL_C},     {"opencl_binary", DEVRT_MODULE_OPENCL_BINARY},
      {"spirv", DEVRT_MODULE_SPIRV},           {"ptx", DEVRT_MODULE_PTX},
      {"cubin", DEVRT_MODULE_CUBIN},           {"fatbin", DEVRT_MODULE_FATBIN},
      {"hsaco", DEVRT_MODULE_HSACO},           {"wgsl", DEVRT_MODULE_WGSL},
  };
  Ref out(PyDict_New());
  if (!out) return nullptr;
  for (const auto& format : kFormats) {
    Ref number(PyLong_FromLong(format.value));
    if (!number || PyDict_SetItemString(out.get(), format.name, number.get()) != 0) return nullptr;
  }
  return out.release();
}

} // namespace

PyMethodDef kKernelFunctions[] = {
    {"load_module", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(load_module)), METH_FASTCALL,
     "load_module(device, format, data, path, options) -> a module handle (devrt.Module wraps it)."},
    {"module_formats", module_formats, METH_NOARGS, "{name: DEVRT_MODULE_* number} of every module format."},
    {nullptr, nullptr, 0, nullptr},
};

bool add_kernel_types(PyObject* module) noexcept {
  PyType_Slot module_slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(module_dealloc)},
      {Py_tp_methods, kModuleMethods},
      {Py_tp_doc, const_cast<char*>("A loaded module's handle (devrt.Module holds one).")},
      {0, nullptr},
  };
  PyType_Spec module_spec = {"devrt._ext.ModuleHandle", sizeof(ModuleObject), 0, Py_TPFLAGS_DEFAULT, module_slots};
  PyType_Slot function_slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(function_dealloc)},
      {Py_tp_methods, kFunctionMethods},
      {Py_tp_doc, const_cast<char*>("A kernel's handle (devrt.Function holds one); keeps its module alive.")},
      {0, nullptr},
  };
  PyType_Spec function_spec = {"devrt._ext.FunctionHandle", sizeof(FunctionObject), 0, Py_TPFLAGS_DEFAULT,
                               function_slots};
  g_module_type = add_type(module, &module_spec);
  g_function_type = g_module_type != nullptr ? add_type(module, &function_spec) : nullptr;
  return g_function_type != nullptr;
}

} // namespace devrt::python
