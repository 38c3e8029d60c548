// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/files.hpp>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "support/environment.hpp"
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toolchain_internal.hpp"

namespace devrt::toolchain {
namespace {

bool keep_temp_dirs() noexcept { return devrt::detail::read_boolean_env("DEVRT_KEEP_TEMPDIR", false); }

} // namespace

Result<TempDir> TempDir::create(std::string_view prefix) noexcept {
  if (prefix.find('/') != std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument, "TempDir: prefix '", prefix, "' holds a '/'");
  }
  const char* base = devrt::detail::read_path_env("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/" + std::string(prefix) + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return make_error(ErrorCode::internal, "TempDir: mkdtemp(", pattern, "): ", std::strerror(errno));
  }
  return TempDir(std::move(pattern), keep_temp_dirs());
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)), keep_(other.keep_) { other.path_.clear(); }

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    keep_ = other.keep_;
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() { remove(); }

void TempDir::remove() noexcept {
  if (path_.empty()) return;
  if (keep_) {
    std::fprintf(stderr, "devrt: keeping temporary directory %s\n", path_.c_str());
  } else {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  path_.clear();
}

std::string TempDir::relpath(std::string_view name) const { return path_ + "/" + std::string(name); }

Result<FileLock> FileLock::lock(const std::string& path, bool wait) noexcept {
  detail::Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) return make_error(ErrorCode::invalid_argument, "FileLock(", path, "): ", std::strerror(errno));
  for (;;) {
    if (::flock(fd.get(), LOCK_EX | (wait ? 0 : LOCK_NB)) == 0) break;
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      return make_error(ErrorCode::unavailable, "FileLock(", path, "): held by another owner");
    }
    return make_error(ErrorCode::internal, "FileLock(", path, "): flock: ", std::strerror(errno));
  }
  return FileLock(path, fd.release());
}

Result<FileLock> FileLock::acquire(const std::string& path) noexcept { return lock(path, true); }
Result<FileLock> FileLock::try_acquire(const std::string& path) noexcept { return lock(path, false); }

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() noexcept {
  if (fd_ < 0) return;
  static_cast<void>(::flock(fd_, LOCK_UN));
  static_cast<void>(::close(fd_));
  fd_ = -1;
}

bool is_source_path(std::string_view text) noexcept {
  if (text.empty()) return false;
  if (text.find('\n') != std::string_view::npos) return false;
  std::string path(text);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return true;
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  static constexpr std::array<std::string_view, 18> kSuffixes = {".c",   ".cc", ".cpp", ".cxx", ".cu", ".h",
                                                                 ".hpp", ".ll", ".bc",  ".s",   ".S",  ".o",
                                                                 ".obj", ".a",  ".so",  ".tar", ".cl", ".hip"};
  for (std::string_view suffix : kSuffixes) {
    if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix) return true;
  }
  return false;
}

Result<std::string> read_file(const std::string& path) noexcept {
  detail::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return make_error(ErrorCode::not_found, "read_file(", path, "): ", std::strerror(errno));
  std::string bytes;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(ErrorCode::internal, "read_file(", path, "): ", std::strerror(errno));
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return bytes;
}

Status write_file(const std::string& path, std::string_view bytes) noexcept {
  detail::Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return make_error(ErrorCode::invalid_argument, "write_file(", path, "): ", std::strerror(errno));
  while (!bytes.empty()) {
    ssize_t n = ::write(fd.get(), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(ErrorCode::internal, "write_file(", path, "): ", std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status();
}

} // namespace devrt::toolchain
