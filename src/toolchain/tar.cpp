// SPDX-License-Identifier: Apache-2.0
// Tar through libarchive. Extraction checks the whole archive first and writes nothing when any
// entry would land outside the target directory; libarchive's own secure-extraction flags then
// guard the writing pass as well.
#include <devrt/toolchain/tar.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toolchain_internal.hpp"

namespace devrt::toolchain {
namespace {

// Owns one libarchive object, freed with `Free`.
template <class Object, auto Free>
struct Owned {
  Object* handle;
  explicit Owned(Object* adopted) noexcept : handle(adopted) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { Free(handle); }
};
using ReadArchive = Owned<archive, archive_read_free>;
using WriteArchive = Owned<archive, archive_write_free>;
using Entry = Owned<archive_entry, archive_entry_free>;

// Reads a tar (with any compression libarchive knows) entry by entry; errors name the archive.
class TarReader {
public:
  Status open(const std::string& path) {
    path_ = path;
    archive_read_support_filter_all(reader_.handle);
    archive_read_support_format_tar(reader_.handle);
    if (archive_read_open_filename(reader_.handle, path.c_str(), 65536) != ARCHIVE_OK) return error();
    return Status();
  }
  // The next entry, or nullptr after the last.
  Result<archive_entry*> next() {
    archive_entry* entry = nullptr;
    int r = archive_read_next_header(reader_.handle, &entry);
    if (r == ARCHIVE_EOF) return static_cast<archive_entry*>(nullptr);
    if (r < ARCHIVE_WARN) return error();
    return entry;
  }
  archive* handle() const { return reader_.handle; }
  Status error() const;

private:
  ReadArchive reader_{archive_read_new()};
  std::string path_;
};

std::string_view base_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

const char* archive_message(archive* a) {
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "unknown libarchive error";
}

Status TarReader::error() const {
  return make_error(ErrorCode::invalid_argument, "extract_tar(", path_, "): ", archive_message(reader_.handle));
}

// The path's components after dropping "." and empty ones; false when a ".." would climb above
// the start (the path escapes).
bool normalise(std::string_view path, std::vector<std::string>& parts) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    start = end + 1;
  }
  return true;
}

bool has_dotdot(std::string_view path) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) out += out.empty() ? part : "/" + part;
  return out;
}

Status refuse(const std::string& archive_path, std::string_view entry, std::string_view why) {
  return make_error(ErrorCode::invalid_argument, "extract_tar(", archive_path, "): entry '", entry, "' ", why,
                    "; nothing was extracted");
}

// Pass 1: every entry stays inside the directory and never goes through a symbolic link.
Status check_entries(const std::string& archive_path) {
  TarReader reader;
  DEVRT_RETURN_IF_ERROR(reader.open(archive_path));
  std::set<std::string> symlinks;
  for (;;) {
    DEVRT_ASSIGN_OR_RETURN(archive_entry * entry, reader.next());
    if (entry == nullptr) break;
    const char* raw = archive_entry_pathname(entry);
    std::string path = raw != nullptr ? raw : "";
    if (path.empty()) return refuse(archive_path, path, "has no name");
    if (path.front() == '/') return refuse(archive_path, path, "has an absolute path");
    // Any ".." component is refused, even one that would stay inside (GNU tar's rule).
    if (has_dotdot(path)) return refuse(archive_path, path, "has a '..' component");
    std::vector<std::string> parts;
    static_cast<void>(normalise(path, parts)); // cannot escape without a ".."
    std::string clean = join(parts);
    for (std::size_t i = 1; i < parts.size(); ++i) {
      std::vector<std::string> prefix(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(i));
      if (symlinks.count(join(prefix)) != 0) {
        return refuse(archive_path, path, "lies under the symbolic link '" + join(prefix) + "'");
      }
    }
    mode_t type = archive_entry_filetype(entry);
    if (const char* hardlink = archive_entry_hardlink(entry)) {
      if (hardlink[0] == '/' || has_dotdot(hardlink)) {
        return refuse(archive_path, path, std::string("is a hard link to '") + hardlink + "' outside the directory");
      }
    } else if (type == AE_IFLNK) {
      const char* target_raw = archive_entry_symlink(entry);
      std::string target = target_raw != nullptr ? target_raw : "";
      std::vector<std::string> resolved(parts.begin(), parts.end() - (parts.empty() ? 0 : 1));
      if (target.empty() || target.front() == '/' || !normalise(target, resolved)) {
        return refuse(archive_path, path, "is a symbolic link to '" + target + "' outside the directory");
      }
      symlinks.insert(clean);
    } else if (type != AE_IFREG && type != AE_IFDIR) {
      return refuse(archive_path, path, "is a device, FIFO or socket");
    }
    archive_read_data_skip(reader.handle());
  }
  return Status();
}

} // namespace

Status create_tar(const std::string& output, const std::vector<std::string>& files) noexcept {
  std::set<std::string_view> names;
  for (const std::string& file : files) {
    if (!names.insert(base_name(file)).second) {
      return make_error(ErrorCode::invalid_argument, "create_tar(", output, "): two inputs are named '",
                        base_name(file), "'");
    }
  }
  WriteArchive writer(archive_write_new());
  archive_write_set_format_pax_restricted(writer.handle);
  if (archive_write_open_filename(writer.handle, output.c_str()) != ARCHIVE_OK) {
    return make_error(ErrorCode::invalid_argument, "create_tar(", output, "): ", archive_message(writer.handle));
  }
  for (const std::string& file : files) {
    struct stat info {};
    detail::Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
      return make_error(ErrorCode::invalid_argument, "create_tar(", output, "): cannot read regular file ", file, ": ",
                        std::strerror(errno != 0 ? errno : EINVAL));
    }
    Entry entry(archive_entry_new());
    archive_entry_copy_stat(entry.handle, &info);
    archive_entry_set_pathname(entry.handle, std::string(base_name(file)).c_str());
    if (archive_write_header(writer.handle, entry.handle) != ARCHIVE_OK) {
      return make_error(ErrorCode::internal, "create_tar(", output, "): ", file, ": ", archive_message(writer.handle));
    }
    char buffer[65536];
    for (;;) {
      ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        return make_error(ErrorCode::internal, "create_tar(", output, "): reading ", file, ": ", std::strerror(errno));
      if (n == 0) break;
      if (archive_write_data(writer.handle, buffer, static_cast<std::size_t>(n)) != n) {
        return make_error(ErrorCode::internal, "create_tar(", output, "): ", archive_message(writer.handle));
      }
    }
  }
  if (archive_write_close(writer.handle) != ARCHIVE_OK) {
    return make_error(ErrorCode::internal, "create_tar(", output, "): ", archive_message(writer.handle));
  }
  return Status();
}

Result<std::vector<std::string>> extract_tar(const std::string& archive_path, const std::string& directory) noexcept {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return make_error(ErrorCode::invalid_argument, "extract_tar(", archive_path, "): ", directory,
                      " is not a directory");
  }
  DEVRT_RETURN_IF_ERROR(check_entries(archive_path));
  char* resolved = ::realpath(directory.c_str(), nullptr);
  if (resolved == nullptr) {
    return make_error(ErrorCode::invalid_argument, "extract_tar(", archive_path, "): ", directory, ": ",
                      std::strerror(errno));
  }
  std::string root(resolved);
  std::free(resolved);

  TarReader reader;
  DEVRT_RETURN_IF_ERROR(reader.open(archive_path));
  WriteArchive disk(archive_write_disk_new());
  // Entries are re-rooted under the directory's canonical path (absolute, no symbolic links), so
  // libarchive's absolute-path refusal cannot apply; its symlink and ".." guards still do.
  archive_write_disk_set_options(disk.handle, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                  ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  std::vector<std::string> extracted;
  for (;;) {
    DEVRT_ASSIGN_OR_RETURN(archive_entry * entry, reader.next());
    if (entry == nullptr) break;
    std::string target = root + "/" + archive_entry_pathname(entry);
    archive_entry_copy_pathname(entry, target.c_str());
    if (const char* hardlink = archive_entry_hardlink(entry)) {
      archive_entry_copy_hardlink(entry, (root + "/" + hardlink).c_str());
    }
    if (archive_write_header(disk.handle, entry) < ARCHIVE_WARN) {
      return make_error(ErrorCode::internal, "extract_tar(", archive_path, "): ", target, ": ",
                        archive_message(disk.handle));
    }
    const void* block = nullptr;
    std::size_t size = 0;
    la_int64_t offset = 0;
    int r = ARCHIVE_OK;
    while ((r = archive_read_data_block(reader.handle(), &block, &size, &offset)) == ARCHIVE_OK) {
      if (archive_write_data_block(disk.handle, block, size, offset) < ARCHIVE_WARN) {
        return make_error(ErrorCode::internal, "extract_tar(", archive_path, "): ", target, ": ",
                          archive_message(disk.handle));
      }
    }
    if (r < ARCHIVE_WARN) return reader.error();
    archive_write_finish_entry(disk.handle);
    if (archive_entry_filetype(entry) == AE_IFREG) extracted.push_back(target);
  }
  return extracted;
}

Result<std::vector<std::string>> normalize_file_list(const std::vector<std::string>& files,
                                                     const std::string& directory) noexcept {
  std::vector<std::string> out;
  std::size_t archives = 0;
  for (const std::string& file : files) {
    if (file.size() < 4 || file.compare(file.size() - 4, 4, ".tar") != 0) {
      out.push_back(file);
      continue;
    }
    std::string target = directory + "/tar" + std::to_string(archives++);
    if (::mkdir(target.c_str(), 0755) != 0 && errno != EEXIST) {
      return make_error(ErrorCode::invalid_argument, "normalize_file_list: mkdir ", target, ": ", std::strerror(errno));
    }
    DEVRT_ASSIGN_OR_RETURN(std::vector<std::string> members, extract_tar(file, target));
    out.insert(out.end(), members.begin(), members.end());
  }
  return out;
}

} // namespace devrt::toolchain
