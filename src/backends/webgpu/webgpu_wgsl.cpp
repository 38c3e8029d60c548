// SPDX-License-Identifier: Apache-2.0
// The WGSL interface scan (webgpu_wgsl.hpp).
#include "webgpu_wgsl.hpp"

#include <algorithm>
#include <cctype>

namespace devrt::webgpu {

namespace {

// `source` without // and /* */ comments (nested block comments, as WGSL allows), each replaced by
// a space.
std::string without_comments(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size();) {
    if (source.compare(i, 2, "//") == 0) {
      while (i < source.size() && source[i] != '\n') ++i;
      out += ' ';
    } else if (source.compare(i, 2, "/*") == 0) {
      int depth = 0;
      do {
        if (source.compare(i, 2, "/*") == 0) {
          ++depth;
          i += 2;
        } else if (source.compare(i, 2, "*/") == 0) {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      } while (depth > 0 && i < source.size());
      out += ' ';
    } else {
      out += source[i++];
    }
  }
  return out;
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::size_t skip_spaces(std::string_view text, std::size_t at) {
  while (at < text.size() && is_space(text[at])) ++at;
  return at;
}

// The argument text of `@name(...)` starting at `at` (which points at '@'), and where it ends.
bool attribute_argument(std::string_view text, std::size_t at, std::string_view name, std::string_view& argument,
                        std::size_t& end) {
  std::size_t p = skip_spaces(text, at + 1);
  if (text.compare(p, name.size(), name) != 0) return false;
  p = skip_spaces(text, p + name.size());
  if (p >= text.size() || text[p] != '(') return false;
  std::size_t close = text.find(')', p);
  if (close == std::string_view::npos) return false;
  argument = text.substr(p + 1, close - p - 1);
  end = close + 1;
  return true;
}

// An integer literal (decimal, optional i/u suffix), or -1.
long long integer(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size() && is_space(text[begin])) ++begin;
  std::size_t end = text.size();
  while (end > begin && is_space(text[end - 1])) --end;
  text = text.substr(begin, end - begin);
  if (!text.empty() && (text.back() == 'i' || text.back() == 'u')) text.remove_suffix(1);
  if (text.empty() || text.size() > 9) return -1;
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// The attributes before the declaration at `at`: the text from the end of the previous ';' or '}'.
std::string_view attributes_before(std::string_view text, std::size_t at) {
  std::size_t begin = text.find_last_of(";}{", at == 0 ? 0 : at - 1);
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  return text.substr(begin, at - begin);
}

// Whether `text` declares `override <name>` at module scope.
bool declares_override(std::string_view text, std::string_view name) {
  for (std::size_t at = text.find("override"); at != std::string_view::npos; at = text.find("override", at + 8)) {
    if ((at > 0 && is_word(text[at - 1])) || (at + 8 < text.size() && is_word(text[at + 8]))) continue;
    std::size_t p = skip_spaces(text, at + 8);
    if (text.compare(p, name.size(), name) == 0 && (p + name.size() >= text.size() || !is_word(text[p + name.size()])))
      return true;
  }
  return false;
}

} // namespace

namespace {

// The storage and uniform buffers of bind group 0, ascending by binding.
Result<std::vector<WgslBinding>> scan_bindings(std::string_view text) {
  WgslInterface out;
  // Resources: every `var<...>` at module scope with @group/@binding attributes before it.
  for (std::size_t at = text.find("var"); at != std::string_view::npos; at = text.find("var", at + 3)) {
    if ((at > 0 && is_word(text[at - 1])) || (at + 3 < text.size() && is_word(text[at + 3]))) continue;
    std::string_view attributes = attributes_before(text, at);
    const std::size_t binding_at = attributes.find("@binding");
    if (binding_at == std::string_view::npos) continue; // a function-scope, private or workgroup variable
    std::string_view binding_text;
    std::size_t end = 0;
    if (!attribute_argument(attributes, binding_at, "binding", binding_text, end)) continue;
    long long binding = integer(binding_text);
    long long group = 0;
    for (std::size_t g = attributes.find('@'); g != std::string_view::npos; g = attributes.find('@', g + 1)) {
      std::string_view group_text;
      if (attribute_argument(attributes, g, "group", group_text, end)) group = integer(group_text);
    }
    if (binding < 0 || group < 0) {
      return make_error(ErrorCode::invalid_argument, "WGSL: a resource's @group/@binding is not an integer literal");
    }
    if (group != 0) {
      return make_error(ErrorCode::invalid_argument, "WGSL: a resource in @group(", group,
                        "): devrt binds kernel arguments to group 0 only");
    }
    std::size_t p = skip_spaces(text, at + 3);
    std::string_view space;
    if (p < text.size() && text[p] == '<') {
      std::size_t close = text.find('>', p);
      if (close == std::string_view::npos) return make_error(ErrorCode::invalid_argument, "WGSL: unterminated var<");
      space = text.substr(p + 1, close - p - 1);
      space = space.substr(0, space.find(','));
      while (!space.empty() && is_space(space.front())) space.remove_prefix(1);
      while (!space.empty() && is_space(space.back())) space.remove_suffix(1);
    }
    if (space != "storage" && space != "uniform") {
      return make_error(ErrorCode::invalid_argument, "WGSL: @binding(", binding,
                        ") is not a storage or uniform buffer (textures and samplers are not kernel arguments here)");
    }
    for (const WgslBinding& seen : out.bindings) {
      if (seen.binding == binding) {
        return make_error(ErrorCode::invalid_argument, "WGSL: two resources at @binding(", binding, ")");
      }
    }
    out.bindings.push_back(WgslBinding{static_cast<std::uint32_t>(binding), space == "uniform"});
  }
  std::sort(out.bindings.begin(), out.bindings.end(),
            [](const WgslBinding& a, const WgslBinding& b) { return a.binding < b.binding; });
  return out.bindings;
}

// The compute entry points and their workgroup sizes.
std::vector<WgslEntryPoint> scan_entry_points(std::string_view text) {
  WgslInterface out;
  // Entry points: `fn name` with @compute among the attributes before it.
  for (std::size_t at = text.find("fn"); at != std::string_view::npos; at = text.find("fn", at + 2)) {
    if ((at > 0 && is_word(text[at - 1])) || (at + 2 < text.size() && is_word(text[at + 2]))) continue;
    std::string_view attributes = attributes_before(text, at);
    if (attributes.find("@compute") == std::string_view::npos) continue;
    std::size_t p = skip_spaces(text, at + 2);
    std::size_t name_end = p;
    while (name_end < text.size() && is_word(text[name_end])) ++name_end;
    WgslEntryPoint entry;
    entry.name = std::string(text.substr(p, name_end - p));
    for (std::size_t a = attributes.find('@'); a != std::string_view::npos; a = attributes.find('@', a + 1)) {
      std::string_view sizes;
      std::size_t end = 0;
      if (!attribute_argument(attributes, a, "workgroup_size", sizes, end)) continue;
      for (int dim = 0; dim < 3; ++dim) {
        std::size_t comma = sizes.find(',');
        std::string_view part = sizes.substr(0, comma);
        if (part.find_first_not_of(" \t\r\n") == std::string_view::npos) break;
        long long value = integer(part);
        entry.workgroup_size[dim] = value > 0 ? static_cast<std::uint32_t>(value) : 0;
        if (value < 0) {
          std::string_view word = part.substr(part.find_first_not_of(" \t\r\n"));
          word = word.substr(0, word.find_last_not_of(" \t\r\n") + 1);
          const bool identifier = !word.empty() && std::all_of(word.begin(), word.end(), is_word) &&
                                  std::isdigit(static_cast<unsigned char>(word.front())) == 0;
          if (identifier && declares_override(text, word)) entry.size_override[dim] = std::string(word);
        }
        if (comma == std::string_view::npos) break;
        sizes.remove_prefix(comma + 1);
      }
    }
    if (!entry.name.empty()) out.entry_points.push_back(std::move(entry));
  }
  return out.entry_points;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// The members of `struct <type> { ... }` as scalars; false when the struct is not found or a member
// is not i32, u32 or f32.
bool struct_scalars(std::string_view text, std::string_view type, std::vector<WgslScalar>& out) {
  for (std::size_t at = text.find("struct"); at != std::string_view::npos; at = text.find("struct", at + 6)) {
    if ((at > 0 && is_word(text[at - 1])) || (at + 6 < text.size() && is_word(text[at + 6]))) continue;
    const std::size_t open = text.find('{', at);
    if (open == std::string_view::npos || trimmed(text.substr(at + 6, open - at - 6)) != type) continue;
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) return false;
    std::string_view members = text.substr(open + 1, close - open - 1);
    while (!trimmed(members).empty()) {
      const std::size_t comma = members.find_first_of(",;");
      std::string_view member = members.substr(0, comma);
      members = comma == std::string_view::npos ? std::string_view() : members.substr(comma + 1);
      if (trimmed(member).empty()) continue;
      const std::size_t colon = member.find(':');
      if (colon == std::string_view::npos) return false;
      std::string_view name = trimmed(member.substr(0, colon));
      if (const std::size_t cut = name.find_last_of(") \t\r\n"); cut != std::string_view::npos) {
        name.remove_prefix(cut + 1); // after the member's attributes
      }
      const std::string_view member_type = trimmed(member.substr(colon + 1));
      WgslScalar scalar{std::string(name)};
      if (member_type == "i32") {
        scalar.code = 0;
      } else if (member_type == "u32") {
        scalar.code = 1;
      } else if (member_type == "f32") {
        scalar.code = 2;
      } else {
        return false;
      }
      out.push_back(std::move(scalar));
    }
    if (!out.empty() && out.back().name == "packGridDimX") out.pop_back();
    return true;
  }
  return false;
}

// The type named in `var<uniform> name : Type;` of the uniform binding, or "".
std::string_view uniform_type(std::string_view text) {
  for (std::size_t at = text.find("var"); at != std::string_view::npos; at = text.find("var", at + 3)) {
    if ((at > 0 && is_word(text[at - 1])) || (at + 3 < text.size() && is_word(text[at + 3]))) continue;
    const std::size_t p = skip_spaces(text, at + 3);
    if (p >= text.size() || text[p] != '<') continue;
    const std::size_t close = text.find('>', p);
    if (close == std::string_view::npos || trimmed(text.substr(p + 1, close - p - 1)) != "uniform") continue;
    const std::size_t colon = text.find(':', close);
    const std::size_t end = text.find(';', close);
    if (colon == std::string_view::npos || end == std::string_view::npos || colon > end) return {};
    return trimmed(text.substr(colon + 1, end - colon - 1));
  }
  return {};
}

} // namespace

Result<WgslInterface> scan_wgsl(std::string_view source) {
  const std::string clean = without_comments(source);
  WgslInterface out;
  DEVRT_ASSIGN_OR_RETURN(out.bindings, scan_bindings(clean));
  out.entry_points = scan_entry_points(clean);
  const bool has_uniform =
      std::any_of(out.bindings.begin(), out.bindings.end(), [](const WgslBinding& b) { return b.uniform; });
  out.scalars_known = !has_uniform || struct_scalars(clean, uniform_type(clean), out.scalars);
  if (!out.scalars_known) out.scalars.clear();
  return out;
}

} // namespace devrt::webgpu
