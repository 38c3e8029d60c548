// SPDX-License-Identifier: Apache-2.0
// DLPack both ways: Tensor.__dlpack__ (the Python array API, versioned and unversioned capsules),
// from_dlpack (producers' __dlpack__, capsules, and DLPack 1.2's C exchange table), and devrt's
// own exchange table on the Tensor type (__dlpack_c_exchange_api__).
#include <cstdlib>
#include <cstring>

#include "ext.hpp"

namespace devrt::python {
namespace {

using Versioned = dlpack::ManagedTensorVersioned;

constexpr std::int32_t kCuda = 2;
constexpr std::int32_t kRocm = 10;
bool stream_aware(std::int32_t kind) noexcept { return kind == kCuda || kind == kRocm; }

// Capsule destructors: a capsule that still has its original name was never consumed, so its
// tensor is still the capsule's to delete. They run with an exception possibly set: keep it.
void destroy_unversioned(PyObject* capsule) noexcept {
  if (!PyCapsule_IsValid(capsule, dlpack::kCapsuleName)) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kCapsuleName));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

void destroy_versioned(PyObject* capsule) noexcept {
  if (!PyCapsule_IsValid(capsule, dlpack::kVersionedCapsuleName)) return;
  auto* managed = static_cast<Versioned*>(PyCapsule_GetPointer(capsule, dlpack::kVersionedCapsuleName));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

// Makes the consumer's stream wait for the work queued on devrt's current stream of the device.
bool order_for_consumer(devrt_device device, PyObject* stream) noexcept {
  if (!stream_aware(device.kind)) {
    if (stream != Py_None && !(PyLong_Check(stream) && PyLong_AsLongLong(stream) == -1)) {
      PyErr_Format(PyExc_BufferError,
                   "__dlpack__: stream=%R given for a tensor on a device without streams in DLPack's "
                   "sense (must be None)",
                   stream);
      return false;
    }
    return true;
  }
  void* handle = nullptr;
  if (stream != Py_None) {
    long long value = PyLong_AsLongLong(stream);
    if (value == -1 && PyErr_Occurred()) return false;
    if (value == -1) return true; // the consumer asks for no synchronization
    // 1 is CUDA's legacy default stream, 0 ROCm's default: devrt's default stream ({}) either way.
    if (value != 0 && value != 1) handle = reinterpret_cast<void*>(static_cast<std::intptr_t>(value));
  }
  devrt_event event = nullptr;
  devrt_status status = devrt_event_create(device, &event);
  if (status == DEVRT_STATUS_OK) status = devrt_event_record(event, nullptr);
  devrt_stream_ref consumer{device, handle};
  if (status == DEVRT_STATUS_OK) status = devrt_event_wait(event, &consumer);
  devrt_event_release(event);
  return status == DEVRT_STATUS_OK || raise_status(status) != nullptr;
}

// The keyword arguments of __dlpack__, all keyword-only in the array API.
struct DlpackArgs {
  PyObject* stream = Py_None;
  PyObject* max_version = Py_None;
  PyObject* dl_device = Py_None;
  PyObject* copy = Py_None;
};

bool parse_dlpack_args(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, DlpackArgs* out) noexcept {
  if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__ takes its arguments by keyword (stream first may be positional)");
    return false;
  }
  if (nargs == 1) out->stream = args[0];
  Py_ssize_t count = kwnames == nullptr ? 0 : PyTuple_Size(kwnames);
  for (Py_ssize_t i = 0; i < count; ++i) {
    const char* name = PyUnicode_AsUTF8AndSize(PyTuple_GetItem(kwnames, i), nullptr);
    if (name == nullptr) return false;
    PyObject* value = args[nargs + i];
    if (std::strcmp(name, "stream") == 0) {
      out->stream = value;
    } else if (std::strcmp(name, "max_version") == 0) {
      out->max_version = value;
    } else if (std::strcmp(name, "dl_device") == 0) {
      out->dl_device = value;
    } else if (std::strcmp(name, "copy") == 0) {
      out->copy = value;
    } else {
      PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument '%s'", name);
      return false;
    }
  }
  return true;
}

// max_version >= (1, 0): the consumer reads versioned capsules.
bool wants_versioned(PyObject* max_version, bool* versioned) noexcept {
  *versioned = false;
  if (max_version == Py_None) return true;
  if (!PyTuple_Check(max_version) || PyTuple_Size(max_version) != 2) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__: max_version is None or a (major, minor) tuple");
    return false;
  }
  std::int64_t major = 0;
  if (!to_int64(PyTuple_GetItem(max_version, 0), "__dlpack__: max_version's major", INT64_MIN, INT64_MAX, &major)) {
    return false;
  }
  *versioned = major >= 1;
  return true;
}

} // namespace

PyObject* tensor_dlpack_device(PyObject* self, PyObject*) noexcept {
  devrt_device device = devrt_tensor_device(reinterpret_cast<TensorObject*>(self)->handle);
  return Py_BuildValue("(ii)", device.kind, device.id);
}

PyObject* tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  DlpackArgs a;
  bool versioned = false;
  if (!parse_dlpack_args(args, nargs, kwnames, &a) || !wants_versioned(a.max_version, &versioned)) return nullptr;
  int copy = a.copy == Py_None ? -1 : PyObject_IsTrue(a.copy);
  if (copy == -1 && PyErr_Occurred()) return nullptr;
  devrt_tensor source = reinterpret_cast<TensorObject*>(self)->handle;
  const devrt_device own = devrt_tensor_device(source);
  devrt_tensor copied = nullptr; // owned: released at the end
  devrt_device target = own;
  if (a.dl_device != Py_None) {
    std::int64_t kind = 0;
    std::int64_t id = 0;
    if (!PyTuple_Check(a.dl_device) || PyTuple_Size(a.dl_device) != 2 ||
        !to_int64(PyTuple_GetItem(a.dl_device, 0), "__dlpack__: dl_device's type", 1, INT32_MAX, &kind) ||
        !to_int64(PyTuple_GetItem(a.dl_device, 1), "__dlpack__: dl_device's index", 0, INT32_MAX, &id)) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "__dlpack__: dl_device is a (type, index) tuple");
      return nullptr;
    }
    target = devrt_device{static_cast<std::int32_t>(kind), static_cast<std::int32_t>(id)};
  }
  const bool elsewhere = target.kind != own.kind || target.id != own.id;
  if (elsewhere && copy == 0) {
    PyErr_Format(PyExc_BufferError,
                 "__dlpack__: the tensor is on device (%d, %d); dl_device (%d, %d) needs a copy and "
                 "copy=False",
                 own.kind, own.id, target.kind, target.id);
    return nullptr;
  }
  if (elsewhere || copy == 1) {
    devrt_status status = devrt_tensor_to(source, target, nullptr, &copied);
    if (status != DEVRT_STATUS_OK) return raise_status(status);
    source = copied;
  }
  PyObject* capsule = nullptr;
  if (order_for_consumer(target, a.stream)) {
    if (versioned) {
      void* out = nullptr;
      devrt_status status = devrt_tensor_to_dlpack_versioned(source, &out);
      if (status != DEVRT_STATUS_OK) {
        raise_status(status);
      } else {
        if (copied != nullptr) static_cast<Versioned*>(out)->flags |= dlpack::kFlagIsCopied;
        capsule = PyCapsule_New(out, dlpack::kVersionedCapsuleName, destroy_versioned);
        if (capsule == nullptr) static_cast<Versioned*>(out)->deleter(static_cast<Versioned*>(out));
      }
    } else if (devrt_tensor_read_only(source) != 0) {
      PyErr_SetString(PyExc_BufferError, "__dlpack__: a read-only tensor can only be exported as a versioned capsule "
                                         "(the consumer must pass max_version >= (1, 0))");
    } else {
      DLManagedTensor* out = nullptr;
      devrt_status status = devrt_tensor_to_dlpack(source, &out);
      if (status != DEVRT_STATUS_OK) {
        raise_status(status);
      } else {
        capsule = PyCapsule_New(out, dlpack::kCapsuleName, destroy_unversioned);
        if (capsule == nullptr) out->deleter(out);
      }
    }
  }
  if (copied != nullptr) devrt_tensor_release(copied);
  return capsule;
}

namespace {

// Takes an unused capsule's tensor: renames the capsule "used_..." (ownership moves to devrt before
// the import, which calls the producer's deleter itself when it refuses the tensor).
PyObject* import_capsule(PyObject* capsule) noexcept {
  const bool versioned = PyCapsule_IsValid(capsule, dlpack::kVersionedCapsuleName) != 0;
  if (!versioned && !PyCapsule_IsValid(capsule, dlpack::kCapsuleName)) {
    PyErr_SetString(PyExc_TypeError, "from_dlpack: the capsule is neither an unused 'dltensor' nor an unused "
                                     "'dltensor_versioned' (was it consumed already?)");
    return nullptr;
  }
  const char* name = versioned ? dlpack::kVersionedCapsuleName : dlpack::kCapsuleName;
  void* pointer = PyCapsule_GetPointer(capsule, name);
  if (pointer == nullptr) return nullptr;
  if (PyCapsule_SetName(capsule, versioned ? dlpack::kUsedVersionedCapsuleName : dlpack::kUsedCapsuleName) != 0) {
    return nullptr;
  }
  devrt_tensor out = nullptr;
  devrt_status status = versioned ? devrt_tensor_from_dlpack_versioned(pointer, 0, &out)
                                  : devrt_tensor_from_dlpack(static_cast<DLManagedTensor*>(pointer), 0, &out);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

// The stream a producer on `device` is asked to order its work for: devrt's current stream.
PyObject* consumer_stream(devrt_device device) noexcept {
  if (!stream_aware(device.kind)) Py_RETURN_NONE;
  void* handle = devrt_current_stream(device).handle;
  if (handle != nullptr) return PyLong_FromVoidPtr(handle);
  return PyLong_FromLong(device.kind == kCuda ? 1 : 0); // CUDA's legacy default stream is 1 in the protocol
}

// Names and arguments made once: the exchange runs on every call.
struct Interned {
  PyObject* dlpack = nullptr;           // "__dlpack__"
  PyObject* dlpack_device = nullptr;    // "__dlpack_device__"
  PyObject* exchange_api = nullptr;     // "__dlpack_c_exchange_api__"
  PyObject* no_args = nullptr;          // ()
  PyObject* versioned_kwargs = nullptr; // {"max_version": (1, 0)}
  PyObject* api_of_type = nullptr;      // type -> its exchange-table capsule, or None
  PyObject* stream_producers = nullptr; // types that have exported a tensor on a device with streams
};

const Interned* interned() noexcept {
  static Interned names;
  if (names.api_of_type == nullptr) {
    names.dlpack = PyUnicode_InternFromString("__dlpack__");
    names.dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    names.exchange_api = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
    names.no_args = PyTuple_New(0);
    names.versioned_kwargs = Py_BuildValue("{s(ii)}", "max_version", 1, 0);
    names.stream_producers = PySet_New(nullptr);
    PyObject* cache = PyDict_New();
    if (names.dlpack == nullptr || names.dlpack_device == nullptr || names.exchange_api == nullptr ||
        names.no_args == nullptr || names.versioned_kwargs == nullptr || names.stream_producers == nullptr ||
        cache == nullptr) {
      return nullptr;
    }
    names.api_of_type = cache;
  }
  return &names;
}

// __dlpack__ with max_version=(1, 0) (and `stream` when not null); a producer older than DLPack
// 1.0's protocol (NumPy < 2.1, PyTorch < 2.3) refuses it with TypeError: its type is remembered
// and asked the old way from then on.
PyObject* call_dlpack(PyObject* source, PyObject* stream, const Interned& names) noexcept {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(source));
  const int legacy = PySet_Contains(state().legacy_producers, type);
  if (legacy < 0) return nullptr;
  if (legacy == 1 && stream == nullptr) return PyObject_CallMethodObjArgs(source, names.dlpack, nullptr);
  Ref method(PyObject_GetAttr(source, names.dlpack));
  if (!method) return nullptr;
  Ref kwargs(PyDict_Copy(names.versioned_kwargs));
  if (!kwargs || (stream != nullptr && PyDict_SetItemString(kwargs.get(), "stream", stream) != 0)) return nullptr;
  if (legacy == 0) {
    PyObject* capsule = PyObject_Call(method.get(), names.no_args, kwargs.get());
    if (capsule != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) return capsule;
    PyErr_Clear();
    if (PySet_Add(state().legacy_producers, type) != 0) return nullptr;
  }
  if (PyDict_DelItemString(kwargs.get(), "max_version") != 0) return nullptr;
  return PyObject_Call(method.get(), names.no_args, kwargs.get());
}

// The device of an unused capsule's tensor, read without taking it.
bool capsule_device(PyObject* capsule, devrt_device* device) noexcept {
  const DLTensor* tensor = nullptr;
  if (PyCapsule_IsValid(capsule, dlpack::kVersionedCapsuleName)) {
    tensor = &static_cast<Versioned*>(PyCapsule_GetPointer(capsule, dlpack::kVersionedCapsuleName))->dl_tensor;
  } else if (PyCapsule_IsValid(capsule, dlpack::kCapsuleName)) {
    tensor = &static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kCapsuleName))->dl_tensor;
  }
  if (tensor == nullptr) return false;
  *device = devrt_device{tensor->device.device_type, tensor->device.device_id};
  return true;
}

// A producer's capsule. DLPack asks for the consumer's stream only on devices with streams (CUDA,
// ROCm), where __dlpack_device__() says which stream to name. Producers that have only ever
// exported host tensors are asked directly (PyTorch 1.13's __dlpack_device__ alone costs
// 1.5 us); should one hand over a tensor on a device with streams, that capsule is dropped unused
// and its type asked the full way from then on.
PyObject* capsule_from(PyObject* source, const Interned& names) noexcept {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(source));
  const int streams_seen = PySet_Contains(names.stream_producers, type);
  if (streams_seen < 0) return nullptr;
  if (streams_seen == 0) {
    Ref capsule(call_dlpack(source, nullptr, names));
    devrt_device device{0, 0};
    if (!capsule || !capsule_device(capsule.get(), &device) || !stream_aware(device.kind)) return capsule.release();
    if (PySet_Add(names.stream_producers, type) != 0) return nullptr;
  } // the dropped capsule's destructor gives its tensor back
  Ref dlpack_device(PyObject_CallMethodObjArgs(source, names.dlpack_device, nullptr));
  if (!dlpack_device) return nullptr;
  std::int64_t kind = 0;
  std::int64_t id = 0;
  if (!PyTuple_Check(dlpack_device.get()) || PyTuple_Size(dlpack_device.get()) != 2 ||
      !to_int64(PyTuple_GetItem(dlpack_device.get(), 0), "__dlpack_device__()'s type", 1, INT32_MAX, &kind) ||
      !to_int64(PyTuple_GetItem(dlpack_device.get(), 1), "__dlpack_device__()'s index", 0, INT32_MAX, &id)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "from_dlpack: __dlpack_device__() is not (type, index)");
    return nullptr;
  }
  const devrt_device device{static_cast<std::int32_t>(kind), static_cast<std::int32_t>(id)};
  if (!stream_aware(device.kind)) return call_dlpack(source, nullptr, names);
  Ref stream(consumer_stream(device));
  return stream ? call_dlpack(source, stream.get(), names) : nullptr;
}

// A producer type's DLPack 1.2 exchange table, or null (with no error) when it offers none;
// looked up once per type.
const dlpack::ExchangeAPI* exchange_api_of(PyObject* source, const Interned& names) noexcept {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(source));
  PyObject* capsule = PyDict_GetItemWithError(names.api_of_type, type); // borrowed
  if (capsule == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Ref found(PyObject_GetAttr(type, names.exchange_api));
    if (!found || !PyCapsule_IsValid(found.get(), dlpack::kExchangeApiCapsuleName)) {
      PyErr_Clear();
      found.reset(Py_NewRef(Py_None));
    }
    if (PyDict_SetItem(names.api_of_type, type, found.get()) != 0) return nullptr;
    capsule = found.get(); // the dict keeps it alive
  }
  if (capsule == Py_None) return nullptr;
  auto* api = static_cast<const dlpack::ExchangeAPI*>(PyCapsule_GetPointer(capsule, dlpack::kExchangeApiCapsuleName));
  if (api == nullptr || api->header.version.major != dlpack::kMajorVersion ||
      api->managed_tensor_from_py_object_no_sync == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  return api;
}

// ---- NumPy arrays through the buffer protocol --------------------------------------------------
// The buffer protocol describes the same host memory NumPy's __dlpack__ would, without the two
// Python calls (__dlpack_device__, __dlpack__) and the capsule: devrt.from_dlpack(ndarray) costs
// about what numpy.from_dlpack(ndarray) does. Only exact numpy.ndarray objects come this way.

struct BufferTensor {
  Versioned managed;
  Py_buffer view;
  std::int64_t dims[1]; // shape then strides, 2 * ndim of them (allocated past the struct)
};

void release_buffer_tensor(Versioned* self) noexcept {
  auto* owner = reinterpret_cast<BufferTensor*>(self);
  PyGILState_STATE gil = PyGILState_Ensure();
  PyBuffer_Release(&owner->view);
  PyGILState_Release(gil);
  std::free(owner);
}

// The DLPack dtype of a buffer-protocol format ("<f", "d", "?", "Zf", ...), native byte order only.
bool buffer_dtype(const char* format, Py_ssize_t itemsize, DLDataType* out) noexcept {
  if (format == nullptr) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  if (*format == '>' || *format == '!') return false; // byte-swapped: NumPy's DLPack refuses it too
  const bool complex = *format == 'Z';
  if (complex) ++format;
  if (format[0] == '\0' || format[1] != '\0') return false;
  std::uint8_t code = 0;
  switch (*format) {
  case '?': code = 6; break;
  case 'b':
  case 'h':
  case 'i':
  case 'l':
  case 'q': code = 0; break;
  case 'B':
  case 'H':
  case 'I':
  case 'L':
  case 'Q': code = 1; break;
  case 'e':
  case 'f':
  case 'd': code = complex ? 5 : 2; break;
  default: return false;
  }
  if (complex && code != 5) return false;
  if (itemsize <= 0 || itemsize > 32) return false;
  *out = DLDataType{code, static_cast<std::uint8_t>(itemsize * 8), 1};
  return true;
}

PyTypeObject* numpy_array_type() noexcept {
  static PyTypeObject* type = nullptr;
  if (type == nullptr) {
    PyObject* modules = PyImport_GetModuleDict();             // borrowed
    PyObject* numpy = PyDict_GetItemString(modules, "numpy"); // borrowed; NumPy not imported: none to see
    if (numpy == nullptr) return nullptr;
    PyObject* ndarray = PyObject_GetAttrString(numpy, "ndarray");
    if (ndarray == nullptr || !PyType_Check(ndarray)) {
      Py_XDECREF(ndarray);
      PyErr_Clear();
      return nullptr;
    }
    type = reinterpret_cast<PyTypeObject*>(ndarray); // kept for the process
  }
  return type;
}

// A devrt tensor over an ndarray's memory, or null with no error set when the array is not one
// this path takes (the caller then asks __dlpack__).
PyObject* import_numpy_array(PyObject* source) noexcept {
  PyTypeObject* ndarray = numpy_array_type();
  if (ndarray == nullptr || Py_TYPE(source) != ndarray) return nullptr;
  Py_buffer view;
  if (PyObject_GetBuffer(source, &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return nullptr;
  }
  DLDataType dtype;
  const int ndim = view.ndim;
  auto* owner = ndim <= 64 && buffer_dtype(view.format, view.itemsize, &dtype)
                    ? static_cast<BufferTensor*>(std::malloc(sizeof(BufferTensor) + 2 * ndim * sizeof(std::int64_t)))
                    : nullptr;
  bool strides_fit = true;
  for (int i = 0; owner != nullptr && i < ndim; ++i) {
    owner->dims[i] = view.shape[i];
    strides_fit = strides_fit && view.strides[i] % view.itemsize == 0;
    owner->dims[ndim + i] = view.strides[i] / view.itemsize;
  }
  if (owner == nullptr || !strides_fit) {
    std::free(owner);
    PyBuffer_Release(&view);
    return nullptr;
  }
  owner->view = view;
  Versioned& managed = owner->managed;
  managed.version = dlpack::PackVersion{dlpack::kMajorVersion, dlpack::kMinorVersion};
  managed.manager_ctx = nullptr;
  managed.deleter = release_buffer_tensor;
  managed.flags = view.readonly ? dlpack::kFlagReadOnly : 0;
  managed.dl_tensor = DLTensor{view.buf, DLDevice{kDLCPU, 0}, ndim, dtype, owner->dims, owner->dims + ndim, 0};
  devrt_tensor out = nullptr;
  devrt_status status = devrt_tensor_from_dlpack_versioned(&managed, 0, &out); // calls the deleter on failure
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

// Through the producer's C table: no Python call. On a device with streams, devrt's current
// stream is made to wait for the producer's current one (the exchange itself does not sync).
PyObject* import_through_api(PyObject* source, const dlpack::ExchangeAPI* api) noexcept {
  Versioned* managed = nullptr;
  if (api->managed_tensor_from_py_object_no_sync(source, &managed) != 0 || managed == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "from_dlpack: the producer's exchange table failed");
    return nullptr;
  }
  const devrt_device device{managed->dl_tensor.device.device_type, managed->dl_tensor.device.device_id};
  if (stream_aware(device.kind) && api->current_work_stream != nullptr) {
    void* producer_stream = nullptr;
    devrt_event event = nullptr;
    devrt_status status = DEVRT_STATUS_OK;
    if (api->current_work_stream(static_cast<DLDeviceType>(device.kind), device.id, &producer_stream) != 0) {
      managed->deleter(managed);
      return nullptr;
    }
    devrt_stream_ref producer{device, producer_stream};
    status = devrt_event_create(device, &event);
    if (status == DEVRT_STATUS_OK) status = devrt_event_record(event, &producer);
    if (status == DEVRT_STATUS_OK) status = devrt_event_wait(event, nullptr);
    devrt_event_release(event);
    if (status != DEVRT_STATUS_OK) {
      managed->deleter(managed);
      return raise_status(status);
    }
  }
  devrt_tensor out = nullptr;
  devrt_status status = devrt_tensor_from_dlpack_versioned(managed, 0, &out);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return new_tensor(out);
}

PyObject* from_dlpack(PyObject*, PyObject* source) noexcept {
  if (PyObject_TypeCheck(source, state().tensor_base)) {
    devrt_tensor out = nullptr;
    devrt_status status = devrt_tensor_share(reinterpret_cast<TensorObject*>(source)->handle, &out);
    if (status != DEVRT_STATUS_OK) return raise_status(status);
    return new_tensor(out);
  }
  if (PyCapsule_CheckExact(source)) return import_capsule(source);
  if (PyObject* array = import_numpy_array(source)) return array;
  if (PyErr_Occurred()) return nullptr;
  const Interned* names = interned();
  if (names == nullptr) return nullptr;
  if (const dlpack::ExchangeAPI* api = exchange_api_of(source, *names)) return import_through_api(source, api);
  if (PyErr_Occurred()) return nullptr;
  Ref capsule(capsule_from(source, *names));
  if (!capsule) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
      PyErr_Clear();
      Ref type_name(PyType_GetName(Py_TYPE(source)));
      PyErr_Format(PyExc_TypeError,
                   "from_dlpack: %U is neither a DLPack producer (__dlpack__, __dlpack_device__) "
                   "nor an unused 'dltensor'/'dltensor_versioned' capsule",
                   type_name.get());
    }
    return nullptr;
  }
  if (!PyCapsule_CheckExact(capsule.get())) {
    PyErr_SetString(PyExc_TypeError, "from_dlpack: the producer's __dlpack__ returned something other than a capsule");
    return nullptr;
  }
  return import_capsule(capsule.get());
}

// ---- devrt's own exchange table --------------------------------------------------------------

bool is_our_tensor(void* py_object) noexcept {
  return py_object != nullptr && PyObject_TypeCheck(static_cast<PyObject*>(py_object), state().tensor_base) &&
         reinterpret_cast<TensorObject*>(py_object)->handle != nullptr;
}

int api_from_py_object(void* py_object, Versioned** out) noexcept {
  if (!is_our_tensor(py_object)) {
    PyErr_SetString(PyExc_TypeError, "devrt's DLPack exchange table takes devrt.Tensor objects");
    return -1;
  }
  void* managed = nullptr;
  devrt_status status = devrt_tensor_to_dlpack_versioned(reinterpret_cast<TensorObject*>(py_object)->handle, &managed);
  if (status != DEVRT_STATUS_OK) return raise_status_int(status);
  *out = static_cast<Versioned*>(managed);
  return 0;
}

int api_to_py_object(Versioned* tensor, void** out) noexcept {
  devrt_tensor handle = nullptr;
  devrt_status status = devrt_tensor_from_dlpack_versioned(tensor, 0, &handle);
  if (status != DEVRT_STATUS_OK) return raise_status_int(status);
  PyObject* object = new_tensor(handle);
  if (object == nullptr) return -1;
  *out = object;
  return 0;
}

int api_dltensor(void* py_object, DLTensor* out) noexcept {
  if (!is_our_tensor(py_object)) {
    PyErr_SetString(PyExc_TypeError, "devrt's DLPack exchange table takes devrt.Tensor objects");
    return -1;
  }
  devrt_tensor tensor = reinterpret_cast<TensorObject*>(py_object)->handle;
  const devrt_device device = devrt_tensor_device(tensor);
  out->data = devrt_tensor_data(tensor);
  out->device = DLDevice{static_cast<DLDeviceType>(device.kind), device.id};
  out->ndim = devrt_tensor_ndim(tensor);
  out->dtype = devrt_tensor_dtype(tensor);
  out->shape = const_cast<std::int64_t*>(devrt_tensor_shape(tensor));
  out->strides = const_cast<std::int64_t*>(devrt_tensor_strides(tensor));
  out->byte_offset = devrt_tensor_byte_offset(tensor);
  return 0;
}

int api_allocate(DLTensor* prototype, Versioned** out, void* error_ctx,
                 void (*set_error)(void* error_ctx, const char* kind, const char* message)) noexcept {
  const devrt_device device{prototype->device.device_type, prototype->device.device_id};
  devrt_tensor tensor = nullptr;
  devrt_status status =
      devrt_tensor_empty(prototype->shape, prototype->ndim, prototype->dtype, device, nullptr, &tensor);
  void* managed = nullptr;
  if (status == DEVRT_STATUS_OK) status = devrt_tensor_to_dlpack_versioned(tensor, &managed);
  devrt_tensor_release(tensor);
  if (status != DEVRT_STATUS_OK) {
    set_error(error_ctx, status == DEVRT_STATUS_OUT_OF_MEMORY ? "MemoryError" : "ValueError", devrt_last_error());
    return -1;
  }
  *out = static_cast<Versioned*>(managed);
  return 0;
}

int api_current_stream(DLDeviceType device_type, std::int32_t device_id, void** out) noexcept {
  *out = devrt_current_stream(devrt_device{static_cast<std::int32_t>(device_type), device_id}).handle;
  return 0;
}

dlpack::ExchangeAPI make_exchange_api() noexcept {
  dlpack::ExchangeAPI api{};
  api.header.version.major = dlpack::kMajorVersion;
  api.header.version.minor = dlpack::kExchangeApiMinorVersion;
  api.header.prev_api = nullptr;
  api.managed_tensor_allocator = api_allocate;
  api.managed_tensor_from_py_object_no_sync = api_from_py_object;
  api.managed_tensor_to_py_object_no_sync = api_to_py_object;
  api.dltensor_from_py_object_no_sync = api_dltensor;
  api.current_work_stream = api_current_stream;
  return api;
}

const dlpack::ExchangeAPI kExchangeApi = make_exchange_api();

} // namespace

bool add_dlpack(PyObject*, PyTypeObject* tensor_type) noexcept {
  Ref capsule(PyCapsule_New(const_cast<dlpack::ExchangeAPI*>(&kExchangeApi), dlpack::kExchangeApiCapsuleName, nullptr));
  return capsule && PyObject_SetAttrString(reinterpret_cast<PyObject*>(tensor_type), "__dlpack_c_exchange_api__",
                                           capsule.get()) == 0;
}

PyMethodDef kDlpackFunctions[] = {
    {"from_dlpack", from_dlpack, METH_O,
     "from_dlpack(x): a Tensor sharing a DLPack producer's memory (a devrt.Tensor, a capsule, an object with "
     "__dlpack__ or DLPack 1.2's __dlpack_c_exchange_api__)."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace devrt::python
