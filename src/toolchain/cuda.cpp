// SPDX-License-Identifier: Apache-2.0
#include <devrt/nvrtc.hpp>
#include <devrt/toolchain/cuda.hpp>
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/process.hpp>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "support/environment.hpp"
#include "toolchain_internal.hpp"

namespace devrt::toolchain {
namespace {

bool exists(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::exists(path, ignored);
}

// "13.0.48" or "13.0" -> {13, 0}.
bool parse_major_minor(std::string_view text, CudaVersion& version) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, version.major);
  if (ec != std::errc() || p == end || *p != '.') return false;
  auto [q, ec2] = std::from_chars(p + 1, end, version.minor);
  return ec2 == std::errc() && q != p + 1;
}

// The string value following `"key"` after position `from` in a JSON text.
std::string_view json_string_after(std::string_view json, std::string_view key, std::size_t from) {
  std::size_t k = json.find("\"" + std::string(key) + "\"", from);
  if (k == std::string_view::npos) return {};
  std::size_t colon = json.find(':', k);
  std::size_t open = colon == std::string_view::npos ? colon : json.find('"', colon);
  std::size_t close = open == std::string_view::npos ? open : json.find('"', open + 1);
  if (close == std::string_view::npos) return {};
  return json.substr(open + 1, close - open - 1);
}

Result<std::string> find_nvcc() {
  Result<std::string> nvcc = find_program("nvcc");
  if (nvcc.ok()) return nvcc;
  Result<std::string> root = find_cuda_path();
  if (root.ok() && exists(*root + "/bin/nvcc")) return *root + "/bin/nvcc";
  return Status(ErrorCode::unavailable, "tool not found: nvcc (not on PATH, and no CUDA toolkit found)");
}

const char* output_flag(CudaOutput output) {
  switch (output) {
  case CudaOutput::ptx: return "--ptx";
  case CudaOutput::cubin: return "--cubin";
  case CudaOutput::fatbin: return "--fatbin";
  }
  return "--ptx";
}

Result<std::vector<std::byte>> compile_with_nvcc(std::string_view source, const CudaCompileOptions& options) {
  DEVRT_ASSIGN_OR_RETURN(std::string nvcc, find_nvcc());
  DEVRT_ASSIGN_OR_RETURN(TempDir temp, TempDir::create("devrt-nvcc-"));
  std::string input = temp.relpath("kernel.cu");
  std::string output = temp.relpath("kernel.out");
  DEVRT_RETURN_IF_ERROR(write_file(input, source));
  std::vector<std::string> argv{nvcc, output_flag(options.output), "-O3"};
  if (options.arch.size() == 1) {
    argv.push_back("-arch=" + options.arch.front());
  } else {
    for (const std::string& arch : options.arch) {
      // sm_XY: machine code for XY; compute_XY: PTX for XY, JIT-compiled at load.
      std::string number = arch.substr(arch.find('_') + 1);
      bool ptx = arch.starts_with("compute_");
      argv.push_back("-gencode=arch=compute_" + number + ",code=" + (ptx ? "compute_" : "sm_") + number);
    }
  }
  argv.insert(argv.end(), options.options.begin(), options.options.end());
  argv.insert(argv.end(), {"-o", output, input});
  ProcessOptions run;
  run.argv = argv;
  DEVRT_ASSIGN_OR_RETURN(ProcessResult result, run_process(run));
  DEVRT_RETURN_IF_ERROR(check_process(result, "nvcc"));
  DEVRT_ASSIGN_OR_RETURN(std::string bytes, read_file(output));
  if (bytes.empty()) return Status(ErrorCode::tool_failed, "nvcc produced an empty file");
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

Result<std::vector<std::byte>> compile_with_nvrtc(std::string_view source, const CudaCompileOptions& options) {
  if (options.output == CudaOutput::fatbin) {
    return Status(ErrorCode::unsupported, "compile_cuda: NVRTC makes PTX and cubins, not fatbins; use nvcc");
  }
  if (options.arch.size() > 1) {
    return Status(ErrorCode::unsupported, "compile_cuda: NVRTC compiles for one architecture at a time");
  }
  nvrtc::CompileOptions nvrtc_options;
  nvrtc_options.output = options.output == CudaOutput::cubin ? ModuleFormat::cubin : ModuleFormat::ptx;
  if (!options.arch.empty()) nvrtc_options.arch = options.arch.front();
  nvrtc_options.flags = options.options;
  Result<nvrtc::Program> program = nvrtc::compile(source, nvrtc_options);
  if (!program.ok()) {
    ErrorCode code =
        program.status().code() == ErrorCode::invalid_argument ? ErrorCode::tool_failed : program.status().code();
    return Status(code, program.status().message());
  }
  return std::move(program->bytes);
}

Result<bool> at_least(std::string_view compute_version, int major, int minor) {
  DEVRT_ASSIGN_OR_RETURN(ComputeVersion version, parse_compute_version(compute_version));
  return version.major > major || (version.major == major && version.minor >= minor);
}

} // namespace

Result<std::string> find_cuda_path() noexcept {
  std::vector<std::string> candidates;
  for (const char* value : {devrt::detail::read_path_env("CUDA_PATH"), devrt::detail::read_path_env("CUDA_HOME")}) {
    if (value != nullptr) candidates.emplace_back(value);
  }
  Result<std::string> nvcc_root = detail::install_root("nvcc");
  if (nvcc_root.ok()) candidates.push_back(*nvcc_root);
  candidates.emplace_back("/usr/local/cuda");
  std::string tried;
  for (const std::string& root : candidates) {
    if (exists(root + "/bin/nvcc") || exists(root + "/include/cuda.h")) return root;
    tried += tried.empty() ? root : ", " + root;
  }
  return Status(ErrorCode::unavailable,
                "CUDA toolkit not found (tried $CUDA_PATH, $CUDA_HOME, nvcc on PATH, " + tried + ")");
}

Result<CudaVersion> cuda_version(const std::string& cuda_path) noexcept {
  CudaVersion version;
  Result<std::string> json = read_file(cuda_path + "/version.json");
  if (json.ok()) {
    std::size_t cuda = json->find("\"cuda\"");
    if (cuda != std::string::npos && parse_major_minor(json_string_after(*json, "version", cuda), version))
      return version;
  }
  Result<std::string> text = read_file(cuda_path + "/version.txt"); // "CUDA Version 10.2.89"
  if (text.ok()) {
    std::size_t at = text->find("Version ");
    if (at != std::string::npos && parse_major_minor(std::string_view(*text).substr(at + 8), version)) return version;
  }
  Result<std::string> out = run_and_capture({cuda_path + "/bin/nvcc", "--version"});
  if (out.ok()) {
    std::size_t at = out->find("release ");
    if (at != std::string::npos && parse_major_minor(std::string_view(*out).substr(at + 8), version)) return version;
  }
  return make_error(ErrorCode::not_found, "cuda_version(", cuda_path,
                    "): no version.json, version.txt or nvcc --version to read");
}

Result<std::vector<std::byte>> compile_cuda(std::string_view source, const CudaCompileOptions& options) noexcept {
  if (source.empty()) return Status(ErrorCode::invalid_argument, "compile_cuda: empty source");
  for (const std::string& arch : options.arch) {
    if (!(arch.starts_with("sm_") || arch.starts_with("compute_")) || arch.find('_') + 1 >= arch.size()) {
      return make_error(ErrorCode::invalid_argument, "compile_cuda: architecture '", arch,
                        "' is not sm_XY or compute_XY");
    }
  }
  if (options.compiler == CudaCompiler::nvrtc) return compile_with_nvrtc(source, options);
  return compile_with_nvcc(source, options);
}

Result<ComputeVersion> parse_compute_version(std::string_view text) noexcept {
  auto malformed = [&] {
    return make_error(ErrorCode::invalid_argument, "compute version '", text,
                      "' is malformed: expected \"major.minor\" (\"8.6\"), \"major.minor.variant\" (\"9.0.a\") or "
                      "sm_XY[a|f] / compute_XY[a|f]");
  };
  auto is_digits = [](std::string_view digits) {
    return !digits.empty() && digits.size() <= 4 && digits.find_first_not_of("0123456789") == std::string_view::npos;
  };
  // A variant letter ("a": architecture-specific, "f": family) follows the number: "90a", "9.0.a".
  auto is_variant = [](std::string_view variant) {
    return variant.size() == 1 && variant[0] >= 'a' && variant[0] <= 'z';
  };
  ComputeVersion version;
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (!text.starts_with(prefix)) continue;
    std::string_view digits = text.substr(prefix.size());
    if (!digits.empty() && is_variant(digits.substr(digits.size() - 1))) digits.remove_suffix(1);
    // "86" -> 8.6, "100" -> 10.0: the last digit is the minor version.
    if (digits.size() < 2 || !is_digits(digits)) return malformed();
    std::from_chars(digits.data(), digits.data() + digits.size() - 1, version.major);
    version.minor = digits.back() - '0';
    return version;
  }
  std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return malformed();
  std::string_view major = text.substr(0, dot);
  std::string_view minor = text.substr(dot + 1);
  if (std::size_t second = minor.find('.'); second != std::string_view::npos) {
    if (!is_variant(minor.substr(second + 1))) return malformed();
    minor = minor.substr(0, second);
  }
  if (!is_digits(major) || !is_digits(minor)) return malformed();
  std::from_chars(major.data(), major.data() + major.size(), version.major);
  std::from_chars(minor.data(), minor.data() + minor.size(), version.minor);
  return version;
}

Result<bool> have_fp16(std::string_view compute_version) noexcept {
  DEVRT_ASSIGN_OR_RETURN(ComputeVersion version, parse_compute_version(compute_version));
  return (version.major == 5 && version.minor == 3) || version.major >= 6;
}
Result<bool> have_int8(std::string_view compute_version) noexcept { return at_least(compute_version, 6, 0); }
Result<bool> have_tensorcore(std::string_view compute_version) noexcept { return at_least(compute_version, 7, 0); }
Result<bool> have_bf16(std::string_view compute_version) noexcept { return at_least(compute_version, 8, 0); }
Result<bool> have_fp8(std::string_view compute_version) noexcept { return at_least(compute_version, 8, 9); }
Result<bool> have_fp4(std::string_view compute_version) noexcept {
  DEVRT_ASSIGN_OR_RETURN(ComputeVersion version, parse_compute_version(compute_version));
  return version.major == 10 && version.minor == 0;
}

bool have_cudagraph() noexcept {
  Result<std::string> path = find_cuda_path();
  if (!path.ok()) return false;
  Result<CudaVersion> version = cuda_version(*path);
  return version.ok() && *version >= CudaVersion{10, 0};
}

Result<NvshmemPaths> find_nvshmem() noexcept {
  std::vector<std::string> roots;
  for (const char* value :
       {devrt::detail::read_path_env("NVSHMEM_HOME"), devrt::detail::read_path_env("NVSHMEM_PREFIX")}) {
    if (value != nullptr) roots.emplace_back(value);
  }
  roots.insert(roots.end(), {"/usr/local/nvshmem", "/opt/nvidia/nvshmem"});
  auto has_library = [](const std::string& dir) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      if (entry.path().filename().string().starts_with("libnvshmem")) return true;
    }
    return false;
  };
  std::string tried;
  for (const std::string& root : roots) {
    if (exists(root + "/include/nvshmem.h") && has_library(root + "/lib"))
      return NvshmemPaths{root + "/include", root + "/lib"};
    tried += (tried.empty() ? "" : ", ") + root;
  }
  // Debian/Ubuntu packages: /usr/include/nvshmem_<major>/ and /usr/lib/<triple>/nvshmem/<major>/.
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/include", error)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("nvshmem_") || !exists(entry.path().string() + "/nvshmem.h")) continue;
    std::string major = name.substr(8);
    for (const auto& lib : std::filesystem::directory_iterator("/usr/lib", error)) {
      std::string dir = lib.path().string() + "/nvshmem/" + major;
      if (has_library(dir)) return NvshmemPaths{entry.path().string(), dir};
    }
  }
  return Status(ErrorCode::unavailable, "NVSHMEM not found (tried $NVSHMEM_HOME, $NVSHMEM_PREFIX, " + tried +
                                            ", /usr/include/nvshmem_<N> with /usr/lib/<triple>/nvshmem/<N>)");
}

} // namespace devrt::toolchain
