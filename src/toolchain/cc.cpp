// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/cc.hpp>
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/process.hpp>

#include <cstdlib>
#include <cstring>

#include <elf.h>

#include "support/environment.hpp"

namespace devrt::toolchain {
namespace {

// The words of an environment variable naming a compiler; the compiler is the last ("ccache g++").
std::vector<std::string> words(const char* text) {
  std::vector<std::string> out;
  std::string word;
  for (const char* c = text; c != nullptr && *c != '\0'; ++c) {
    if (*c == ' ' || *c == '\t') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += *c;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

Result<std::string> find_compiler(devrt::detail::EnvName<devrt::detail::EnvKind::program> variable,
                                  const std::vector<std::string>& fallbacks) {
  std::vector<std::string> from_env = words(devrt::detail::read_program_env(variable));
  if (!from_env.empty()) {
    Result<std::string> path = find_program(from_env.back());
    if (path.ok()) return path;
    return make_error(ErrorCode::unavailable, "tool not found: $", variable.name(), " names ", from_env.back(),
                      ", which is not on PATH");
  }
  return find_first_program(fallbacks);
}

Status compile(const Compiler& compiler, const std::string& output, const std::vector<std::string>& inputs,
               const std::vector<std::string>& extra) {
  if (inputs.empty()) return make_error(ErrorCode::invalid_argument, "compile ", output, ": no inputs");
  std::vector<std::string> argv;
  if (compiler.kind == OutputKind::static_library) {
    // Sources are compiled to objects first, next to the output.
    std::vector<std::string> objects;
    for (const std::string& input : inputs) {
      bool is_object = input.size() > 2 && (input.ends_with(".o") || input.ends_with(".obj"));
      if (is_object) {
        objects.push_back(input);
        continue;
      }
      Compiler to_object = compiler;
      to_object.kind = OutputKind::object;
      std::string object = output + "." + std::to_string(objects.size()) + ".o";
      DEVRT_RETURN_IF_ERROR(compile(to_object, object, {input}, extra));
      objects.push_back(object);
    }
    std::string archiver = compiler.archiver;
    if (archiver.empty()) {
      DEVRT_ASSIGN_OR_RETURN(archiver, find_compiler("AR", {"ar", "llvm-ar"}));
    }
    argv = {archiver, "crs", output};
    argv.insert(argv.end(), objects.begin(), objects.end());
  } else {
    std::string executable = compiler.executable;
    if (executable.empty()) {
      DEVRT_ASSIGN_OR_RETURN(executable, find_cxx_compiler());
    }
    argv = compiler.launcher;
    argv.push_back(executable);
    if (compiler.kind == OutputKind::shared_library) argv.insert(argv.end(), {"-shared", "-fPIC"});
    if (compiler.kind == OutputKind::object) argv.push_back("-c");
    argv.insert(argv.end(), compiler.options.begin(), compiler.options.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"-o", output});
    argv.insert(argv.end(), inputs.begin(), inputs.end());
  }
  ProcessOptions options;
  options.argv = argv;
  options.timeout = compiler.timeout;
  options.env = compiler.env;
  options.working_directory = compiler.working_directory;
  DEVRT_ASSIGN_OR_RETURN(ProcessResult result, run_process(options));
  std::string what = argv[0];
  for (std::size_t i = 1; i < argv.size(); ++i) what += " " + argv[i];
  return check_process(result, what);
}

template <class Header, class Section, class Symbol>
Result<std::map<std::string, std::string>> elf_symbol_sections(const std::string& bytes, const std::string& path) {
  auto in_file = [&](std::uint64_t offset, std::uint64_t size) {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  };
  Header header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (header.e_shentsize != sizeof(Section) ||
      !in_file(header.e_shoff, std::uint64_t{header.e_shnum} * sizeof(Section))) {
    return make_error(ErrorCode::invalid_argument, "global_symbol_sections(", path, "): malformed section headers");
  }
  std::vector<Section> sections(header.e_shnum);
  std::memcpy(sections.data(), bytes.data() + header.e_shoff, sections.size() * sizeof(Section));
  if (header.e_shstrndx >= sections.size()) {
    return make_error(ErrorCode::invalid_argument, "global_symbol_sections(", path, "): no section name table");
  }
  auto string_at = [&](const Section& table, std::uint64_t offset) -> std::string {
    if (offset >= table.sh_size || !in_file(table.sh_offset, table.sh_size)) return {};
    const char* start = bytes.data() + table.sh_offset + offset;
    return std::string(start, strnlen(start, table.sh_size - offset));
  };
  const Section* symtab = nullptr;
  for (std::uint32_t type : {std::uint32_t{SHT_SYMTAB}, std::uint32_t{SHT_DYNSYM}}) {
    for (const Section& section : sections) {
      if (section.sh_type == type && symtab == nullptr) symtab = &section;
    }
  }
  std::map<std::string, std::string> map;
  if (symtab == nullptr) return map;
  if (symtab->sh_link >= sections.size() || symtab->sh_entsize != sizeof(Symbol) ||
      !in_file(symtab->sh_offset, symtab->sh_size)) {
    return make_error(ErrorCode::invalid_argument, "global_symbol_sections(", path, "): malformed symbol table");
  }
  const Section& names = sections[symtab->sh_link];
  for (std::uint64_t i = 0; i < symtab->sh_size / sizeof(Symbol); ++i) {
    Symbol symbol;
    std::memcpy(&symbol, bytes.data() + symtab->sh_offset + i * sizeof(Symbol), sizeof symbol);
    unsigned binding = symbol.st_info >> 4;
    if ((binding != STB_GLOBAL && binding != STB_WEAK) || symbol.st_shndx == SHN_UNDEF ||
        symbol.st_shndx >= sections.size()) {
      continue;
    }
    std::string name = string_at(names, symbol.st_name);
    if (!name.empty()) map[name] = string_at(sections[header.e_shstrndx], sections[symbol.st_shndx].sh_name);
  }
  return map;
}

} // namespace

Result<std::string> find_cxx_compiler() noexcept { return find_compiler("CXX", {"c++", "g++", "clang++"}); }
Result<std::string> find_c_compiler() noexcept { return find_compiler("CC", {"cc", "gcc", "clang"}); }

Status Compiler::operator()(const std::string& output, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& extra_options) const noexcept {
  return compile(*this, output, inputs, extra_options);
}

Status create_shared(const std::string& output, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& options, const std::string& compiler) noexcept {
  return Compiler{compiler, options, OutputKind::shared_library, {}, {}, {}, {}, {}}(output, inputs);
}

Status create_executable(const std::string& output, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& options, const std::string& compiler) noexcept {
  return Compiler{compiler, options, OutputKind::executable, {}, {}, {}, {}, {}}(output, inputs);
}

Status create_staticlib(const std::string& output, const std::vector<std::string>& inputs,
                        const std::string& archiver) noexcept {
  return Compiler{{}, {}, OutputKind::static_library, archiver, {}, {}, {}, {}}(output, inputs);
}

Compiler cross_compiler(const Compiler& base, std::vector<std::string> options, OutputKind kind) noexcept {
  Compiler specialised = base;
  specialised.options.insert(specialised.options.end(), options.begin(), options.end());
  specialised.kind = kind;
  return specialised;
}

Compiler cross_compiler(std::string executable, std::vector<std::string> options, OutputKind kind) noexcept {
  return Compiler{std::move(executable), std::move(options), kind, {}, {}, {}, {}, {}};
}

Result<std::string> target_triple(const std::string& compiler) noexcept {
  std::string executable = compiler;
  if (executable.empty()) {
    DEVRT_ASSIGN_OR_RETURN(executable, find_cxx_compiler());
  }
  DEVRT_ASSIGN_OR_RETURN(std::string out, run_and_capture({executable, "-dumpmachine"}));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  if (out.empty()) return make_error(ErrorCode::tool_failed, executable, " -dumpmachine printed nothing");
  return out;
}

Result<std::map<std::string, std::string>> global_symbol_sections(const std::string& path) noexcept {
  DEVRT_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return make_error(ErrorCode::invalid_argument, "global_symbol_sections(", path, "): not an ELF file");
  }
  if (bytes[EI_DATA] != ELFDATA2LSB) {
    return make_error(ErrorCode::invalid_argument, "global_symbol_sections(", path, "): big-endian ELF is not read");
  }
  if (bytes[EI_CLASS] == ELFCLASS64 && bytes.size() >= sizeof(Elf64_Ehdr)) {
    return elf_symbol_sections<Elf64_Ehdr, Elf64_Shdr, Elf64_Sym>(bytes, path);
  }
  if (bytes[EI_CLASS] == ELFCLASS32 && bytes.size() >= sizeof(Elf32_Ehdr)) {
    return elf_symbol_sections<Elf32_Ehdr, Elf32_Shdr, Elf32_Sym>(bytes, path);
  }
  return make_error(ErrorCode::invalid_argument, "global_symbol_sections(", path, "): truncated ELF header");
}

} // namespace devrt::toolchain
