// SPDX-License-Identifier: Apache-2.0
// The reader of the bytes TVM serialises (the device blob, the Relax VM's executable). Not public
// API.
#ifndef DEVRT_SRC_TVM_TVM_READER_HPP
#define DEVRT_SRC_TVM_TVM_READER_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::tvm::detail {

// A bounds-checked little-endian reader over TVM's serialised bytes (dmlc::Stream's layout),
// messages opening with `prefix`. Every read says what it was reading; the first failure
// is kept (later reads answer false at once).
template <class Abi>
class ByteReader {
public:
  ByteReader(std::span<const std::byte> bytes, Abi abi, const char* prefix) noexcept
      : bytes_(bytes), abi_(abi), prefix_(prefix) {}

  Abi abi() const noexcept { return abi_; }
  // The next `n` bytes, consumed.
  std::span<const std::byte> take(std::size_t n) noexcept {
    const std::span<const std::byte> out = bytes_.subspan(at_, n);
    at_ += n;
    return out;
  }

  std::size_t offset() const noexcept { return at_; }
  std::size_t left() const noexcept { return bytes_.size() - at_; }
  bool failed() const noexcept { return !error_.ok(); }
  const Status& error() const noexcept { return error_; }

  bool fail(Status status) noexcept {
    if (error_.ok()) error_ = std::move(status);
    return false;
  }
  bool truncated(const char* what, std::size_t need) noexcept {
    return fail(make_error(ErrorCode::invalid_argument, prefix_, ": truncated ", what, " at byte ", at_, " (", need,
                           " bytes needed, ", left(), " left)"));
  }

  bool bytes(void* out, std::size_t n, const char* what) noexcept {
    if (failed()) return false;
    if (n > left()) return truncated(what, n);
    if (n == 0) return true; // `out` may be an empty vector's null data
    std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool u64(std::uint64_t& out, const char* what) noexcept {
    unsigned char raw[8] = {};
    if (!bytes(raw, 8, what)) return false;
    out = 0;
    for (int i = 7; i >= 0; --i) out = (out << 8) | raw[i];
    return true;
  }
  bool u32(std::uint32_t& out, const char* what) noexcept {
    unsigned char raw[4] = {};
    if (!bytes(raw, 4, what)) return false;
    out = static_cast<std::uint32_t>(raw[0]) | static_cast<std::uint32_t>(raw[1]) << 8 |
          static_cast<std::uint32_t>(raw[2]) << 16 | static_cast<std::uint32_t>(raw[3]) << 24;
    return true;
  }
  // A count of elements of at least `element_bytes` each: more than the bytes left can hold is
  // corrupt, never an allocation.
  bool count(std::uint64_t& out, std::size_t element_bytes, const char* what) noexcept {
    const std::size_t start = at_;
    if (!u64(out, what)) return false;
    if (element_bytes != 0 && out > left() / element_bytes) {
      return fail(make_error(ErrorCode::invalid_argument, prefix_, ": ", what, " at byte ", start, " counts ", out,
                             " elements of at least ", element_bytes, " bytes, but ", left(),
                             " bytes are left (truncated or corrupt)"));
    }
    return true;
  }
  bool string(std::string& out, const char* what) noexcept {
    std::uint64_t n = 0;
    if (!count(n, 1, what)) return false;
    out.assign(reinterpret_cast<const char*>(bytes_.data() + at_), static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return true;
  }
  bool blob(std::vector<std::byte>& out, const char* what) noexcept {
    std::uint64_t n = 0;
    if (!count(n, 1, what)) return false;
    out.assign(bytes_.data() + at_, bytes_.data() + at_ + n);
    at_ += static_cast<std::size_t>(n);
    return true;
  }
  bool skip_string(const char* what) noexcept {
    std::uint64_t n = 0;
    if (!count(n, 1, what)) return false;
    at_ += static_cast<std::size_t>(n);
    return true;
  }

private:
  std::span<const std::byte> bytes_;
  Abi abi_;
  const char* prefix_;
  std::size_t at_ = 0;
  Status error_;
};

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_READER_HPP
