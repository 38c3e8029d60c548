// SPDX-License-Identifier: Apache-2.0
// Modules, functions and launches (devrt/module.hpp): loading an image (its format checked
// against the device), looking kernels up, and a launch's extent and argument checks.
#include <devrt/backend/registry.hpp>
#include <devrt/module.hpp>

#include <devrt/backend/detail/module_checks.hpp>
#include <devrt/log.hpp>
#include <devrt/memory.hpp>
#include <devrt/stream.hpp>

#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "core/execution/capture_hooks.hpp"

namespace devrt {

std::string_view module_format_name(ModuleFormat format) noexcept {
  switch (format) {
  case ModuleFormat::host_table: return "host_table";
  case ModuleFormat::shared_object: return "shared_object";
  case ModuleFormat::opencl_c: return "opencl_c";
  case ModuleFormat::opencl_binary: return "opencl_binary";
  case ModuleFormat::spirv: return "spirv";
  case ModuleFormat::ptx: return "ptx";
  case ModuleFormat::cubin: return "cubin";
  case ModuleFormat::fatbin: return "fatbin";
  case ModuleFormat::hsaco: return "hsaco";
  case ModuleFormat::wgsl: return "wgsl";
  }
  return "unknown";
}

namespace {
// Module formats in messages: "ptx, cubin and fatbin".
struct FormatList {
  std::uint32_t bits;
};
[[maybe_unused]] void append_part(detail::MessageBuilder& m, const FormatList& list) noexcept {
  std::int32_t remaining = 0;
  for (std::uint32_t b = list.bits; b != 0; b &= b - 1) ++remaining;
  bool first = true;
  for (std::int32_t format = 1; format < DEVRT_MODULE_FORMAT_COUNT; ++format) {
    if ((list.bits & DEVRT_MODULE_FORMAT_BIT(static_cast<std::uint32_t>(format))) == 0) continue;
    if (!first) m.append(remaining == 1 ? " and " : ", ");
    m.append(module_format_name(static_cast<ModuleFormat>(format)));
    first = false;
    --remaining;
  }
}

} // namespace

Status detail::check_module_format(std::string_view backend, Device device, std::uint32_t formats,
                                   ModuleFormat format) noexcept {
  const auto value = static_cast<std::uint32_t>(format);
  if (formats == 0 || (value < 32 && (formats & DEVRT_MODULE_FORMAT_BIT(value)) != 0)) return Status();
  return make_error(ErrorCode::unsupported, device, " module_load(", module_format_name(format), "): the ", backend,
                    " backend loads ", FormatList{formats}, " modules, not ", module_format_name(format));
}

// ---- KernelArg -------------------------------------------------------------------------------

KernelArg::KernelArg(const MemorySpan& span, std::size_t offset) noexcept {
  arg_.kind = DEVRT_ARG_BUFFER;
  arg_.device_kind = static_cast<std::int32_t>(span.device.kind);
  arg_.device_id = span.device.id;
  arg_.buffer = span.data;
  arg_.offset = offset;
  arg_.size = offset <= span.size ? span.size - offset : 0;
  // An offset past the end is kept visible to the launch check through size 0 and this marker.
  if (offset > span.size) arg_.reserved = 1;
}

KernelArg::KernelArg(const Buffer& buffer, std::size_t offset) noexcept : KernelArg(buffer.span(), offset) {}

KernelArg KernelArg::scalar(DataType type, std::uint64_t value) noexcept {
  KernelArg arg;
  arg.arg_.kind = DEVRT_ARG_SCALAR;
  arg.arg_.type_code = static_cast<std::uint8_t>(type.code);
  arg.arg_.type_bits = type.bits;
  arg.arg_.value.u64 = 0;
  std::size_t bytes = type.bits / 8 < 8 ? type.bits / 8 : 8;
  for (std::size_t i = 0; i < bytes; ++i) arg.arg_.value.bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  return arg;
}

// ---- Function --------------------------------------------------------------------------------

namespace {

[[gnu::cold, gnu::noinline]] Status launch_error(Device device, std::string_view function_name,
                                                 const LaunchConfig& config, std::string_view reason) noexcept {
  return make_error(ErrorCode::invalid_argument, device, " launch(", function_name, ", grid ", config.grid.x, "x",
                    config.grid.y, "x", config.grid.z, ", block ", config.block.x, "x", config.block.y, "x",
                    config.block.z, "): ", reason);
}

[[gnu::cold, gnu::noinline]] Status argument_error(Device function_device, std::string_view function_name,
                                                   const LaunchConfig& config, std::size_t index,
                                                   const devrt_kernel_arg& arg, bool accepts_textures) noexcept {
  if constexpr (!DEVRT_ERROR_MESSAGES) return make_error(ErrorCode::invalid_argument); // the code alone
  detail::MessageBuilder reason;
  detail::append_parts(reason, "argument ", index, ": ");
  if (arg.kind == DEVRT_ARG_BUFFER) {
    Device device{static_cast<DeviceKind>(arg.device_kind), arg.device_id};
    if (device != function_device) {
      detail::append_parts(reason, "memory on ", device, " but the kernel runs on ", function_device);
    } else if (arg.reserved != 0) {
      detail::append_parts(reason, "offset ", arg.offset, " lies past the end of the buffer");
    } else {
      detail::append_parts(reason, "null buffer");
    }
  } else if (arg.kind == DEVRT_ARG_TEXTURE) {
    Device device{static_cast<DeviceKind>(arg.device_kind), arg.device_id};
    if (!accepts_textures) {
      detail::append_parts(reason, "a texture, but ", function_device, "'s backend has no textures");
    } else if (device != function_device) {
      detail::append_parts(reason, "a texture on ", device, " but the kernel runs on ", function_device);
    } else {
      detail::append_parts(reason, "null texture");
    }
  } else if (arg.kind == DEVRT_ARG_SCALAR) {
    detail::append_parts(reason, "scalar of unsupported type (code ", unsigned{arg.type_code}, ", ",
                         unsigned{arg.type_bits}, " bits)");
  } else {
    detail::append_parts(reason, "neither a buffer, a texture nor a scalar");
  }
  return launch_error(function_device, function_name, config, reason.view());
}

bool valid_scalar(const devrt_kernel_arg& arg) noexcept {
  bool bits_ok = arg.type_bits == 8 || arg.type_bits == 16 || arg.type_bits == 32 || arg.type_bits == 64;
  switch (static_cast<DataTypeCode>(arg.type_code)) {
  case DataTypeCode::signed_int:
  case DataTypeCode::unsigned_int: return bits_ok;
  case DataTypeCode::floating: return arg.type_bits == 16 || arg.type_bits == 32 || arg.type_bits == 64;
  case DataTypeCode::bfloat: return arg.type_bits == 16;
  case DataTypeCode::boolean: return arg.type_bits == 8;
  default: return false;
  }
}

bool extent_ok(std::uint32_t grid, std::uint32_t block) noexcept {
  return grid >= 1 && block >= 1 && std::uint64_t{grid} * block <= std::numeric_limits<std::uint32_t>::max();
}

} // namespace

Status Function::launch(const LaunchConfig& config, std::span<const KernelArg> args) const noexcept {
  return launch(config, args, current_stream(device_));
}

Status Function::launch(const LaunchConfig& config, std::span<const KernelArg> args, StreamRef stream) const noexcept {
  if (handle_ == nullptr) [[unlikely]]
    return make_error(ErrorCode::invalid_argument, "launch: empty Function (not obtained from Module::function)");
  devrt_kernel_arg raw[kMaxKernelArgs];
  devrt_launch_desc desc;
  DEVRT_RETURN_IF_ERROR(detail::check_launch(device_, name_.view(), config, args, stream, raw, desc,
                                             BackendRef(backend_).has_textures()));
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> captured = detail::g_capture_hooks.launch(device_, handle_, module_, name_.view(), desc))
      return *captured;
  }
  return BackendRef(backend_).launch(device_.id, handle_, desc, name_.view());
}

namespace detail {

Status check_launch(Device device, std::string_view function_name, const LaunchConfig& config,
                    std::span<const KernelArg> args, StreamRef stream, devrt_kernel_arg* raw, devrt_launch_desc& desc,
                    bool accepts_textures) noexcept {
  if (!extent_ok(config.grid.x, config.block.x) || !extent_ok(config.grid.y, config.block.y) ||
      !extent_ok(config.grid.z, config.block.z)) [[unlikely]] {
    return launch_error(device, function_name, config,
                        "grid and block extents must be at least 1 and their product per dimension "
                        "must fit in 32 bits");
  }
  if (args.size() > kMaxKernelArgs) [[unlikely]] {
    detail::MessageBuilder reason;
    detail::append_parts(reason, args.size(), " arguments; at most ", kMaxKernelArgs, " are supported");
    return launch_error(device, function_name, config, reason.view());
  }
  if (stream.device != device) [[unlikely]] {
    detail::MessageBuilder reason;
    detail::append_parts(reason, "stream belongs to ", stream.device);
    return launch_error(device, function_name, config, reason.view());
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const devrt_kernel_arg& arg = args[i].raw();
    bool ok = arg.kind == DEVRT_ARG_BUFFER
                  ? arg.device_kind == static_cast<std::int32_t>(device.kind) && arg.device_id == device.id &&
                        arg.reserved == 0 && (arg.buffer != nullptr || arg.size == 0)
                  : arg.kind == DEVRT_ARG_SCALAR && valid_scalar(arg);
    if (arg.kind == DEVRT_ARG_TEXTURE) {
      ok = accepts_textures && arg.buffer != nullptr && arg.device_kind == static_cast<std::int32_t>(device.kind) &&
           arg.device_id == device.id;
    }
    if (!ok) [[unlikely]]
      return argument_error(device, function_name, config, i, arg, accepts_textures);
    raw[i] = arg;
  }
  desc.grid[0] = config.grid.x;
  desc.grid[1] = config.grid.y;
  desc.grid[2] = config.grid.z;
  desc.block[0] = config.block.x;
  desc.block[1] = config.block.y;
  desc.block[2] = config.block.z;
  desc.dynamic_shared_bytes = config.dynamic_shared_bytes;
  desc.args = raw;
  desc.num_args = static_cast<std::uint32_t>(args.size());
  desc.stream = stream.handle;
  return Status();
}

} // namespace detail

// ---- Module ----------------------------------------------------------------------------------

namespace {

// What binary image `data` starts as, when its first bytes are a known binary format's magic:
// a compiler's error about source text that is really a binary would name neither.
const char* binary_image(std::span<const std::byte> data) noexcept {
  auto starts = [&](const char* magic, std::size_t size) {
    return data.size() >= size && std::memcmp(data.data(), magic, size) == 0;
  };
  if (starts("\x03\x02\x23\x07", 4)) return "SPIR-V (magic 0x07230203): load it as spirv";
  if (starts("\x7f"
             "ELF",
             4))
    return "an ELF image: load it as cubin, hsaco or shared_object";
  if (starts("\x50\xed\x55\xba", 4)) return "a CUDA fatbin: load it as fatbin";
  if (starts("__CLANG_OFFLOAD_BUNDLE__", 24)) return "a clang offload bundle: load it as hsaco";
  return nullptr;
}

} // namespace

Result<Module> Module::load(Device device, ModuleFormat format, std::span<const std::byte> data,
                            std::string_view options, std::string* build_log) noexcept {
  if (build_log != nullptr) build_log->clear();
  Result<BackendRef> backend = backend_for(device);
  if (!backend.ok()) return std::move(backend).status();
  if (data.empty()) {
    return make_error(ErrorCode::invalid_argument, device, " module_load(", module_format_name(format),
                      "): no bytes to load");
  }
  if (options.find('\0') != std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument, device, " module_load(", module_format_name(format),
                      "): options contain a NUL byte");
  }
  const bool source_text =
      format == ModuleFormat::opencl_c || format == ModuleFormat::wgsl || format == ModuleFormat::ptx;
  if (const char* binary = source_text ? binary_image(data) : nullptr) {
    return make_error(ErrorCode::invalid_argument, device, " module_load(", module_format_name(format), "): the ",
                      data.size(), " bytes are not ", module_format_name(format), " source but ", binary);
  }
  detail::SharedText options_text = detail::SharedText::make(options);
  if (!options_text) {
    return make_error(ErrorCode::out_of_memory, device, " module_load(", module_format_name(format),
                      "): no memory for the options");
  }
  Result<void*> handle = backend->module_load(device.id, static_cast<std::int32_t>(format), data.data(), data.size(),
                                              options_text.c_str(), build_log);
  if (!handle.ok()) return std::move(handle).status();
  Module module;
  module.backend_ = backend->table();
  module.device_ = device;
  module.format_ = format;
  module.handle_ = *handle;
  return module;
}

Result<Module> Module::load_file(Device device, ModuleFormat format, const char* path, std::string_view options,
                                 std::string* build_log) noexcept {
  if (path == nullptr) return make_error(ErrorCode::invalid_argument, device, " module_load_file: null path");
  std::FILE* file = std::fopen(path, "rb");
  if (file == nullptr) {
    return make_error(ErrorCode::not_found, device, " module_load_file(", path, "): cannot open the file");
  }
  std::vector<std::byte> bytes;
  std::byte chunk[16384];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  bool failed = std::ferror(file) != 0;
  static_cast<void>(std::fclose(file));
  if (failed) return make_error(ErrorCode::invalid_argument, device, " module_load_file(", path, "): read error");
  return load(device, format, bytes, options, build_log);
}

Result<Function> Module::function(std::string_view name) const noexcept {
  if (handle_ == nullptr) return make_error(ErrorCode::invalid_argument, "function: empty Module");
  if (name.empty() || name.find('\0') != std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument, device_, " function: the name is empty or contains a NUL");
  }
  detail::SharedText name_text = detail::SharedText::make(name);
  if (!name_text) return make_error(ErrorCode::out_of_memory, device_, " function: no memory for the name");
  Result<void*> handle = BackendRef(backend_).module_function(device_.id, handle_, name_text.c_str());
  if (!handle.ok()) return std::move(handle).status();
  Function function;
  function.backend_ = backend_;
  function.device_ = device_;
  function.handle_ = *handle;
  function.module_ = handle_;
  function.name_ = std::move(name_text);
  return function;
}

Result<ModuleBinary> Module::binary() const noexcept {
  if (handle_ == nullptr) return make_error(ErrorCode::invalid_argument, "binary: empty Module");
  ModuleBinary binary;
  std::int32_t format = 0;
  DEVRT_RETURN_IF_ERROR(BackendRef(backend_).module_binary(device_.id, handle_, &format, &binary.bytes));
  binary.format = static_cast<ModuleFormat>(format);
  return binary;
}

Result<std::uint32_t> Module::rewritten_instructions() const noexcept {
  if (handle_ == nullptr) return make_error(ErrorCode::invalid_argument, "rewritten_instructions: empty Module");
  return BackendRef(backend_).module_rewrites(device_.id, handle_);
}

void Module::reset() noexcept {
  if (handle_ == nullptr) return;
#if !DEVRT_BARE_METAL
  detail::g_capture_hooks.forget_module(device_, handle_);
#endif
  Status status = BackendRef(backend_).module_unload(device_.id, handle_);
  if (!status.ok()) DEVRT_LOG(error, "Module: ", status.message());
  handle_ = nullptr;
}

} // namespace devrt
