// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the toolchain tests.
#ifndef DEVRT_TEST_TOOLCHAIN_TOOLCHAIN_TEST_UTIL_HPP
#define DEVRT_TEST_TOOLCHAIN_TOOLCHAIN_TEST_UTIL_HPP

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string_view>
#include <thread>

#include <sys/types.h>

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// True once `pid` no longer exists (or is a zombie waiting for its parent), within 5 s.
inline bool wait_until_gone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    if (std::FILE* file = std::fopen(path, "r")) {
      char line[256] = {};
      std::size_t n = std::fread(line, 1, sizeof line - 1, file);
      std::fclose(file);
      std::string_view text(line, n);
      std::size_t close = text.rfind(')');
      if (close != std::string_view::npos && close + 2 < text.size() && text[close + 2] == 'Z') return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

#endif // DEVRT_TEST_TOOLCHAIN_TOOLCHAIN_TEST_UTIL_HPP
