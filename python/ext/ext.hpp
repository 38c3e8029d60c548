// SPDX-License-Identifier: Apache-2.0
// devrt._ext: the Python package's compiled hot paths (devices and attributes, tensors, DLPack
// both ways, copies), written against CPython's stable ABI (Py_LIMITED_API 3.11: one abi3 module
// imports on every later CPython) over libdevrt_c.so's C API. What the files of the module share.
#ifndef DEVRT_PYTHON_EXT_HPP
#define DEVRT_PYTHON_EXT_HPP

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <devrt/devrt.h>
#include <devrt/dlpack.hpp>

#include <cstdint>

namespace devrt::python {

// The objects behind devrt.Device and devrt.Tensor (the package subclasses both in Python).
struct DeviceObject {
  PyObject_HEAD devrt_device device;
};
struct TensorObject {
  PyObject_HEAD devrt_tensor handle;
  PyObject* shape; // the shape tuple, made on first use
};

// Owns one reference (Py_XDECREF on destruction); release() hands it over.
class Ref {
public:
  Ref() = default;
  explicit Ref(PyObject* object) noexcept : object_(object) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() { Py_XDECREF(object_); }
  // Drops the reference held and takes `object`'s.
  void reset(PyObject* object) noexcept {
    Py_XDECREF(object_);
    object_ = object;
  }
  PyObject* get() const noexcept { return object_; }
  PyObject* release() noexcept {
    PyObject* out = object_;
    object_ = nullptr;
    return out;
  }
  explicit operator bool() const noexcept { return object_ != nullptr; }

private:
  PyObject* object_ = nullptr;
};

// The module's state: types and what the Python side registers at import.
struct State {
  PyTypeObject* device_base = nullptr;  // _ext.Device
  PyTypeObject* tensor_base = nullptr;  // _ext.Tensor
  PyTypeObject* device_type = nullptr;  // the class devrt.Device objects are made of (a subclass)
  PyTypeObject* tensor_type = nullptr;  // the class devrt.Tensor objects are made of (a subclass)
  PyObject* error_types = nullptr;      // dict: status code -> exception class(code name, message)
  PyObject* legacy_producers = nullptr; // set of types whose __dlpack__ takes no max_version
};
State& state() noexcept;

// Raises the registered exception for a failed C API call (its message is devrt_last_error()).
// Returns nullptr, for `return raise_status(s);`.
PyObject* raise_status(devrt_status status) noexcept;
// The same returning -1, for slots that return int.
int raise_status_int(devrt_status status) noexcept;
// None, or raise_status(status) for a failed call.
PyObject* none_or_raise(devrt_status status) noexcept;
// A str of a C API string handed over through char** (freed here), or nullptr with the error set.
PyObject* take_text(devrt_status status, char* text) noexcept;
// A new list of `count` floats (seconds a measurement gave), or nullptr with the error set.
PyObject* float_list(const double* values, std::size_t count) noexcept;

// Strict conversions: TypeError for a non-integer (bool and float included), OverflowError out
// of [minimum, maximum], ValueError below a minimum that the range allows to be reported so.
bool to_int64(PyObject* value, const char* what, std::int64_t minimum, std::int64_t maximum,
              std::int64_t* out) noexcept;
// A DLPack shape from an int or a sequence of ints (each >= 0); at most 64 dimensions.
bool to_shape(PyObject* shape, std::int64_t (&dims)[64], std::int32_t* ndim) noexcept;
// A DLPack dtype from a str name (parsed by the C API; ValueError naming the accepted forms).
bool to_dtype(PyObject* name, DLDataType* out) noexcept;
// The devrt_tensor of a devrt.Tensor (borrowed); TypeError for anything else (tensor.cpp).
bool to_tensor(PyObject* value, devrt_tensor* out) noexcept;
// A devrt_device from a Device object, a "cuda:1" str or a DLPack (type, index) pair.
bool to_device(PyObject* value, devrt_device* out) noexcept;
// An optional stream: None, or a (kind, index, handle) tuple; *use is false for None.
bool to_stream(PyObject* value, devrt_stream_ref* out, bool* use) noexcept;

// One kernel argument: a devrt.Tensor (its memory), a Python int (int32), float (float32) or a NumPy
// scalar (its dtype); TypeError or ValueError naming argument `position` otherwise (kernel.cpp).
bool to_kernel_arg(PyObject* value, std::size_t position, devrt_kernel_arg* out) noexcept;

// A heap type from `spec`, added to the module (which holds the reference returned).
PyTypeObject* add_type(PyObject* module, PyType_Spec* spec) noexcept;
// The end of a tp_dealloc: frees the object's memory and drops its reference to its heap type.
void free_instance(PyObject* self) noexcept;
// A new, zeroed instance of a heap type from its tp_alloc slot (nullptr with an exception set).
PyObject* alloc_instance(PyTypeObject* type) noexcept;

// New objects of the registered classes.
PyObject* new_device(devrt_device device) noexcept;
PyObject* new_tensor(devrt_tensor handle) noexcept; // steals handle (released on failure)

// Type specs and module functions from each file.
PyTypeObject* make_device_type(PyObject* module) noexcept;
PyTypeObject* make_tensor_type(PyObject* module) noexcept;
bool add_dlpack(PyObject* module, PyTypeObject* tensor_type) noexcept;
extern PyMethodDef kDeviceFunctions[];
extern PyMethodDef kTensorFunctions[];
extern PyMethodDef kDlpackFunctions[];
extern PyMethodDef kMemoryFunctions[];
extern PyMethodDef kRuntimeFunctions[];
extern PyMethodDef kKernelFunctions[];
extern PyMethodDef kTimingFunctions[];
extern PyMethodDef kGraphFunctions[];
extern PyMethodDef kTvmFunctions[];
extern PyMethodDef kTvmVmFunctions[];
extern PyMethodDef kToolchainFunctions[];
// HAS_TOOLCHAIN: whether the tc_* functions are there (toolchain.cpp).
bool add_toolchain_constants(PyObject* module) noexcept;
// ModuleHandle and FunctionHandle (kernel.cpp).
bool add_kernel_types(PyObject* module) noexcept;
// PLUGIN_LOADED, PLUGIN_ALREADY_LOADED, PLUGIN_BUILT_IN (runtime.cpp).
bool add_runtime_constants(PyObject* module) noexcept;

// Tensor methods defined in dlpack.cpp.
PyObject* tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) noexcept;
PyObject* tensor_dlpack_device(PyObject* self, PyObject* unused) noexcept;

} // namespace devrt::python

#endif // DEVRT_PYTHON_EXT_HPP
