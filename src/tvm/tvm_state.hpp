// SPDX-License-Identifier: Apache-2.0
// What devrt keeps of an opened TVM library (devrt/tvm.hpp), shared by the loader
// (tvm_library.cpp) and the context functions the library's host code calls (tvm_context.cpp).
// Not public API.
#ifndef DEVRT_SRC_TVM_TVM_STATE_HPP
#define DEVRT_SRC_TVM_TVM_STATE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/module.hpp>
#include <devrt/tvm.hpp>

#include "support/dynamic_library.hpp"
#include "tvm/tvm_abi.hpp"
#include "tvm/tvm_elf.hpp"

namespace devrt::tvm::detail {

struct SharedLibrary;

// A function handle devrt hands the host code (TVMBackendGetFuncFromEnv,
// TVMFFIEnvModLookupFromImports): the builtin __tvm_set_device, a kernel of the blob (by name: it
// runs on the device the thread set), or another host function of the library (an
// abi::PackedCFunc or an abi::FfiSafeCall, as the library's ABI). Lives as long as the process:
// host code caches them in static globals.
struct FunctionHandle {
  enum class Kind { set_device, kernel, host } kind = Kind::kernel;
  SharedLibrary* library = nullptr;
  std::string name;
  void* host = nullptr;
};

// One kernel loaded on one device.
struct LoadedKernel {
  const KernelInfo* info = nullptr;
  Function function;
};

// The kernels of the blob loaded for one device, while some Library for that device lives.
struct DeviceKernels {
  Device device;
  // The device the host code sees: `device` itself, or for a remote device its kind on the server
  // with `device`'s index (TVM's host code asserts its tensors' device type and passes it back).
  Device presented;
  int users = 0;
  std::vector<Module> modules;
  std::vector<LoadedKernel> kernels;
  std::vector<KernelInfo> infos; // the device module's descriptions, in the blob's order
  std::uint32_t rewritten = 0;   // instructions the backend rewrote in its modules at load
  const LoadedKernel* find(std::string_view name) const noexcept {
    for (const LoadedKernel& k : kernels) {
      if (k.info->name == name) return &k;
    }
    return nullptr;
  }
};

// One opened file: never closed nor freed (its host code may hold handles devrt gave it, and the
// C runtime's atexit handlers may run its code), as devrt keeps vendor drivers mapped.
struct SharedLibrary {
  std::string path;
  std::string label; // the file's name, for messages
  devrt::detail::DynamicLibrary library;
  ExportedSymbols symbols;
  std::vector<void*> function_addresses; // of symbols.functions, resolved once when opened
  DeviceBlob blob;
  devrt::detail::Mutex mutex; // guards devices and handles
  std::vector<std::unique_ptr<DeviceKernels>> devices;
  std::vector<std::unique_ptr<FunctionHandle>> handles;
  FunctionHandle set_device{FunctionHandle::Kind::set_device, this, "__tvm_set_device", nullptr};
};

// What a Library holds (null for an empty one): its opened file and its kernels for its device.
struct LibraryAccess {
  static SharedLibrary* shared(const Library& library) noexcept;
  static DeviceKernels* kernels(const Library& library) noexcept;
};

// devrt's function for `symbol` of TVM's runtimes (TVMFFIFunctionCall, TVMBackendAllocWorkspace,
// ...), or nullptr for one devrt does not provide. Thread-safe.
void* runtime_function(std::string_view symbol) noexcept;

// Fills the library's context data symbols ("__" + each runtime function's name, and its module
// context: __tvm_module_ctx or __tvm_ffi[_]_library_ctx) with devrt's functions and `library`.
// Called once per opened file, before any of its functions runs.
void install_context(SharedLibrary& library) noexcept;

// Runs host function `function` of `library` (of the library's ABI) on `kernels.device` with `args`:
// the call's frame (the memory its tensors name, the device its host code sets) is the calling
// thread's while it runs.
Status call_host(SharedLibrary& library, const DeviceKernels& kernels, std::string_view name, void* function,
                 std::span<const Argument> args) noexcept;

// TVM's argument assertion `tvm_error` from host function `function` in devrt's words, with what
// the call gave (`tensors` by argument index as the host code got them, null for scalars; a device
// shown as `shown_as` named as `device`), TVM's own words after it; `tvm_error` alone when it is
// none of TVM's argument checks. Thread-safe.
std::string explain_tvm_error(std::string_view function, const std::string& tvm_error,
                              const std::vector<DLTensor*>& tensors, Device device, Device shown_as);

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_STATE_HPP
