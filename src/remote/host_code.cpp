// SPDX-License-Identifier: Apache-2.0
#include "remote/host_code.hpp"

#include <array>
#include <cctype>
#include <optional>
#include <string>

namespace devrt::server {
namespace {

bool contains_ignoring_case(std::string_view text, std::string_view part) noexcept {
  if (part.size() > text.size()) return false;
  for (std::size_t at = 0; at + part.size() <= text.size(); ++at) {
    std::size_t i = 0;
    while (i < part.size() && std::tolower(static_cast<unsigned char>(text[at + i])) == part[i]) ++i;
    if (i == part.size()) return true;
  }
  return false;
}

// CPU implementations of GPU APIs, as their device or driver names say (lower case).
constexpr std::array<std::string_view, 6> kSoftwareImplementations = {
    "llvmpipe", "lavapipe", "softpipe", "swiftshader", "microsoft basic render driver", "warp"};

bool names_software_implementation(std::string_view name) noexcept {
  for (std::string_view software : kSoftwareImplementations) {
    if (software == "warp" ? name == "WARP" : contains_ignoring_case(name, software)) return true;
  }
  return false;
}

bool is_identifier_char(char c) noexcept { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The source as the preprocessor's later phases see it: trigraphs ??= and ??/ replaced (the only
// ones that can make a directive or a splice), backslash-newline splices removed, comments and
// string and character literals replaced by spaces (newlines kept, so lines still count).
std::string logical_text(std::string_view source) {
  std::string spliced;
  spliced.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '?' && i + 2 < source.size() && source[i + 1] == '?' && (source[i + 2] == '=' || source[i + 2] == '/')) {
      c = source[i + 2] == '=' ? '#' : '\\';
      i += 2;
    }
    if (c == '\\') {
      std::size_t next = i + 1;
      if (next < source.size() && source[next] == '\r') ++next;
      if (next < source.size() && source[next] == '\n') {
        i = next;
        continue;
      }
    }
    spliced.push_back(c);
  }
  std::string out;
  out.reserve(spliced.size());
  for (std::size_t i = 0; i < spliced.size();) {
    const char c = spliced[i];
    if (c == '/' && i + 1 < spliced.size() && spliced[i + 1] == '*') {
      const std::size_t end = spliced.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? spliced.size() : end + 2;
      out.push_back(' ');
      for (std::size_t j = i; j < stop; ++j) {
        if (spliced[j] == '\n') out.push_back('\n');
      }
      i = stop;
    } else if (c == '/' && i + 1 < spliced.size() && spliced[i + 1] == '/') {
      while (i < spliced.size() && spliced[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      // A literal ends at its closing quote or, unterminated, at the end of the line.
      ++i;
      while (i < spliced.size() && spliced[i] != c && spliced[i] != '\n') i += spliced[i] == '\\' ? 2 : 1;
      if (i < spliced.size() && spliced[i] == c) ++i;
      out.push_back(' ');
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

Status refused_source(std::size_t line, std::string_view what) {
  return make_error(ErrorCode::permission_denied, "OpenCL C line ", line, ": ", what,
                    " reads files of the server, which devrt-server never compiles (put what it reads in the "
                    "source)");
}

// The directives that read nothing; a #pragma is checked by its words (pragma_reads_no_files).
constexpr std::array<std::string_view, 12> kDirectives = {"define", "undef", "if",    "ifdef",   "ifndef", "elif",
                                                          "else",   "endif", "error", "warning", "line",   "pragma"};

std::string_view next_word(std::string_view text, std::size_t& at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\f' || text[at] == '\v')) ++at;
  const std::size_t start = at;
  while (at < text.size() && is_identifier_char(text[at])) ++at;
  return text.substr(start, at - start);
}

// #pragma OPENCL ..., unroll, once, STDC, pack, clang loop/diagnostic/fp: none names a file (unlike
// GCC dependency, which stats one, or clang module).
bool pragma_reads_no_files(std::string_view line) {
  std::size_t at = 0;
  const std::string_view first = next_word(line, at);
  constexpr std::array<std::string_view, 8> kPlain = {"OPENCL", "unroll", "nounroll",   "once",
                                                      "STDC",   "pack",   "push_macro", "pop_macro"};
  for (std::string_view plain : kPlain) {
    if (first == plain) return true;
  }
  if (first != "clang") return false;
  const std::string_view second = next_word(line, at);
  return second == "loop" || second == "diagnostic" || second == "fp";
}

} // namespace

bool kernels_run_in_process(DeviceKind kind, const Target& target, std::string_view name) noexcept {
  if (kind == DeviceKind::cpu) return true;
  if (kind == DeviceKind::opencl && target.get<std::string>("device") == std::optional<std::string>("cpu")) return true;
  if (kind == DeviceKind::vulkan && target.get<std::string>("device_type") == std::optional<std::string>("cpu")) {
    return true;
  }
  for (const char* key : {"device_name", "driver_name"}) {
    if (std::optional<std::string> value = target.get<std::string>(key);
        value && names_software_implementation(*value)) {
      return true;
    }
  }
  return names_software_implementation(name);
}

Status check_source_reads_no_files(std::string_view source) noexcept {
  const std::string text = logical_text(source);
  std::size_t line = 1;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view current(text.data() + start, end - start);
    std::size_t at = 0;
    while (at < current.size() && std::isspace(static_cast<unsigned char>(current[at])) != 0) ++at;
    const bool hash = at < current.size() && current[at] == '#';
    const bool digraph = current.substr(at, 2) == "%:";
    if (hash || digraph) {
      at += hash ? 1 : 2;
      const std::string_view directive = next_word(current, at);
      bool known = directive.empty(); // the null directive
      for (std::string_view allowed : kDirectives) known = known || directive == allowed;
      if (!known) return refused_source(line, "#" + std::string(directive));
      if (directive == "pragma" && !pragma_reads_no_files(current.substr(at))) {
        return refused_source(line, "#pragma" + std::string(current.substr(at)));
      }
    }
    // Operators that read or probe files, anywhere (in #if, in a macro's definition).
    for (std::size_t i = 0; i < current.size();) {
      if (!is_identifier_char(current[i])) {
        ++i;
        continue;
      }
      const std::size_t word_start = i;
      while (i < current.size() && is_identifier_char(current[i])) ++i;
      const std::string_view word = current.substr(word_start, i - word_start);
      if (word == "__has_include" || word == "__has_include_next" || word == "__has_embed" || word == "_Pragma") {
        return refused_source(line, word == "_Pragma" ? "_Pragma (write #pragma instead)" : word);
      }
    }
    start = end + 1;
    ++line;
  }
  return Status();
}

Status check_build_options(std::string_view options) noexcept {
  bool definition_next = false;
  std::size_t at = 0;
  while (at < options.size()) {
    while (at < options.size() && std::isspace(static_cast<unsigned char>(options[at])) != 0) ++at;
    const std::size_t start = at;
    while (at < options.size() && std::isspace(static_cast<unsigned char>(options[at])) == 0) ++at;
    const std::string_view word = options.substr(start, at - start);
    if (word.empty()) break;
    bool fine = false;
    if (definition_next) {
      fine = word[0] != '-' && word[0] != '@';
      definition_next = false;
    } else if (word == "-D" || word == "-U") {
      fine = definition_next = true;
    } else if (word.starts_with("-D") || word.starts_with("-U")) {
      fine = true;
    } else if (word == "-w" || word == "-Werror" || word == "-g") {
      fine = true;
    } else if (word.starts_with("-cl-")) {
      fine = word.find('/') == std::string_view::npos;
    }
    if (!fine) {
      return make_error(ErrorCode::permission_denied, "build option '", word,
                        "' is refused: devrt-server takes -D, -U, -w, -Werror, -g and -cl- options only, none that "
                        "names a file of the server");
    }
  }
  if (definition_next) return make_error(ErrorCode::invalid_argument, "build options end in -D or -U with no macro");
  return Status();
}

} // namespace devrt::server
