// SPDX-License-Identifier: Apache-2.0
// Kernel modules: code loaded onto one device from bytes in a backend format, functions looked up
// by name, and launches over a 3-D grid of blocks on a stream.
//
//   devrt::Result<devrt::Module> module = devrt::Module::load(device, devrt::ModuleFormat::opencl_c, source);
//   devrt::Result<devrt::Function> vadd = module->function("vadd");
//   devrt::Status s = vadd->launch({.grid = {n / 64}, .block = {64}}, {a, b, c, std::int32_t(n)});
#ifndef DEVRT_MODULE_HPP
#define DEVRT_MODULE_HPP

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <devrt/backend_abi.h>
#include <devrt/device.hpp>
#include <devrt/dtype.hpp>
#include <devrt/memory.hpp>
#include <devrt/registry.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>

namespace devrt {

// What the bytes given to Module::load are.
enum class ModuleFormat : std::int32_t {
  host_table = DEVRT_MODULE_HOST_TABLE,       // CPU: the name of a table given to cpu::register_kernel_table
  shared_object = DEVRT_MODULE_SHARED_OBJECT, // CPU: an ELF shared object exporting devrt_cpu_kernel symbols
  opencl_c = DEVRT_MODULE_OPENCL_C,           // OpenCL C source
  opencl_binary = DEVRT_MODULE_OPENCL_BINARY, // an OpenCL program binary (Module::binary() of an OpenCL module)
  spirv = DEVRT_MODULE_SPIRV,                 // SPIR-V words, Vulkan compute
  ptx = DEVRT_MODULE_PTX,
  cubin = DEVRT_MODULE_CUBIN,
  fatbin = DEVRT_MODULE_FATBIN,
  hsaco = DEVRT_MODULE_HSACO,
};

// "opencl_c", "spirv", ...; "unknown" for values outside the enum. Thread-safe.
std::string_view module_format_name(ModuleFormat format) noexcept;

// What a module image is, read from its headers alone (no driver, no device): the format and the
// architectures it carries, e.g. cubin {"sm_90"}, fatbin {"sm_80", "sm_90", "compute_90"}, PTX
// {"compute_90"}, hsaco {"gfx90a"}. Backends check images with it before the driver sees them.
struct ModuleImageInfo {
  ModuleFormat format = ModuleFormat::ptx;
  std::vector<std::string> architectures;
};

// Recognises PTX text, CUDA cubin (ELF, EM_CUDA) and fatbin, AMD GPU code objects (ELF, EM_AMDGPU,
// or clang offload bundles), SPIR-V and host ELF shared objects. invalid_argument names what is
// wrong (truncated header, entries past the end, unrecognised leading bytes). Thread-safe.
Result<ModuleImageInfo> inspect_module_image(std::span<const std::byte> image) noexcept;

// A bounded, NUL-terminated text buffer a backend writes its build log into. Not thread-safe.
class BuildLog {
public:
  BuildLog(char* data, std::size_t capacity) noexcept : data_(data), capacity_(data != nullptr ? capacity : 0) {
    if (capacity_ > 0) data_[0] = '\0';
  }
  // Appends as much of `text` as fits.
  void append(std::string_view text) noexcept {
    if (capacity_ == 0) return;
    std::size_t room = capacity_ - 1 - size_;
    std::size_t n = text.size() < room ? text.size() : room;
    if (n > 0) std::memcpy(data_ + size_, text.data(), n);
    size_ += n;
    data_[size_] = '\0';
  }
  std::string_view view() const noexcept { return std::string_view(data_ != nullptr ? data_ : "", size_); }

private:
  char* data_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

// A module as bytes that Module::load accepts again.
struct ModuleBinary {
  ModuleFormat format = ModuleFormat::opencl_binary;
  std::vector<unsigned char> bytes;
};

// One kernel argument: device memory (a Buffer or MemorySpan, with a byte offset) or a scalar of
// a DLPack scalar type (integers, unsigned integers and floats of 8..64 bits, bool). Scalars are
// converted from the C++ type they are constructed with: pass std::int32_t(n), not n, when the
// kernel takes an int. A plain value.
class KernelArg {
public:
  KernelArg(const MemorySpan& span, std::size_t offset = 0) noexcept; // NOLINT(google-explicit-constructor)
  KernelArg(const Buffer& buffer, std::size_t offset = 0) noexcept;   // NOLINT(google-explicit-constructor)
  // Any other owner of device memory with span(): devrt::direct::Buffer<B>.
  template <class Owner>
  requires requires(const Owner& owner) {
    { owner.span() } -> std::same_as<MemorySpan>;
  }
  KernelArg(const Owner& owner, std::size_t offset = 0) noexcept // NOLINT(google-explicit-constructor)
      : KernelArg(owner.span(), offset) {}

  template <class T>
  requires std::is_arithmetic_v<T> KernelArg(T value)
  noexcept { // NOLINT(google-explicit-constructor)
    constexpr DataType type = data_type_of<T>();
    arg_.kind = DEVRT_ARG_SCALAR;
    arg_.type_code = static_cast<std::uint8_t>(type.code);
    arg_.type_bits = type.bits;
    arg_.value.u64 = 0;
    std::memcpy(arg_.value.bytes, &value, sizeof(T));
  }

  // A scalar of `type` whose little-endian bytes are the first type.bits / 8 of `value`.
  static KernelArg scalar(DataType type, std::uint64_t value) noexcept;

  bool is_buffer() const noexcept { return arg_.kind == DEVRT_ARG_BUFFER; }
  const devrt_kernel_arg& raw() const noexcept { return arg_; }

private:
  KernelArg() noexcept = default;
  devrt_kernel_arg arg_{};
};

// The most arguments one launch may take.
inline constexpr std::size_t kMaxKernelArgs = 64;

// A launch extent in three dimensions; unset ones are 1, so {64} is 64 x 1 x 1.
struct Extent3 {
  std::uint32_t x = 1, y = 1, z = 1;
  friend constexpr bool operator==(const Extent3&, const Extent3&) = default;
};

// Grid of blocks and threads per block, and the dynamic shared (OpenCL: local) memory each block
// gets.
struct LaunchConfig {
  Extent3 grid;
  Extent3 block;
  std::size_t dynamic_shared_bytes = 0;
};

// A kernel in a loaded Module. Non-owning: valid while its Module lives. Thread-safe to launch
// from several threads (each backend serialises what its API requires).
class Function {
public:
  Function() noexcept = default;

  const std::string& name() const noexcept { return name_; }
  Device device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // Queues one launch on `stream` (default: the calling thread's current stream of the device).
  // Checked first: grid and block extents >= 1 and their product fits 32 bits per dimension, at
  // most kMaxKernelArgs arguments, buffers on this function's device with offsets inside them,
  // scalar types valid; then by the backend: argument count and types against the kernel, block
  // size against the device's and the kernel's limits. Errors name the kernel, grid and block.
  // Buffers must stay alive until the stream has run the launch. Thread-safe.
  Status launch(const LaunchConfig& config, std::span<const KernelArg> args, StreamRef stream) const noexcept;
  Status launch(const LaunchConfig& config, std::span<const KernelArg> args) const noexcept;
  Status launch(const LaunchConfig& config, std::initializer_list<KernelArg> args) const noexcept {
    return launch(config, std::span<const KernelArg>(args.begin(), args.size()));
  }
  Status launch(const LaunchConfig& config, std::initializer_list<KernelArg> args, StreamRef stream) const noexcept {
    return launch(config, std::span<const KernelArg>(args.begin(), args.size()), stream);
  }

private:
  friend class Module;
  BackendRef backend_;
  Device device_;
  void* handle_ = nullptr;
  std::string name_;
};

// Code loaded on one device. Owns the backend's module; unloaded when the Module dies, which must
// not happen while launches of its functions are still queued (synchronize first). Move-only.
class Module {
public:
  Module() noexcept = default;
  Module(Module&& other) noexcept
      : backend_(std::exchange(other.backend_, BackendRef())), device_(other.device_), format_(other.format_),
        handle_(std::exchange(other.handle_, nullptr)) {}
  Module& operator=(Module&& other) noexcept {
    if (this != &other) {
      reset();
      backend_ = std::exchange(other.backend_, BackendRef());
      device_ = other.device_;
      format_ = other.format_;
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~Module() { reset(); }

  // Builds or loads `data` on `device`. `options` go to the backend's compiler (OpenCL build
  // options). Errors: invalid_argument (empty data, bad device, malformed bytes), unsupported (a
  // format this backend does not load), driver_error with the backend's build log in the message
  // and in *build_log when given. Thread-safe.
  static Result<Module> load(Device device, ModuleFormat format, std::span<const std::byte> data,
                             std::string_view options = {}, std::string* build_log = nullptr) noexcept;
  static Result<Module> load(Device device, ModuleFormat format, std::string_view text, std::string_view options = {},
                             std::string* build_log = nullptr) noexcept {
    return load(device, format, std::as_bytes(std::span<const char>(text.data(), text.size())), options, build_log);
  }
  // Reads a file and loads it as above (hosted platforms). Thread-safe.
  static Result<Module> load_file(Device device, ModuleFormat format, const char* path, std::string_view options = {},
                                  std::string* build_log = nullptr) noexcept;

  // A kernel by name: not_found (naming the module's format) when absent. Thread-safe.
  Result<Function> function(std::string_view name) const noexcept;
  // The module as bytes load() accepts again: unsupported on backends that cannot say. Thread-safe.
  Result<ModuleBinary> binary() const noexcept;

  Device device() const noexcept { return device_; }
  ModuleFormat format() const noexcept { return format_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  // Unloads now; errors are logged.
  void reset() noexcept;

private:
  BackendRef backend_;
  Device device_;
  ModuleFormat format_ = ModuleFormat::host_table;
  void* handle_ = nullptr;
};

} // namespace devrt

#endif // DEVRT_MODULE_HPP
