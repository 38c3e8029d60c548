// SPDX-License-Identifier: Apache-2.0
// Target: attributes, JSON serialisation and parsing, and detection through the backends.
#include <devrt/target.hpp>

#include <devrt/backend/registry.hpp>

#include <algorithm>
#include <charconv>
#include <new>
#include <utility>
#include <variant>
#include <vector>

#include "support/json.hpp"

namespace devrt {

using detail::append_json_string;

// ---- attributes --------------------------------------------------------------------------------

namespace {
using Value = std::variant<bool, std::int64_t, std::string, std::vector<std::string>>;
using Entry = std::pair<std::string, Value>;
} // namespace

struct Target::Attributes {
  std::vector<Entry> entries;

  const Value* find(std::string_view key) const noexcept {
    for (const Entry& entry : entries) {
      if (entry.first == key) return &entry.second;
    }
    return nullptr;
  }
  void set(std::string_view key, Value value) {
    for (Entry& entry : entries) {
      if (entry.first == key) {
        entry.second = std::move(value);
        return;
      }
    }
    entries.emplace_back(std::string(key), std::move(value));
  }
  // The value of `key` in `attributes` (null for none) if it holds a T.
  template <class T>
  static const T* get(const Attributes* attributes, std::string_view key) noexcept {
    const Value* value = attributes != nullptr ? attributes->find(key) : nullptr;
    return value != nullptr ? std::get_if<T>(value) : nullptr;
  }
};

Target::Target(const Target& other)
    : kind_(other.kind_), attributes_(other.attributes_ != nullptr ? new Attributes(*other.attributes_) : nullptr) {}

Target& Target::operator=(const Target& other) {
  if (this != &other) *this = Target(other);
  return *this;
}

Target& Target::operator=(Target&& other) noexcept {
  if (this != &other) {
    delete attributes_;
    kind_ = std::move(other.kind_);
    attributes_ = std::exchange(other.attributes_, nullptr);
  }
  return *this;
}

Target::~Target() { delete attributes_; }

Target::Attributes& Target::attributes() {
  if (attributes_ == nullptr) attributes_ = new Attributes();
  return *attributes_;
}

void Target::set(std::string_view key, bool value) { attributes().set(key, value); }
void Target::set(std::string_view key, std::int64_t value) { attributes().set(key, value); }
void Target::set(std::string_view key, std::string_view value) { attributes().set(key, std::string(value)); }
void Target::set(std::string_view key, std::span<const std::string> items) {
  attributes().set(key, std::vector<std::string>(items.begin(), items.end()));
}
void Target::set(std::string_view key, std::initializer_list<std::string_view> items) {
  attributes().set(key, std::vector<std::string>(items.begin(), items.end()));
}

std::size_t Target::size() const noexcept { return attributes_ != nullptr ? attributes_->entries.size() : 0; }

std::string_view Target::key(std::size_t index) const noexcept {
  return index < size() ? std::string_view(attributes_->entries[index].first) : std::string_view();
}

Target::ValueType Target::type(std::size_t index) const noexcept {
  if (index >= size()) return ValueType::boolean;
  return static_cast<ValueType>(attributes_->entries[index].second.index());
}

bool Target::contains(std::string_view key) const noexcept {
  return attributes_ != nullptr && attributes_->find(key) != nullptr;
}

const bool* Target::find_boolean(std::string_view key) const noexcept {
  return Attributes::get<bool>(attributes_, key);
}
const std::int64_t* Target::find_integer(std::string_view key) const noexcept {
  return Attributes::get<std::int64_t>(attributes_, key);
}
const std::string* Target::find_string(std::string_view key) const noexcept {
  return Attributes::get<std::string>(attributes_, key);
}
std::optional<std::span<const std::string>> Target::find_list(std::string_view key) const noexcept {
  const auto* list = Attributes::get<std::vector<std::string>>(attributes_, key);
  if (list == nullptr) return std::nullopt;
  return std::span<const std::string>(*list);
}

bool Target::has(std::string_view key, std::string_view item) const noexcept {
  std::optional<std::span<const std::string>> list = find_list(key);
  return list && std::find(list->begin(), list->end(), item) != list->end();
}

bool operator==(const Target& a, const Target& b) noexcept {
  if (a.kind_ != b.kind_ || a.size() != b.size()) return false;
  return a.size() == 0 || a.attributes_->entries == b.attributes_->entries;
}

// ---- JSON out ----------------------------------------------------------------------------------

namespace {

void append_integer(std::string& out, std::int64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

// One value, as JSON or as TVM's command-line form (strings bare, quoted when they hold
// blanks; lists comma-joined).
void append_value(std::string& out, const Value& value, bool json) {
  auto append_text = [&](const std::string& text) {
    if (json) {
      append_json_string(out, text);
      return;
    }
    bool quote = text.find_first_of(" \t") != std::string::npos;
    if (quote) out += '"';
    out += text;
    if (quote) out += '"';
  };
  if (const bool* b = std::get_if<bool>(&value)) {
    out += *b ? "true" : "false";
  } else if (const std::int64_t* i = std::get_if<std::int64_t>(&value)) {
    append_integer(out, *i);
  } else if (const std::string* s = std::get_if<std::string>(&value)) {
    append_text(*s);
  } else {
    if (json) out += '[';
    bool first = true;
    for (const std::string& item : std::get<std::vector<std::string>>(value)) {
      if (!first) out += ',';
      first = false;
      append_text(item);
    }
    if (json) out += ']';
  }
}

} // namespace

std::string Target::to_json() const {
  std::string out = "{\"kind\":";
  append_json_string(out, kind_);
  if (attributes_ != nullptr) {
    for (const Entry& entry : attributes_->entries) {
      out += ',';
      append_json_string(out, entry.first);
      out += ':';
      append_value(out, entry.second, true);
    }
  }
  out += '}';
  return out;
}

std::string Target::to_string() const {
  std::string out = kind_;
  if (attributes_ != nullptr) {
    for (const Entry& entry : attributes_->entries) {
      out += " -";
      out += entry.first;
      out += '=';
      append_value(out, entry.second, false);
    }
  }
  return out;
}

// ---- JSON in -----------------------------------------------------------------------------------

namespace {

// A strict RFC 8259 reader for the subset a target uses: one object whose values are booleans,
// integers, strings or arrays of strings. Strings must be valid UTF-8.
class TargetJsonReader {
public:
  explicit TargetJsonReader(std::string_view text) noexcept : json_(text, "target JSON") {}

  Result<Target> read() noexcept {
    std::string kind;
    bool have_kind = false;
    json_.skip_space();
    if (!json_.consume('{')) return json_.error("expected '{' to start the target object");
    json_.skip_space();
    if (json_.consume('}')) return json_.error_at(json_.position() - 1, "missing \"kind\"");
    for (;;) {
      json_.skip_space();
      std::size_t key_at = json_.position();
      std::string key;
      if (json_.peek() != '"') return json_.error("expected a string key");
      DEVRT_RETURN_IF_ERROR(json_.read_string(&key));
      json_.skip_space();
      if (!json_.consume(':')) return json_.error("expected ':' after a key");
      json_.skip_space();
      if (key == "kind") {
        if (have_kind) return json_.error_at(key_at, "duplicate key \"kind\"");
        std::size_t value_at = json_.position();
        if (json_.peek() != '"') return json_.error("\"kind\" must be a string");
        DEVRT_RETURN_IF_ERROR(json_.read_string(&kind));
        if (kind.empty()) return json_.error_at(value_at, "\"kind\" is empty");
        have_kind = true;
      } else {
        if (find(key) != nullptr) return json_.error_at(key_at, "duplicate key");
        Value value;
        DEVRT_RETURN_IF_ERROR(read_value(&value));
        entries_.emplace_back(std::move(key), std::move(value));
      }
      json_.skip_space();
      if (json_.consume(',')) continue;
      if (json_.consume('}')) break;
      return json_.error("expected ',' or '}'");
    }
    json_.skip_space();
    if (!json_.at_end()) return json_.error("unexpected text after the target object");
    if (!have_kind) return json_.error_at(0, "missing \"kind\"");
    Target target(std::move(kind));
    for (const Entry& entry : entries_) {
      std::visit([&](const auto& value) { set_value(target, entry.first, value); }, entry.second);
    }
    return target;
  }

private:
  static void set_value(Target& target, std::string_view key, const std::vector<std::string>& list) {
    target.set(key, std::span<const std::string>(list));
  }
  template <class T>
  static void set_value(Target& target, std::string_view key, const T& value) {
    target.set(key, value);
  }

  const Value* find(std::string_view key) const noexcept {
    for (const Entry& entry : entries_) {
      if (entry.first == key) return &entry.second;
    }
    return nullptr;
  }

  Status read_value(Value* out) noexcept {
    int c = json_.peek();
    if (c == '"') {
      std::string s;
      DEVRT_RETURN_IF_ERROR(json_.read_string(&s));
      *out = std::move(s);
    } else if (c == 't') {
      DEVRT_RETURN_IF_ERROR(json_.read_literal("true"));
      *out = true;
    } else if (c == 'f') {
      DEVRT_RETURN_IF_ERROR(json_.read_literal("false"));
      *out = false;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::int64_t i = 0;
      DEVRT_RETURN_IF_ERROR(json_.read_integer(&i));
      *out = i;
    } else if (c == '[') {
      json_.consume('[');
      std::vector<std::string> items;
      json_.skip_space();
      if (!json_.consume(']')) {
        for (;;) {
          json_.skip_space();
          if (json_.peek() != '"') return json_.error("arrays may only hold strings");
          std::string item;
          DEVRT_RETURN_IF_ERROR(json_.read_string(&item));
          items.push_back(std::move(item));
          json_.skip_space();
          if (json_.consume(',')) continue;
          if (json_.consume(']')) break;
          return json_.error("expected ',' or ']'");
        }
      }
      *out = std::move(items);
    } else if (c == 'n') {
      return json_.error("null values are not supported");
    } else if (c == '{') {
      return json_.error("nested objects are not supported");
    } else if (c == detail::JsonReader::kEnd) {
      return json_.error("expected a value");
    } else {
      return json_.error("unexpected character");
    }
    return Status();
  }

  detail::JsonReader json_;
  std::vector<Entry> entries_;
};

} // namespace

Result<Target> Target::from_json(std::string_view json) noexcept { return TargetJsonReader(json).read(); }

} // namespace devrt
