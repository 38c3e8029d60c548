// SPDX-License-Identifier: Apache-2.0
// CPU kernel modules: in-process kernel tables and (on hosted Linux) shared objects.
#include "cpu_backend.hpp"

#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/backend/detail/mutex.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "backend_support/kernel_signature.hpp"
#include "support/heap.hpp"

#if defined(__linux__) && __has_include(<dlfcn.h>) && !defined(DEVRT_SINGLE_THREADED)
#define DEVRT_CPU_SHARED_OBJECTS 1
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>
#else
#define DEVRT_CPU_SHARED_OBJECTS 0
#endif

namespace devrt::cpu {
namespace {

// ---- Kernel tables: a fixed array, no heap -------------------------------------------------

struct TableSlot {
  std::atomic<const char*> name{nullptr};
  std::size_t name_size = 0;
  const devrt_cpu_kernel_entry* entries = nullptr;
  std::size_t count = 0;
};

constinit TableSlot g_tables[kMaxKernelTables];
constinit std::atomic<std::size_t> g_table_count{0};
constinit detail::Mutex g_table_mutex;

const TableSlot* find_table(std::string_view name) noexcept {
  std::size_t n = g_table_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    const TableSlot& slot = g_tables[i];
    if (std::string_view(slot.name.load(std::memory_order_acquire), slot.name_size) == name) return &slot;
  }
  return nullptr;
}

// ---- Modules and functions -----------------------------------------------------------------
//
// A function handle is always a devrt_cpu_kernel_entry*. A host_table module is its TableSlot,
// which is static storage: loading one allocates nothing, and its functions are the caller's own
// entries (signatures were checked when the table was registered). A shared_object module
// (hosted only) owns the entries it makes on lookup, each checked then.

bool is_table_module(const void* handle) noexcept {
  auto address = reinterpret_cast<std::uintptr_t>(handle);
  return address >= reinterpret_cast<std::uintptr_t>(&g_tables[0]) &&
         address < reinterpret_cast<std::uintptr_t>(&g_tables[kMaxKernelTables]);
}

#if DEVRT_CPU_SHARED_OBJECTS
struct OwnedEntry {
  devrt_cpu_kernel_entry entry{};
  std::string name;
};

struct SharedObjectModule {
  void* library = nullptr; // the dlopen handle
  detail::Mutex mutex;
  std::vector<std::unique_ptr<OwnedEntry>> functions;
};

Result<void*> add_function(SharedObjectModule& module, const char* name, devrt_cpu_kernel fn, const char* signature) {
  detail::KernelSignature parsed;
  if (signature != nullptr && !detail::parse_kernel_signature(signature, parsed)) {
    return make_error(ErrorCode::invalid_argument, "kernel '", name, "' has a malformed signature \"", signature, "\"");
  }
  auto owned = std::unique_ptr<OwnedEntry>(new (std::nothrow) OwnedEntry());
  if (!owned) return make_error(ErrorCode::out_of_memory, "no memory for a function");
  owned->name = name;
  owned->entry = devrt_cpu_kernel_entry{owned->name.c_str(), fn, signature};
  void* handle = &owned->entry;
  module.functions.push_back(std::move(owned));
  return handle;
}

Result<void*> open_shared_object(std::span<const std::byte> data, BuildLog& log) {
  static constexpr unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (data.size() < 64 || std::memcmp(data.data(), kElfMagic, 4) != 0) {
    return make_error(ErrorCode::invalid_argument, "not an ELF shared object (", data.size(),
                      " bytes without the ELF magic)");
  }
  int fd = memfd_create("devrt-cpu-module", MFD_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::driver_error, "memfd_create failed");
  std::size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n <= 0) {
      ::close(fd);
      return make_error(ErrorCode::driver_error, "writing the shared object to a memfd failed");
    }
    written += static_cast<std::size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ::close(fd);
  if (library == nullptr) {
    const char* reason = dlerror();
    log.append(reason != nullptr ? reason : "dlopen failed");
    return make_error(ErrorCode::invalid_argument,
                      "dlopen refused the shared object: ", reason != nullptr ? reason : "unknown reason");
  }
  return library;
}
#endif

} // namespace

namespace {

Result<void*> load_module(ModuleFormat format, std::span<const std::byte> data, BuildLog& log) noexcept {
  if (format == ModuleFormat::host_table) {
    std::string_view name(reinterpret_cast<const char*>(data.data()), data.size());
    const TableSlot* table = find_table(name);
    if (table == nullptr) {
      return make_error(ErrorCode::not_found, "no kernel table named '", name,
                        "' is registered (devrt::cpu::register_kernel_table)");
    }
    return const_cast<void*>(static_cast<const void*>(table));
  }
  if (format == ModuleFormat::shared_object) {
#if DEVRT_CPU_SHARED_OBJECTS
    Result<void*> library = open_shared_object(data, log);
    if (!library.ok()) return library;
    auto* module = new (std::nothrow) SharedObjectModule();
    if (module == nullptr) {
      dlclose(*library);
      return make_error(ErrorCode::out_of_memory, "no memory for a module");
    }
    module->library = *library;
    return static_cast<void*>(module);
#else
    static_cast<void>(log);
    return make_error(ErrorCode::unsupported, "shared-object modules need dlopen, which this build lacks");
#endif
  }
  return make_error(ErrorCode::unsupported, "the cpu backend loads host_table and shared_object modules, not ",
                    module_format_name(format));
}

Status unload_module(void* handle) noexcept {
#if DEVRT_CPU_SHARED_OBJECTS
  if (!is_table_module(handle)) {
    auto* module = static_cast<SharedObjectModule*>(handle);
    dlclose(module->library);
    delete module;
  }
#else
  static_cast<void>(handle);
#endif
  return Status();
}

Result<void*> find_function(void* handle, const char* name) noexcept {
  if (is_table_module(handle)) {
    const auto& table = *static_cast<const TableSlot*>(handle);
    for (std::size_t i = 0; i < table.count; ++i) {
      if (std::strcmp(table.entries[i].name, name) == 0) {
        return const_cast<void*>(static_cast<const void*>(&table.entries[i]));
      }
    }
    return make_error(ErrorCode::not_found, "kernel table '",
                      std::string_view(table.name.load(std::memory_order_acquire), table.name_size),
                      "' has no kernel '", name, "'");
  }
#if DEVRT_CPU_SHARED_OBJECTS
  auto& module = *static_cast<SharedObjectModule*>(handle);
  detail::LockGuard lock(module.mutex);
  for (const auto& function : module.functions) {
    if (function->name == name) return static_cast<void*>(&function->entry);
  }
  void* symbol = dlsym(module.library, name);
  if (symbol == nullptr) return make_error(ErrorCode::not_found, "the shared object exports no symbol '", name, "'");
  std::string signature_name = std::string(name) + DEVRT_CPU_SIGNATURE_SUFFIX;
  const auto* signature = static_cast<const char*>(dlsym(module.library, signature_name.c_str()));
  devrt_cpu_kernel kernel = nullptr;
  static_assert(sizeof(kernel) == sizeof(symbol));
  std::memcpy(&kernel, &symbol, sizeof kernel);
  return add_function(module, name, kernel, signature);
#else
  return make_error(ErrorCode::internal, "module without a table");
#endif
}

Status launch_function(void* handle, const LaunchDesc& desc) noexcept {
  const auto& function = *static_cast<const devrt_cpu_kernel_entry*>(handle);
  // Parsed on the stack at each launch: the text was checked when the function was made, and
  // keeping a parsed copy would need memory a kernel table does not have.
  detail::KernelSignature signature;
  if (function.signature != nullptr && !detail::parse_kernel_signature(function.signature, signature)) {
    return make_error(ErrorCode::internal, "kernel '", function.name, "' has a malformed signature");
  }
  DEVRT_RETURN_IF_ERROR(detail::check_kernel_args(function.name, signature, desc.args, desc.num_args));
  std::uint64_t threads = std::uint64_t{desc.block[0]} * desc.block[1] * desc.block[2];
  if (threads > kMaxThreadsPerBlock || desc.block[0] > kMaxBlockDim.x || desc.block[1] > kMaxBlockDim.y ||
      desc.block[2] > kMaxBlockDim.z) {
    return make_error(ErrorCode::invalid_argument, "a block of ", desc.block[0], "x", desc.block[1], "x", desc.block[2],
                      " exceeds max_threads_per_block ", kMaxThreadsPerBlock, " or max_thread_dimensions (",
                      kMaxBlockDim.x, ", ", kMaxBlockDim.y, ", ", kMaxBlockDim.z, ")");
  }
  if (desc.dynamic_shared_bytes > kMaxSharedMemoryPerBlock) {
    return make_error(ErrorCode::invalid_argument, desc.dynamic_shared_bytes,
                      " bytes of shared memory exceed max_shared_memory_per_block ", kMaxSharedMemoryPerBlock);
  }
  devrt_cpu_kernel_context context;
  for (int d = 0; d < 3; ++d) {
    context.grid[d] = desc.grid[d];
    context.block[d] = desc.block[d];
    context.block_index[d] = 0;
  }
  context.args = desc.args;
  context.num_args = desc.num_args;
  context.shared_memory = nullptr;
  context.shared_memory_bytes = desc.dynamic_shared_bytes;
  if (desc.dynamic_shared_bytes > 0) {
    std::size_t rounded = (desc.dynamic_shared_bytes + 63) & ~std::size_t{63};
    context.shared_memory = detail::heap_allocate(rounded, 64);
    if (context.shared_memory == nullptr) {
      return make_error(ErrorCode::out_of_memory, "no host memory for ", desc.dynamic_shared_bytes,
                        " bytes of block-shared memory");
    }
  }
  devrt_error err;
  err.message[0] = '\0';
  std::int32_t code = 0;
  for (std::uint32_t z = 0; z < desc.grid[2] && code == 0; ++z) {
    context.block_index[2] = z;
    for (std::uint32_t y = 0; y < desc.grid[1] && code == 0; ++y) {
      context.block_index[1] = y;
      for (std::uint32_t x = 0; x < desc.grid[0] && code == 0; ++x) {
        context.block_index[0] = x;
        code = function.function(&context, &err);
      }
    }
  }
  detail::heap_free(context.shared_memory);
  if (code == 0) return Status();
  err.message[DEVRT_ERROR_MESSAGE_CAPACITY - 1] = '\0';
  if (code < 0 || code > DEVRT_STATUS_LAST) code = static_cast<std::int32_t>(ErrorCode::internal);
  return make_error(static_cast<ErrorCode>(code), "kernel '", function.name, "' failed in block (",
                    context.block_index[0], ", ", context.block_index[1], ", ", context.block_index[2],
                    "): ", err.message[0] != '\0' ? err.message : "no reason given");
}

constexpr ModuleOps kModuleOps{&load_module, &unload_module, &find_function, &launch_function};

} // namespace

#if !DEVRT_BARE_METAL
// Hosted builds load shared objects without any table registered: the operations are always there.
constinit const ModuleOps* g_module_ops = &kModuleOps;
#endif

Status register_kernel_table(std::string_view name, std::span<const devrt_cpu_kernel_entry> entries) noexcept {
  if (name.empty() || name.size() > 63) {
    return make_error(ErrorCode::invalid_argument, "cpu register_kernel_table: a table name has 1 to 63 characters");
  }
  for (const devrt_cpu_kernel_entry& entry : entries) {
    detail::KernelSignature signature;
    if (entry.name == nullptr || entry.function == nullptr ||
        (entry.signature != nullptr && !detail::parse_kernel_signature(entry.signature, signature))) {
      return make_error(ErrorCode::invalid_argument, "cpu register_kernel_table(", name, "): entry '",
                        entry.name != nullptr ? entry.name : "(null)",
                        "' needs a name, a function and a well-formed signature");
    }
  }
  detail::LockGuard lock(g_table_mutex);
  if (const TableSlot* existing = find_table(name)) {
    if (existing->entries == entries.data() && existing->count == entries.size()) return Status();
    return make_error(ErrorCode::already_exists, "cpu register_kernel_table: a table named '", name,
                      "' is already registered");
  }
  std::size_t n = g_table_count.load(std::memory_order_relaxed);
  if (n == kMaxKernelTables) {
    return make_error(ErrorCode::out_of_memory, "cpu register_kernel_table(", name, "): all ", kMaxKernelTables,
                      " table slots are taken");
  }
  TableSlot& slot = g_tables[n];
  slot.name_size = name.size();
  slot.entries = entries.data();
  slot.count = entries.size();
  slot.name.store(name.data(), std::memory_order_release);
  g_table_count.store(n + 1, std::memory_order_release);
  g_module_ops = &kModuleOps; // bare-metal builds link module code only when a table is registered
  return Status();
}

} // namespace devrt::cpu
