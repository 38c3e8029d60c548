// SPDX-License-Identifier: Apache-2.0
// What a TVM library exports, read from its ELF dynamic symbol table before it is opened: its
// host functions (TVM's operators: global, default-visibility functions not named "_...") and
// the size of its `__tvm_dev_mblob`, which bounds how far the blob may be read. Not public API.
#ifndef DEVRT_SRC_TVM_TVM_ELF_HPP
#define DEVRT_SRC_TVM_TVM_ELF_HPP

#include <cstdint>
#include <string>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::tvm::detail {

struct ExportedSymbols {
  std::vector<std::string> functions; // sorted
  bool has_blob = false;
  std::uint64_t blob_bytes = 0;
};

// The file must already have passed the plugin loader's check (devrt::detail::shared_object_problem).
// invalid_argument for a symbol table that is not inside the file. Thread-safe.
Result<ExportedSymbols> read_exported_symbols(const std::string& path) noexcept;

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_ELF_HPP
