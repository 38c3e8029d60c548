// SPDX-License-Identifier: Apache-2.0
// NVRTC: libnvrtc opened at first use; compiled programs cached on disk.
#include <devrt/nvrtc.hpp>

#include <nvrtc.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <devrt/log.hpp>
#include <devrt/target.hpp>

#include "support/dynamic_library.hpp"
#include "support/environment.hpp"
#include "support/lazy_runtime.hpp"

namespace devrt::nvrtc {

namespace {

#define DEVRT_NVRTC_SYMBOLS(X)                                                                                         \
  X(nvrtcVersion)                                                                                                      \
  X(nvrtcGetErrorString)                                                                                               \
  X(nvrtcCreateProgram)                                                                                                \
  X(nvrtcCompileProgram)                                                                                               \
  X(nvrtcDestroyProgram)                                                                                               \
  X(nvrtcGetProgramLogSize)                                                                                            \
  X(nvrtcGetProgramLog)                                                                                                \
  X(nvrtcGetPTXSize)                                                                                                   \
  X(nvrtcGetPTX)                                                                                                       \
  X(nvrtcGetCUBINSize)                                                                                                 \
  X(nvrtcGetCUBIN)

struct Api {
#define DEVRT_NVRTC_SLOT(name) decltype(&::name) name = nullptr;
  DEVRT_NVRTC_SYMBOLS(DEVRT_NVRTC_SLOT)
#undef DEVRT_NVRTC_SLOT
};

struct Library {
  Status status;
  Api api;
  detail::DynamicLibrary library;
  int version = 0;
};

constexpr const char* kNvrtcNames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
constexpr detail::VendorLibrary kNvrtc{"NVRTC", kNvrtcNames, "DEVRT_NVRTC_LIBRARY",
                                       "install the CUDA toolkit's NVRTC (libnvrtc) or set CUDA_PATH to the toolkit"};

Status load(Library& lib) {
  // The toolkit's lib directory is often outside the loader's path: try it after the sonames.
  const char* toolkit = detail::read_path_env("CUDA_PATH");
  if (toolkit == nullptr) toolkit = detail::read_path_env("CUDA_HOME");
  std::vector<std::string> candidates(std::begin(kNvrtcNames), std::end(kNvrtcNames));
  candidates.push_back(std::string(toolkit != nullptr ? toolkit : "/usr/local/cuda") + "/lib64/libnvrtc.so");
  DEVRT_RETURN_IF_ERROR(lib.library.open(kNvrtc, candidates));
  DEVRT_RESOLVE_SYMBOLS(lib.library, lib.api, DEVRT_NVRTC_SYMBOLS, "");
  int major = 0, minor = 0;
  if (lib.api.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
    return make_error(ErrorCode::unavailable, lib.library.path(), ": nvrtcVersion failed");
  }
  lib.version = major * 1000 + minor * 10;
  return Status();
}

Library& library() noexcept { return detail::lazy_runtime<Library, load>(); }

// FNV-1a, 64 bits: names the cache file. The file also stores the whole key, compared on read, so
// a collision costs a recompile, never a wrong program.
std::uint64_t fnv1a(std::string_view bytes) noexcept {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

constexpr std::string_view kCacheMagic = "devrt-nvrtc-cache 1\n";

bool make_directories(const std::string& path) {
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) return true;
  }
}

bool read_file(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  bool ok = ::fstat(fd, &info) == 0;
  if (ok) {
    out.resize(static_cast<std::size_t>(info.st_size));
    std::size_t done = 0;
    while (ok && done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      ok = n > 0;
      if (ok) done += static_cast<std::size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

bool write_file_atomically(const std::string& path, std::string_view contents) {
  static std::atomic<unsigned> counter{0};
  std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ::close(fd) == 0 && ok;
  if (ok) ok = ::rename(temporary.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(temporary.c_str());
  return ok;
}

void append_sized(std::string& out, std::string_view part) {
  std::uint64_t size = part.size();
  out.append(reinterpret_cast<const char*>(&size), sizeof size);
  out.append(part);
}

bool take_sized(std::string_view& in, std::string_view& part) {
  std::uint64_t size = 0;
  if (in.size() < sizeof size) return false;
  std::memcpy(&size, in.data(), sizeof size);
  in.remove_prefix(sizeof size);
  if (size > in.size()) return false;
  part = in.substr(0, size);
  in.remove_prefix(size);
  return true;
}

// The cache entry for `key`, if its stored key matches exactly.
bool cache_lookup(const std::string& path, std::string_view key, Program& program) {
  std::string contents;
  if (!read_file(path, contents)) return false;
  std::string_view in = contents;
  if (in.substr(0, kCacheMagic.size()) != kCacheMagic) return false;
  in.remove_prefix(kCacheMagic.size());
  std::string_view stored_key, log, bytes;
  if (!take_sized(in, stored_key) || stored_key != key || !take_sized(in, log) || !take_sized(in, bytes)) return false;
  program.log.assign(log);
  program.bytes.resize(bytes.size());
  std::memcpy(program.bytes.data(), bytes.data(), bytes.size());
  program.from_cache = true;
  return true;
}

void cache_store(const std::string& directory, const std::string& path, std::string_view key, const Program& program) {
  std::string contents(kCacheMagic);
  append_sized(contents, key);
  append_sized(contents, program.log);
  append_sized(contents, std::string_view(reinterpret_cast<const char*>(program.bytes.data()), program.bytes.size()));
  if (!make_directories(directory) || !write_file_atomically(path, contents)) {
    DEVRT_LOG(warning, "nvrtc: cannot write the cache entry ", path, ": ", std::strerror(errno));
  }
}

// "compute_90" from cuda:0 when a CUDA device is present.
std::string default_arch(ModuleFormat output) {
  Result<Target> target = detect_target(Device{DeviceKind::cuda, 0});
  if (!target.ok()) return {};
  std::optional<std::string> arch = target->get<std::string>("arch"); // "sm_90"
  if (!arch) return {};
  return output == ModuleFormat::ptx ? "compute_" + arch->substr(3) : *arch;
}

} // namespace

Status availability() noexcept { return library().status; }

Result<int> version() noexcept {
  const Library& lib = library();
  if (!lib.status.ok()) return lib.status;
  return lib.version;
}

std::string cache_directory() {
  if (const char* devrt_dir = detail::read_path_env("DEVRT_CACHE_DIR")) return std::string(devrt_dir) + "/nvrtc";
  if (const char* xdg = detail::read_path_env("XDG_CACHE_HOME")) return std::string(xdg) + "/devrt/nvrtc";
  if (const char* home = detail::read_path_env("HOME")) return std::string(home) + "/.cache/devrt/nvrtc";
  return {};
}

Result<Program> compile(std::string_view source, const CompileOptions& options) noexcept {
  const Library& lib = library();
  if (!lib.status.ok()) return lib.status;
  const Api& api = lib.api;
  if (options.output != ModuleFormat::ptx && options.output != ModuleFormat::cubin) {
    return make_error(ErrorCode::invalid_argument, "nvrtc::compile: output must be ptx or cubin, not ",
                      module_format_name(options.output));
  }
  if (source.find('\0') != std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument, "nvrtc::compile: the source contains a NUL byte");
  }
  std::string arch = options.arch.empty() ? default_arch(options.output) : options.arch;
  if (options.output == ModuleFormat::cubin && arch.rfind("sm_", 0) != 0) {
    return make_error(ErrorCode::invalid_argument, "nvrtc::compile: a cubin needs a real architecture (sm_XY), got '",
                      arch, "'", arch.empty() ? " and no CUDA device to take it from" : "");
  }
  std::vector<std::string> flags = options.flags;
  if (!arch.empty()) flags.push_back("-arch=" + arch);

  std::string key = std::to_string(lib.version) + '\n' + std::string(module_format_name(options.output)) + '\n';
  for (const std::string& flag : flags) key += flag + '\n';
  key += options.name + '\n';
  key += source;
  std::string directory = options.use_cache ? cache_directory() : std::string();
  std::string path;
  Program program;
  program.format = options.output;
  if (!directory.empty()) {
    char name[40];
    std::snprintf(name, sizeof name, "/%016llx.bin", static_cast<unsigned long long>(fnv1a(key)));
    path = directory + name;
    if (cache_lookup(path, key, program)) return program;
  }

  std::string text(source);
  nvrtcProgram handle = nullptr;
  nvrtcResult code = api.nvrtcCreateProgram(&handle, text.c_str(), options.name.c_str(), 0, nullptr, nullptr);
  if (code != NVRTC_SUCCESS) {
    return make_error(ErrorCode::driver_error, "nvrtcCreateProgram failed: ", api.nvrtcGetErrorString(code));
  }
  std::vector<const char*> argv;
  argv.reserve(flags.size());
  for (const std::string& flag : flags) argv.push_back(flag.c_str());
  nvrtcResult compiled = api.nvrtcCompileProgram(handle, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  if (api.nvrtcGetProgramLogSize(handle, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    program.log.resize(log_size);
    if (api.nvrtcGetProgramLog(handle, program.log.data()) != NVRTC_SUCCESS) program.log.clear();
    program.log.resize(std::strlen(program.log.c_str()));
  }
  Status status;
  if (compiled != NVRTC_SUCCESS) {
    status = make_error(ErrorCode::invalid_argument, "nvrtcCompileProgram(", options.name, ", arch ",
                        arch.empty() ? std::string("default") : arch, ") failed: ", api.nvrtcGetErrorString(compiled),
                        "\n--- build log ---\n", program.log);
  } else {
    std::size_t size = 0;
    bool ptx = options.output == ModuleFormat::ptx;
    code = ptx ? api.nvrtcGetPTXSize(handle, &size) : api.nvrtcGetCUBINSize(handle, &size);
    if (code == NVRTC_SUCCESS) {
      program.bytes.resize(size);
      char* out = reinterpret_cast<char*>(program.bytes.data());
      code = ptx ? api.nvrtcGetPTX(handle, out) : api.nvrtcGetCUBIN(handle, out);
    }
    if (code != NVRTC_SUCCESS) {
      status = make_error(ErrorCode::driver_error, ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN",
                          " failed: ", api.nvrtcGetErrorString(code));
    }
    // PTX comes NUL-terminated; the module bytes are the text.
    while (ptx && !program.bytes.empty() && program.bytes.back() == std::byte{0}) program.bytes.pop_back();
  }
  static_cast<void>(api.nvrtcDestroyProgram(&handle));
  if (!status.ok()) return status;
  if (!path.empty()) cache_store(directory, path, key, program);
  return program;
}

} // namespace devrt::nvrtc
