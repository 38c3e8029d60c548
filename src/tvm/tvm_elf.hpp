// SPDX-License-Identifier: Apache-2.0
// What a TVM library exports and imports, read from its ELF file before it is opened: its host
// functions (TVM's operators), which of TVM's two host ABIs they follow, its device blob's symbol
// and size (which bounds how far the blob may be read), and the symbols it imports from TVM's
// runtimes (libtvm_ffi, libtvm_runtime) with the relocations that name them. Such a library is
// opened from a copy that imports nothing of TVM (detached_image); devrt then writes its own
// functions where the relocations point (bind_imports). Not public API.
#ifndef DEVRT_SRC_TVM_TVM_ELF_HPP
#define DEVRT_SRC_TVM_TVM_ELF_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::tvm::detail {

// TVM <= 0.20's packed functions (int f(TVMValue*, int*, int, TVMValue*, int*, void*)), or
// tvm-ffi's (int f(void*, const TVMFFIAny*, int32_t, TVMFFIAny*)), TVM >= 0.21.
enum class HostAbi { packed, ffi };

// A relocation of the library that names an import from TVM's runtimes.
struct ImportSlot {
  std::string symbol;
  std::uint64_t offset = 0; // from the load address
  std::int64_t addend = 0;
  bool add_addend = false; // an absolute relocation (S + A), not a GOT slot (S)
};

struct ExportedSymbols {
  std::vector<std::string> functions; // the names callers use (without "__tvm_ffi_"), sorted
  HostAbi abi = HostAbi::packed;
  std::string function_prefix; // "__tvm_ffi_" (TVM >= 0.22) or ""
  std::string blob_symbol;     // "__tvm_dev_mblob", "__tvm_ffi_library_bin" or "__tvm_ffi__library_bin"; "" for none
  std::uint64_t blob_bytes = 0;
  std::string context_symbol;              // "__tvm_module_ctx", "__tvm_ffi_library_ctx" or "__tvm_ffi__library_ctx"
  std::vector<std::string> imports;        // undefined symbols of TVM's runtimes, sorted
  std::vector<std::string> runtime_needed; // DT_NEEDED entries naming TVM's runtimes
  std::vector<ImportSlot> slots;
  std::uint64_t relro_begin = 0, relro_end = 0; // PT_GNU_RELRO, from the load address
};

// The file's bytes, read once for the two readers below. not_found when it cannot be opened.
// Thread-safe.
Result<std::vector<unsigned char>> read_library_file(const std::string& path) noexcept;

// `bytes` are the file's (`path` names it in messages), which must already have passed the plugin
// loader's check (devrt::detail::shared_object_problem). invalid_argument for tables that are not
// inside the file, or a relocation of an import devrt cannot apply. Thread-safe.
Result<ExportedSymbols> read_exported_symbols(const std::string& path,
                                              const std::vector<unsigned char>& bytes) noexcept;

// `bytes` with every import of TVM's runtimes made weak (so the dynamic linker binds none of them
// to another library) and every DT_NEEDED naming one of TVM's runtimes renamed "libc.so.6" (a
// library every process has). Thread-safe.
Result<std::vector<unsigned char>> detached_image(const std::string& path, std::vector<unsigned char> bytes) noexcept;

// Writes `address_of(symbol)` into each slot of the image loaded at `base`, lifting and restoring
// the RELRO protection around the writes. Call once, before any of the library's code runs.
Status bind_imports(const ExportedSymbols& symbols, std::uintptr_t base,
                    void* (*address_of)(std::string_view symbol) noexcept) noexcept;

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_ELF_HPP
