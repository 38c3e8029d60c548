// SPDX-License-Identifier: Apache-2.0
// The C API over devrt_toolchain (devrt/devrt_toolchain.h).
#include <devrt/devrt_toolchain.h>
#include <devrt/toolchain.hpp>

#include <cstdlib>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "capi/capi_internal.hpp"
#include "support/json.hpp"

struct devrt_tempdir_t {
  devrt::toolchain::TempDir dir;
};
struct devrt_filelock_t {
  devrt::toolchain::FileLock lock;
};

namespace devrt::capi {
template <>
struct HandleKind<devrt_tempdir_t> {
  static constexpr std::uint8_t value = 8;
  static constexpr const char* name = "devrt_tempdir";
};
template <>
struct HandleKind<devrt_filelock_t> {
  static constexpr std::uint8_t value = 9;
  static constexpr const char* name = "devrt_filelock";
};
} // namespace devrt::capi

using namespace devrt;
using namespace devrt::capi;
namespace tc = devrt::toolchain;

namespace {

std::vector<std::string> strings(const char* const* items, size_t count) {
  std::vector<std::string> list;
  if (items == nullptr) return list;
  list.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (items[i] != nullptr) list.emplace_back(items[i]);
  }
  return list;
}

std::string text_or_empty(const char* text) { return text != nullptr ? std::string(text) : std::string(); }

devrt_status give_result(const Result<std::string>& result, char** out, const char* call) {
  if (!result.ok()) return fail(result.status());
  return give_string(*result, out, call);
}

devrt_status give_version(int version_major, int version_minor, int* major, int* minor) {
  if (major != nullptr) *major = version_major;
  if (minor != nullptr) *minor = version_minor;
  return DEVRT_STATUS_OK;
}

Result<tc::CudaOutput> cuda_output(std::string_view format) {
  if (format == "ptx") return tc::CudaOutput::ptx;
  if (format == "cubin") return tc::CudaOutput::cubin;
  if (format == "fatbin") return tc::CudaOutput::fatbin;
  return make_error(ErrorCode::invalid_argument, "compile_cuda: target_format '", format,
                    "' (want ptx, cubin or fatbin)");
}

Result<tc::CudaCompiler> cuda_compiler(std::string_view name) {
  if (name.empty() || name == "nvcc") return tc::CudaCompiler::nvcc;
  if (name == "nvrtc") return tc::CudaCompiler::nvrtc;
  return make_error(ErrorCode::invalid_argument, "compile_cuda: compiler '", name, "' (want nvcc or nvrtc)");
}

} // namespace

extern "C" {

int devrt_tc_available(void) { return 1; }

devrt_status devrt_tc_find_cxx_compiler(char** path) {
  return give_result(tc::find_cxx_compiler(), path, "devrt_tc_find_cxx_compiler");
}

devrt_status devrt_tc_create_shared(const char* output, const char* const* inputs, size_t num_inputs,
                                    const char* const* options, size_t num_options, const char* compiler) {
  if (output == nullptr) return null_argument("devrt_tc_create_shared", "output");
  return to_status(
      tc::create_shared(output, strings(inputs, num_inputs), strings(options, num_options), text_or_empty(compiler)));
}

devrt_status devrt_tc_create_executable(const char* output, const char* const* inputs, size_t num_inputs,
                                        const char* const* options, size_t num_options, const char* compiler) {
  if (output == nullptr) return null_argument("devrt_tc_create_executable", "output");
  return to_status(tc::create_executable(output, strings(inputs, num_inputs), strings(options, num_options),
                                         text_or_empty(compiler)));
}

devrt_status devrt_tc_compile(const devrt_tc_compile_options* options) {
  if (options == nullptr || options->output == nullptr) return null_argument("devrt_tc_compile", "options or output");
  tc::Compiler compiler;
  switch (options->kind) {
  case DEVRT_TC_OUTPUT_SHARED: compiler.kind = tc::OutputKind::shared_library; break;
  case DEVRT_TC_OUTPUT_EXECUTABLE: compiler.kind = tc::OutputKind::executable; break;
  case DEVRT_TC_OUTPUT_OBJECT: compiler.kind = tc::OutputKind::object; break;
  default:
    return fail(make_error(ErrorCode::invalid_argument, "devrt_tc_compile: output kind ", options->kind,
                           " (want DEVRT_TC_OUTPUT_SHARED, _EXECUTABLE or _OBJECT)"));
  }
  compiler.executable = text_or_empty(options->compiler);
  compiler.options = strings(options->options, options->num_options);
  compiler.launcher = strings(options->launcher, options->num_launcher);
  compiler.env = strings(options->env, options->num_env);
  compiler.working_directory = text_or_empty(options->working_directory);
  return to_status(compiler(options->output, strings(options->inputs, options->num_inputs)));
}

devrt_status devrt_tc_create_staticlib(const char* output, const char* const* inputs, size_t num_inputs,
                                       const char* archiver) {
  if (output == nullptr) return null_argument("devrt_tc_create_staticlib", "output");
  return to_status(tc::create_staticlib(output, strings(inputs, num_inputs), text_or_empty(archiver)));
}

devrt_status devrt_tc_target_triple(const char* compiler, char** triple) {
  return give_result(tc::target_triple(text_or_empty(compiler)), triple, "devrt_tc_target_triple");
}

devrt_status devrt_tc_global_symbol_sections(const char* path, char** json) {
  if (path == nullptr) return null_argument("devrt_tc_global_symbol_sections", "path");
  Result<std::map<std::string, std::string>> sections = tc::global_symbol_sections(path);
  if (!sections.ok()) return fail(sections.status());
  std::string out = "{";
  for (const auto& [symbol, section] : *sections) {
    if (out.size() > 1) out += ", ";
    detail::append_json_string(out, symbol);
    out += ": ";
    detail::append_json_string(out, section);
  }
  out += "}";
  return give_string(out, json, "devrt_tc_global_symbol_sections");
}

devrt_status devrt_tc_find_cuda_path(char** path) {
  return give_result(tc::find_cuda_path(), path, "devrt_tc_find_cuda_path");
}

devrt_status devrt_tc_cuda_version(const char* cuda_path, int* major, int* minor) {
  std::string root = text_or_empty(cuda_path);
  if (root.empty()) {
    Result<std::string> found = tc::find_cuda_path();
    if (!found.ok()) return fail(found.status());
    root = *found;
  }
  Result<tc::CudaVersion> version = tc::cuda_version(root);
  if (!version.ok()) return fail(version.status());
  return give_version(version->major, version->minor, major, minor);
}

devrt_status devrt_tc_compile_cuda(const char* source, const char* target_format, const char* const* arch,
                                   size_t num_arch, const char* const* options, size_t num_options,
                                   const char* compiler, void** data, size_t* size) {
  if (source == nullptr) return null_argument("devrt_tc_compile_cuda", "source");
  if (data == nullptr || size == nullptr) return null_argument("devrt_tc_compile_cuda", "data or size");
  Result<tc::CudaOutput> output = cuda_output(target_format != nullptr ? target_format : "ptx");
  if (!output.ok()) return fail(output.status());
  Result<tc::CudaCompiler> which = cuda_compiler(compiler != nullptr ? compiler : "");
  if (!which.ok()) return fail(which.status());
  tc::CudaCompileOptions compile{*output, strings(arch, num_arch), strings(options, num_options), *which};
  Result<std::vector<std::byte>> bytes = tc::compile_cuda(source, compile);
  if (!bytes.ok()) return fail(bytes.status());
  char* copy = duplicate(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
  if (copy == nullptr) return fail(ErrorCode::out_of_memory, "devrt_tc_compile_cuda: no memory for the result");
  *data = copy;
  *size = bytes->size();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tc_parse_compute_version(const char* text, int* major, int* minor) {
  if (text == nullptr) return null_argument("devrt_tc_parse_compute_version", "text");
  Result<tc::ComputeVersion> version = tc::parse_compute_version(text);
  if (!version.ok()) return fail(version.status());
  return give_version(version->major, version->minor, major, minor);
}

devrt_status devrt_tc_cuda_has_feature(const char* feature, const char* compute_version, int* result) {
  if (feature == nullptr || compute_version == nullptr) {
    return null_argument("devrt_tc_cuda_has_feature", "feature or compute_version");
  }
  if (result == nullptr) return null_argument("devrt_tc_cuda_has_feature", "result");
  std::string_view name = feature;
  Result<bool> answer = make_error(ErrorCode::invalid_argument, "devrt_tc_cuda_has_feature: feature '", name,
                                   "' (want fp16, int8, tensorcore, bf16, fp8 or fp4)");
  if (name == "fp16") answer = tc::have_fp16(compute_version);
  if (name == "int8") answer = tc::have_int8(compute_version);
  if (name == "tensorcore") answer = tc::have_tensorcore(compute_version);
  if (name == "bf16") answer = tc::have_bf16(compute_version);
  if (name == "fp8") answer = tc::have_fp8(compute_version);
  if (name == "fp4") answer = tc::have_fp4(compute_version);
  if (!answer.ok()) return fail(answer.status());
  *result = *answer ? 1 : 0;
  return DEVRT_STATUS_OK;
}

int devrt_tc_have_cudagraph(void) { return tc::have_cudagraph() ? 1 : 0; }

devrt_status devrt_tc_find_lld(int preferred_major, char** path) {
  return give_result(tc::find_lld(preferred_major), path, "devrt_tc_find_lld");
}

devrt_status devrt_tc_rocm_link(const char* object, const char* code_object, const char* lld) {
  if (object == nullptr || code_object == nullptr) return null_argument("devrt_tc_rocm_link", "object or code_object");
  return to_status(tc::rocm_link(object, code_object, text_or_empty(lld)));
}

devrt_status devrt_tc_tempdir_create(const char* prefix, devrt_tempdir* out) {
  if (out == nullptr) return null_argument("devrt_tc_tempdir_create", "out");
  Result<tc::TempDir> dir = tc::TempDir::create(prefix != nullptr ? prefix : "devrt-");
  if (!dir.ok()) return fail(dir.status());
  return give_handle(out, "devrt_tc_tempdir_create", std::move(*dir));
}

const char* devrt_tc_tempdir_path(devrt_tempdir dir) {
  return (dir = resolve(dir, "devrt_tc_tempdir_path")) != nullptr ? dir->dir.path().c_str() : nullptr;
}

void devrt_tc_tempdir_keep(devrt_tempdir dir) {
  if ((dir = resolve(dir, "devrt_tc_tempdir_keep")) != nullptr) dir->dir.keep();
}

void devrt_tc_tempdir_release(devrt_tempdir dir) { delete retire(dir, "devrt_tc_tempdir_release"); }

devrt_status devrt_tc_filelock_acquire(const char* path, int wait, devrt_filelock* out) {
  if (path == nullptr) return null_argument("devrt_tc_filelock_acquire", "path");
  if (out == nullptr) return null_argument("devrt_tc_filelock_acquire", "out");
  Result<tc::FileLock> lock = wait != 0 ? tc::FileLock::acquire(path) : tc::FileLock::try_acquire(path);
  if (!lock.ok()) return fail(lock.status());
  return give_handle(out, "devrt_tc_filelock_acquire", std::move(*lock));
}

void devrt_tc_filelock_release(devrt_filelock lock) { delete retire(lock, "devrt_tc_filelock_release"); }

devrt_status devrt_tc_tar_create(const char* output, const char* const* files, size_t num_files) {
  if (output == nullptr) return null_argument("devrt_tc_tar_create", "output");
  return to_status(tc::create_tar(output, strings(files, num_files)));
}

devrt_status devrt_tc_tar_extract(const char* archive, const char* directory, char** names) {
  if (archive == nullptr || directory == nullptr) return null_argument("devrt_tc_tar_extract", "archive or directory");
  Result<std::vector<std::string>> extracted = tc::extract_tar(archive, directory);
  if (!extracted.ok()) return fail(extracted.status());
  if (names == nullptr) return DEVRT_STATUS_OK;
  std::string joined;
  for (const std::string& name : *extracted) joined += (joined.empty() ? "" : "\n") + name;
  return give_string(joined, names, "devrt_tc_tar_extract");
}

} // extern "C"
