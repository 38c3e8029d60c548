// SPDX-License-Identifier: Apache-2.0
// Where plugins are looked for (core/plugins/plugin_search_path.hpp): the binary that holds this
// code and the folders beside it, the build tree, the environment's lists, and
// devrt::plugin_search_path.
#include <devrt/plugin.hpp>

#include <cstdint>
#include <cstring>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plugins/plugin_search_path.hpp"

// The main executable's text, from the GNU and LLVM linkers' default scripts. Weak, so a linker
// without them leaves them null (a shared object has no __executable_start), and hidden, so that
// a plugin or shared library linking this code does not export its own etext.
extern "C"
    [[gnu::weak, gnu::visibility("hidden")]] const char __executable_start; // NOLINT(bugprone-reserved-identifier)
extern "C" [[gnu::weak, gnu::visibility("hidden")]] const char etext;

namespace devrt {

namespace detail {

std::string directory_of(std::string path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// Code inside the main executable's text needs no dladdr (which would touch the dynamic loader's
// pages), and the path the kernel executed (AT_EXECFN), when absolute and not itself a symlink,
// names the same directory as readlink("/proc/self/exe") (symlinks among its directories lead to
// the same place) without the first access to /proc/self, ~40 us on the reference VM.
DEVRT_STARTUP_CODE std::string_view binary_path(std::span<char> buffer) noexcept {
  const auto here = reinterpret_cast<std::uintptr_t>(&plugin_search_path);
  const bool in_executable = &__executable_start != nullptr && &etext != nullptr &&
                             here >= reinterpret_cast<std::uintptr_t>(&__executable_start) &&
                             here < reinterpret_cast<std::uintptr_t>(&etext);
  Dl_info info{};
  if (!in_executable && dladdr(reinterpret_cast<void*>(&plugin_search_path), &info) != 0 && info.dli_fname != nullptr) {
    std::string_view name = info.dli_fname;
    if (name.find(".so") != std::string_view::npos && name.find('/') != std::string_view::npos) return name;
  }
  if (in_executable) {
    const auto* executed = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
    struct stat status {};
    if (executed != nullptr && executed[0] == '/' && ::lstat(executed, &status) == 0 && S_ISREG(status.st_mode)) {
      return executed;
    }
  }
  ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  return n > 0 ? std::string_view(buffer.data(), static_cast<std::size_t>(n)) : std::string_view();
}

bool in_build_tree(std::string_view directory) noexcept {
  std::string_view root = kBuildRoot;
  return !root.empty() && directory.starts_with(root) &&
         (directory.size() == root.size() || directory[root.size()] == '/');
}

const char* disable_variable() noexcept { return read_text_env("DEVRT_DISABLE"); }

std::vector<std::string> disabled_plugins() { return split_list(disable_variable(), ','); }

bool is_disabled(const std::vector<std::string>& disabled, std::string_view name) noexcept {
  for (const std::string& item : disabled) {
    if (item == name) return true;
  }
  return false;
}

namespace {

bool is_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

} // namespace

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text;
}

std::string find_plugin(std::string_view stem, const std::vector<std::string>& directories) {
  for (const std::string& directory : directories) {
    std::string path = directory + "/" + std::string(kPluginPrefix) + std::string(stem) + std::string(kPluginSuffix);
    if (is_file(path)) return path;
  }
  return {};
}

DEVRT_STARTUP_CODE bool search_path_has_plugins() noexcept {
  // getdents64 into a stack buffer: opendir's 32 KiB heap buffer alone is several new pages.
  auto holds_plugin = [](const char* directory) noexcept {
    int fd = ::open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    alignas(struct dirent64) char entries[1024];
    bool found = false;
    for (ssize_t n; !found && (n = ::getdents64(fd, entries, sizeof entries)) > 0;) {
      for (ssize_t at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const struct dirent64*>(entries + at);
        std::string_view file = entry->d_name;
        if (is_plugin_file(file)) {
          found = true;
          break;
        }
        at += entry->d_reclen;
      }
    }
    ::close(fd);
    return found;
  };
  return visit_search_path([&](std::string_view directory, std::string_view suffix) noexcept {
    char path[1024]; // a longer path makes this answer "maybe", and the full scan decides
    if (directory.size() + suffix.size() >= sizeof path) return true;
    std::memmove(path, directory.data(), directory.size());
    if (!suffix.empty()) std::memcpy(path + directory.size(), suffix.data(), suffix.size());
    path[directory.size() + suffix.size()] = '\0';
    return holds_plugin(path);
  });
}

} // namespace detail

std::vector<std::string> plugin_search_path() {
  std::vector<std::string> directories;
  detail::visit_search_path([&directories](std::string_view directory, std::string_view suffix) {
    directories.emplace_back(directory).append(suffix);
    return false;
  });
  return directories;
}

} // namespace devrt
