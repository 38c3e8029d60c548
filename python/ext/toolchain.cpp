// SPDX-License-Identifier: Apache-2.0
// devrt._ext: the toolchain helpers of devrt.support (devrt_toolchain.h), bound here so that the
// package needs no ctypes. Paths are str, bytes or os.PathLike (os.fsencode's rule); a list of
// them is any iterable; None stands for the C API's NULL. Without devrt_toolchain in
// libdevrt_c.so (-Dtoolchain=disabled), HAS_TOOLCHAIN is False and none of these exist.
#include <cstdint>
#include <string>
#include <vector>

#include "ext.hpp"

#if DEVRT_PY_TOOLCHAIN
#include <devrt/devrt_toolchain.h>
#endif

namespace devrt::python {

#if DEVRT_PY_TOOLCHAIN
namespace {

constexpr const char* kFileLockCapsule = "devrt_filelock";

// A path argument as the bytes os.fsencode gives; None -> null when `optional`. Owns its bytes.
class PathArgument {
public:
  PathArgument() = default;
  PathArgument(const PathArgument&) = delete;
  PathArgument& operator=(const PathArgument&) = delete;
  ~PathArgument() { Py_XDECREF(bytes_); }

  // False with the Python error set.
  bool set(PyObject* value, bool optional) noexcept {
    if (optional && value == Py_None) return true;
    if (PyUnicode_FSConverter(value, &bytes_) == 0) return false;
    return true;
  }
  const char* get() const noexcept { return bytes_ != nullptr ? PyBytes_AsString(bytes_) : nullptr; }

private:
  PyObject* bytes_ = nullptr;
};

// A list argument of paths or words (any iterable of str, bytes or os.PathLike), as C strings.
class StringList {
public:
  StringList() = default;
  StringList(const StringList&) = delete;
  StringList& operator=(const StringList&) = delete;
  ~StringList() {
    for (PyObject* item : owned_) Py_DECREF(item);
  }

  // False with the Python error set.
  bool set(PyObject* items) noexcept {
    PyObject* iterator = PyObject_GetIter(items);
    if (iterator == nullptr) return false;
    while (PyObject* item = PyIter_Next(iterator)) {
      PyObject* bytes = nullptr;
      const int converted = PyUnicode_FSConverter(item, &bytes);
      Py_DECREF(item);
      if (converted == 0) break;
      owned_.push_back(bytes);
      pointers_.push_back(PyBytes_AsString(bytes));
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() == nullptr;
  }
  const char* const* data() const noexcept { return pointers_.empty() ? nullptr : pointers_.data(); }
  std::size_t size() const noexcept { return pointers_.size(); }

private:
  std::vector<PyObject*> owned_;
  std::vector<const char*> pointers_;
};

PyObject* pair_or_raise(devrt_status status, int first, int second) noexcept {
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return Py_BuildValue("(ii)", first, second);
}

PyObject* find_cxx_compiler(PyObject*, PyObject*) noexcept {
  char* path = nullptr;
  devrt_status status = devrt_tc_find_cxx_compiler(&path);
  return take_text(status, path);
}

// compile(kind, output, inputs, options, compiler, launcher, env, working_directory)
PyObject* compile(PyObject*, PyObject* args) noexcept {
  int kind = 0;
  PyObject *output = nullptr, *inputs = nullptr, *options = nullptr, *compiler = nullptr, *launcher = nullptr,
           *env = nullptr, *cwd = nullptr;
  if (PyArg_ParseTuple(args, "iOOOOOOO", &kind, &output, &inputs, &options, &compiler, &launcher, &env, &cwd) == 0)
    return nullptr;
  PathArgument output_path, compiler_path, cwd_path;
  StringList input_list, option_list, launcher_list, env_list;
  if (!output_path.set(output, false) || !compiler_path.set(compiler, true) || !cwd_path.set(cwd, true) ||
      !input_list.set(inputs) || !option_list.set(options) || !launcher_list.set(launcher) || !env_list.set(env)) {
    return nullptr;
  }
  devrt_tc_compile_options request{};
  request.kind = kind;
  request.output = output_path.get();
  request.inputs = input_list.data();
  request.num_inputs = input_list.size();
  request.options = option_list.data();
  request.num_options = option_list.size();
  request.compiler = compiler_path.get();
  request.launcher = launcher_list.data();
  request.num_launcher = launcher_list.size();
  request.env = env_list.data();
  request.num_env = env_list.size();
  request.working_directory = cwd_path.get();
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tc_compile(&request);
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

PyObject* create_staticlib(PyObject*, PyObject* args) noexcept {
  PyObject *output = nullptr, *inputs = nullptr, *ar = nullptr;
  if (PyArg_ParseTuple(args, "OOO", &output, &inputs, &ar) == 0) return nullptr;
  PathArgument output_path, ar_path;
  StringList input_list;
  if (!output_path.set(output, false) || !ar_path.set(ar, true) || !input_list.set(inputs)) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status =
      devrt_tc_create_staticlib(output_path.get(), input_list.data(), input_list.size(), ar_path.get());
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

PyObject* target_triple(PyObject*, PyObject* compiler) noexcept {
  PathArgument compiler_path;
  if (!compiler_path.set(compiler, true)) return nullptr;
  char* triple = nullptr;
  devrt_status status = devrt_tc_target_triple(compiler_path.get(), &triple);
  return take_text(status, triple);
}

PyObject* global_symbol_sections(PyObject*, PyObject* path) noexcept {
  PathArgument file;
  if (!file.set(path, false)) return nullptr;
  char* json = nullptr;
  devrt_status status = devrt_tc_global_symbol_sections(file.get(), &json);
  return take_text(status, json);
}

PyObject* find_cuda_path(PyObject*, PyObject*) noexcept {
  char* path = nullptr;
  devrt_status status = devrt_tc_find_cuda_path(&path);
  return take_text(status, path);
}

PyObject* cuda_version(PyObject*, PyObject* path) noexcept {
  PathArgument root;
  if (!root.set(path, true)) return nullptr;
  int major = 0, minor = 0;
  devrt_status status = devrt_tc_cuda_version(root.get(), &major, &minor);
  return pair_or_raise(status, major, minor);
}

// compile_cuda(source, target_format, archs, options, compiler) -> bytes
PyObject* compile_cuda(PyObject*, PyObject* args) noexcept {
  const char *source = nullptr, *format = nullptr, *compiler = nullptr;
  PyObject *archs = nullptr, *options = nullptr;
  if (PyArg_ParseTuple(args, "ssOOs", &source, &format, &archs, &options, &compiler) == 0) return nullptr;
  StringList arch_list, option_list;
  if (!arch_list.set(archs) || !option_list.set(options)) return nullptr;
  void* data = nullptr;
  std::size_t size = 0;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tc_compile_cuda(source, format, arch_list.data(), arch_list.size(),
                                                        option_list.data(), option_list.size(), compiler, &data, &size);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* out = PyBytes_FromStringAndSize(static_cast<const char*>(data), static_cast<Py_ssize_t>(size));
  devrt_string_free(static_cast<char*>(data));
  return out;
}

PyObject* parse_compute_version(PyObject*, PyObject* text) noexcept {
  const char* version = nullptr;
  if (PyArg_Parse(text, "s", &version) == 0) return nullptr;
  int major = 0, minor = 0;
  devrt_status status = devrt_tc_parse_compute_version(version, &major, &minor);
  return pair_or_raise(status, major, minor);
}

PyObject* cuda_has_feature(PyObject*, PyObject* args) noexcept {
  const char *feature = nullptr, *version = nullptr;
  if (PyArg_ParseTuple(args, "ss", &feature, &version) == 0) return nullptr;
  int result = 0;
  devrt_status status = devrt_tc_cuda_has_feature(feature, version, &result);
  if (status != DEVRT_STATUS_OK) return raise_status(status);
  return PyBool_FromLong(result);
}

PyObject* have_cudagraph(PyObject*, PyObject*) noexcept { return PyBool_FromLong(devrt_tc_have_cudagraph()); }

PyObject* find_lld(PyObject*, PyObject* preferred) noexcept {
  const long major = PyLong_AsLong(preferred);
  if (major == -1 && PyErr_Occurred() != nullptr) return nullptr;
  if (major < 0 || major > INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "find_lld: preferred major version %ld is out of range", major);
    return nullptr;
  }
  char* path = nullptr;
  devrt_status status = devrt_tc_find_lld(static_cast<int>(major), &path);
  return take_text(status, path);
}

PyObject* rocm_link(PyObject*, PyObject* args) noexcept {
  PyObject *object = nullptr, *code_object = nullptr, *lld = nullptr;
  if (PyArg_ParseTuple(args, "OOO", &object, &code_object, &lld) == 0) return nullptr;
  PathArgument in, out, linker;
  if (!in.set(object, false) || !out.set(code_object, false) || !linker.set(lld, true)) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tc_rocm_link(in.get(), out.get(), linker.get());
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

void release_filelock(PyObject* capsule) noexcept {
  if (void* lock = PyCapsule_GetPointer(capsule, kFileLockCapsule))
    devrt_tc_filelock_release(static_cast<devrt_filelock>(lock));
}

// filelock_acquire(path, wait) -> a capsule that releases the lock when it is collected or
// passed to filelock_release.
PyObject* filelock_acquire(PyObject*, PyObject* args) noexcept {
  PyObject* path = nullptr;
  int wait = 0;
  if (PyArg_ParseTuple(args, "Op", &path, &wait) == 0) return nullptr;
  PathArgument file;
  if (!file.set(path, false)) return nullptr;
  devrt_filelock lock = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tc_filelock_acquire(file.get(), wait, &lock);
  Py_END_ALLOW_THREADS if (status != DEVRT_STATUS_OK) return raise_status(status);
  PyObject* capsule = PyCapsule_New(lock, kFileLockCapsule, release_filelock);
  if (capsule == nullptr) devrt_tc_filelock_release(lock);
  return capsule;
}

PyObject* filelock_release(PyObject*, PyObject* capsule) noexcept {
  void* lock = PyCapsule_GetPointer(capsule, kFileLockCapsule);
  if (lock == nullptr) return nullptr;
  if (PyCapsule_SetDestructor(capsule, nullptr) != 0) return nullptr;
  devrt_tc_filelock_release(static_cast<devrt_filelock>(lock));
  Py_RETURN_NONE;
}

PyObject* tar_create(PyObject*, PyObject* args) noexcept {
  PyObject *output = nullptr, *files = nullptr;
  if (PyArg_ParseTuple(args, "OO", &output, &files) == 0) return nullptr;
  PathArgument archive;
  StringList file_list;
  if (!archive.set(output, false) || !file_list.set(files)) return nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tc_tar_create(archive.get(), file_list.data(), file_list.size());
  Py_END_ALLOW_THREADS return none_or_raise(status);
}

PyObject* tar_extract(PyObject*, PyObject* args) noexcept {
  PyObject *archive = nullptr, *directory = nullptr;
  if (PyArg_ParseTuple(args, "OO", &archive, &directory) == 0) return nullptr;
  PathArgument file, folder;
  if (!file.set(archive, false) || !folder.set(directory, false)) return nullptr;
  char* names = nullptr;
  devrt_status status = DEVRT_STATUS_OK;
  Py_BEGIN_ALLOW_THREADS status = devrt_tc_tar_extract(file.get(), folder.get(), &names);
  Py_END_ALLOW_THREADS return take_text(status, names);
}

} // namespace

PyMethodDef kToolchainFunctions[] = {
    {"tc_find_cxx_compiler", find_cxx_compiler, METH_NOARGS, "The C++ compiler's path."},
    {"tc_compile", compile, METH_VARARGS,
     "tc_compile(kind, output, inputs, options, compiler, launcher, env, working_directory)."},
    {"tc_create_staticlib", create_staticlib, METH_VARARGS, "tc_create_staticlib(output, inputs, ar)."},
    {"tc_target_triple", target_triple, METH_O, "tc_target_triple(compiler or None) -> the triple."},
    {"tc_global_symbol_sections", global_symbol_sections, METH_O, "{symbol: section} of an ELF file, as JSON."},
    {"tc_find_cuda_path", find_cuda_path, METH_NOARGS, "The CUDA toolkit's root."},
    {"tc_cuda_version", cuda_version, METH_O, "tc_cuda_version(root or None) -> (major, minor)."},
    {"tc_compile_cuda", compile_cuda, METH_VARARGS,
     "tc_compile_cuda(source, target_format, archs, options, compiler) -> bytes."},
    {"tc_parse_compute_version", parse_compute_version, METH_O, "\"8.6\" -> (8, 6)."},
    {"tc_cuda_has_feature", cuda_has_feature, METH_VARARGS, "tc_cuda_has_feature(feature, compute_version)."},
    {"tc_have_cudagraph", have_cudagraph, METH_NOARGS, "Whether the CUDA driver has graphs."},
    {"tc_find_lld", find_lld, METH_O, "tc_find_lld(preferred major or 0) -> ld.lld's path."},
    {"tc_rocm_link", rocm_link, METH_VARARGS, "tc_rocm_link(object, code_object, lld or None)."},
    {"tc_filelock_acquire", filelock_acquire, METH_VARARGS, "tc_filelock_acquire(path, wait) -> a lock capsule."},
    {"tc_filelock_release", filelock_release, METH_O, "Releases a lock capsule now."},
    {"tc_tar_create", tar_create, METH_VARARGS, "tc_tar_create(output, files)."},
    {"tc_tar_extract", tar_extract, METH_VARARGS, "tc_tar_extract(archive, directory) -> names, one a line."},
    {nullptr, nullptr, 0, nullptr},
};
#else
PyMethodDef kToolchainFunctions[] = {{nullptr, nullptr, 0, nullptr}};
#endif

bool add_toolchain_constants(PyObject* module) noexcept {
  return PyModule_AddIntConstant(module, "HAS_TOOLCHAIN", DEVRT_PY_TOOLCHAIN ? 1 : 0) == 0;
}

} // namespace devrt::python
