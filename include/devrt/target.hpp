// SPDX-License-Identifier: Apache-2.0
// Compiler targets: a live device described the way a compiler wants it (TVM's target dict), and
// detection of that description from a device (TVM's detect_target_from_device).
#ifndef DEVRT_TARGET_HPP
#define DEVRT_TARGET_HPP

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

// A target: a kind ("llvm", "cuda", "opencl", "vulkan", "rocm") and typed attributes keyed as in
// TVM's target dicts ("mtriple", "mcpu", "mattr", "arch", "max_threads_per_block",
// "thread_warp_size", "max_shared_memory_per_block", ...). Each value is a boolean, an integer, a
// string or a list of strings. Attributes keep insertion order. Serialises to a JSON object
// {"kind": ..., key: value, ...} and parses it back. A value type (its attributes live on the heap,
// so that this header needs neither std::vector nor std::variant); not thread-safe to mutate
// concurrently.
class Target {
public:
  enum class ValueType : std::uint8_t { boolean, integer, string, string_list };

  Target() noexcept = default;
  explicit Target(std::string kind) noexcept : kind_(detail::move(kind)) {}
  Target(const Target& other);
  Target(Target&& other) noexcept : kind_(detail::move(other.kind_)), attributes_(other.attributes_) {
    other.attributes_ = nullptr;
  }
  Target& operator=(const Target& other);
  Target& operator=(Target&& other) noexcept;
  ~Target();

  const std::string& kind() const noexcept { return kind_; }

  // Sets or replaces one attribute ("kind" names the kind and is not an attribute).
  void set(std::string_view key, bool value);
  void set(std::string_view key, std::int64_t value);
  void set(std::string_view key, std::string_view value);
  void set(std::string_view key, const char* value) { set(key, std::string_view(value)); }
  void set(std::string_view key, const std::string& value) { set(key, std::string_view(value)); }
  void set(std::string_view key, std::span<const std::string> items);
  void set(std::string_view key, std::initializer_list<std::string_view> items);

  // The attributes in insertion order: size(), and the key and value type of each.
  std::size_t size() const noexcept;
  std::string_view key(std::size_t index) const noexcept;
  ValueType type(std::size_t index) const noexcept;
  bool contains(std::string_view key) const noexcept;

  // The value of `key` if it holds a T: bool, std::int64_t, std::string, or a list of strings as
  // std::span<const std::string> (valid until this Target changes).
  template <class T>
  std::optional<T> get(std::string_view key) const {
    if constexpr (std::is_same_v<T, bool>) {
      const bool* value = find_boolean(key);
      return value != nullptr ? std::optional<T>(*value) : std::nullopt;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      const std::int64_t* value = find_integer(key);
      return value != nullptr ? std::optional<T>(*value) : std::nullopt;
    } else if constexpr (std::is_same_v<T, std::string>) {
      const std::string* value = find_string(key);
      return value != nullptr ? std::optional<T>(*value) : std::nullopt;
    } else {
      static_assert(std::is_same_v<T, std::span<const std::string>>,
                    "Target::get<T>: T is bool, std::int64_t, std::string or std::span<const std::string>");
      return find_list(key);
    }
  }
  // True when the string list `key` contains `item` ("mattr" contains "+avx2").
  bool has(std::string_view key, std::string_view item) const noexcept;

  // Compact JSON, keys in insertion order after "kind".
  std::string to_json() const;
  // TVM's command-line form: "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake -mattr=+avx2,+fma".
  std::string to_string() const;
  // Parses one JSON object with a string "kind" and values that are booleans, integers, strings
  // or arrays of strings. Errors are invalid_argument naming line, column and byte offset.
  static Result<Target> from_json(std::string_view json) noexcept;

  // Same kind and the same attributes in the same order.
  friend bool operator==(const Target& a, const Target& b) noexcept;

private:
  struct Attributes; // src/core/devices/target.cpp

  const bool* find_boolean(std::string_view key) const noexcept;
  const std::int64_t* find_integer(std::string_view key) const noexcept;
  const std::string* find_string(std::string_view key) const noexcept;
  std::optional<std::span<const std::string>> find_list(std::string_view key) const noexcept;
  Attributes& attributes();

  std::string kind_;
  Attributes* attributes_ = nullptr; // owned; null while there are none
};

// Describes `device` as a compiler target; the result is cached per device after the first call.
// Errors, as TVM's: invalid_argument "auto detection for device kind X is not supported;
// supported kinds: ..." for kinds devrt has no detector for, unavailable "cannot detect device X:
// make sure the device and its driver are installed and devrt was built with that backend" for a
// kind it knows but cannot reach here. Thread-safe.
Result<Target> detect_target(Device device) noexcept;

// The device kinds detect_target() can describe in a build with every backend. Thread-safe.
std::span<const DeviceKind> target_detection_kinds() noexcept;

} // namespace devrt

#endif // DEVRT_TARGET_HPP
