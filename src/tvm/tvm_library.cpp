// SPDX-License-Identifier: Apache-2.0
// Loading TVM-built libraries (devrt/tvm.hpp): the file checked, opened once per process, its
// blob parsed, the kernels for each device loaded while a Library for that device lives.
#include <devrt/tvm.hpp>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <devrt/backend/registry.hpp>
#include <devrt/remote.hpp>
#include <devrt/stream.hpp>

#include "core/plugins/plugin_file.hpp"
#include "tvm/tvm_state.hpp"

namespace devrt::tvm {
namespace detail {

// A Library's hold on its file's kernels for its device: the last one for a device unloads them.
struct LibraryState {
  SharedLibrary* shared = nullptr;
  DeviceKernels* kernels = nullptr;
  LibraryState(SharedLibrary* library, DeviceKernels* loaded) noexcept : shared(library), kernels(loaded) {}
  LibraryState(const LibraryState&) = delete;
  LibraryState& operator=(const LibraryState&) = delete;
  ~LibraryState() {
    if (kernels == nullptr) return;
    devrt::detail::LockGuard lock(shared->mutex);
    if (--kernels->users == 0) std::erase_if(shared->devices, [&](const auto& d) { return d.get() == kernels; });
  }
};

namespace {

devrt::detail::Mutex g_libraries_mutex;
std::vector<SharedLibrary*>* g_libraries = nullptr; // every opened file, never freed

// The device kind whose backend runs a device module of TVM type key `key`.
bool runs(DeviceKind kind, std::string_view key) noexcept {
  switch (kind) {
  case DeviceKind::vulkan: return key == "vulkan";
  case DeviceKind::opencl: return key == "opencl";
  case DeviceKind::webgpu: return key == "webgpu";
  case DeviceKind::cuda: return key == "cuda";
  case DeviceKind::rocm: return key == "hip" || key == "rocm" || key == "hsaco";
  default: return false;
  }
}

// The devrt module format of a device module's code.
Result<ModuleFormat> code_format(const SharedLibrary& shared, const DeviceModule& module) {
  const std::string& f = module.format;
  if (module.type_key == "opencl" && f == "cl") return ModuleFormat::opencl_c;
  if (module.type_key == "vulkan") return ModuleFormat::spirv;
  if (module.type_key == "webgpu") return ModuleFormat::wgsl;
  if (module.type_key == "cuda" && f == "ptx") return ModuleFormat::ptx;
  if (module.type_key == "cuda" && f == "cubin") return ModuleFormat::cubin;
  if (module.type_key == "cuda" && f == "fatbin") return ModuleFormat::fatbin;
  if (module.type_key != "cuda" && module.type_key != "opencl" && f == "hsaco") return ModuleFormat::hsaco;
  return make_error(ErrorCode::unsupported, "TVM library ", shared.label, ": ", module.type_key, " code in format '", f,
                    "' (devrt loads OpenCL C \"cl\", CUDA \"ptx\", \"cubin\" and \"fatbin\", ROCm \"hsaco\")");
}

// A copy of `path` that imports nothing of TVM's runtimes, opened from memory; its imports bound
// to devrt's functions before any of its code runs (beyond its constructors, which TVM's host
// code generator emits none of that call its runtime).
Status open_detached(SharedLibrary& shared, const std::string& path, std::vector<unsigned char> bytes) {
  std::string missing;
  for (const std::string& symbol : shared.symbols.imports) {
    if (runtime_function(symbol) == nullptr) missing += (missing.empty() ? "" : ", ") + symbol;
  }
  if (!missing.empty()) {
    return make_error(ErrorCode::unsupported, "TVM library ", path, ": it imports ", missing,
                      " from TVM's runtime, which devrt does not provide (it provides the C functions TVM's host "
                      "code generator and tvm-ffi's C examples call, not tvm-ffi's object system that C++ code over "
                      "its headers uses; docs/tvm-libraries.md)");
  }
  DEVRT_ASSIGN_OR_RETURN(std::vector<unsigned char> image, detached_image(path, std::move(bytes)));
  const int fd = ::memfd_create(("devrt-tvm:" + shared.label).c_str(), MFD_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::unsupported, "TVM library ", path, ": memfd_create failed");
  std::size_t written = 0;
  while (written < image.size()) {
    const ssize_t n = ::write(fd, image.data() + written, image.size() - written);
    if (n <= 0) {
      ::close(fd);
      return make_error(ErrorCode::internal, "TVM library ", path, ": cannot write its detached copy");
    }
    written += static_cast<std::size_t>(n);
  }
  // The descriptor stays open for the process, as the library stays mapped: the dynamic linker
  // knows a library by the name it was opened under, and a reused descriptor number would name
  // this one again.
  const std::string memory_path = "/proc/self/fd/" + std::to_string(fd);
  std::string reason;
  if (!shared.library.open({memory_path.c_str()}, reason)) {
    ::close(fd);
    return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": dlopen refused it: ", reason);
  }
  link_map* map = nullptr;
  if (::dlinfo(shared.library.native_handle(), RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) {
    return make_error(ErrorCode::internal, "TVM library ", path, ": no link map");
  }
  return bind_imports(shared.symbols, static_cast<std::uintptr_t>(map->l_addr), &runtime_function);
}

// Opens `path` (already checked) and parses its blob; errors leave nothing registered.
Result<SharedLibrary*> open_file(const std::string& path, const std::string& canonical) {
  DEVRT_ASSIGN_OR_RETURN(std::vector<unsigned char> bytes, read_library_file(path));
  DEVRT_ASSIGN_OR_RETURN(ExportedSymbols symbols, read_exported_symbols(path, bytes));
  auto shared = std::unique_ptr<SharedLibrary>(new (std::nothrow) SharedLibrary());
  if (!shared) return make_error(ErrorCode::out_of_memory, "TVM library ", path, ": no host memory");
  shared->path = canonical;
  const std::size_t slash = canonical.rfind('/');
  shared->label = slash == std::string::npos ? canonical : canonical.substr(slash + 1);
  shared->symbols = std::move(symbols);
  if (!shared->symbols.imports.empty() || !shared->symbols.runtime_needed.empty()) {
    DEVRT_RETURN_IF_ERROR(open_detached(*shared, canonical, std::move(bytes)));
  } else {
    std::string reason;
    if (!shared->library.open({canonical.c_str()}, reason)) {
      return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": dlopen refused it: ", reason);
    }
  }
  for (const std::string& function : shared->symbols.functions) {
    const std::string symbol = shared->symbols.function_prefix + function;
    shared->function_addresses.push_back(shared->library.symbol(symbol.c_str()));
  }
  const std::string& blob_symbol = shared->symbols.blob_symbol;
  if (!blob_symbol.empty()) {
    const auto* blob = static_cast<const std::byte*>(shared->library.symbol(blob_symbol.c_str()));
    if (blob == nullptr) {
      return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": ", blob_symbol,
                        " is listed but not found");
    }
    const BlobAbi blob_abi = shared->symbols.abi == HostAbi::ffi ? BlobAbi::ffi : BlobAbi::packed;
    Result<DeviceBlob> parsed =
        parse_device_blob({blob, static_cast<std::size_t>(shared->symbols.blob_bytes)}, blob_abi);
    if (!parsed.ok()) {
      return make_error(parsed.status().code(), "TVM library ", path, ": ", parsed.status().message());
    }
    shared->blob = std::move(parsed).value();
  }
  install_context(*shared);
  return shared.release();
}

// The opened file for `path`: the one already open for the same file, or a new one.
Result<SharedLibrary*> shared_library(const char* path) {
  char* resolved = ::realpath(path, nullptr);
  if (resolved == nullptr) return make_error(ErrorCode::not_found, "TVM library ", path, ": no such file");
  const std::string canonical(resolved);
  std::free(resolved);
  devrt::detail::LockGuard lock(g_libraries_mutex);
  if (g_libraries == nullptr) g_libraries = new (std::nothrow) std::vector<SharedLibrary*>();
  if (g_libraries == nullptr) return make_error(ErrorCode::out_of_memory, "TVM library ", path, ": no host memory");
  for (SharedLibrary* open : *g_libraries) {
    if (open->path == canonical) return open;
  }
  // The plugin loader's check: an ELF shared object of this process's class, byte order and
  // machine, whose headers and segments lie inside the file; dlopen would crash on less.
  if (std::string problem = devrt::detail::shared_object_problem(canonical); !problem.empty()) {
    return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": refused before dlopen: ", problem);
  }
  DEVRT_ASSIGN_OR_RETURN(SharedLibrary * opened, open_file(path, canonical));
  g_libraries->push_back(opened);
  return opened;
}

// The kind of device whose code runs on `device`: its own, or a remote device's kind on its server.
Result<DeviceKind> code_kind(Device device) {
  if (device.kind != DeviceKind::remote) return device.kind;
  DEVRT_ASSIGN_OR_RETURN(remote::DeviceInfo info, remote::describe(device));
  return info.kind;
}

// Loads the blob's kernels for `device` (caller holds shared.mutex). A remote device takes the
// kernels of its kind on the server, loaded there as any module; the host code stays here.
Result<std::unique_ptr<DeviceKernels>> load_kernels(const SharedLibrary& shared, Device device) {
  DEVRT_ASSIGN_OR_RETURN(DeviceKind kind, code_kind(device));
  const bool remote = device.kind == DeviceKind::remote;
  if (remote && shared.blob.modules.empty()) {
    return make_error(ErrorCode::invalid_argument, "TVM library ", shared.label,
                      ": it has no device kernels, so its operators compute in its host code, in this process, "
                      "which cannot reach the memory of ",
                      device, " on its server; load it on a local cpu device, or load the library built for ",
                      device_kind_name(kind), " on ", device);
  }
  auto loaded = std::make_unique<DeviceKernels>();
  loaded->device = device;
  loaded->presented = remote ? Device{kind, device.id} : device;
  for (const DeviceModule& module : shared.blob.modules) {
    if (!runs(kind, module.type_key)) {
      return make_error(ErrorCode::invalid_argument, "TVM library ", shared.label, ": its kernels are ",
                        module.type_key, " code; load it on a ", module.type_key, " device, not ", device,
                        remote ? " (a " + std::string(device_kind_name(kind)) + " device on its server)"
                               : std::string());
    }
    loaded->infos.insert(loaded->infos.end(), module.kernels.begin(), module.kernels.end());
  }
  loaded->kernels.reserve(loaded->infos.size());
  for (const DeviceModule& module : shared.blob.modules) {
    auto load = [&](ModuleFormat format, std::span<const std::byte> code, const std::string& what) -> Status {
      std::string log;
      Result<Module> made = Module::load(device, format, code, {}, &log);
      if (!made.ok()) {
        return make_error(made.status().code(), "TVM library ", shared.label, ": ", what, ": ",
                          made.status().message());
      }
      Result<std::uint32_t> rewritten = made->rewritten_instructions();
      if (!rewritten.ok()) {
        return make_error(rewritten.status().code(), "TVM library ", shared.label, ": ", what, ": ",
                          rewritten.status().message());
      }
      loaded->rewritten += *rewritten;
      loaded->modules.push_back(std::move(made).value());
      return Status();
    };
    DEVRT_ASSIGN_OR_RETURN(ModuleFormat format, code_format(shared, module));
    if (module.kernel_code.empty()) {
      DEVRT_RETURN_IF_ERROR(load(format, module.source, "its " + module.type_key + " module"));
    } else {
      for (const KernelCode& code : module.kernel_code) {
        DEVRT_RETURN_IF_ERROR(load(format, code.code, "kernel '" + code.name + "'"));
      }
    }
  }
  // Each kernel's function, from the module that holds it.
  for (const KernelInfo& info : loaded->infos) {
    LoadedKernel kernel;
    kernel.info = &info;
    Status last;
    for (const Module& module : loaded->modules) {
      Result<Function> function = module.function(info.name);
      if (function.ok()) {
        kernel.function = std::move(function).value();
        break;
      }
      last = function.status();
    }
    if (!kernel.function) {
      return make_error(ErrorCode::invalid_argument, "TVM library ", shared.label, ": kernel '", info.name,
                        "' is described but its code has no such function: ", last.message());
    }
    loaded->kernels.push_back(std::move(kernel));
  }
  return loaded;
}

} // namespace
} // namespace detail

using detail::LibraryState;

Result<Library> Library::load(const char* path, Device device) noexcept {
  if (path == nullptr) return make_error(ErrorCode::invalid_argument, "TVM library: null path");
  DEVRT_ASSIGN_OR_RETURN(BackendRef backend, Registry::global().get(device.kind));
  DEVRT_RETURN_IF_ERROR(backend.check_device(device.id));
  DEVRT_ASSIGN_OR_RETURN(detail::SharedLibrary * shared, detail::shared_library(path));
  detail::DeviceKernels* kernels = nullptr;
  {
    devrt::detail::LockGuard lock(shared->mutex);
    for (const std::unique_ptr<detail::DeviceKernels>& loaded : shared->devices) {
      if (loaded->device == device) kernels = loaded.get();
    }
    if (kernels == nullptr) {
      DEVRT_ASSIGN_OR_RETURN(std::unique_ptr<detail::DeviceKernels> loaded, detail::load_kernels(*shared, device));
      kernels = loaded.get();
      shared->devices.push_back(std::move(loaded));
    }
    ++kernels->users;
  }
  auto state = std::unique_ptr<LibraryState>(new (std::nothrow) LibraryState(shared, kernels));
  if (!state) return make_error(ErrorCode::out_of_memory, "TVM library ", path, ": no host memory");
  return Library(std::move(state));
}

detail::SharedLibrary* detail::LibraryAccess::shared(const Library& library) noexcept {
  return library.state_ ? library.state_->shared : nullptr;
}

detail::DeviceKernels* detail::LibraryAccess::kernels(const Library& library) noexcept {
  return library.state_ ? library.state_->kernels : nullptr;
}

Library::Library() noexcept = default;
Library::Library(std::unique_ptr<LibraryState> state) noexcept : state_(std::move(state)) {}
Library::Library(Library&&) noexcept = default;
Library& Library::operator=(Library&&) noexcept = default;

Library::~Library() = default;

Device Library::device() const noexcept { return state_ ? state_->kernels->device : Device{}; }

const std::string& Library::path() const noexcept {
  static const std::string none;
  return state_ ? state_->shared->path : none;
}

const std::vector<std::string>& Library::functions() const noexcept {
  static const std::vector<std::string> none;
  return state_ ? state_->shared->symbols.functions : none;
}

std::uint32_t Library::rewritten_instructions() const noexcept { return state_ ? state_->kernels->rewritten : 0; }

const std::vector<KernelInfo>& Library::kernels() const noexcept {
  static const std::vector<KernelInfo> none;
  return state_ ? state_->kernels->infos : none;
}

const std::vector<std::string>& Library::skipped() const noexcept {
  static const std::vector<std::string> none;
  return state_ ? state_->shared->blob.skipped : none;
}

namespace {
// The last function this thread called, per opened file: what an asynchronous failure names.
thread_local const detail::SharedLibrary* t_last_library = nullptr;
thread_local std::string t_last_function;
} // namespace

Status Library::synchronize() const noexcept {
  if (!state_) return make_error(ErrorCode::invalid_argument, "TVM library: empty Library");
  const Device device = state_->kernels->device;
  Status done = devrt::synchronize(current_stream(device));
  if (done.ok()) return done;
  const bool named = t_last_library == state_->shared && !t_last_function.empty();
  return make_error(done.code(), "TVM library ", state_->shared->label, ": the work of ",
                    named ? "function '" + t_last_function + "' (the last this thread called)"
                          : std::string("its calls"),
                    " failed on ", device, ": ", done.message());
}

Status Library::call(std::string_view name, std::span<const Argument> args) const noexcept {
  if (!state_) return make_error(ErrorCode::invalid_argument, "TVM library: empty Library");
  detail::SharedLibrary& shared = *state_->shared;
  const std::vector<std::string>& functions = shared.symbols.functions;
  const auto found = std::lower_bound(functions.begin(), functions.end(), name);
  if (found == functions.end() || *found != name) {
    return make_error(ErrorCode::not_found, "TVM library ", shared.label, ": no function '", name, "' (it exports ",
                      functions.size(), ")");
  }
  void* function = shared.function_addresses[static_cast<std::size_t>(found - functions.begin())];
  if (function == nullptr) {
    return make_error(ErrorCode::not_found, "TVM library ", shared.label, ": function '", name, "' is not found");
  }
  t_last_library = &shared;
  t_last_function.assign(name);
  return detail::call_host(shared, *state_->kernels, name, function, args);
}

} // namespace devrt::tvm
