// SPDX-License-Identifier: Apache-2.0
// Run-time compilation of CUDA C++ to PTX or cubin with NVRTC (libnvrtc opened at first use, no
// GPU needed), with an on-disk cache keyed by source, options and NVRTC version.
//
//   devrt::nvrtc::CompileOptions options{.output = devrt::ModuleFormat::cubin, .arch = "sm_90"};
//   devrt::Result<devrt::nvrtc::Program> program = devrt::nvrtc::compile(source, options);
//   devrt::Result<devrt::Module> module = devrt::Module::load(device, program->format, program->bytes);
#ifndef DEVRT_NVRTC_HPP
#define DEVRT_NVRTC_HPP

#include <string>
#include <string_view>
#include <vector>

#include <devrt/module.hpp>
#include <devrt/status.hpp>

namespace devrt::nvrtc {

struct CompileOptions {
  // ptx (JIT-compiled by the driver at load) or cubin (ready to run on `arch`).
  ModuleFormat output = ModuleFormat::ptx;
  // "compute_90" for PTX, "sm_90" for cubin. Empty: the compute capability of cuda:0 when a CUDA
  // device is present, else NVRTC's default (PTX only; a cubin needs an architecture).
  std::string arch;
  // Further NVRTC options: "-O3", "--use_fast_math", "-DBLOCK=256", "-std=c++17", ...
  std::vector<std::string> flags;
  // The program's name in diagnostics.
  std::string name = "devrt_program.cu";
  // Look the result up in, and store it into, the cache (see cache_directory()).
  bool use_cache = true;
};

// A compiled program: bytes that Module::load takes with `format`, and NVRTC's log.
struct Program {
  ModuleFormat format = ModuleFormat::ptx;
  std::vector<std::byte> bytes;
  std::string log;
  bool from_cache = false;
};

// ok when libnvrtc can be opened; unavailable with the loader's reasons otherwise. Thread-safe.
Status availability() noexcept;

// NVRTC's version as major * 1000 + minor * 10 (13.0 -> 13000), as CUDA numbers versions.
// Thread-safe.
Result<int> version() noexcept;

// Compiles `source`. Errors: unavailable (no NVRTC), invalid_argument (bad options, or the
// compile failed: the message ends with NVRTC's log, which is also in the error's text only).
// A cache hit costs a file read; a cache that cannot be written is skipped with a log line.
// Thread-safe.
Result<Program> compile(std::string_view source, const CompileOptions& options = {}) noexcept;

// Where compiled programs are kept: $DEVRT_CACHE_DIR/nvrtc, else $XDG_CACHE_HOME/devrt/nvrtc,
// else $HOME/.cache/devrt/nvrtc ("" when none of them is set). Thread-safe.
std::string cache_directory();

} // namespace devrt::nvrtc

#endif // DEVRT_NVRTC_HPP
