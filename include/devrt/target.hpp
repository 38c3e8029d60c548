// SPDX-License-Identifier: Apache-2.0
// Compiler targets: a live device described the way a compiler wants it (TVM's target dict), and
// detection of that description from a device (TVM's detect_target_from_device).
#ifndef DEVRT_TARGET_HPP
#define DEVRT_TARGET_HPP

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

// A target: a kind ("llvm", "cuda", "opencl", "vulkan", "rocm") and typed attributes keyed as in
// TVM's target dicts ("mtriple", "mcpu", "mattr", "arch", "max_threads_per_block",
// "thread_warp_size", "max_shared_memory_per_block", ...). Attributes keep insertion order.
// Serialises to a JSON object {"kind": ..., key: value, ...} and parses it back. A value type;
// not thread-safe to mutate concurrently.
class Target {
public:
  using Value = std::variant<bool, std::int64_t, std::string, std::vector<std::string>>;
  using Attribute = std::pair<std::string, Value>;

  Target() = default;
  explicit Target(std::string kind) : kind_(std::move(kind)) {}

  const std::string& kind() const noexcept { return kind_; }
  const std::vector<Attribute>& attributes() const noexcept { return attributes_; }

  // Sets or replaces one attribute ("kind" names the kind and is not an attribute).
  void set(std::string_view key, Value value);
  // The value of `key`, or nullptr.
  const Value* find(std::string_view key) const noexcept;
  // The value of `key` if it holds a T.
  template <class T>
  std::optional<T> get(std::string_view key) const {
    const Value* value = find(key);
    if (value == nullptr) return std::nullopt;
    if (const T* typed = std::get_if<T>(value)) return *typed;
    return std::nullopt;
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

  friend bool operator==(const Target&, const Target&) = default;

private:
  std::string kind_;
  std::vector<Attribute> attributes_;
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
