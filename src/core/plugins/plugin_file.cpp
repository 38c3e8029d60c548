// SPDX-License-Identifier: Apache-2.0
// A plugin file checked before dlopen sees it (core/plugins/plugin_file.hpp).
#include "core/plugins/plugin_file.hpp"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

namespace devrt::detail {

namespace {

// This process's ELF machine (e_machine), or EM_NONE where it is not known here (then any
// machine passes and dlopen decides).
constexpr std::uint16_t kHostMachine =
#if defined(__x86_64__)
    EM_X86_64;
#elif defined(__aarch64__)
    EM_AARCH64;
#elif defined(__i386__)
    EM_386;
#elif defined(__arm__)
    EM_ARM;
#elif defined(__riscv)
    EM_RISCV;
#elif defined(__powerpc64__)
    EM_PPC64;
#else
    EM_NONE;
#endif

std::string machine_name(std::uint16_t machine) {
  switch (machine) {
  case EM_X86_64: return "x86-64";
  case EM_AARCH64: return "AArch64";
  case EM_386: return "i386";
  case EM_ARM: return "ARM";
  case EM_RISCV: return "RISC-V";
  case EM_PPC64: return "PowerPC64";
  case EM_QDSP6: return "Hexagon";
  default: return "ELF machine " + std::to_string(machine);
  }
}

// Why the file behind `fd` (`size` bytes) cannot be a shared object for this process, or "" when
// it can be handed to dlopen: an ELF header of this class, byte order and machine, of type
// ET_DYN, whose program headers and the segments they describe lie inside the file. glibc's
// loader maps segments without comparing them with the file's size, and touching a page past the
// end of a truncated file kills the process with SIGBUS: this is what stands between a bad file
// and that crash.
std::string shared_object_problem(int fd, std::uint64_t size) {
  using Header = ElfW(Ehdr);
  using ProgramHeader = ElfW(Phdr);
  auto read_at = [fd](void* out, std::size_t bytes, std::uint64_t offset) {
    return ::pread(fd, out, bytes, static_cast<off_t>(offset)) == static_cast<ssize_t>(bytes);
  };
  if (size == 0) return "the file is empty (0 bytes)";
  Header header{};
  if (size < sizeof header) {
    return "the file is " + std::to_string(size) + " bytes, shorter than an ELF header (" +
           std::to_string(sizeof header) + "): truncated or not a shared object";
  }
  if (!read_at(&header, sizeof header, 0)) return std::string("cannot read its ELF header: ") + std::strerror(errno);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file (no ELF magic at its start)";
  constexpr unsigned char kHostClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
  if (header.e_ident[EI_CLASS] != kHostClass) {
    auto bits = [](unsigned char elf_class) {
      return elf_class == ELFCLASS64   ? std::string("64-bit")
             : elf_class == ELFCLASS32 ? std::string("32-bit")
                                       : "ELF class " + std::to_string(elf_class);
    };
    return "it is a " + bits(header.e_ident[EI_CLASS]) + " ELF file and this process is " + bits(kHostClass);
  }
  constexpr unsigned char kHostData = std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;
  if (header.e_ident[EI_DATA] != kHostData) return "its byte order is not this process's";
  if (kHostMachine != EM_NONE && header.e_machine != kHostMachine) {
    return "it is built for " + machine_name(header.e_machine) + ", this process runs on " + machine_name(kHostMachine);
  }
  if (header.e_type != ET_DYN) return "it is not a shared object (ELF type " + std::to_string(header.e_type) + ")";
  if (header.e_phnum == 0 || header.e_phentsize != sizeof(ProgramHeader)) {
    return "its program header table is malformed (" + std::to_string(header.e_phnum) + " entries of " +
           std::to_string(header.e_phentsize) + " bytes)";
  }
  auto truncated = [size](std::string_view what, std::uint64_t offset, std::uint64_t bytes) -> std::string {
    if (offset <= size && bytes <= size - offset) return {};
    return "the file is truncated or corrupt: its " + std::string(what) + " ends past the file's " +
           std::to_string(size) + " bytes (offset " + std::to_string(offset) + ", " + std::to_string(bytes) + " bytes)";
  };
  const std::uint64_t table_bytes = std::uint64_t{header.e_phnum} * sizeof(ProgramHeader);
  if (std::string why = truncated("program header table", header.e_phoff, table_bytes); !why.empty()) return why;
  if (header.e_shnum != 0) {
    const std::uint64_t sections = std::uint64_t{header.e_shnum} * header.e_shentsize;
    if (std::string why = truncated("section header table", header.e_shoff, sections); !why.empty()) return why;
  }
  for (std::uint16_t i = 0; i < header.e_phnum; ++i) {
    ProgramHeader segment{};
    if (!read_at(&segment, sizeof segment, header.e_phoff + std::uint64_t{i} * sizeof segment)) {
      return std::string("cannot read its program headers: ") + std::strerror(errno);
    }
    if (segment.p_type != PT_LOAD && segment.p_type != PT_DYNAMIC && segment.p_type != PT_INTERP) continue;
    const char* type = segment.p_type == PT_LOAD      ? " (PT_LOAD)"
                       : segment.p_type == PT_DYNAMIC ? " (PT_DYNAMIC)"
                                                      : " (PT_INTERP)";
    std::string what = "segment " + std::to_string(i) + type;
    if (std::string why = truncated(what, segment.p_offset, segment.p_filesz); !why.empty()) return why;
  }
  return {};
}

} // namespace

std::string shared_object_problem(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open it: ") + std::strerror(errno);
  struct stat info {};
  std::string why = ::fstat(fd, &info) != 0 ? std::string("cannot stat it: ") + std::strerror(errno)
                                            : shared_object_problem(fd, static_cast<std::uint64_t>(info.st_size));
  ::close(fd);
  return why;
}

} // namespace devrt::detail
