// SPDX-License-Identifier: Apache-2.0
// Tar archives through libarchive: create, extract safely, and expand tars in a file list.
// Part of devrt_toolchain.
#ifndef DEVRT_TOOLCHAIN_TAR_HPP
#define DEVRT_TOOLCHAIN_TAR_HPP

#include <string>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// Writes a POSIX tar at `output` holding each of `files` under its base name (TVM's tar.tar).
// Two inputs with one base name are invalid_argument. Thread-safe.
Status create_tar(const std::string& output, const std::vector<std::string>& files) noexcept;

// Extracts `archive` into the existing directory `directory`. Every entry is checked before
// anything is written: an absolute path, a ".." component, a link whose target leaves the
// directory, or an entry reached through a symbolic link is refused (invalid_argument naming the
// entry) and nothing is extracted. Returns the extracted regular files' paths. Thread-safe.
Result<std::vector<std::string>> extract_tar(const std::string& archive, const std::string& directory) noexcept;

// Replaces every ".tar" in `files` by the files it holds, extracted into a fresh subdirectory of
// `directory`; other entries are kept as they are, in order (TVM's
// normalize_file_list_by_unpacking_tars). Thread-safe.
Result<std::vector<std::string>> normalize_file_list(const std::vector<std::string>& files,
                                                     const std::string& directory) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_TAR_HPP
