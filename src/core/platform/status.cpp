// SPDX-License-Identifier: Apache-2.0
// Status and errors (devrt/status.hpp): error codes' names and messages built from parts,
// bounded and never throwing.
#include <devrt/status.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "support/heap.hpp"

namespace devrt {

namespace {

// Every code's name in code order, then "unknown", each ended by '\0': one string and a table of
// byte offsets, a third of the bytes a switch's table of string views takes in firmware.
constexpr char kNames[] = "ok\0invalid_argument\0out_of_range\0unavailable\0unsupported\0out_of_memory\0"
                          "driver_error\0internal\0not_found\0already_exists\0abi_mismatch\0tool_failed\0"
                          "timed_out\0permission_denied\0unknown";
constexpr std::size_t kCodes = static_cast<std::size_t>(kLastErrorCode) + 1;
constexpr std::array<unsigned char, kCodes + 2> kNameStarts = [] {
  std::array<unsigned char, kCodes + 2> starts{};
  std::size_t at = 0;
  for (std::size_t i = 0; i <= kCodes; ++i) {
    starts[i] = static_cast<unsigned char>(at);
    while (at < sizeof kNames && kNames[at] != '\0') ++at;
    ++at;
  }
  starts[kCodes + 1] = static_cast<unsigned char>(at);
  return starts;
}();
static_assert(kNameStarts[kCodes + 1] == sizeof kNames, "one name per ErrorCode, then \"unknown\"");

} // namespace

std::string_view error_code_name(ErrorCode code) noexcept {
  std::size_t i = static_cast<std::uint32_t>(code);
  if (i > kCodes) i = kCodes;
  return std::string_view(kNames + kNameStarts[i], kNameStarts[i + 1] - kNameStarts[i] - 1u);
}

namespace detail {

char* duplicate_message(std::string_view text) noexcept {
  char* copy = static_cast<char*>(heap_allocate(text.size() + 1, 1));
  if (copy != nullptr) {
    if (!text.empty()) std::char_traits<char>::copy(copy, text.data(), text.size());
    copy[text.size()] = '\0';
  }
  return copy;
}

void free_message(char* message) noexcept { heap_free(message); }

void append_message_parts(MessageBuilder& m, const MessagePart* parts, std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    const MessagePart& part = parts[i];
    switch (part.kind) {
    case MessagePart::Kind::text: m.append(part.text); break;
    case MessagePart::Kind::sint: m.append_signed(part.sint); break;
    case MessagePart::Kind::uint: m.append_unsigned(part.uint); break;
    case MessagePart::Kind::hex: m.append_unsigned(part.uint, 16); break;
    case MessagePart::Kind::pointer: m.append_pointer(part.pointer); break;
    case MessagePart::Kind::custom: part.custom.append(m, part.custom.object); break;
    }
  }
}

Status make_error_from_parts(ErrorCode code, const MessagePart* parts, std::size_t count) noexcept {
  MessageBuilder message;
  append_message_parts(message, parts, count);
  return Status(code, message.view());
}

void fatal_status([[maybe_unused]] const char* what, [[maybe_unused]] const Status& status) noexcept {
#if DEVRT_ERROR_MESSAGES
  detail::MessageBuilder line; // no printf: see log.cpp
  append_parts(line, "devrt: fatal: ", what, ": ", error_code_name(status.code()), ": ", status.message(), "\n");
  static_cast<void>(std::fwrite(line.view().data(), 1, line.view().size(), stderr));
#endif
#if DEVRT_BARE_METAL
  std::_Exit(134); // abort()'s exit status, without the signal machinery abort() links (138 B on Cortex-M4)
#else
  std::abort();
#endif
}

} // namespace detail
} // namespace devrt
