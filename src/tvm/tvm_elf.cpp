// SPDX-License-Identifier: Apache-2.0
// What a TVM library exports and imports, read from its ELF file before dlopen; the copy of it
// that imports nothing of TVM; the writes that bind its imports to devrt (tvm_elf.hpp).
#include "tvm/tvm_elf.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

namespace devrt::tvm::detail {
namespace {

template <class T>
bool read_at(const std::vector<unsigned char>& bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

// A symbol of TVM's runtimes: its C functions (TVMFFI*, TVMBackend*, TVMAPI*, TVMFunc*, ...) or
// its C++ ones (tvm::...).
bool is_runtime_symbol(std::string_view name) {
  return name.starts_with("TVM") || name.starts_with("_ZN3tvm") || name.starts_with("_ZNK3tvm");
}

bool is_runtime_library(std::string_view soname) { return soname.starts_with("libtvm"); }

// Where the tables are: the dynamic symbols, their names, the dynamic section.
struct Tables {
  Elf64_Ehdr header{};
  std::vector<Elf64_Shdr> sections;
  std::size_t dynsym = 0; // section index; 0: none
  Elf64_Shdr names{};
  std::vector<std::string> symbol_names; // by symbol index
  std::vector<Elf64_Sym> symbols;
};

Status parse_tables(const std::string& path, const std::vector<unsigned char>& bytes, Tables& t) {
  auto corrupt = [&](const char* what) {
    return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": ", what, " (truncated or corrupt ELF)");
  };
  if (!read_at(bytes, 0, t.header) || t.header.e_shentsize != sizeof(Elf64_Shdr)) return corrupt("no section headers");
  t.sections.resize(t.header.e_shnum);
  for (std::size_t i = 0; i < t.sections.size(); ++i) {
    if (!read_at(bytes, t.header.e_shoff + i * sizeof(Elf64_Shdr), t.sections[i])) return corrupt("section headers");
  }
  for (std::size_t s = 0; s < t.sections.size(); ++s) {
    const Elf64_Shdr& table = t.sections[s];
    if (table.sh_type != SHT_DYNSYM) continue;
    if (table.sh_link >= t.sections.size() || table.sh_entsize != sizeof(Elf64_Sym)) return corrupt("dynamic symbols");
    t.dynsym = s;
    t.names = t.sections[table.sh_link];
    if (t.names.sh_offset > bytes.size() || bytes.size() - t.names.sh_offset < t.names.sh_size) {
      return corrupt("dynamic symbol names");
    }
    const std::size_t count = table.sh_size / sizeof(Elf64_Sym);
    t.symbols.resize(count);
    t.symbol_names.resize(count);
    for (std::size_t i = 1; i < count; ++i) {
      Elf64_Sym& symbol = t.symbols[i];
      if (!read_at(bytes, table.sh_offset + i * sizeof(Elf64_Sym), symbol)) return corrupt("dynamic symbols");
      if (symbol.st_name >= t.names.sh_size) return corrupt("a symbol name");
      const char* name = reinterpret_cast<const char*>(bytes.data() + t.names.sh_offset + symbol.st_name);
      const std::size_t length = strnlen(name, t.names.sh_size - symbol.st_name);
      if (length == t.names.sh_size - symbol.st_name) return corrupt("a symbol name");
      t.symbol_names[i].assign(name, length);
    }
    break;
  }
  return Status();
}

// The DT_NEEDED entries of the dynamic section: (offset of the name in .dynstr, name).
std::vector<std::pair<std::uint64_t, std::string>> needed(const std::vector<unsigned char>& bytes, const Tables& t) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (const Elf64_Shdr& section : t.sections) {
    if (section.sh_type != SHT_DYNAMIC) continue;
    for (std::uint64_t at = section.sh_offset; at + sizeof(Elf64_Dyn) <= section.sh_offset + section.sh_size;
         at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry{};
      if (!read_at(bytes, at, entry) || entry.d_tag == DT_NULL) break;
      if (entry.d_tag != DT_NEEDED || entry.d_un.d_val >= t.names.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(bytes.data() + t.names.sh_offset + entry.d_un.d_val);
      out.emplace_back(entry.d_un.d_val, std::string(name, strnlen(name, t.names.sh_size - entry.d_un.d_val)));
    }
  }
  return out;
}

// What a relocation of `type` stores: S (a GOT slot) or S + A; -1 for a type devrt does not apply.
int relocation_kind(std::uint16_t machine, std::uint32_t type) {
  if (machine == EM_X86_64) {
    if (type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT) return 0;
    if (type == R_X86_64_64) return 1;
  } else if (machine == EM_AARCH64) {
    if (type == R_AARCH64_GLOB_DAT || type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_ABS64) return 1;
  }
  return -1;
}

// The relocations that name the imports (`imported`, by symbol index), and the RELRO segment.
Status read_import_slots(const std::string& path, const std::vector<unsigned char>& bytes, const Tables& t,
                         const std::vector<bool>& imported, ExportedSymbols& out) {
  // The relocations that name the imports.
  for (const Elf64_Shdr& section : t.sections) {
    if (section.sh_type != SHT_RELA || section.sh_link != t.dynsym || section.sh_entsize != sizeof(Elf64_Rela)) {
      continue;
    }
    for (std::uint64_t at = section.sh_offset; at + sizeof(Elf64_Rela) <= section.sh_offset + section.sh_size;
         at += sizeof(Elf64_Rela)) {
      Elf64_Rela rela{};
      if (!read_at(bytes, at, rela)) {
        return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": relocations (truncated ELF)");
      }
      const std::uint64_t index = ELF64_R_SYM(rela.r_info);
      if (index == 0 || index >= imported.size() || !imported[index]) continue;
      const int kind = relocation_kind(t.header.e_machine, static_cast<std::uint32_t>(ELF64_R_TYPE(rela.r_info)));
      if (kind < 0) {
        return make_error(ErrorCode::unsupported, "TVM library ", path, ": its import ", t.symbol_names[index],
                          " is named by a relocation of type ", ELF64_R_TYPE(rela.r_info),
                          ", which devrt does not apply (it binds GOT, PLT and absolute addresses)");
      }
      out.slots.push_back(ImportSlot{t.symbol_names[index], rela.r_offset, rela.r_addend, kind == 1});
    }
  }
  for (std::uint16_t i = 0; i < t.header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    if (read_at(bytes, t.header.e_phoff + i * sizeof(Elf64_Phdr), segment) && segment.p_type == PT_GNU_RELRO) {
      out.relro_begin = segment.p_vaddr;
      out.relro_end = segment.p_vaddr + segment.p_memsz;
    }
  }
  return Status();
}

} // namespace

Result<std::vector<unsigned char>> read_library_file(const std::string& path) noexcept {
  std::vector<unsigned char> bytes;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return make_error(ErrorCode::not_found, "TVM library ", path, ": cannot open the file");
  unsigned char chunk[65536];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  const bool failed = std::ferror(file) != 0;
  static_cast<void>(std::fclose(file));
  if (failed) return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": read error");
  return bytes;
}

Result<ExportedSymbols> read_exported_symbols(const std::string& path,
                                              const std::vector<unsigned char>& bytes) noexcept {
  Tables t;
  DEVRT_RETURN_IF_ERROR(parse_tables(path, bytes, t));
  ExportedSymbols out;
  std::vector<std::string> plain, prefixed;
  std::vector<bool> imported(t.symbols.size(), false);
  bool context_slots = false; // data symbols __TVM<function> the loader fills
  for (std::size_t i = 1; i < t.symbols.size(); ++i) {
    const Elf64_Sym& symbol = t.symbols[i];
    const std::string& name = t.symbol_names[i];
    if (symbol.st_shndx == SHN_UNDEF) {
      if (is_runtime_symbol(name)) {
        out.imports.push_back(name);
        imported[i] = true;
      }
      continue;
    }
    if (name == "__tvm_dev_mblob" || name == "__tvm_ffi_library_bin" || name == "__tvm_ffi__library_bin") {
      out.blob_symbol = name;
      out.blob_bytes = symbol.st_size;
    } else if (name == "__tvm_module_ctx" || name == "__tvm_ffi_library_ctx" || name == "__tvm_ffi__library_ctx") {
      out.context_symbol = name;
    } else if (name.starts_with("__TVM") && symbol.st_shndx != SHN_UNDEF) {
      context_slots = true;
    }
    const bool exported = ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && ELF64_ST_BIND(symbol.st_info) != STB_LOCAL &&
                          ELF64_ST_VISIBILITY(symbol.st_other) == STV_DEFAULT;
    if (!exported) continue;
    if (name.starts_with("__tvm_ffi_") && !name.starts_with("__tvm_ffi__")) {
      prefixed.push_back(name.substr(10));
    } else if (!name.starts_with("_") && ELF64_ST_BIND(symbol.st_info) == STB_GLOBAL) {
      plain.push_back(name);
    }
  }
  for (auto& [offset, name] : needed(bytes, t)) {
    if (is_runtime_library(name)) out.runtime_needed.push_back(name);
  }
  if (out.blob_symbol.empty() && out.context_symbol.empty() && !context_slots && prefixed.empty() &&
      out.imports.empty() && out.runtime_needed.empty()) {
    return make_error(ErrorCode::invalid_argument, "TVM library ", path,
                      ": not a library TVM built; it carries none of TVM's marks: no device blob (__tvm_dev_mblob, "
                      "__tvm_ffi_library_bin, __tvm_ffi__library_bin), no module context (__tvm_module_ctx, "
                      "__tvm_ffi_library_ctx, __tvm_ffi__library_ctx), no runtime slot (__TVMFuncCall, ...), no "
                      "tvm-ffi function (__tvm_ffi_<name>), no use of TVM's runtime (TVMFFIFunctionCall, ..., "
                      "libtvm_runtime.so, libtvm_ffi.so)");
  }
  const bool ffi =
      !prefixed.empty() || out.blob_symbol.starts_with("__tvm_ffi") || out.context_symbol.starts_with("__tvm_ffi");
  out.abi = ffi ? HostAbi::ffi : HostAbi::packed;
  if (!prefixed.empty()) {
    out.function_prefix = "__tvm_ffi_";
    out.functions = std::move(prefixed);
  } else {
    out.functions = std::move(plain);
  }
  std::sort(out.functions.begin(), out.functions.end());
  out.functions.erase(std::unique(out.functions.begin(), out.functions.end()), out.functions.end());
  std::sort(out.imports.begin(), out.imports.end());
  out.imports.erase(std::unique(out.imports.begin(), out.imports.end()), out.imports.end());
  if (out.imports.empty()) return out;
  DEVRT_RETURN_IF_ERROR(read_import_slots(path, bytes, t, imported, out));
  return out;
}

Result<std::vector<unsigned char>> detached_image(const std::string& path, std::vector<unsigned char> bytes) noexcept {
  Tables t;
  DEVRT_RETURN_IF_ERROR(parse_tables(path, bytes, t));
  const Elf64_Shdr& table = t.sections[t.dynsym];
  for (std::size_t i = 1; i < t.symbols.size(); ++i) {
    Elf64_Sym symbol = t.symbols[i];
    if (symbol.st_shndx != SHN_UNDEF || !is_runtime_symbol(t.symbol_names[i])) continue;
    symbol.st_info = ELF64_ST_INFO(STB_WEAK, ELF64_ST_TYPE(symbol.st_info));
    std::memcpy(bytes.data() + table.sh_offset + i * sizeof(Elf64_Sym), &symbol, sizeof symbol);
  }
  static constexpr char kAlwaysLoaded[] = "libc.so.6";
  for (auto& [offset, name] : needed(bytes, t)) {
    if (!is_runtime_library(name)) continue;
    // The name's bytes must be its own: no symbol name may end inside them.
    for (const Elf64_Sym& symbol : t.symbols) {
      const std::uint64_t begin = symbol.st_name;
      const std::uint64_t end =
          begin + std::strlen(reinterpret_cast<const char*>(bytes.data() + t.names.sh_offset + begin));
      if (begin != offset && begin < offset + name.size() && end > offset) {
        return make_error(ErrorCode::unsupported, "TVM library ", path, ": its dependency ", name,
                          " shares its name's bytes with a symbol; devrt cannot detach it from TVM's runtime");
      }
    }
    if (name.size() < sizeof kAlwaysLoaded - 1) {
      return make_error(ErrorCode::unsupported, "TVM library ", path, ": its dependency ", name,
                        " has too short a name for devrt to detach it from TVM's runtime");
    }
    std::memset(bytes.data() + t.names.sh_offset + offset, 0, name.size());
    std::memcpy(bytes.data() + t.names.sh_offset + offset, kAlwaysLoaded, sizeof kAlwaysLoaded - 1);
  }
  return bytes;
}

Status bind_imports(const ExportedSymbols& symbols, std::uintptr_t base,
                    void* (*address_of)(std::string_view symbol) noexcept) noexcept {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t relro_begin = (base + symbols.relro_begin) & ~(page - 1);
  // As the dynamic linker protects it: whole pages from the segment's start, up to the last
  // page boundary inside it (the rest of that page stays writable).
  const std::uintptr_t relro_end = (base + symbols.relro_end) & ~(page - 1);
  const bool relro = relro_end > relro_begin;
  if (relro && ::mprotect(reinterpret_cast<void*>(relro_begin), relro_end - relro_begin, PROT_READ | PROT_WRITE) != 0) {
    return make_error(ErrorCode::internal, "TVM library: cannot lift the RELRO protection to bind its imports");
  }
  for (const ImportSlot& slot : symbols.slots) {
    auto value = reinterpret_cast<std::uintptr_t>(address_of(slot.symbol));
    if (slot.add_addend) value += static_cast<std::uintptr_t>(slot.addend);
    std::memcpy(reinterpret_cast<void*>(base + slot.offset), &value, sizeof value);
  }
  if (relro) static_cast<void>(::mprotect(reinterpret_cast<void*>(relro_begin), relro_end - relro_begin, PROT_READ));
  return Status();
}

} // namespace devrt::tvm::detail
