// SPDX-License-Identifier: Apache-2.0
// Every environment variable devrt reads, with its kind: the one table that the readers check each
// name against when compiling and that docs/environment.md lists (tools/check-environment.py
// compares the two); the one lookup, and the readers that parse nothing (the others, which warn
// about a bad value, are support/environment.hpp's: the log reads DEVRT_LOG_LEVEL through this
// file alone). Not public API.
#ifndef DEVRT_SRC_SUPPORT_ENVIRONMENT_VARIABLES_HPP
#define DEVRT_SRC_SUPPORT_ENVIRONMENT_VARIABLES_HPP

#include <cstdint>
#include <string_view>

namespace devrt::detail {

// How a variable is read (docs/environment.md, "Rules"): each kind has one reader.
enum class EnvKind : std::uint8_t {
  boolean,   // read_boolean_env: 1/true/on/yes or 0/false/off/no
  number,    // read_number_env: digits only, within [min, max]
  library,   // open_vendor_library: an absolute path or a bare soname, instead of the built-in names
  path,      // read_path_env: an absolute path (a relative one is ignored, with a warning)
  path_list, // read_path_list_env: absolute folders separated by ':' (its reader skips relative ones)
  program,   // read_program_env: a program (and its options) devrt runs
  text,      // read_text_env: a word or list, parsed by its reader
};

struct EnvVariable {
  const char* name;
  EnvKind kind;
  std::uint64_t min; // numbers: the smallest value accepted
  std::uint64_t max; // numbers: the largest
  const char* meaning;
};

inline constexpr std::uint64_t kEnvSizeMax = SIZE_MAX;

// clang-format off
inline constexpr EnvVariable kEnvironmentVariables[] = {
  // Backends and plugins
  {"DEVRT_BACKEND_AUTOLOAD", EnvKind::boolean, 0, 0, "load backend plugins at first use (default 1)"},
  {"DEVRT_DISABLE", EnvKind::text, 0, 0, "comma-separated backend plugins not to load"},
  {"DEVRT_PLUGIN_PATH", EnvKind::path_list, 0, 0, "colon-separated absolute folders searched for out-of-tree plugins"},
  {"DEVRT_PREFER", EnvKind::text, 0, 0, "comma-separated backends that win a device kind two backends serve"},
  {"DEVRT_LOG_LEVEL", EnvKind::text, 0, 0, "trace, debug, info, warning (the default), error or off, or 0 to 5"},
  {"DEVRT_VALIDATE", EnvKind::boolean, 0, 0, "the C API checks every handle it is passed (default 0)"},
  {"DEVRT_FAULT", EnvKind::text, 0, 0, "<backend>:<symbol>:<n>:<code>: the nth call of a vendor symbol fails (fault-injection builds)"},
  // Vendor libraries (docs/environment.md, "Libraries")
  {"DEVRT_CUDA_LIBRARY", EnvKind::library, 0, 0, "the CUDA driver library instead of libcuda.so.1"},
  {"DEVRT_HIP_LIBRARY", EnvKind::library, 0, 0, "the HIP runtime instead of libamdhip64.so.6/.5"},
  {"DEVRT_OPENCL_LIBRARY", EnvKind::library, 0, 0, "the OpenCL ICD loader instead of libOpenCL.so.1"},
  {"DEVRT_VULKAN_LIBRARY", EnvKind::library, 0, 0, "the Vulkan loader instead of libvulkan.so.1"},
  {"DEVRT_WEBGPU_LIBRARY", EnvKind::library, 0, 0, "the webgpu.h implementation (Dawn, wgpu-native) instead of the search in docs/webgpu.md"},
  {"DEVRT_NVRTC_LIBRARY", EnvKind::library, 0, 0, "NVRTC instead of libnvrtc.so.13/.12 and the toolkit's copy"},
  {"DEVRT_NCCL_LIBRARY", EnvKind::library, 0, 0, "NCCL instead of libnccl.so.2 and pip's copies"},
  {"DEVRT_RCCL_LIBRARY", EnvKind::library, 0, 0, "RCCL instead of librccl.so.1 and ROCm's copy"},
  {"DEVRT_UCX_LIBRARY", EnvKind::library, 0, 0, "UCX's libucp instead of libucp.so.0"},
  {"DEVRT_SODIUM_LIBRARY", EnvKind::library, 0, 0, "libsodium (remote keys) instead of libsodium.so.23"},
  // Memory and copies
  {"DEVRT_BUFFER_CACHE", EnvKind::boolean, 0, 0, "Buffer keeps freed blocks for reuse (default 1)"},
  {"DEVRT_BUFFER_CACHE_LIMIT", EnvKind::number, 0, kEnvSizeMax, "bytes the Buffer cache keeps per device (default 268435456)"},
  {"DEVRT_MEMORY_HISTORY", EnvKind::boolean, 0, 0, "record every allocation's call site for memory_history (default 0)"},
  {"DEVRT_NT_COPY_THRESHOLD", EnvKind::number, 0, kEnvSizeMax, "bytes from which host copies stream past the cache; 0 never (default half the last-level cache)"},
  // Vulkan
  {"DEVRT_VULKAN_FORCE_STAGING", EnvKind::boolean, 0, 0, "copy through the staging ring even where memory is host-visible (default 0)"},
  {"DEVRT_VULKAN_NO_PUSH_DESCRIPTORS", EnvKind::boolean, 0, 0, "bind with descriptor sets even where push descriptors exist (default 0)"},
  {"DEVRT_VULKAN_SPIRV_REWRITE", EnvKind::boolean, 0, 0, "define GLSL.std.450 Pow of a negative base at load (default 1)"},
  {"DEVRT_VULKAN_STAGING_CHUNK", EnvKind::number, 4096, 8388608, "bytes per staging-ring chunk (default 8388608)"},
  {"DEVRT_WEBGPU_BACKEND", EnvKind::text, 0, 0, "the adapter's backend: vulkan, opengles, metal or d3d12 (default: the implementation's choice)"},
  // Collectives
  {"DEVRT_COMM_TIMEOUT_MS", EnvKind::number, 0, 9223372036854, "milliseconds a collective waits for its peers (default 600000)"},
  // Remote devices
  {"DEVRT_REMOTE", EnvKind::text, 0, 0, "comma-separated devrt-server addresses whose devices appear as remote"},
  {"DEVRT_REMOTE_KEY_FILE", EnvKind::path, 0, 0, "the key (mode 0600) that proves this client to devrt-server"},
  {"DEVRT_REMOTE_TIMEOUT_MS", EnvKind::number, 1, 3600000, "milliseconds a call waits for its server (default 10000)"},
  {"UCX_MM_ERROR_HANDLING", EnvKind::text, 0, 0, "UCX's own; when any of the three is set devrt leaves UCX's peer-failure setting alone"},
  {"UCX_POSIX_ERROR_HANDLING", EnvKind::text, 0, 0, "as UCX_MM_ERROR_HANDLING"},
  {"UCX_SYSV_ERROR_HANDLING", EnvKind::text, 0, 0, "as UCX_MM_ERROR_HANDLING"},
  // Toolchain and caches
  {"DEVRT_CACHE_DIR", EnvKind::path, 0, 0, "where NVRTC's compiled kernels are kept (else $XDG_CACHE_HOME/devrt)"},
  {"DEVRT_KEEP_TEMPDIR", EnvKind::boolean, 0, 0, "keep the toolchain's temporary folders (default 0)"},
  {"DEVRT_NDK_CC", EnvKind::program, 0, 0, "the Android NDK's clang for create_shared on Android"},
  {"CC", EnvKind::program, 0, 0, "the C compiler the toolchain runs (its last word found on PATH)"},
  {"CXX", EnvKind::program, 0, 0, "the C++ compiler the toolchain runs (its last word found on PATH)"},
  {"AR", EnvKind::program, 0, 0, "the archiver the toolchain runs (its last word found on PATH)"},
  {"EMCC", EnvKind::program, 0, 0, "emscripten's emcc"},
  {"PATH", EnvKind::path_list, 0, 0, "where the toolchain finds the programs it runs (absolute folders only)"},
  {"TMPDIR", EnvKind::path, 0, 0, "where the toolchain makes its temporary folders (else /tmp)"},
  {"CUDA_PATH", EnvKind::path, 0, 0, "the CUDA toolkit (nvcc, NVRTC's folder)"},
  {"CUDA_HOME", EnvKind::path, 0, 0, "the CUDA toolkit when CUDA_PATH is unset"},
  {"ROCM_PATH", EnvKind::path, 0, 0, "the ROCm installation (hipcc, librccl)"},
  {"NVSHMEM_HOME", EnvKind::path, 0, 0, "NVSHMEM's installation"},
  {"NVSHMEM_PREFIX", EnvKind::path, 0, 0, "NVSHMEM's installation when NVSHMEM_HOME is unset"},
  {"ANDROID_NDK_HOME", EnvKind::path, 0, 0, "the Android NDK (its clang, when DEVRT_NDK_CC is unset)"},
  {"HOME", EnvKind::path, 0, 0, "the per-user folders below, and pip's --user NCCL"},
  {"XDG_CACHE_HOME", EnvKind::path, 0, 0, "the per-user cache folder (else ~/.cache)"},
  {"XDG_DATA_HOME", EnvKind::path, 0, 0, "the per-user data folder, where a WebGPU library may be installed (else ~/.local/share)"},
  {"VIRTUAL_ENV", EnvKind::path, 0, 0, "a Python environment whose pip NCCL is tried"},
  {"CONDA_PREFIX", EnvKind::path, 0, 0, "a conda environment whose pip NCCL is tried"},
  // Python package (read by python/devrt, listed here so that one table holds them all)
  {"DEVRT_LIBRARY", EnvKind::library, 0, 0, "python: the libdevrt_c.so to load instead of the package's own"},
  {"DEVRT_POPEN_WORKER_SYS_PATH", EnvKind::text, 0, 0, "python: set by PopenPool for its workers (internal)"},
};
// clang-format on

// Never defined: a name that is not in kEnvironmentVariables with the kind its reader expects
// calls it while compiling, which does not compile.
void environment_variable_not_in_table_with_this_kind() noexcept;

// A variable's table entry, found when compiling: `EnvName<EnvKind::number> name = "X"` compiles
// only when X is in kEnvironmentVariables as a number.
template <EnvKind Kind>
class EnvName {
public:
  consteval EnvName(const char* name) : entry_(&find(name)) {} // NOLINT(google-explicit-constructor)
  constexpr const EnvVariable& entry() const noexcept { return *entry_; }
  constexpr const char* name() const noexcept { return entry_->name; }

private:
  static consteval const EnvVariable& find(const char* name) {
    for (const EnvVariable& variable : kEnvironmentVariables) {
      if (variable.kind == Kind && std::string_view(variable.name) == std::string_view(name)) return variable;
    }
    environment_variable_not_in_table_with_this_kind();
    return kEnvironmentVariables[0];
  }
  const EnvVariable* entry_;
};

// The one lookup: secure_getenv where the C library has it (getenv on bare metal, which has no
// set-user-ID programs); nullptr when unset or empty. Thread-safe as getenv is.
const char* lookup_env(const char* name) noexcept;

// A path-list variable: its value, or nullptr when unset or empty; the reader skips (and reports)
// each relative entry. Thread-safe.
const char* read_path_list_env(EnvName<EnvKind::path_list> name) noexcept;

// A program variable (a compiler and its options): its value, or nullptr when unset or empty.
// Thread-safe.
const char* read_program_env(EnvName<EnvKind::program> name) noexcept;

// A text variable (a word or list its reader parses): its value, or nullptr when unset or empty.
// Thread-safe.
const char* read_text_env(EnvName<EnvKind::text> name) noexcept;

// A library variable (support/dynamic_library.hpp's DynamicLibrary::open reads it): its value, or
// nullptr when unset or empty. Thread-safe.
const char* read_library_env(EnvName<EnvKind::library> name) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_SUPPORT_ENVIRONMENT_VARIABLES_HPP
