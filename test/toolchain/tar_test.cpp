// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/tar.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <archive.h>
#include <archive_entry.h>

#include "toolchain_test_util.hpp"

using devrt::ErrorCode;
using namespace devrt::toolchain;

namespace {

struct TarEntry {
  std::string path;
  enum Kind { file, directory, symlink, hardlink, fifo } kind = file;
  std::string content_or_target;
};

// Writes a tar with exactly these entries, as a hostile tool could.
void write_raw_tar(const std::string& output, const std::vector<TarEntry>& entries) {
  archive* writer = archive_write_new();
  archive_write_set_format_pax_restricted(writer);
  REQUIRE(archive_write_open_filename(writer, output.c_str()) == ARCHIVE_OK);
  for (const TarEntry& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_perm(entry, 0644);
    switch (e.kind) {
    case TarEntry::file:
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_size(entry, static_cast<la_int64_t>(e.content_or_target.size()));
      break;
    case TarEntry::directory: archive_entry_set_filetype(entry, AE_IFDIR); break;
    case TarEntry::symlink:
      archive_entry_set_filetype(entry, AE_IFLNK);
      archive_entry_set_symlink(entry, e.content_or_target.c_str());
      break;
    case TarEntry::hardlink:
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_hardlink(entry, e.content_or_target.c_str());
      break;
    case TarEntry::fifo: archive_entry_set_filetype(entry, AE_IFIFO); break;
    }
    REQUIRE(archive_write_header(writer, entry) == ARCHIVE_OK);
    if (e.kind == TarEntry::file && !e.content_or_target.empty()) {
      archive_write_data(writer, e.content_or_target.data(), e.content_or_target.size());
    }
    archive_entry_free(entry);
  }
  archive_write_close(writer);
  archive_write_free(writer);
}

bool is_empty_directory(const std::string& path) {
  return std::filesystem::is_directory(path) &&
         std::filesystem::directory_iterator(path) == std::filesystem::directory_iterator();
}

} // namespace

TEST_CASE("create_tar and extract_tar round-trip files under their base names", "[tar]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  std::filesystem::create_directories(dir->relpath("in/deep"));
  std::string big(300000, 'b');
  REQUIRE(write_file(dir->relpath("in/a.txt"), "alpha").ok());
  REQUIRE(write_file(dir->relpath("in/deep/b.bin"), big).ok());
  std::string archive_path = dir->relpath("bundle.tar");
  REQUIRE(create_tar(archive_path, {dir->relpath("in/a.txt"), dir->relpath("in/deep/b.bin")}).ok());

  std::filesystem::create_directories(dir->relpath("out"));
  devrt::Result<std::vector<std::string>> files = extract_tar(archive_path, dir->relpath("out"));
  INFO(files.status().message());
  REQUIRE(files.ok());
  CHECK(files->size() == 2);
  CHECK(*read_file(dir->relpath("out/a.txt")) == "alpha");
  CHECK(*read_file(dir->relpath("out/b.bin")) == big);

  CHECK(create_tar(dir->relpath("dup.tar"), {dir->relpath("in/a.txt"), dir->relpath("in/a.txt")}).code() ==
        ErrorCode::invalid_argument);
  CHECK(create_tar(dir->relpath("x.tar"), {dir->relpath("in/missing")}).code() == ErrorCode::invalid_argument);
  CHECK(extract_tar(dir->relpath("missing.tar"), dir->relpath("out")).status().code() == ErrorCode::invalid_argument);
  CHECK(extract_tar(archive_path, dir->relpath("no-such-dir")).status().code() == ErrorCode::invalid_argument);
  REQUIRE(write_file(dir->relpath("junk.tar"), "this is not a tar archive at all").ok());
  CHECK(!extract_tar(dir->relpath("junk.tar"), dir->relpath("out")).ok());
}

TEST_CASE("normalize_file_list unpacks tars in place and keeps other files", "[tar]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  REQUIRE(write_file(dir->relpath("one.o"), "1").ok());
  REQUIRE(write_file(dir->relpath("two.o"), "2").ok());
  REQUIRE(write_file(dir->relpath("three.o"), "3").ok());
  REQUIRE(create_tar(dir->relpath("objs.tar"), {dir->relpath("two.o"), dir->relpath("three.o")}).ok());
  std::filesystem::create_directories(dir->relpath("unpacked"));
  devrt::Result<std::vector<std::string>> list =
      normalize_file_list({dir->relpath("one.o"), dir->relpath("objs.tar")}, dir->relpath("unpacked"));
  INFO(list.status().message());
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  CHECK((*list)[0] == dir->relpath("one.o"));
  CHECK(*read_file((*list)[1]) == "2");
  CHECK(*read_file((*list)[2]) == "3");
}

TEST_CASE("hostile archives are refused whole, naming the entry", "[tar]") {
  struct Case {
    const char* what;
    std::vector<TarEntry> entries;
    const char* entry;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"absolute path",
       {{"ok.txt", TarEntry::file, "x"}, {"/tmp/devrt-evil", TarEntry::file, "x"}},
       "/tmp/devrt-evil",
       "absolute"},
      {"dot-dot", {{"../escape.txt", TarEntry::file, "x"}}, "../escape.txt", "'..'"},
      {"inner dot-dot", {{"a/../../escape.txt", TarEntry::file, "x"}}, "a/../../escape.txt", "'..'"},
      {"absolute symlink",
       {{"link", TarEntry::symlink, "/etc"}, {"link/passwd", TarEntry::file, "x"}},
       "link",
       "symbolic link to '/etc'"},
      {"escaping symlink", {{"sub/up", TarEntry::symlink, "../../.."}}, "sub/up", "outside"},
      {"through a symlink",
       {{"sub/", TarEntry::directory, ""}, {"inner", TarEntry::symlink, "sub"}, {"inner/file", TarEntry::file, "x"}},
       "inner/file",
       "under the symbolic link 'inner'"},
      {"hard link out", {{"hard", TarEntry::hardlink, "/etc/passwd"}}, "hard", "hard link"},
      {"fifo", {{"pipe", TarEntry::fifo, ""}}, "pipe", "FIFO"},
  };
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO(c.what);
    std::string archive_path = dir->relpath("hostile" + std::to_string(i) + ".tar");
    write_raw_tar(archive_path, c.entries);
    std::string target = dir->relpath("target" + std::to_string(i));
    std::filesystem::create_directories(target);
    devrt::Result<std::vector<std::string>> result = extract_tar(archive_path, target);
    REQUIRE(!result.ok());
    CHECK(result.status().code() == ErrorCode::invalid_argument);
    CHECK(contains(result.status().message(), std::string("entry '") + c.entry + "'"));
    CHECK(contains(result.status().message(), c.why));
    CHECK(contains(result.status().message(), "nothing was extracted"));
    CHECK(is_empty_directory(target));
  }
  CHECK(!std::filesystem::exists("/tmp/devrt-evil"));
}

TEST_CASE("links that stay inside the directory are extracted", "[tar]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  write_raw_tar(dir->relpath("fine.tar"), {{"file.txt", TarEntry::file, "data"},
                                           {"sub/", TarEntry::directory, ""},
                                           {"sub/link", TarEntry::symlink, "../file.txt"}});
  std::filesystem::create_directories(dir->relpath("out"));
  devrt::Result<std::vector<std::string>> files = extract_tar(dir->relpath("fine.tar"), dir->relpath("out"));
  INFO(files.status().message());
  REQUIRE(files.ok());
  CHECK(std::filesystem::is_symlink(dir->relpath("out/sub/link")));
  CHECK(*read_file(dir->relpath("out/sub/link")) == "data");
}
