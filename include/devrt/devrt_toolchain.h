/* SPDX-License-Identifier: Apache-2.0 */
/* devrt_toolchain's C API: compilers, CUDA and ROCm helpers, temporary directories, file locks and
 * tar, for bindings (the Python package's devrt.support is built on it). Hosted platforms only:
 * these functions are in libdevrt_c.so when devrt_toolchain is built, and absent otherwise (a
 * binding looks up devrt_tc_available to know).
 *
 * The rules of <devrt/devrt.h> hold: devrt_status results, the thread-local devrt_last_error(),
 * out parameters written only on success, strings and bytes returned through char** or void** parameters freed
 * with devrt_string_free, handles released with their *_release. A list of strings is an array
 * and a count; the array may be NULL when the count is 0. */
#ifndef DEVRT_DEVRT_TOOLCHAIN_H
#define DEVRT_DEVRT_TOOLCHAIN_H

#include <devrt/devrt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1: present in every build that has devrt_toolchain's C API (the symbol is the probe). */
DEVRT_C_API int devrt_tc_available(void);

/* ---- Host compilers ---------------------------------------------------------------------------- */

/* The C++ compiler: $CXX, else c++, g++, clang++ on PATH. Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_find_cxx_compiler(char** path);
/* Builds a shared library / an executable from sources or objects with `compiler` (NULL: the C++
 * compiler); the compiler's output is the error message on failure (tool_failed). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_create_shared(const char* output, const char* const* inputs, size_t num_inputs,
                                                const char* const* options, size_t num_options, const char* compiler);
DEVRT_C_API devrt_status devrt_tc_create_executable(const char* output, const char* const* inputs, size_t num_inputs,
                                                    const char* const* options, size_t num_options,
                                                    const char* compiler);
/* What devrt_tc_compile builds. */
typedef enum devrt_tc_output_kind {
  DEVRT_TC_OUTPUT_SHARED = 0,     /* -shared -fPIC */
  DEVRT_TC_OUTPUT_EXECUTABLE = 2, /* an executable */
  DEVRT_TC_OUTPUT_OBJECT = 3      /* -c */
} devrt_tc_output_kind;

/* One compiler run, with what devrt_tc_create_shared cannot say. Lists are arrays and counts. */
typedef struct devrt_tc_compile_options {
  int32_t kind;              /* a devrt_tc_output_kind */
  const char* output;        /* required */
  const char* const* inputs; /* sources or objects */
  size_t num_inputs;
  const char* const* options; /* after -shared/-c, before -o */
  size_t num_options;
  const char* compiler;        /* NULL: the C++ compiler */
  const char* const* launcher; /* words put before the compiler ({"ccache"}); may be NULL */
  size_t num_launcher;
  const char* const* env; /* "NAME=value" added to the inherited environment; may be NULL */
  size_t num_env;
  const char* working_directory; /* NULL: the caller's; relative paths are relative to it */
} devrt_tc_compile_options;

/* Builds options->output; the compiler's output is the error message on failure (tool_failed),
 * an unknown kind is invalid_argument. Borrows *options for the call. Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_compile(const devrt_tc_compile_options* options);
/* `ar crs output inputs...` with `archiver` (NULL: $AR, else ar). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_create_staticlib(const char* output, const char* const* inputs, size_t num_inputs,
                                                   const char* archiver);
/* `<compiler> -dumpmachine` ("x86_64-linux-gnu"); compiler NULL: the C++ compiler. Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_target_triple(const char* compiler, char** triple);
/* Every defined global symbol of an ELF file and its section, as a JSON object
 * {"symbol": ".text", ...}. Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_global_symbol_sections(const char* path, char** json);

/* ---- CUDA -------------------------------------------------------------------------------------- */

/* The CUDA toolkit's root ($CUDA_PATH, $CUDA_HOME, nvcc's parent, /usr/local/cuda). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_find_cuda_path(char** path);
/* The toolkit version at cuda_path (NULL: found as above). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_cuda_version(const char* cuda_path, int* major, int* minor);
/* Compiles CUDA C++ source to target_format "ptx", "cubin" or "fatbin" for the architectures
 * ("sm_90", ...; none: cuda:0's or the compiler's default) with compiler "nvcc" or "nvrtc" (devrt's
 * own NVRTC path, dlopen'ed). *data receives the bytes (free with devrt_string_free). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_compile_cuda(const char* source, const char* target_format, const char* const* arch,
                                               size_t num_arch, const char* const* options, size_t num_options,
                                               const char* compiler, void** data, size_t* size);
/* "8.6", "9.0.a", "sm_86", "sm_90a" or "compute_86" -> major, minor. Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_parse_compute_version(const char* text, int* major, int* minor);
/* TVM's feature rules for a compute version (any form devrt_tc_parse_compute_version takes):
 * feature "fp16", "int8", "tensorcore", "bf16", "fp8" or "fp4";
 * *result 1 or 0. Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_cuda_has_feature(const char* feature, const char* compute_version, int* result);
/* 1 when the CUDA toolkit found supports CUDA graphs (>= 10.0), else 0. Thread-safe. */
DEVRT_C_API int devrt_tc_have_cudagraph(void);

/* ---- ROCm -------------------------------------------------------------------------------------- */

/* ld.lld (preferring major version preferred_major when > 0). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_find_lld(int preferred_major, char** path);
/* Links a relocatable AMDGPU object into a code object with lld (NULL: found). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_rocm_link(const char* object, const char* code_object, const char* lld);

/* ---- Files ------------------------------------------------------------------------------------- */

typedef struct devrt_tempdir_t* devrt_tempdir;
typedef struct devrt_filelock_t* devrt_filelock;

/* A fresh directory under $TMPDIR named prefix + random (prefix NULL: "devrt-"); removed with its
 * contents on release unless kept (or DEVRT_KEEP_TEMPDIR=1). Owned by the caller. */
DEVRT_C_API devrt_status devrt_tc_tempdir_create(const char* prefix, devrt_tempdir* out);
/* Its path; borrowed, valid while the handle lives. */
DEVRT_C_API const char* devrt_tc_tempdir_path(devrt_tempdir dir);
/* Keeps the directory on release. Mutates the handle. */
DEVRT_C_API void devrt_tc_tempdir_keep(devrt_tempdir dir);
/* Removes the directory (unless kept) and frees the handle. NULL is a no-op. */
DEVRT_C_API void devrt_tc_tempdir_release(devrt_tempdir dir);

/* An exclusive advisory lock on path (created if missing); wait 0 fails at once with unavailable
 * when another holder has it. Between processes and within one. Owned by the caller. */
DEVRT_C_API devrt_status devrt_tc_filelock_acquire(const char* path, int wait, devrt_filelock* out);
/* Releases the lock and frees the handle. NULL is a no-op. */
DEVRT_C_API void devrt_tc_filelock_release(devrt_filelock lock);

/* A tar archive of the files (each stored under its base name). Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_tar_create(const char* output, const char* const* files, size_t num_files);
/* Extracts an archive into directory (refusing entries that escape it); *names (may be NULL)
 * receives the extracted paths, '\n'-separated. Thread-safe. */
DEVRT_C_API devrt_status devrt_tc_tar_extract(const char* archive, const char* directory, char** names);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVRT_DEVRT_TOOLCHAIN_H */
