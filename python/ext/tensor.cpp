// SPDX-License-Identifier: Apache-2.0
// _ext.Tensor: one devrt_tensor handle with its fields as getters, and the module functions that
// make and copy tensors (empty, copies, views, host buffers).
#include <cstring>

#include "ext.hpp"

namespace devrt::python {
namespace {

devrt_tensor handle_of(PyObject* self) noexcept { return reinterpret_cast<TensorObject*>(self)->handle; }

} // namespace

bool to_tensor(PyObject* value, devrt_tensor* out) noexcept {
  if (!PyObject_TypeCheck(value, state().tensor_base) || handle_of(value) == nullptr) {
    PyErr_SetString(PyExc_TypeError, "expected a devrt.Tensor");
    return false;
  }
  *out = handle_of(value);
  return true;
}

namespace {

PyObject* tensor_new(PyTypeObject*, PyObject*, PyObject*) noexcept {
  PyErr_SetString(PyExc_TypeError, "devrt.Tensor is made by devrt.empty, devrt.tensor or devrt.from_dlpack");
  return nullptr;
}

void tensor_dealloc(PyObject* self) noexcept {
  auto* tensor = reinterpret_cast<TensorObject*>(self);
  if (tensor->handle != nullptr) devrt_tensor_release(tensor->handle);
  Py_XDECREF(tensor->shape);
  free_instance(self);
}

PyObject* int64_tuple(const std::int64_t* values, std::int32_t count) noexcept {
  PyObject* tuple = PyTuple_New(count);
  if (tuple == nullptr) return nullptr;
  for (std::int32_t i = 0; i < count; ++i) {
    PyObject* item = PyLong_FromLongLong(values[i]);
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SetItem(tuple, i, item); // steals
  }
  return tuple;
}

PyObject* get_shape(PyObject* self, void*) noexcept {
  auto* tensor = reinterpret_cast<TensorObject*>(self);
  if (tensor->shape == nullptr) {
    tensor->shape = int64_tuple(devrt_tensor_shape(tensor->handle), devrt_tensor_ndim(tensor->handle));
    if (tensor->shape == nullptr) return nullptr;
  }
  Py_INCREF(tensor->shape);
  return tensor->shape;
}
PyObject* get_strides(PyObject* self, void*) noexcept {
  return int64_tuple(devrt_tensor_strides(handle_of(self)), devrt_tensor_ndim(handle_of(self)));
}
PyObject* get_ndim(PyObject* self, void*) noexcept { return PyLong_FromLong(devrt_tensor_ndim(handle_of(self))); }
PyObject* get_scope(PyObject* self, void*) noexcept {
  return PyUnicode_FromString(devrt_tensor_scope(handle_of(self)));
}
PyObject* get_texture_pitch(PyObject* self, void*) noexcept {
  std::size_t row = 0;
  std::size_t layer = 0;
  devrt_status status = devrt_tensor_texture_pitch(handle_of(self), &row, &layer);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return Py_BuildValue("(nn)", static_cast<Py_ssize_t>(row), static_cast<Py_ssize_t>(layer));
}

PyObject* get_device(PyObject* self, void*) noexcept { return new_device(devrt_tensor_device(handle_of(self))); }
PyObject* get_nbytes(PyObject* self, void*) noexcept { return PyLong_FromSize_t(devrt_tensor_nbytes(handle_of(self))); }
PyObject* get_byte_offset(PyObject* self, void*) noexcept {
  return PyLong_FromUnsignedLongLong(devrt_tensor_byte_offset(handle_of(self)));
}
PyObject* get_read_only(PyObject* self, void*) noexcept {
  return PyBool_FromLong(devrt_tensor_read_only(handle_of(self)));
}
PyObject* get_dtype_code(PyObject* self, void*) noexcept {
  DLDataType dtype = devrt_tensor_dtype(handle_of(self));
  return Py_BuildValue("(iii)", dtype.code, dtype.bits, dtype.lanes);
}

PyObject* numel(PyObject* self, PyObject*) noexcept {
  const std::int64_t* shape = devrt_tensor_shape(handle_of(self));
  std::int64_t count = 1;
  for (std::int32_t i = 0; i < devrt_tensor_ndim(handle_of(self)); ++i) count *= shape[i];
  return PyLong_FromLongLong(count);
}
PyObject* data_ptr(PyObject* self, PyObject*) noexcept {
  return PyLong_FromVoidPtr(devrt_tensor_data(handle_of(self)));
}
PyObject* is_contiguous(PyObject* self, PyObject*) noexcept {
  return PyBool_FromLong(devrt_tensor_is_contiguous(handle_of(self)));
}

PyMethodDef kTensorMethods[] = {
    {"numel", numel, METH_NOARGS, "The number of elements (the product of the shape)."},
    {"data_ptr", data_ptr, METH_NOARGS,
     "DLTensor::data as an int (a handle on backends whose memory is not addressable, such as OpenCL's "
     "cl_mem); elements start byte_offset bytes after it."},
    {"is_contiguous", is_contiguous, METH_NOARGS, "True when the elements are compact in row-major order."},
    {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensor_dlpack)),
     METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule (the Python "
     "array API protocol)."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(device type, index), as DLPack's protocol asks."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kGetters[] = {
    {"shape", get_shape, nullptr, "The extents, a tuple.", nullptr},
    {"strides", get_strides, nullptr, "The strides in elements (DLPack's convention), always explicit.", nullptr},
    {"ndim", get_ndim, nullptr, "The number of dimensions.", nullptr},
    {"scope", get_scope, nullptr, "The memory scope, TVM's name (\"global\", \"global.texture\", ...).", nullptr},
    {"texture_pitch", get_texture_pitch, nullptr,
     "(row, layer) bytes of a texture over a tensor's memory (as_texture); (0, 0) for any other.", nullptr},
    {"device", get_device, nullptr, "The devrt.Device holding the elements.", nullptr},
    {"nbytes", get_nbytes, nullptr, "The elements' size in bytes.", nullptr},
    {"byte_offset", get_byte_offset, nullptr, "Where the first element starts after data_ptr().", nullptr},
    {"read_only", get_read_only, nullptr, "True when the producer marked the memory read-only.", nullptr},
    {"_dtype_code", get_dtype_code, nullptr, "(DLPack type code, bits, lanes).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// ---- module functions ---------------------------------------------------------------------------

PyObject* empty(PyObject*, PyObject* args) noexcept {
  PyObject* shape = nullptr;
  PyObject* dtype_name = nullptr;
  PyObject* device_object = nullptr;
  const char* scope = nullptr;
  const char* layout = nullptr;
  if (!PyArg_ParseTuple(args, "OOO|zz:empty", &shape, &dtype_name, &device_object, &scope, &layout)) return nullptr;
  std::int64_t dims[64];
  std::int32_t ndim = 0;
  DLDataType dtype;
  devrt_device device;
  if (!to_shape(shape, dims, &ndim) || !to_dtype(dtype_name, &dtype) || !to_device(device_object, &device)) {
    return nullptr;
  }
  devrt_tensor out = nullptr;
  devrt_status status = layout == nullptr ? devrt_tensor_empty(dims, ndim, dtype, device, scope, &out)
                                          : devrt_tensor_empty_texture(dims, ndim, dtype, device, scope, layout, &out);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

PyObject* copy(PyObject*, PyObject* args) noexcept {
  PyObject* dst_object = nullptr;
  PyObject* src_object = nullptr;
  PyObject* stream_object = Py_None;
  if (!PyArg_ParseTuple(args, "OO|O:copy", &dst_object, &src_object, &stream_object)) return nullptr;
  devrt_tensor dst = nullptr;
  devrt_tensor src = nullptr;
  devrt_stream_ref stream;
  bool use_stream = false;
  if (!to_tensor(dst_object, &dst) || !to_tensor(src_object, &src) || !to_stream(stream_object, &stream, &use_stream)) {
    return nullptr;
  }
  devrt_status status = devrt_tensor_copy(dst, src, use_stream ? &stream : nullptr);
  return none_or_raise(status);
}

PyObject* to(PyObject*, PyObject* args) noexcept {
  PyObject* tensor_object = nullptr;
  PyObject* device_object = nullptr;
  PyObject* stream_object = Py_None;
  if (!PyArg_ParseTuple(args, "OO|O:to", &tensor_object, &device_object, &stream_object)) return nullptr;
  devrt_tensor tensor = nullptr;
  devrt_device device;
  devrt_stream_ref stream;
  bool use_stream = false;
  if (!to_tensor(tensor_object, &tensor) || !to_device(device_object, &device) ||
      !to_stream(stream_object, &stream, &use_stream)) {
    return nullptr;
  }
  devrt_tensor out = nullptr;
  devrt_status status = devrt_tensor_to(tensor, device, use_stream ? &stream : nullptr, &out);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

// Copies between a contiguous tensor and a C-contiguous buffer of exactly its size.
PyObject* host_copy(PyObject* args, bool from_host) noexcept {
  PyObject* tensor_object = nullptr;
  PyObject* buffer_object = nullptr;
  if (!PyArg_ParseTuple(args, "OO", &tensor_object, &buffer_object)) return nullptr;
  devrt_tensor tensor = nullptr;
  if (!to_tensor(tensor_object, &tensor)) return nullptr;
  Py_buffer view;
  if (PyObject_GetBuffer(buffer_object, &view,
                         from_host ? PyBUF_C_CONTIGUOUS : (PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE)) != 0) {
    return nullptr;
  }
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS;
  status = from_host ? devrt_tensor_copy_from_host(tensor, view.buf, static_cast<std::size_t>(view.len))
                     : devrt_tensor_copy_to_host(tensor, view.buf, static_cast<std::size_t>(view.len));
  Py_END_ALLOW_THREADS;
  PyBuffer_Release(&view);
  return none_or_raise(status);
}
PyObject* copy_from_host(PyObject*, PyObject* args) noexcept { return host_copy(args, true); }
PyObject* copy_to_host(PyObject*, PyObject* args) noexcept { return host_copy(args, false); }

PyObject* create_view(PyObject*, PyObject* args) noexcept {
  PyObject* tensor_object = nullptr;
  PyObject* shape = nullptr;
  PyObject* dtype_name = Py_None;
  PyObject* offset_object = nullptr;
  if (!PyArg_ParseTuple(args, "OOOO:create_view", &tensor_object, &shape, &dtype_name, &offset_object)) return nullptr;
  devrt_tensor tensor = nullptr;
  std::int64_t dims[64];
  std::int32_t ndim = 0;
  std::int64_t offset = 0;
  if (!to_tensor(tensor_object, &tensor) || !to_shape(shape, dims, &ndim) ||
      !to_int64(offset_object, "relative_byte_offset", 0, INT64_MAX, &offset)) {
    return nullptr;
  }
  DLDataType dtype = devrt_tensor_dtype(tensor);
  if (dtype_name != Py_None && !to_dtype(dtype_name, &dtype)) return nullptr;
  devrt_tensor out = nullptr;
  devrt_status status = devrt_tensor_create_view(tensor, dims, ndim, dtype, static_cast<std::uint64_t>(offset), &out);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

PyObject* as_texture(PyObject*, PyObject* args) noexcept {
  PyObject* tensor_object = nullptr;
  PyObject* shape = nullptr;
  PyObject* dtype_name = nullptr;
  const char* scope = nullptr;
  const char* layout = nullptr;
  if (!PyArg_ParseTuple(args, "OOOzz:as_texture", &tensor_object, &shape, &dtype_name, &scope, &layout)) return nullptr;
  devrt_tensor tensor = nullptr;
  std::int64_t dims[64];
  std::int32_t ndim = 0;
  DLDataType dtype;
  if (!to_tensor(tensor_object, &tensor) || !to_shape(shape, dims, &ndim) || !to_dtype(dtype_name, &dtype)) {
    return nullptr;
  }
  devrt_tensor out = nullptr;
  devrt_status status = devrt_tensor_as_texture(tensor, dims, ndim, dtype, scope, layout, &out);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

PyObject* share(PyObject*, PyObject* tensor_object) noexcept {
  devrt_tensor tensor = nullptr;
  if (!to_tensor(tensor_object, &tensor)) return nullptr;
  devrt_tensor out = nullptr;
  devrt_status status = devrt_tensor_share(tensor, &out);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

PyObject* parse_dtype(PyObject*, PyObject* name) noexcept {
  DLDataType dtype;
  if (!to_dtype(name, &dtype)) return nullptr;
  return Py_BuildValue("(iii)", dtype.code, dtype.bits, dtype.lanes);
}

PyObject* dtype_to_string(PyObject*, PyObject* args) noexcept {
  int code = 0;
  int bits = 0;
  int lanes = 0;
  if (!PyArg_ParseTuple(args, "iii:dtype_to_string", &code, &bits, &lanes)) return nullptr;
  if (code < 0 || code > 255 || bits < 0 || bits > 255 || lanes < 0 || lanes > 65535) {
    PyErr_SetString(PyExc_OverflowError, "dtype_to_string: a DLPack dtype is (uint8 code, uint8 bits, uint16 lanes)");
    return nullptr;
  }
  char text[64];
  DLDataType dtype{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), static_cast<std::uint16_t>(lanes)};
  devrt_status status = devrt_dtype_to_string(dtype, text, sizeof text);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return PyUnicode_FromString(text);
}

} // namespace

PyMethodDef kTensorFunctions[] = {
    {"empty", empty, METH_VARARGS, "empty(shape, dtype name, device, scope, texture layout): a new compact tensor."},
    {"copy", copy, METH_VARARGS, "copy(dst, src, stream=None): src's elements into dst."},
    {"to", to, METH_VARARGS, "to(tensor, device, stream=None): a compact copy on the device."},
    {"copy_from_host", copy_from_host, METH_VARARGS, "copy_from_host(tensor, buffer): a buffer of nbytes into it."},
    {"copy_to_host", copy_to_host, METH_VARARGS, "copy_to_host(tensor, writable buffer): its nbytes out."},
    {"create_view", create_view, METH_VARARGS, "create_view(tensor, shape, dtype or None, relative_byte_offset)."},
    {"share", share, METH_O, "share(tensor): another Tensor over the same storage."},
    {"as_texture", as_texture, METH_VARARGS,
     "as_texture(tensor, shape, dtype name, scope, layout): a texture over it."},
    {"parse_dtype", parse_dtype, METH_O, "parse_dtype(name) -> (code, bits, lanes); ValueError for a bad name."},
    {"dtype_to_string", dtype_to_string, METH_VARARGS, "dtype_to_string(code, bits, lanes) -> TVM's name."},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject* make_tensor_type(PyObject* module) noexcept {
  PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(tensor_new)},
      {Py_tp_dealloc, reinterpret_cast<void*>(tensor_dealloc)},
      {Py_tp_methods, kTensorMethods},
      {Py_tp_getset, kGetters},
      {Py_tp_doc, const_cast<char*>("An n-d array on a device, holding one reference to devrt's storage.")},
      {0, nullptr},
  };
  PyType_Spec spec = {"devrt._ext.Tensor", sizeof(TensorObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  return add_type(module, &spec);
}

PyObject* new_tensor(devrt_tensor handle) noexcept {
  PyTypeObject* type = state().tensor_type;
  PyObject* self = alloc_instance(type);
  if (self == nullptr) {
    devrt_tensor_release(handle);
    return nullptr;
  }
  auto* tensor = reinterpret_cast<TensorObject*>(self);
  tensor->handle = handle;
  tensor->shape = nullptr;
  return self;
}

} // namespace devrt::python
