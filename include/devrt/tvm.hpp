// SPDX-License-Identifier: Apache-2.0
// Running what TVM compiled: the libraries TVM exports (export_library / MLC's model libraries),
// TVM <= 0.20's (packed functions, device code in `__tvm_dev_mblob`) and TVM >= 0.21's (tvm-ffi
// functions `__tvm_ffi_<name>`, device code in `__tvm_ffi[_]_library_bin`), their host functions
// called through the part of TVM's runtimes such a library reaches (docs/tvm-libraries.md).
//
//   devrt::Result<devrt::tvm::Library> lib = devrt::tvm::Library::load("gpt2-vulkan.so", device);
//   devrt::Status s = lib->call("layer_norm1", {x, gamma, beta, out});
//
// Hosted platforms only (dlopen); Meson feature `tvm`.
#ifndef DEVRT_TVM_HPP
#define DEVRT_TVM_HPP

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <dlpack/dlpack.h>

#include <devrt/config.hpp>
#if !DEVRT_WITH_TVM
// devrt::tvm is off in Meson subprojects unless asked for (docs/tvm-libraries.md).
#error "no devrt::tvm in this build: configure devrt with -Dtvm=enabled (subproject: default_options tvm=enabled)"
#endif
#include <devrt/device.hpp>
#include <devrt/dtype.hpp>
#include <devrt/status.hpp>
#include <devrt/tensor.hpp>

namespace devrt::tvm {

// ---- The device blob (TVM's module tree) ------------------------------------------------------

// One kernel of a device module: TVM's FunctionInfo.
struct KernelInfo {
  std::string name;
  std::vector<DataType> arg_types;      // buffers are handles (code 3, 64 bits), then scalars
  std::vector<std::string> launch_tags; // "blockIdx.x", "threadIdx.y", ..., "tir[x].use_dyn_shared_memory"
};

// One kernel's code where each kernel has its own (SPIR-V words, WGSL text).
struct KernelCode {
  std::string name;
  std::uint32_t flags = 0;     // SPIR-V: TVM's shader flags (bit 0: scalars in a uniform buffer)
  std::vector<std::byte> code; // SPIR-V words' bytes, or WGSL text
};

// A device module of the blob: its TVM type key ("vulkan", "opencl", "webgpu", "cuda", "hip"),
// format ("vulkan", "cl", "wgsl", "ptx", "cubin", "fatbin", "hsaco"), kernels, and code: one
// `source` for the whole module (OpenCL, CUDA, ROCm) or one entry of `kernel_code` per kernel
// (Vulkan, WebGPU).
struct DeviceModule {
  std::string type_key;
  std::string format;
  std::vector<KernelInfo> kernels;
  std::vector<std::byte> source;
  std::vector<KernelCode> kernel_code;
};

// What a blob holds: the device modules devrt can run, whether the host library itself is part
// of the tree ("_lib"), the Relax VM's program if it carries one (its module key and bytes, run by
// devrt::tvm::VirtualMachine, <devrt/tvm_vm.hpp>), and the modules it skipped, each with the
// reason (the VM's program is listed there too: it is no device code).
struct DeviceBlob {
  std::vector<DeviceModule> modules;
  bool has_host_module = false;
  std::string vm_key;
  std::vector<std::byte> vm_executable;
  std::vector<std::string> skipped;
};

// Which TVM wrote a blob: TVM <= 0.20 (`__tvm_dev_mblob`), or TVM >= 0.21 with tvm-ffi
// (`__tvm_ffi_library_bin`; `__tvm_ffi__library_bin` from 0.22), whose kernel descriptions carry
// arg_extra_tags. (The layout, modules inline or each length-prefixed as TVM >= 0.22 writes them,
// is read from the blob itself.)
enum class BlobAbi { packed, ffi };

// Parses a blob: the bytes at its symbol (a little-endian uint64 byte count, then that many
// bytes). Every count and length is checked against the bytes that remain; a truncated or
// corrupt blob is invalid_argument naming where it broke; device code devrt cannot run (metal,
// CUDA source to compile, tensor-map arguments) is unsupported naming what. Modules that are not
// device code are skipped with the reason. Thread-safe.
Result<DeviceBlob> parse_device_blob(std::span<const std::byte> blob, BlobAbi abi = BlobAbi::packed) noexcept;

// ---- A TVM-built library --------------------------------------------------------------------

// An argument of a library function: a tensor (a devrt Tensor, or a DLTensor the caller keeps
// alive during the call), or a scalar.
class Argument {
public:
  Argument(const Tensor& tensor) noexcept : tensor_(&tensor) {} // NOLINT(google-explicit-constructor)
  Argument(const DLTensor* tensor) noexcept : dl_(tensor) {}    // NOLINT(google-explicit-constructor)
  Argument(std::int64_t value) noexcept : kind_(Kind::integer), integer_(value) {} // NOLINT
  Argument(int value) noexcept : kind_(Kind::integer), integer_(value) {}          // NOLINT
  Argument(double value) noexcept : kind_(Kind::real), real_(value) {}             // NOLINT

  enum class Kind { tensor, integer, real };
  Kind kind() const noexcept { return kind_; }
  const Tensor* tensor() const noexcept { return tensor_; }
  const DLTensor* dl_tensor() const noexcept { return dl_; }
  std::int64_t integer() const noexcept { return integer_; }
  double real() const noexcept { return real_; }

private:
  Kind kind_ = Kind::tensor;
  const Tensor* tensor_ = nullptr;
  const DLTensor* dl_ = nullptr;
  std::int64_t integer_ = 0;
  double real_ = 0.0;
};

namespace detail {
struct LibraryState;
struct LibraryAccess;
} // namespace detail

// A library TVM built (TVM <= 0.20's packed functions or TVM >= 0.21's tvm-ffi functions), loaded
// for one device. Move-only; the library stays mapped for the process (its host code may hold
// pointers devrt gave it). Thread-safe to call from several threads.
class Library {
public:
  // Checks the file (an ELF shared object for this machine, as plugins are checked), opens it
  // (its constructors run: load only libraries you trust, as for plugins; one that imports TVM's
  // runtime functions, libtvm_ffi's, is opened from a copy in memory bound to devrt's instead, so
  // it runs where no libtvm_ffi exists and never touches one the process has), parses its device blob
  // and loads the device modules for `device`'s backend. The same path on another device shares
  // the opened library (dlopen returns the same handle): each device gets its own kernels, and a
  // call runs on the device the call's host code sets. Errors: not_found (no such file),
  // invalid_argument (not a loadable ELF, a malformed blob, a blob for another device kind),
  // unsupported (device code devrt cannot run). Thread-safe.
  static Result<Library> load(const char* path, Device device) noexcept;

  Library() noexcept;
  Library(Library&&) noexcept;
  Library& operator=(Library&&) noexcept;
  ~Library();

  Device device() const noexcept;
  const std::string& path() const noexcept;
  // The host functions the library exports (TVM's operators), sorted.
  const std::vector<std::string>& functions() const noexcept;
  // The device kernels its blob holds for this device, with TVM's descriptions.
  const std::vector<KernelInfo>& kernels() const noexcept;
  // What parsing the blob skipped, each with the reason.
  const std::vector<std::string>& skipped() const noexcept;
  // How many instructions devrt rewrote in its kernels at load, over all of them
  // (Module::rewritten_instructions: GLSL.std.450 Pow of a negative base in SPIR-V).
  std::uint32_t rewritten_instructions() const noexcept;

  // Calls host function `name` with `args` (tensors as TVM's DLTensor arguments, integers and
  // reals as its int64 and float64 values). The host code's own checks (shapes, dtypes, devices)
  // come back as invalid_argument naming the library, the function and TVM's message; a kernel
  // launch it makes that devrt refuses, as that launch's error. Kernels run asynchronously on the
  // calling thread's current stream of the device (devrt::current_stream): synchronize it to wait.
  // not_found for a name the library does not export. Thread-safe.
  Status call(std::string_view name, std::span<const Argument> args) const noexcept;
  Status call(std::string_view name, std::initializer_list<Argument> args) const noexcept {
    return call(name, std::span<const Argument>(args.begin(), args.size()));
  }

  // Waits for the kernels this thread's calls queued (its current stream of the device). An error
  // surfacing there, asynchronously, names the last function this thread called. Thread-safe.
  Status synchronize() const noexcept;

private:
  friend struct detail::LibraryAccess;
  explicit Library(std::unique_ptr<detail::LibraryState> state) noexcept;
  std::unique_ptr<detail::LibraryState> state_;
};

} // namespace devrt::tvm

#endif // DEVRT_TVM_HPP
