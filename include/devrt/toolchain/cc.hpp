// SPDX-License-Identifier: Apache-2.0
// The host C/C++ compiler: finding it, building shared and static libraries and executables,
// cross-compiler wrappers, target triples, and where a library's global symbols live.
// Part of devrt_toolchain (TVM's tvm.contrib.cc).
#ifndef DEVRT_TOOLCHAIN_CC_HPP
#define DEVRT_TOOLCHAIN_CC_HPP

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// $CXX (its first word), else c++, g++, clang++ on PATH. `unavailable` when none is. Thread-safe.
Result<std::string> find_cxx_compiler() noexcept;
// $CC, else cc, gcc, clang.
Result<std::string> find_c_compiler() noexcept;

// What a compile produces.
enum class OutputKind : std::uint8_t { shared_library, static_library, executable, object };

// A compiler invocation with fixed options: TVM's compile functions and cross_compiler. Calling it
// builds `output` from `inputs` (sources or objects) with base options, then `options`. Copyable
// value; calls are thread-safe.
struct Compiler {
  std::string executable;           // empty: find_cxx_compiler() at call time
  std::vector<std::string> options; // always passed (before the call's own)
  OutputKind kind = OutputKind::shared_library;
  std::string archiver; // for static libraries; empty: $AR, else ar
  std::chrono::milliseconds timeout{0};
  // Put before the compiler on the command line ({"ccache"}: TVM's ccache_env route).
  std::vector<std::string> launcher;
  // "NAME=value" entries added to the tools' inherited environment ("CCACHE_DIR=/tmp/c").
  std::vector<std::string> env;
  // The tools run there (relative inputs and output are relative to it); empty: the caller's.
  std::string working_directory;

  Status operator()(const std::string& output, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& extra_options = {}) const noexcept;
};

// Builds a shared library (-shared -fPIC), an executable, or an object. The compiler's own
// diagnostics are in the error (`tool_failed`). Thread-safe.
Status create_shared(const std::string& output, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& options = {}, const std::string& compiler = {}) noexcept;
Status create_executable(const std::string& output, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& options = {}, const std::string& compiler = {}) noexcept;
// `ar crs output inputs...` ($AR or ar; the archiver's output on failure).
Status create_staticlib(const std::string& output, const std::vector<std::string>& inputs,
                        const std::string& archiver = {}) noexcept;

// A compiler specialised with more options and an output kind (TVM's cross_compiler): the result
// passes `base`'s options, then `options`, then the call's.
Compiler cross_compiler(const Compiler& base, std::vector<std::string> options, OutputKind kind) noexcept;
// The same around a compiler executable ("aarch64-linux-gnu-g++").
Compiler cross_compiler(std::string executable, std::vector<std::string> options = {},
                        OutputKind kind = OutputKind::shared_library) noexcept;

// `<compiler> -dumpmachine`: "x86_64-linux-gnu". Thread-safe.
Result<std::string> target_triple(const std::string& compiler = {}) noexcept;

// Every defined global (and weak) symbol of an ELF object, library or executable, mapped to the
// name of the section holding it (".text", ".data", ".bss", ".rodata"...), read from the file's
// own symbol tables (.symtab, else .dynsym). invalid_argument for a file that is not ELF. Thread-safe.
Result<std::map<std::string, std::string>> global_symbol_sections(const std::string& path) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_CC_HPP
