// SPDX-License-Identifier: Apache-2.0
#include <devrt/status.hpp>

#include <cstdio>
#include <cstdlib>

#include "support/heap.hpp"

namespace devrt {

std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
  case ErrorCode::ok: return "ok";
  case ErrorCode::invalid_argument: return "invalid_argument";
  case ErrorCode::out_of_range: return "out_of_range";
  case ErrorCode::unavailable: return "unavailable";
  case ErrorCode::unsupported: return "unsupported";
  case ErrorCode::out_of_memory: return "out_of_memory";
  case ErrorCode::driver_error: return "driver_error";
  case ErrorCode::internal: return "internal";
  case ErrorCode::not_found: return "not_found";
  case ErrorCode::already_exists: return "already_exists";
  case ErrorCode::abi_mismatch: return "abi_mismatch";
  case ErrorCode::tool_failed: return "tool_failed";
  case ErrorCode::timed_out: return "timed_out";
  }
  return "unknown";
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
