// SPDX-License-Identifier: Apache-2.0
// devrt._loader: open(path) opens a shared library with dlopen(RTLD_NOW | RTLD_LOCAL) and keeps it
// open for the life of the process; OSError with dlerror()'s text when it cannot. The package opens
// libdevrt_c.so with it before importing devrt._ext, whose dependency on libdevrt_c.so.0 the
// dynamic loader then answers with the copy already open. Links nothing of devrt's.
#define Py_LIMITED_API 0x030b0000
#include <Python.h>

#include <dlfcn.h>

namespace {

PyObject* open_library(PyObject*, PyObject* path) noexcept {
  PyObject* bytes = nullptr;
  if (PyUnicode_FSConverter(path, &bytes) == 0) return nullptr;
  void* handle = dlopen(PyBytes_AsString(bytes), RTLD_NOW | RTLD_LOCAL);
  Py_DECREF(bytes);
  if (handle == nullptr) {
    const char* reason = dlerror();
    PyErr_SetString(PyExc_OSError, reason != nullptr ? reason : "dlopen failed");
    return nullptr;
  }
  Py_RETURN_NONE; // never closed: devrt._ext and the library's own state use it until exit
}

PyMethodDef kFunctions[] = {
    {"open", open_library, METH_O, "open(path): dlopen the library, kept open; OSError naming why not."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT,
    "devrt._loader",
    "Opens libdevrt_c.so for devrt._ext.",
    0,
    kFunctions,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

} // namespace

extern "C" [[gnu::visibility("default")]] PyObject* PyInit__loader() { return PyModuleDef_Init(&kModule); }
