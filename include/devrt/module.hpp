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
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <devrt/device.hpp>
#include <devrt/dtype.hpp>
#include <devrt/kernel_abi.h>
#include <devrt/memory.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>

namespace devrt {

class Tensor;

namespace detail {
// An immutable, NUL-terminated copy of a text that copies share (a reference count): a name an
// object keeps, such as a Function's kernel name. Making one allocates (and can fail, leaving it
// empty); copying one never allocates and cannot fail. The memory is devrt's own heap (the
// firmware heap in bare-metal builds), never operator new. Copies and drops may happen on several
// threads at once, as with std::shared_ptr.
class SharedText {
public:
  SharedText() noexcept = default;
  // A copy of `text`; empty (false) when there is no memory for it.
  static SharedText make(std::string_view text) noexcept;

  SharedText(const SharedText& other) noexcept : block_(other.block_) { retain(); }
  SharedText(SharedText&& other) noexcept : block_(other.block_) { other.block_ = nullptr; }
  SharedText& operator=(SharedText other) noexcept { // copy or move, then swap
    Block* mine = block_;
    block_ = other.block_;
    other.block_ = mine;
    return *this;
  }
  ~SharedText() { release(); }

  explicit operator bool() const noexcept { return block_ != nullptr; }
  std::string_view view() const noexcept;
  const char* c_str() const noexcept; // "" when empty

private:
  struct Block;
  void retain() const noexcept;
  void release() noexcept;
  Block* block_ = nullptr;
};
} // namespace detail

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
  wgsl = DEVRT_MODULE_WGSL, // WGSL source, WebGPU
};

// "opencl_c", "spirv", ...; "unknown" for values outside the enum. Thread-safe.
std::string_view module_format_name(ModuleFormat format) noexcept;

// A module as bytes that Module::load accepts again.
struct ModuleBinary {
  ModuleFormat format = ModuleFormat::opencl_binary;
  std::string bytes; // raw bytes, not text
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
    const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
    for (std::size_t i = 0; i < sizeof(T); ++i) arg_.value.bytes[i] = bytes[i];
  }

  // A texture-scoped tensor (devrt/device.hpp), for an image parameter (OpenCL image2d_t).
  // A tensor in another scope gives an argument the launch refuses. The tensor must outlive the
  // launch's completion.
  static KernelArg texture(const Tensor& texture) noexcept;

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

  std::string_view name() const noexcept { return name_.view(); }
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
  const devrt_backend_table* backend_ = nullptr;
  Device device_;
  void* handle_ = nullptr;
  void* module_ = nullptr; // the backend's module it belongs to
  detail::SharedText name_;
};

// Code loaded on one device. Owns the backend's module; unloaded when the Module dies, which must
// not happen while launches of its functions are still queued (synchronize first). Move-only.
class Module {
public:
  Module() noexcept = default;
  Module(Module&& other) noexcept
      : backend_(detail::exchange(other.backend_, nullptr)), device_(other.device_), format_(other.format_),
        handle_(detail::exchange(other.handle_, nullptr)) {}
  Module& operator=(Module&& other) noexcept {
    if (this != &other) {
      reset();
      backend_ = detail::exchange(other.backend_, nullptr);
      device_ = other.device_;
      format_ = other.format_;
      handle_ = detail::exchange(other.handle_, nullptr);
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
  // How many instructions devrt rewrote at load to define what the module's format leaves
  // undefined: GLSL.std.450 Pow of a negative base in SPIR-V (docs/tvm-libraries.md says how and
  // why; DEVRT_VULKAN_SPIRV_REWRITE=0 turns it off). 0 where nothing was rewritten; on a remote
  // device, what its server's backend rewrote. Thread-safe.
  Result<std::uint32_t> rewritten_instructions() const noexcept;

  Device device() const noexcept { return device_; }
  ModuleFormat format() const noexcept { return format_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  // Unloads now; errors are logged.
  void reset() noexcept;

private:
  const devrt_backend_table* backend_ = nullptr;
  Device device_;
  ModuleFormat format_ = ModuleFormat::host_table;
  void* handle_ = nullptr;
};

} // namespace devrt

#endif // DEVRT_MODULE_HPP
