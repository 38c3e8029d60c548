// SPDX-License-Identifier: Apache-2.0
// What a TVM library exports, read from its dynamic symbol table before dlopen (tvm_elf.hpp).
#include "tvm/tvm_elf.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <elf.h>

namespace devrt::tvm::detail {
namespace {

std::vector<unsigned char> read_file(const std::string& path, Status& status) {
  std::vector<unsigned char> bytes;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    status = make_error(ErrorCode::not_found, "TVM library ", path, ": cannot open the file");
    return bytes;
  }
  unsigned char chunk[65536];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  if (std::ferror(file) != 0) status = make_error(ErrorCode::invalid_argument, "TVM library ", path, ": read error");
  static_cast<void>(std::fclose(file));
  return bytes;
}

template <class T>
bool read_at(const std::vector<unsigned char>& bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

} // namespace

Result<ExportedSymbols> read_exported_symbols(const std::string& path) noexcept {
  Status status;
  const std::vector<unsigned char> bytes = read_file(path, status);
  if (!status.ok()) return status;
  auto corrupt = [&](const char* what) {
    return make_error(ErrorCode::invalid_argument, "TVM library ", path, ": ", what, " (truncated or corrupt ELF)");
  };
  Elf64_Ehdr header{};
  if (!read_at(bytes, 0, header) || header.e_shentsize != sizeof(Elf64_Shdr)) return corrupt("no section headers");
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (!read_at(bytes, header.e_shoff + i * sizeof(Elf64_Shdr), sections[i])) return corrupt("section headers");
  }
  ExportedSymbols out;
  for (const Elf64_Shdr& table : sections) {
    if (table.sh_type != SHT_DYNSYM) continue;
    if (table.sh_link >= sections.size() || table.sh_entsize != sizeof(Elf64_Sym)) return corrupt("dynamic symbols");
    const Elf64_Shdr& names = sections[table.sh_link];
    if (names.sh_offset > bytes.size() || bytes.size() - names.sh_offset < names.sh_size) {
      return corrupt("dynamic symbol names");
    }
    const std::size_t count = table.sh_size / sizeof(Elf64_Sym);
    for (std::size_t i = 1; i < count; ++i) {
      Elf64_Sym symbol{};
      if (!read_at(bytes, table.sh_offset + i * sizeof(Elf64_Sym), symbol)) return corrupt("dynamic symbols");
      if (symbol.st_shndx == SHN_UNDEF || symbol.st_name >= names.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(bytes.data() + names.sh_offset + symbol.st_name);
      const std::size_t length = strnlen(name, names.sh_size - symbol.st_name);
      if (length == names.sh_size - symbol.st_name) return corrupt("a symbol name");
      const std::string text(name, length);
      const unsigned type = ELF64_ST_TYPE(symbol.st_info);
      const unsigned binding = ELF64_ST_BIND(symbol.st_info);
      if (text == "__tvm_dev_mblob") {
        out.blob_bytes = symbol.st_size;
        out.has_blob = true;
      } else if (type == STT_FUNC && binding == STB_GLOBAL && ELF64_ST_VISIBILITY(symbol.st_other) == STV_DEFAULT &&
                 !text.starts_with("_")) {
        out.functions.push_back(text);
      }
    }
  }
  std::sort(out.functions.begin(), out.functions.end());
  out.functions.erase(std::unique(out.functions.begin(), out.functions.end()), out.functions.end());
  return out;
}

} // namespace devrt::tvm::detail
