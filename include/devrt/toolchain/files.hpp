// SPDX-License-Identifier: Apache-2.0
// Temporary directories, advisory file locks and source-path detection. Part of devrt_toolchain.
#ifndef DEVRT_TOOLCHAIN_FILES_HPP
#define DEVRT_TOOLCHAIN_FILES_HPP

#include <string>
#include <string_view>
#include <utility>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// A fresh directory under $TMPDIR (else /tmp), removed with its contents when the TempDir dies,
// unless kept: keep(), or DEVRT_KEEP_TEMPDIR=1 in the environment, which keeps every one for
// debugging and names it on stderr. Move-only; not thread-safe to mutate concurrently.
class TempDir {
public:
  // `prefix` starts the directory's name ("devrt-" by default).
  static Result<TempDir> create(std::string_view prefix = "devrt-") noexcept;
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const noexcept { return path_; }
  // path()/name.
  std::string relpath(std::string_view name) const;
  void keep() noexcept { keep_ = true; }
  bool kept() const noexcept { return keep_; }

private:
  TempDir(std::string path, bool keep) noexcept : path_(std::move(path)), keep_(keep) {}
  void remove() noexcept;
  std::string path_;
  bool keep_ = false;
};

// An advisory lock on a file (flock, exclusive), created if missing; released when the FileLock
// dies. Between processes and between FileLocks of one process. Move-only.
class FileLock {
public:
  // Waits until the lock is free.
  static Result<FileLock> acquire(const std::string& path) noexcept;
  // Takes the lock if it is free; `unavailable` ("held by another owner") if not.
  static Result<FileLock> try_acquire(const std::string& path) noexcept;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  const std::string& path() const noexcept { return path_; }
  void release() noexcept;

private:
  static Result<FileLock> lock(const std::string& path, bool wait) noexcept;
  FileLock(std::string path, int fd) noexcept : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// True when `text` names an existing file, or is one line ending in a source or object suffix
// (.c .cc .cpp .cxx .cu .h .hpp .ll .bc .s .S .o .obj .a .so .tar); false for code itself (a
// string with a newline). TVM's is_source_path, widened to C++, CUDA and objects. Thread-safe.
bool is_source_path(std::string_view text) noexcept;

// Reads a whole file; writes a whole file (created or truncated). Thread-safe.
Result<std::string> read_file(const std::string& path) noexcept;
Status write_file(const std::string& path, std::string_view bytes) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_FILES_HPP
