// SPDX-License-Identifier: Apache-2.0
// _ext.Device: a (DLPack device type, index) value with TVM's and tvm-ffi's names, strict
// parsing, and every devrt attribute as a getter that calls the C API directly.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "ext.hpp"

namespace devrt::python {
namespace {

struct KindName {
  std::string name;
  std::int32_t kind;
};

// devrt's kind names (from the C API), then TVM's aliases.
const std::vector<KindName>& kind_names() {
  static const std::vector<KindName> names = [] {
    std::vector<KindName> out;
    for (std::int32_t kind = 1; kind < 64; ++kind) {
      const char* name = devrt_device_kind_name(kind);
      if (name != nullptr && name[0] != '\0') out.push_back({name, kind});
    }
    const std::pair<const char*, const char*> aliases[] = {
        {"llvm", "cpu"}, {"c", "cpu"}, {"test", "cpu"}, {"nvptx", "cuda"}, {"cl", "opencl"}};
    for (auto [alias, name] : aliases) {
      for (std::size_t i = 0, n = out.size(); i < n; ++i) {
        if (out[i].name == name) out.push_back({alias, out[i].kind});
      }
    }
    return out;
  }();
  return names;
}

const std::string& accepted_names() {
  static const std::string text = [] {
    std::string out;
    for (const KindName& entry : kind_names()) out += (out.empty() ? "" : ", ") + entry.name;
    return out;
  }();
  return text;
}

bool kind_of(const std::string& name, std::int32_t* kind) noexcept {
  for (const KindName& entry : kind_names()) {
    if (entry.name == name) {
      *kind = entry.kind;
      return true;
    }
  }
  return false;
}

// "cuda", "cuda:1", and TVM's "cuda -annotation"; index -1 when the text gives none.
bool parse_name(PyObject* text_object, devrt_device* out, std::int64_t* index) noexcept {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text_object, &size);
  if (data == nullptr) return false;
  std::string text(data, static_cast<std::size_t>(size));
  auto unknown = [&] {
    PyErr_Format(PyExc_ValueError,
                 "devrt.device: unknown device %R; the device types are %s, written <type> or <type>:<index>",
                 text_object, accepted_names().c_str());
    return false;
  };
  if (std::size_t space = text.find(' '); space != std::string::npos) {
    std::size_t option = text.find_first_not_of(' ', space);
    if (option == std::string::npos || text[option] != '-') return unknown();
    text.resize(space);
  }
  std::size_t colon = text.find(':');
  std::int32_t kind = 0;
  if (text.find('\0') != std::string::npos || !kind_of(text.substr(0, colon), &kind)) return unknown();
  out->kind = kind;
  *index = -1;
  if (colon == std::string::npos) return true;
  std::string digits = text.substr(colon + 1);
  bool canonical = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                   (digits == "0" || digits[0] != '0');
  if (!canonical) {
    PyErr_Format(PyExc_ValueError,
                 "devrt.device: malformed device index in %R: expected <type>:<index> with a decimal index such as "
                 "cuda:1",
                 text_object);
    return false;
  }
  // Digits only (validated above): the one error left is a number past 64 bits.
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *index);
  static_cast<void>(end);
  if (error != std::errc() || *index > INT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "devrt.device: the index in %R does not fit in 32 bits", text_object);
    return false;
  }
  return true;
}

PyObject* device_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) noexcept {
  static const char* keywords[] = {"device_type", "index", nullptr};
  PyObject* device_type = nullptr;
  PyObject* index_object = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:Device", const_cast<char**>(keywords), &device_type,
                                   &index_object)) {
    return nullptr;
  }
  devrt_device device{0, 0};
  std::int64_t index = -1;
  if (PyObject_TypeCheck(device_type, state().device_base)) {
    device = reinterpret_cast<DeviceObject*>(device_type)->device;
    index = device.id;
  } else if (PyUnicode_Check(device_type)) {
    if (!parse_name(device_type, &device, &index)) return nullptr;
  } else {
    std::int64_t kind = 0;
    if (!to_int64(device_type, "devrt.device: the device type", 1, INT32_MAX, &kind)) return nullptr;
    device.kind = static_cast<std::int32_t>(kind);
  }
  if (index < 0) {
    index = 0;
    if (index_object != Py_None && !to_int64(index_object, "devrt.device: the index", 0, INT32_MAX, &index)) {
      return nullptr;
    }
  }
  device.id = static_cast<std::int32_t>(index);
  PyObject* self = alloc_instance(type);
  if (self == nullptr) return nullptr;
  reinterpret_cast<DeviceObject*>(self)->device = device;
  return self;
}

void device_dealloc(PyObject* self) noexcept { free_instance(self); }

devrt_device of(PyObject* self) noexcept { return reinterpret_cast<DeviceObject*>(self)->device; }

PyObject* type_name(devrt_device device) noexcept {
  const char* name = devrt_device_kind_name(device.kind);
  if (name == nullptr || name[0] == '\0') return PyUnicode_FromFormat("kind<%d>", device.kind);
  return PyUnicode_FromString(name);
}

PyObject* get_type(PyObject* self, void*) noexcept { return type_name(of(self)); }
PyObject* get_index(PyObject* self, void*) noexcept { return PyLong_FromLong(of(self).id); }
PyObject* get_kind(PyObject* self, void*) noexcept { return PyLong_FromLong(of(self).kind); }
PyObject* get_kind_name(PyObject* self, void*) noexcept {
  const char* name = devrt_device_kind_name(of(self).kind);
  return PyUnicode_FromString(name != nullptr ? name : "");
}
PyObject* get_exist(PyObject* self, void*) noexcept { return PyBool_FromLong(devrt_device_exists(of(self))); }

// One devrt attribute; the closure holds its number and, in the bits above, its type.
PyObject* get_attribute(PyObject* self, void* closure) noexcept {
  const auto packed = reinterpret_cast<std::intptr_t>(closure);
  const auto number = static_cast<std::int32_t>(packed & 0xff);
  const auto type = static_cast<std::int32_t>(packed >> 8);
  const devrt_device device = of(self);
  constexpr devrt_status kNotReported = -1;
  if (type == 0 || type == 1) {
    std::int64_t value = 0;
    devrt_status status = devrt_device_attribute_int(device, number, &value);
    if (status == kNotReported) Py_RETURN_NONE;
    if (status != DEVRT_STATUS_OK) return raise_status(status);
    return type == 0 ? PyBool_FromLong(value != 0) : PyLong_FromLongLong(value);
  }
  if (type == 3) {
    std::int64_t xyz[3] = {0, 0, 0};
    devrt_status status = devrt_device_attribute_dim3(device, number, xyz);
    if (status == kNotReported) Py_RETURN_NONE;
    if (status != DEVRT_STATUS_OK) return raise_status(status);
    return Py_BuildValue("(LLL)", xyz[0], xyz[1], xyz[2]);
  }
  char small[256];
  std::size_t length = 0;
  devrt_status status = devrt_device_attribute_string(device, number, small, sizeof small, &length);
  if (status == kNotReported) Py_RETURN_NONE;
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  if (length < sizeof small) return PyUnicode_DecodeUTF8(small, static_cast<Py_ssize_t>(length), "replace");
  std::string large(length + 1, '\0');
  status = devrt_device_attribute_string(device, number, large.data(), large.size(), nullptr);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return PyUnicode_DecodeUTF8(large.data(), static_cast<Py_ssize_t>(length), "replace");
}

PyObject* device_str(PyObject* self) noexcept {
  Ref name(type_name(of(self)));
  return name ? PyUnicode_FromFormat("%U:%d", name.get(), of(self).id) : nullptr;
}

PyObject* device_repr(PyObject* self) noexcept {
  Ref name(type_name(of(self)));
  return name ? PyUnicode_FromFormat("device(type='%U', index=%d)", name.get(), of(self).id) : nullptr;
}

Py_hash_t device_hash(PyObject* self) noexcept {
  const devrt_device d = of(self);
  Py_hash_t hash = static_cast<Py_hash_t>(d.kind) * 1000003 ^ static_cast<Py_hash_t>(d.id);
  return hash == -1 ? -2 : hash;
}

PyObject* device_richcompare(PyObject* self, PyObject* other, int op) noexcept {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(other, state().device_base)) Py_RETURN_NOTIMPLEMENTED;
  const devrt_device a = of(self);
  const devrt_device b = of(other);
  const bool equal = a.kind == b.kind && a.id == b.id;
  return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

PyObject* dlpack_device_type(PyObject* self, PyObject*) noexcept { return PyLong_FromLong(of(self).kind); }
PyObject* dlpack_device(PyObject* self, PyObject*) noexcept {
  return Py_BuildValue("(ii)", of(self).kind, of(self).id);
}
PyObject* device_reduce(PyObject* self, PyObject*) noexcept {
  return Py_BuildValue("(O(ii))", reinterpret_cast<PyObject*>(Py_TYPE(self)), of(self).kind, of(self).id);
}

PyMethodDef kDeviceMethods[] = {
    {"dlpack_device_type", dlpack_device_type, METH_NOARGS,
     "The DLPack device type number (1 cpu, 2 cuda, 4 opencl, 7 vulkan, 10 rocm, ...)."},
    {"__dlpack_device__", dlpack_device, METH_NOARGS, "(device type, index), as DLPack's protocol asks."},
    {"__reduce__", device_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

// The fixed getters, then one per devrt attribute (built once; lives as long as the type).
PyGetSetDef* make_getters() noexcept {
  static const PyGetSetDef fixed[] = {
      {"type", get_type, nullptr, "The device type's name: \"cuda\", \"cpu\", ...", nullptr},
      {"index", get_index, nullptr, "The index among devices of this type.", nullptr},
      {"device_type", get_kind, nullptr, "The DLPack device type number (TVM's older name).", nullptr},
      {"device_id", get_index, nullptr, "The index (TVM's older name).", nullptr},
      {"kind_name", get_kind_name, nullptr, "\"cuda\", \"cpu\", ...; \"\" for a kind devrt does not name.", nullptr},
      {"exist", get_exist, nullptr, "True when the device is present and its backend usable.", nullptr},
  };
  std::vector<PyGetSetDef> all(std::begin(fixed), std::end(fixed));
  for (std::int32_t number = 0; number < 64; ++number) {
    const char* name = devrt_attribute_name(number);
    if (name == nullptr || name[0] == '\0') break;
    if (std::strcmp(name, "exist") == 0) continue;
    auto packed = static_cast<std::intptr_t>(number) | (static_cast<std::intptr_t>(devrt_attribute_type(number)) << 8);
    all.push_back({name, get_attribute, nullptr,
                   "The device's attribute of this name; None when the device does not report it.",
                   reinterpret_cast<void*>(packed)});
  }
  all.push_back({nullptr, nullptr, nullptr, nullptr, nullptr});
  auto* table = new (std::nothrow) PyGetSetDef[all.size()];
  if (table != nullptr) std::copy(all.begin(), all.end(), table);
  return table;
}

} // namespace

PyTypeObject* make_device_type(PyObject* module) noexcept {
  PyGetSetDef* getters = make_getters();
  if (getters == nullptr) {
    PyErr_NoMemory();
    return nullptr;
  }
  PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(device_new)},
      {Py_tp_dealloc, reinterpret_cast<void*>(device_dealloc)},
      {Py_tp_str, reinterpret_cast<void*>(device_str)},
      {Py_tp_repr, reinterpret_cast<void*>(device_repr)},
      {Py_tp_hash, reinterpret_cast<void*>(device_hash)},
      {Py_tp_richcompare, reinterpret_cast<void*>(device_richcompare)},
      {Py_tp_methods, kDeviceMethods},
      {Py_tp_getset, getters},
      {Py_tp_doc, const_cast<char*>("Device(device_type, index=None): one device, a DLPack device type and an "
                                    "index. A plain value: hashable, comparable, picklable, thread-safe.")},
      {0, nullptr},
  };
  PyType_Spec spec = {"devrt._ext.Device", sizeof(DeviceObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  return add_type(module, &spec);
}

PyObject* new_device(devrt_device device) noexcept {
  PyTypeObject* type = state().device_type;
  PyObject* self = alloc_instance(type);
  if (self != nullptr) reinterpret_cast<DeviceObject*>(self)->device = device;
  return self;
}

namespace {

PyObject* accepted_device_names(PyObject*, PyObject*) noexcept {
  PyObject* out = PyDict_New();
  if (out == nullptr) return nullptr;
  for (const KindName& entry : kind_names()) {
    Ref kind(PyLong_FromLong(entry.kind));
    if (!kind || PyDict_SetItemString(out, entry.name.c_str(), kind.get()) != 0) {
      Py_DECREF(out);
      return nullptr;
    }
  }
  return out;
}

} // namespace

PyMethodDef kDeviceFunctions[] = {
    {"device_names", accepted_device_names, METH_NOARGS,
     "{name: DLPack device type} of every name devrt.device accepts (TVM's aliases included)."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace devrt::python
