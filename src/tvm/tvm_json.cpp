// SPDX-License-Identifier: Apache-2.0
// The JSON documents devrt::tvm reads (tvm_json.hpp), over the strict reader of support/json.hpp
// (strings, literals, positions in errors); numbers with fractions or exponents are read here.
#include "tvm/tvm_json.hpp"

#include <charconv>

#include "support/json.hpp"

namespace devrt::tvm::detail {
namespace {

constexpr int kMaxJsonDepth = 64;

class Parser {
public:
  Parser(std::string_view text, const char* prefix) : text_(text), in_(text, prefix) {}

  Status value(Json& out, int depth) {
    if (depth > kMaxJsonDepth) return in_.error("nesting deeper than 64");
    in_.skip_space();
    switch (in_.peek()) {
    case '{': return object(out, depth);
    case '[': return array(out, depth);
    case '"': out.kind = Json::Kind::string; return in_.read_string(&out.text);
    case 't':
      out.kind = Json::Kind::boolean;
      out.boolean = true;
      return in_.read_literal("true");
    case 'f': out.kind = Json::Kind::boolean; return in_.read_literal("false");
    case 'n': out.kind = Json::Kind::null; return in_.read_literal("null");
    default: return number(out);
    }
  }

  Status finish() {
    in_.skip_space();
    return in_.at_end() ? Status() : in_.error("text after the value");
  }

private:
  Status object(Json& out, int depth) {
    out.kind = Json::Kind::object;
    in_.consume('{');
    in_.skip_space();
    if (in_.consume('}')) return Status();
    for (;;) {
      in_.skip_space();
      if (in_.peek() != '"') return in_.error("a key expected");
      std::string key;
      DEVRT_RETURN_IF_ERROR(in_.read_string(&key));
      in_.skip_space();
      if (!in_.consume(':')) return in_.error("':' expected");
      out.fields.push_back(JsonField{std::move(key), Json()});
      DEVRT_RETURN_IF_ERROR(value(out.fields.back().value, depth + 1));
      in_.skip_space();
      if (in_.consume('}')) return Status();
      if (!in_.consume(',')) return in_.error("',' or '}' expected");
    }
  }

  Status array(Json& out, int depth) {
    out.kind = Json::Kind::array;
    in_.consume('[');
    in_.skip_space();
    if (in_.consume(']')) return Status();
    for (;;) {
      out.items.emplace_back();
      DEVRT_RETURN_IF_ERROR(value(out.items.back(), depth + 1));
      in_.skip_space();
      if (in_.consume(']')) return Status();
      if (!in_.consume(',')) return in_.error("',' or ']' expected");
    }
  }

  // RFC 8259's number: an integer when it has no fraction or exponent and fits int64.
  Status number(Json& out) {
    const std::size_t start = in_.position();
    std::size_t end = start;
    bool integral = true;
    auto digits = [&] {
      const std::size_t from = end;
      while (end < text_.size() && text_[end] >= '0' && text_[end] <= '9') ++end;
      return end > from;
    };
    if (end < text_.size() && text_[end] == '-') ++end;
    if (end < text_.size() && text_[end] == '0') {
      ++end;
    } else if (!digits()) {
      return in_.error("a value expected");
    }
    if (end < text_.size() && text_[end] == '.') {
      ++end;
      integral = false;
      if (!digits()) return in_.error_at(end, "digits expected after '.'");
    }
    if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
      ++end;
      integral = false;
      if (end < text_.size() && (text_[end] == '+' || text_[end] == '-')) ++end;
      if (!digits()) return in_.error_at(end, "digits expected in the exponent");
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + end;
    if (integral) {
      const std::from_chars_result r = std::from_chars(first, last, out.integer);
      if (r.ec == std::errc() && r.ptr == last) {
        out.kind = Json::Kind::integer;
        return in_.read_literal(text_.substr(start, end - start));
      }
    }
    const std::from_chars_result r = std::from_chars(first, last, out.real);
    if (r.ec != std::errc() || r.ptr != last) return in_.error("a number out of range");
    out.kind = Json::Kind::real;
    return in_.read_literal(text_.substr(start, end - start));
  }

  std::string_view text_;
  devrt::detail::JsonReader in_;
};

} // namespace

Result<Json> parse_json(std::string_view text, const char* prefix) noexcept {
  Parser parser(text, prefix);
  Json out;
  DEVRT_RETURN_IF_ERROR(parser.value(out, 0));
  DEVRT_RETURN_IF_ERROR(parser.finish());
  return out;
}

} // namespace devrt::tvm::detail
