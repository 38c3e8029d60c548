// SPDX-License-Identifier: Apache-2.0
#include <devrt/devrt.hpp>

#include <catch2/catch.hpp>

#include <string>

using devrt::ErrorCode;
using devrt::Result;
using devrt::Status;

TEST_CASE("an ok Status holds no message", "[status]") {
  Status ok;
  CHECK(ok.ok());
  CHECK(ok.code() == ErrorCode::ok);
  CHECK(ok.message().empty());
  CHECK(Status(ErrorCode::ok, "ignored").message().empty());
}

TEST_CASE("an error Status owns its message through copies and moves", "[status]") {
  std::string text = "cpu:0 allocate: out of memory";
  Status error(ErrorCode::out_of_memory, text);
  text.assign(text.size(), 'x');
  CHECK_FALSE(error.ok());
  CHECK(error.message() == "cpu:0 allocate: out of memory");

  Status copied = error;
  CHECK(copied.message() == error.message());
  CHECK(copied.message().data() != error.message().data());

  Status moved = std::move(copied);
  CHECK(moved.code() == ErrorCode::out_of_memory);
  CHECK(copied.ok()); // NOLINT(bugprone-use-after-move): moved-from is documented as ok

  moved = Status();
  CHECK(moved.ok());
  moved = error;
  CHECK(moved.message() == error.message());
}

TEST_CASE("every error code has a distinct name", "[status]") {
  std::vector<std::string_view> names;
  for (int code = 0; code <= static_cast<int>(ErrorCode::permission_denied); ++code) {
    std::string_view name = devrt::error_code_name(static_cast<ErrorCode>(code));
    CHECK(name != "unknown");
    CHECK(std::find(names.begin(), names.end(), name) == names.end());
    names.push_back(name);
  }
  CHECK(devrt::error_code_name(static_cast<ErrorCode>(999)) == "unknown");
}

TEST_CASE("make_error formats strings, integers, devices and pointers", "[status]") {
  Status s =
      devrt::make_error(ErrorCode::out_of_range, "copy ", devrt::Device{devrt::DeviceKind::cuda, 1}, " [",
                        std::size_t{18446744073709551615ull}, ", ", -42, ") ", std::int64_t{-9223372036854775807 - 1},
                        " ", true, ' ', static_cast<const void*>(nullptr));
  CHECK(s.code() == ErrorCode::out_of_range);
  CHECK(s.message() == "copy cuda:1 [18446744073709551615, -42) -9223372036854775808 true 0x0");
  CHECK(devrt::make_error(ErrorCode::internal, devrt::DeviceKind::rocm, ":", 0).message() == "rocm:0");
  CHECK(devrt::make_error(ErrorCode::internal, static_cast<devrt::DeviceKind>(99)).message() == "kind<99>");
}

TEST_CASE("long messages are truncated, not overflowed", "[status]") {
  std::string long_text(5000, 'a');
  Status s = devrt::make_error(ErrorCode::internal, long_text, "tail");
  CHECK(s.message().size() < devrt::detail::MessageBuilder::kCapacity);
  CHECK(s.message().find("tail") == std::string_view::npos);
}

namespace {

Result<int> parse_positive(int value) {
  if (value <= 0) return devrt::make_error(ErrorCode::invalid_argument, "not positive: ", value);
  return value;
}

Result<int> doubled(int value) {
  DEVRT_ASSIGN_OR_RETURN(int v, parse_positive(value));
  return 2 * v;
}

Status check_both(int a, int b) {
  DEVRT_RETURN_IF_ERROR(parse_positive(a).status());
  DEVRT_RETURN_IF_ERROR(parse_positive(b).status());
  return Status();
}

struct MoveOnly {
  explicit MoveOnly(int v) : value(v) {}
  MoveOnly(MoveOnly&&) = default;
  MoveOnly& operator=(MoveOnly&&) = default;
  int value;
};

} // namespace

TEST_CASE("Result carries a value or an error", "[status]") {
  Result<int> good = parse_positive(3);
  REQUIRE(good.ok());
  CHECK(*good == 3);
  CHECK(good.status().ok());
  CHECK(good.value_or(7) == 3);

  Result<int> bad = parse_positive(-1);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == ErrorCode::invalid_argument);
  CHECK(bad.status().message() == "not positive: -1");
  CHECK(bad.value_or(7) == 7);

  CHECK(*doubled(4) == 8);
  CHECK(doubled(0).status().message() == "not positive: 0");
  CHECK(check_both(1, 2).ok());
  CHECK(check_both(1, -2).message() == "not positive: -2");
}

TEST_CASE("Result works with move-only values and copies with copyable ones", "[status]") {
  Result<MoveOnly> r = MoveOnly(5);
  Result<MoveOnly> moved = std::move(r);
  CHECK(moved->value == 5);
  MoveOnly taken = std::move(moved).value();
  CHECK(taken.value == 5);

  Result<std::string> text = std::string("abc");
  Result<std::string> copy = text;
  CHECK(*copy == "abc");
  copy = Result<std::string>(Status(ErrorCode::not_found, "gone"));
  CHECK(copy.status().code() == ErrorCode::not_found);
  text = copy;
  CHECK_FALSE(text.ok());
}

TEST_CASE("a Result built from an ok Status becomes an internal error", "[status]") {
  Result<int> r{Status()};
  CHECK_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::internal);
}

TEST_CASE("to_string gives ok, or the code's name and the message", "[status]") {
  CHECK(devrt::to_string(devrt::Status()) == "ok");
  const devrt::Status refused = devrt::make_error(devrt::ErrorCode::invalid_argument, "argument ", 1, " is bad");
  CHECK(devrt::to_string(refused) == "invalid_argument: argument 1 is bad");
}
