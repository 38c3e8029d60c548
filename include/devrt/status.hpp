// SPDX-License-Identifier: Apache-2.0
// Status and Result<T>: how every fallible devrt call reports failure, without exceptions.
#ifndef DEVRT_STATUS_HPP
#define DEVRT_STATUS_HPP

#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

#include <devrt/config.hpp>
#include <devrt/detail/message.hpp>
#include <devrt/kernel_abi.h>

namespace devrt {

namespace detail {
// std::move, std::forward and std::exchange, so that the application headers need not include
// <utility> (two more headers for every program that includes devrt; {fmt} avoids it as well).
template <class T>
constexpr std::remove_reference_t<T>&& move(T&& value) noexcept {
  return static_cast<std::remove_reference_t<T>&&>(value);
}
template <class T>
constexpr T&& forward(std::remove_reference_t<T>& value) noexcept {
  return static_cast<T&&>(value);
}
template <class T, class U = T>
constexpr T exchange(T& object, U&& replacement) noexcept {
  T old = static_cast<T&&>(object);
  object = static_cast<U&&>(replacement);
  return old;
}

// An error message's heap copy (null when it cannot be made) and its release (src/core/platform/status.cpp).
char* duplicate_message(std::string_view text) noexcept;
void free_message(char* message) noexcept;

// Takes an error's message out of a Status, and makes a Status own one, without copying: how a
// built-in backend hands its error to the core (devrt/backend/backend.hpp, export_status).
struct StatusAccess;
} // namespace detail

// Error codes. The numeric values are part of the C ABI (DEVRT_STATUS_*, devrt/kernel_abi.h).
enum class ErrorCode : std::int32_t {
  ok = 0,
  invalid_argument = 1,   // the caller passed something malformed (null, bad alignment, bad id)
  out_of_range = 2,       // an offset, size or index lies outside what it refers to
  unavailable = 3,        // the backend or device cannot be used here (no driver, no device)
  unsupported = 4,        // the backend does not implement this operation
  out_of_memory = 5,      // an allocation could not be satisfied
  driver_error = 6,       // the vendor runtime reported a failure
  internal = 7,           // a devrt invariant broke (a bug)
  not_found = 8,          // a named thing (backend, function) does not exist
  already_exists = 9,     // registering something whose name or kind is taken
  abi_mismatch = 10,      // a backend table has the wrong ABI version or struct size
  tool_failed = 11,       // an external tool (compiler, linker, archiver) ran and failed; the message holds its output
  timed_out = 12,         // a wait passed its deadline (a collective whose peers never came)
  permission_denied = 13, // refused for want of a right: a server that requires a key, a limit of its clients
};

static_assert(static_cast<std::int32_t>(ErrorCode::ok) == DEVRT_STATUS_OK &&
                  static_cast<std::int32_t>(ErrorCode::invalid_argument) == DEVRT_STATUS_INVALID_ARGUMENT &&
                  static_cast<std::int32_t>(ErrorCode::out_of_range) == DEVRT_STATUS_OUT_OF_RANGE &&
                  static_cast<std::int32_t>(ErrorCode::unavailable) == DEVRT_STATUS_UNAVAILABLE &&
                  static_cast<std::int32_t>(ErrorCode::unsupported) == DEVRT_STATUS_UNSUPPORTED &&
                  static_cast<std::int32_t>(ErrorCode::out_of_memory) == DEVRT_STATUS_OUT_OF_MEMORY &&
                  static_cast<std::int32_t>(ErrorCode::driver_error) == DEVRT_STATUS_DRIVER_ERROR &&
                  static_cast<std::int32_t>(ErrorCode::internal) == DEVRT_STATUS_INTERNAL &&
                  static_cast<std::int32_t>(ErrorCode::not_found) == DEVRT_STATUS_NOT_FOUND &&
                  static_cast<std::int32_t>(ErrorCode::already_exists) == DEVRT_STATUS_ALREADY_EXISTS &&
                  static_cast<std::int32_t>(ErrorCode::abi_mismatch) == DEVRT_STATUS_ABI_MISMATCH &&
                  static_cast<std::int32_t>(ErrorCode::tool_failed) == DEVRT_STATUS_TOOL_FAILED &&
                  static_cast<std::int32_t>(ErrorCode::timed_out) == DEVRT_STATUS_TIMED_OUT &&
                  static_cast<std::int32_t>(ErrorCode::permission_denied) == DEVRT_STATUS_PERMISSION_DENIED,
              "devrt::ErrorCode and the C ABI's DEVRT_STATUS_* must agree");
// The highest code a backend may return; anything above is reported as `internal`.
inline constexpr ErrorCode kLastErrorCode = static_cast<ErrorCode>(DEVRT_STATUS_LAST);

// Stable lower-case name of a code ("out_of_memory"). Thread-safe; returns static storage.
std::string_view error_code_name(ErrorCode code) noexcept;

// The outcome of a call: ok, or an error code with a message that names the backend, device and
// call ("cpu:0 allocate(1099511627776 bytes, align 64): exceeds device memory ...").
// An ok Status holds no memory; an error owns a heap copy of its message. Not thread-safe to
// mutate concurrently, like any value type.
class [[nodiscard]] Status {
public:
  Status() noexcept = default;
  Status(ErrorCode code, std::string_view message) noexcept : code_(code) {
    if (code != ErrorCode::ok && !message.empty()) message_ = duplicate(message);
  }
  Status(const Status& other) noexcept
      : code_(other.code_), message_(other.message_ ? duplicate(other.message_) : nullptr) {}
  Status(Status&& other) noexcept
      : code_(detail::exchange(other.code_, ErrorCode::ok)), message_(detail::exchange(other.message_, nullptr)) {}
  Status& operator=(const Status& other) noexcept {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      if (message_ != nullptr) detail::free_message(message_);
      code_ = detail::exchange(other.code_, ErrorCode::ok);
      message_ = detail::exchange(other.message_, nullptr);
    }
    return *this;
  }
  // The ok path must cost nothing: no call into free() for a null message.
  ~Status() {
    if (message_ != nullptr) detail::free_message(message_);
  }

  bool ok() const noexcept { return code_ == ErrorCode::ok; }
  ErrorCode code() const noexcept { return code_; }
  // The message, empty for ok. Valid while this Status lives.
  std::string_view message() const noexcept {
    return message_ != nullptr ? std::string_view(message_) : std::string_view();
  }

private:
  friend struct detail::StatusAccess;

  // A failed allocation leaves the message empty; the code still says what happened.
  static char* duplicate(std::string_view text) noexcept { return detail::duplicate_message(text); }

  ErrorCode code_ = ErrorCode::ok;
  char* message_ = nullptr;
};

namespace detail {
struct StatusAccess {
  // The message (null for none), which the caller now owns; `status` is left ok.
  static char* release(Status& status) noexcept {
    status.code_ = ErrorCode::ok;
    return detail::exchange(status.message_, nullptr);
  }
  // An error of `code` owning `message` (from release(), or null).
  static Status adopt(ErrorCode code, char* message) noexcept {
    Status status;
    status.code_ = code;
    status.message_ = message;
    return status;
  }
};
} // namespace detail

// "ok", or the code's name and the message ("invalid_argument: ..."), as devrt/format.hpp's
// {fmt} formatter writes it. Thread-safe.
std::string to_string(const Status& status);

// Builds an error Status from message parts (strings, integers, devices, pointers) without
// the heap except for the final message copy. Thread-safe.
namespace detail {
Status make_error_from_parts(ErrorCode code, const MessagePart* parts, std::size_t count) noexcept;
} // namespace detail

// With DEVRT_ERROR_MESSAGES 0 (-Dlogging=false) the parts are dropped and the error is its code.
template <class... Parts>
Status make_error(ErrorCode code, [[maybe_unused]] const Parts&... parts) noexcept {
  if constexpr (sizeof...(Parts) == 0 || !DEVRT_ERROR_MESSAGES) {
    return Status(code, {});
  } else {
    const detail::MessagePart list[] = {detail::to_message_part(parts)...};
    return detail::make_error_from_parts(code, list, sizeof...(Parts));
  }
}

namespace detail {
// Prints `what` and the status to stderr and aborts. Used for Result::value() on an error.
[[noreturn]] void fatal_status(const char* what, const Status& status) noexcept;
} // namespace detail

// A value of type T or an error Status. Accessing the value of an error aborts (there are no
// exceptions to throw); check ok() first. Value semantics; not thread-safe to mutate concurrently.
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_reference_v<T>, "Result<T&> is not supported; use a pointer");
  static_assert(!std::is_same_v<std::remove_cv_t<T>, Status>, "use Status directly");

public:
  Result(const T& value) noexcept(std::is_nothrow_copy_constructible_v<T>) : has_value_(true) {
    ::new (static_cast<void*>(&value_)) T(value);
  }
  Result(T&& value) noexcept(std::is_nothrow_move_constructible_v<T>) : has_value_(true) {
    ::new (static_cast<void*>(&value_)) T(detail::move(value));
  }
  // Constrained away from Result and Status, so it hides neither copy nor move construction.
  // clang-format off
  template <class U>
    requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::remove_cvref_t<U>, T> &&
             !std::is_same_v<std::remove_cvref_t<U>, Status> && !std::is_same_v<std::remove_cvref_t<U>, Result>)
  Result(U&& value) noexcept(std::is_nothrow_constructible_v<T, U&&>) // NOLINT(bugprone-forwarding-reference-overload)
      : has_value_(true) {
    ::new (static_cast<void*>(&value_)) T(detail::forward<U>(value));
  }
  // clang-format on
  // An error. An ok Status without a value is a programming error and becomes `internal`.
  Result(Status status) noexcept : status_(detail::move(status)) {
    if (status_.ok()) status_ = Status(ErrorCode::internal, "Result constructed from an ok Status without a value");
  }
  Result(const Result& other) noexcept(std::is_nothrow_copy_constructible_v<T>)
      : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) ::new (static_cast<void*>(&value_)) T(other.value_);
  }
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : status_(detail::move(other.status_)), has_value_(other.has_value_) {
    if (has_value_) ::new (static_cast<void*>(&value_)) T(detail::move(other.value_));
  }
  Result& operator=(const Result& other) {
    if (this != &other) assign(other.status_, other.has_value_, other.value_);
    return *this;
  }
  Result& operator=(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) assign(detail::move(other.status_), other.has_value_, detail::move(other.value_));
    return *this;
  }
  ~Result() {
    if (has_value_) value_.~T();
  }

  bool ok() const noexcept { return has_value_; }
  explicit operator bool() const noexcept { return has_value_; }
  // The error, or an ok Status when this holds a value.
  const Status& status() const& noexcept { return status_; }
  Status status() && noexcept { return detail::move(status_); }

  T& value() & noexcept {
    check();
    return value_;
  }
  const T& value() const& noexcept {
    check();
    return value_;
  }
  T&& value() && noexcept {
    check();
    return detail::move(value_);
  }
  T& operator*() & noexcept { return value(); }
  const T& operator*() const& noexcept { return value(); }
  T&& operator*() && noexcept { return detail::move(*this).value(); }
  T* operator->() noexcept { return &value(); }
  const T* operator->() const noexcept { return &value(); }

  template <class U>
  T value_or(U&& fallback) const& {
    return has_value_ ? value_ : static_cast<T>(detail::forward<U>(fallback));
  }

private:
  void check() const noexcept {
    if (!has_value_) detail::fatal_status("devrt::Result::value() called on an error", status_);
  }

  // Replaces the contents: the old value (if any) is destroyed, then `value` (a const T& or T&&,
  // only read when `has_value`) constructed in its place.
  template <class S, class V>
  void assign(S&& status, bool has_value, V&& value) {
    if (has_value_) value_.~T();
    has_value_ = false;
    status_ = detail::forward<S>(status);
    if (has_value) {
      ::new (static_cast<void*>(&value_)) T(detail::forward<V>(value));
      has_value_ = true;
    }
  }

  Status status_;
  union {
    T value_;
  };
  bool has_value_ = false;
};

} // namespace devrt

// Returns the Status of `expr` from the enclosing function when it is an error.
#define DEVRT_RETURN_IF_ERROR(expr)                                                                                    \
  do {                                                                                                                 \
    ::devrt::Status devrt_status_ = (expr);                                                                            \
    if (!devrt_status_.ok()) return devrt_status_;                                                                     \
  } while (false)

#define DEVRT_DETAIL_CONCAT_INNER(a, b) a##b
#define DEVRT_DETAIL_CONCAT(a, b) DEVRT_DETAIL_CONCAT_INNER(a, b)
#define DEVRT_DETAIL_ASSIGN_OR_RETURN(tmp, lhs, expr)                                                                  \
  auto tmp = (expr);                                                                                                   \
  if (!tmp.ok()) return ::devrt::detail::move(tmp).status();                                                           \
  lhs = ::devrt::detail::move(tmp).value()

// `DEVRT_ASSIGN_OR_RETURN(auto buffer, Buffer::allocate(dev, n));` declares and assigns the
// value of a Result, or returns its error from the enclosing function.
#define DEVRT_ASSIGN_OR_RETURN(lhs, expr)                                                                              \
  DEVRT_DETAIL_ASSIGN_OR_RETURN(DEVRT_DETAIL_CONCAT(devrt_result_, __LINE__), lhs, expr)

#endif // DEVRT_STATUS_HPP
