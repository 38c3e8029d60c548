// Target: attributes, JSON serialisation and parsing, and detection through the backends.
#include <devrt/target.hpp>

#include <devrt/detail/mutex.hpp>
#include <devrt/detail/no_destroy.hpp>
#include <devrt/registry.hpp>

#include <algorithm>
#include <charconv>
#include <limits>

namespace devrt {

// ---- attributes --------------------------------------------------------------------------------

void Target::set(std::string_view key, Value value) {
  for (Attribute& attribute : attributes_) {
    if (attribute.first == key) {
      attribute.second = std::move(value);
      return;
    }
  }
  attributes_.emplace_back(std::string(key), std::move(value));
}

const Target::Value* Target::find(std::string_view key) const noexcept {
  for (const Attribute& attribute : attributes_) {
    if (attribute.first == key) return &attribute.second;
  }
  return nullptr;
}

bool Target::has(std::string_view key, std::string_view item) const noexcept {
  const Value* value = find(key);
  const auto* list = value != nullptr ? std::get_if<std::vector<std::string>>(value) : nullptr;
  return list != nullptr && std::find(list->begin(), list->end(), item) != list->end();
}

// ---- JSON out ----------------------------------------------------------------------------------

namespace {

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[static_cast<unsigned char>(c) >> 4];
        out += kHex[static_cast<unsigned char>(c) & 0xf];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

void append_integer(std::string& out, std::int64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

// One value, as JSON or as TVM's command-line form (strings bare, quoted when they hold
// blanks; lists comma-joined).
void append_value(std::string& out, const Target::Value& value, bool json) {
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
  for (const Attribute& attribute : attributes_) {
    out += ',';
    append_json_string(out, attribute.first);
    out += ':';
    append_value(out, attribute.second, true);
  }
  out += '}';
  return out;
}

std::string Target::to_string() const {
  std::string out = kind_;
  for (const Attribute& attribute : attributes_) {
    out += " -";
    out += attribute.first;
    out += '=';
    append_value(out, attribute.second, false);
  }
  return out;
}

// ---- JSON in -----------------------------------------------------------------------------------

namespace {

// A strict RFC 8259 reader for the subset a target uses: one object whose values are booleans,
// integers, strings or arrays of strings. Strings must be valid UTF-8.
class TargetJsonReader {
public:
  explicit TargetJsonReader(std::string_view text) noexcept : text_(text) {}

  Result<Target> read() noexcept {
    Target target;
    bool have_kind = false;
    skip_space();
    if (!consume('{')) return error("expected '{' to start the target object");
    skip_space();
    if (consume('}')) return error_at(pos_ - 1, "missing \"kind\"");
    for (;;) {
      skip_space();
      std::size_t key_at = pos_;
      std::string key;
      if (peek() != '"') return error("expected a string key");
      DEVRT_RETURN_IF_ERROR(read_string(&key));
      skip_space();
      if (!consume(':')) return error("expected ':' after a key");
      skip_space();
      if (key == "kind") {
        if (have_kind) return error_at(key_at, "duplicate key \"kind\"");
        std::size_t value_at = pos_;
        if (peek() != '"') return error("\"kind\" must be a string");
        std::string kind;
        DEVRT_RETURN_IF_ERROR(read_string(&kind));
        if (kind.empty()) return error_at(value_at, "\"kind\" is empty");
        target = Target(std::move(kind));
        have_kind = true;
        // Attributes read before "kind" were kept in `pending_`.
        for (Target::Attribute& attribute : pending_) target.set(attribute.first, std::move(attribute.second));
        pending_.clear();
      } else {
        if ((have_kind ? target.find(key) : find_pending(key)) != nullptr) {
          return error_at(key_at, "duplicate key");
        }
        Target::Value value;
        DEVRT_RETURN_IF_ERROR(read_value(&value));
        if (have_kind) {
          target.set(key, std::move(value));
        } else {
          pending_.emplace_back(std::move(key), std::move(value));
        }
      }
      skip_space();
      if (consume(',')) continue;
      if (consume('}')) break;
      return error("expected ',' or '}'");
    }
    skip_space();
    if (pos_ != text_.size()) return error("unexpected text after the target object");
    if (!have_kind) return error_at(0, "missing \"kind\"");
    return target;
  }

private:
  static constexpr int kEnd = -1;

  int peek() const noexcept { return pos_ < text_.size() ? static_cast<unsigned char>(text_[pos_]) : kEnd; }
  bool consume(char c) noexcept {
    if (peek() != static_cast<unsigned char>(c)) return false;
    ++pos_;
    return true;
  }
  void skip_space() noexcept {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  const Target::Value* find_pending(std::string_view key) const noexcept {
    for (const Target::Attribute& attribute : pending_) {
      if (attribute.first == key) return &attribute.second;
    }
    return nullptr;
  }

  Status error(const char* what) const noexcept { return error_at(pos_, what); }
  [[gnu::cold]] Status error_at(std::size_t at, const char* what) const noexcept {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    if (at >= text_.size()) {
      return make_error(ErrorCode::invalid_argument, "target JSON: ", what, " at end of input (line ", line,
                        ", column ", column, ", byte ", at, ")");
    }
    return make_error(ErrorCode::invalid_argument, "target JSON: ", what, " at line ", line, ", column ", column,
                      " (byte ", at, ")");
  }

  Status read_literal(std::string_view word) noexcept {
    if (text_.substr(pos_, word.size()) != word) return error("unknown literal");
    pos_ += word.size();
    return Status();
  }

  Status read_value(Target::Value* out) noexcept {
    int c = peek();
    if (c == '"') {
      std::string s;
      DEVRT_RETURN_IF_ERROR(read_string(&s));
      *out = std::move(s);
    } else if (c == 't') {
      DEVRT_RETURN_IF_ERROR(read_literal("true"));
      *out = true;
    } else if (c == 'f') {
      DEVRT_RETURN_IF_ERROR(read_literal("false"));
      *out = false;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::int64_t i = 0;
      DEVRT_RETURN_IF_ERROR(read_integer(&i));
      *out = i;
    } else if (c == '[') {
      ++pos_;
      std::vector<std::string> items;
      skip_space();
      if (!consume(']')) {
        for (;;) {
          skip_space();
          if (peek() != '"') return error("arrays may only hold strings");
          std::string item;
          DEVRT_RETURN_IF_ERROR(read_string(&item));
          items.push_back(std::move(item));
          skip_space();
          if (consume(',')) continue;
          if (consume(']')) break;
          return error("expected ',' or ']'");
        }
      }
      *out = std::move(items);
    } else if (c == 'n') {
      return error("null values are not supported");
    } else if (c == '{') {
      return error("nested objects are not supported");
    } else if (c == kEnd) {
      return error("expected a value");
    } else {
      return error("unexpected character");
    }
    return Status();
  }

  Status read_integer(std::int64_t* out) noexcept {
    std::size_t start = pos_;
    bool negative = consume('-');
    if (peek() < '0' || peek() > '9') return error("expected a digit");
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9') {
      return error("leading zeros are not allowed");
    }
    std::uint64_t magnitude = 0;
    while (peek() >= '0' && peek() <= '9') {
      auto digit = static_cast<std::uint64_t>(peek() - '0');
      if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        return error_at(start, "integer out of range");
      }
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') return error("only integers are supported");
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (magnitude > kMax + (negative ? 1 : 0)) return error_at(start, "integer out of range");
    *out = negative ? static_cast<std::int64_t>(~magnitude + 1) : static_cast<std::int64_t>(magnitude);
    return Status();
  }

  static int hex_value(int c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  Status read_hex4(std::uint32_t* out) noexcept {
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      int digit = hex_value(peek());
      if (digit < 0) return error("expected 4 hex digits after \\u");
      value = value * 16 + static_cast<std::uint32_t>(digit);
      ++pos_;
    }
    *out = value;
    return Status();
  }

  static void append_utf8(std::string* out, std::uint32_t cp) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xc0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xe0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      *out += static_cast<char>(0xf0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  // One UTF-8 sequence starting at pos_ (lead byte >= 0x80), copied to out when well-formed.
  Status read_utf8(std::string* out) noexcept {
    auto lead = static_cast<std::uint32_t>(peek());
    std::size_t length = 0;
    std::uint32_t cp = 0;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      cp = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      cp = lead & 0x0f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      cp = lead & 0x07;
    } else {
      return error("invalid UTF-8");
    }
    if (text_.size() - pos_ < length) return error("truncated UTF-8 sequence");
    for (std::size_t i = 1; i < length; ++i) {
      auto byte = static_cast<unsigned char>(text_[pos_ + i]);
      if ((byte & 0xc0) != 0x80) return error("invalid UTF-8");
      cp = (cp << 6) | (byte & 0x3f);
    }
    bool overlong = (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return error("invalid UTF-8");
    out->append(text_.substr(pos_, length));
    pos_ += length;
    return Status();
  }

  Status read_string(std::string* out) noexcept {
    ++pos_; // the opening quote
    for (;;) {
      int c = peek();
      if (c == kEnd) return error("unterminated string");
      if (c == '"') {
        ++pos_;
        return Status();
      }
      if (c < 0x20) return error("control character in a string");
      if (c >= 0x80) {
        DEVRT_RETURN_IF_ERROR(read_utf8(out));
        continue;
      }
      if (c != '\\') {
        *out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      ++pos_;
      int escape = peek();
      ++pos_;
      switch (escape) {
      case '"': *out += '"'; break;
      case '\\': *out += '\\'; break;
      case '/': *out += '/'; break;
      case 'b': *out += '\b'; break;
      case 'f': *out += '\f'; break;
      case 'n': *out += '\n'; break;
      case 'r': *out += '\r'; break;
      case 't': *out += '\t'; break;
      case 'u': {
        std::uint32_t cp = 0;
        DEVRT_RETURN_IF_ERROR(read_hex4(&cp));
        if (cp >= 0xdc00 && cp <= 0xdfff) return error("unpaired low surrogate");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (!consume('\\') || !consume('u')) return error("unpaired high surrogate");
          std::uint32_t low = 0;
          DEVRT_RETURN_IF_ERROR(read_hex4(&low));
          if (low < 0xdc00 || low > 0xdfff) return error("unpaired high surrogate");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        }
        append_utf8(out, cp);
        break;
      }
      default: --pos_; return error("unknown escape");
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<Target::Attribute> pending_;
};

} // namespace

Result<Target> Target::from_json(std::string_view json) noexcept { return TargetJsonReader(json).read(); }

// ---- detection ---------------------------------------------------------------------------------

namespace {

// TVM's detect_target_from_device covers these kinds.
constexpr DeviceKind kDetectionKinds[] = {DeviceKind::cpu,    DeviceKind::cuda,  DeviceKind::rocm,   DeviceKind::opencl,
                                          DeviceKind::vulkan, DeviceKind::metal, DeviceKind::hexagon};

struct TargetCache {
  detail::Mutex mutex;
  std::vector<std::pair<Device, Target>> entries;
};

TargetCache& target_cache() noexcept {
  static detail::NoDestroy<TargetCache> cache;
  return cache.get();
}

[[gnu::cold]] Status cannot_detect(Device device, const Status& reason) noexcept {
  return make_error(ErrorCode::unavailable, "cannot detect device ", device,
                    ": make sure the device and its driver are installed and devrt was built with that backend (",
                    reason.message(), ")");
}

} // namespace

std::span<const DeviceKind> target_detection_kinds() noexcept { return kDetectionKinds; }

Result<Target> detect_target(Device device) noexcept {
  if (std::find(std::begin(kDetectionKinds), std::end(kDetectionKinds), device.kind) == std::end(kDetectionKinds)) {
    detail::MessageBuilder kinds;
    for (DeviceKind kind : kDetectionKinds) {
      if (!kinds.view().empty()) kinds.append(", ");
      kinds.append(device_kind_name(kind));
    }
    std::string_view name = device_kind_name(device.kind);
    return make_error(ErrorCode::invalid_argument, "auto detection for device kind ",
                      name.empty() ? std::string_view("(unknown)") : name,
                      " is not supported; supported kinds: ", kinds.view());
  }
  TargetCache& cache = target_cache();
  {
    detail::LockGuard lock(cache.mutex);
    for (const auto& entry : cache.entries) {
      if (entry.first == device) return entry.second;
    }
  }
  Result<BackendRef> backend = backend_for(device);
  if (!backend.ok()) return cannot_detect(device, backend.status());
  Result<std::string> json = backend->detect_target(device.id);
  if (!json.ok()) {
    if (json.status().code() == ErrorCode::unavailable) return cannot_detect(device, json.status());
    return std::move(json).status();
  }
  Result<Target> target = Target::from_json(*json);
  if (!target.ok()) {
    return make_error(ErrorCode::internal, backend->name(), ":", device.id,
                      " detect_target: ", target.status().message());
  }
  detail::LockGuard lock(cache.mutex);
  for (const auto& entry : cache.entries) {
    if (entry.first == device) return entry.second; // another thread got there first
  }
  cache.entries.emplace_back(device, *target);
  return target;
}

} // namespace devrt
