// SPDX-License-Identifier: Apache-2.0
// Pieces the toolchain sources share: an owned file descriptor and pipes.
#ifndef DEVRT_SRC_TOOLCHAIN_TOOLCHAIN_INTERNAL_HPP
#define DEVRT_SRC_TOOLCHAIN_TOOLCHAIN_INTERNAL_HPP

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <devrt/status.hpp>

#include <csignal>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

namespace devrt::toolchain::detail {

// The most of a tool's stdout or stderr kept in an error message.
inline constexpr std::size_t kMaxToolOutput = 64 * 1024;

// An owned file descriptor (-1: none). Move-only.
class Fd {
public:
  Fd() noexcept = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) static_cast<void>(::close(fd_));
    fd_ = fd;
  }

private:
  int fd_ = -1;
};

// A close-on-exec pipe.
inline bool make_pipe(Fd& read_end, Fd& write_end) noexcept {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  return true;
}

// LLVM tools by version, newest first: "clang-30" ... "clang-7". process.cpp.
std::vector<std::string> versioned_names(std::string_view base);

// The installation a program on PATH belongs to: two directories above it, symbolic links
// resolved (nvcc -> /usr/local/cuda-13.0). `unavailable` when it is not on PATH. process.cpp.
Result<std::string> install_root(std::string_view program) noexcept;

// Runs `command` (compiler and fixed flags) with `options`, "-o output" and `inputs`, in that
// order; a failure names `what`. process.cpp.
Status run_build(std::vector<std::string> command, const std::vector<std::string>& options, const std::string& output,
                 const std::vector<std::string>& inputs, std::string_view what) noexcept;

// Waits for `pid` to end (retrying on EINTR) and returns its wait status. process.cpp.
int wait_for_exit(int pid) noexcept;

// "killed by signal 11 (SIGSEGV)". process.cpp.
std::string signal_description(int signal_number);

// Lets a write to a pipe whose reader has gone fail with EPIPE instead of killing the process:
// SIGPIPE is blocked in this thread for the guard's life and a pending one is consumed.
class SigpipeGuard {
public:
  SigpipeGuard() noexcept {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old_);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;
  ~SigpipeGuard() {
    if (!already_pending_) {
      sigset_t pipe_only;
      sigemptyset(&pipe_only);
      sigaddset(&pipe_only, SIGPIPE);
      timespec zero{};
      while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

private:
  sigset_t old_{};
  bool already_pending_ = false;
};

} // namespace devrt::toolchain::detail

#endif // DEVRT_SRC_TOOLCHAIN_TOOLCHAIN_INTERNAL_HPP
