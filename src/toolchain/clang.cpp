// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/clang.hpp>
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/process.hpp>

#include "toolchain_internal.hpp"

namespace devrt::toolchain {

Result<std::string> find_clang(int preferred_major) noexcept {
  std::vector<std::string> names;
  if (preferred_major > 0) names.push_back("clang-" + std::to_string(preferred_major));
  names.emplace_back("clang");
  for (std::string& name : detail::versioned_names("clang")) names.push_back(std::move(name));
  Result<std::string> found = find_first_program(names);
  if (found.ok()) return found;
  return Status(ErrorCode::unavailable, "tool not found: clang (tried clang-<major>, clang, clang-30 ... clang-7)");
}

Result<std::string> emit_llvm_ir(const std::vector<std::string>& inputs, const std::vector<std::string>& options,
                                 const std::string& clang) noexcept {
  if (inputs.empty()) return Status(ErrorCode::invalid_argument, "emit_llvm_ir: no inputs");
  std::string compiler = clang;
  if (compiler.empty()) {
    DEVRT_ASSIGN_OR_RETURN(compiler, find_clang());
  }
  DEVRT_ASSIGN_OR_RETURN(TempDir temp, TempDir::create("devrt-clang-"));
  std::vector<std::string> outputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::string input = inputs[i];
    if (!is_source_path(input)) { // C source text
      input = temp.relpath("input" + std::to_string(i) + ".c");
      DEVRT_RETURN_IF_ERROR(write_file(input, inputs[i]));
    }
    std::string output = temp.relpath("output" + std::to_string(i) + ".ll");
    ProcessOptions run;
    run.argv = {compiler, "-S", "-emit-llvm"};
    run.argv.insert(run.argv.end(), options.begin(), options.end());
    run.argv.insert(run.argv.end(), {"-o", output, input});
    DEVRT_ASSIGN_OR_RETURN(ProcessResult result, run_process(run));
    DEVRT_RETURN_IF_ERROR(check_process(result, "emit_llvm_ir: clang"));
    outputs.push_back(output);
  }
  if (outputs.size() == 1) return read_file(outputs.front());
  // Several modules: linked into one with the llvm-link of the same version.
  std::string version_suffix;
  std::size_t dash = compiler.rfind("clang-");
  if (dash != std::string::npos) version_suffix = compiler.substr(dash + 5);
  DEVRT_ASSIGN_OR_RETURN(std::string llvm_link, find_first_program({"llvm-link" + version_suffix, "llvm-link"}));
  std::string linked = temp.relpath("linked.ll");
  ProcessOptions link;
  link.argv = {llvm_link, "-S", "-o", linked};
  link.argv.insert(link.argv.end(), outputs.begin(), outputs.end());
  DEVRT_ASSIGN_OR_RETURN(ProcessResult result, run_process(link));
  DEVRT_RETURN_IF_ERROR(check_process(result, "emit_llvm_ir: llvm-link"));
  return read_file(linked);
}

} // namespace devrt::toolchain
