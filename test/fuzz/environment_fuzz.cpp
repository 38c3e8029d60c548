// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the readers of DEVRT_* variables (src/support/environment.hpp) and, in builds
// with -Dfault_injection=true, DEVRT_FAULT's. A number is accepted only as plain digits without
// overflow, and then prints back as itself; a list's items are non-empty and free of separators.
#include <cstdint>
#include <string>
#include <string_view>

#include "support/environment.hpp"
#include "support/fault_injection.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::uint64_t value = 0;
  if (devrt::detail::parse_unsigned(text, value)) {
    std::size_t first = text.find_first_not_of('0');
    std::string_view digits = first == std::string::npos ? std::string_view("0") : std::string_view(text).substr(first);
    if (std::to_string(value) != digits) __builtin_trap();
  } else {
    bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    // Refused digits must overflow: more than 20 significant digits, or above UINT64_MAX.
    if (digits_only) {
      std::size_t first = text.find_first_not_of('0');
      std::string_view significant = std::string_view(text).substr(first);
      if (significant.size() < 20 || (significant.size() == 20 && significant <= "18446744073709551615")) {
        __builtin_trap();
      }
    }
  }
  // A boolean is one of eight exact words, and nothing else.
  bool flag = false;
  if (devrt::detail::parse_boolean(text, flag)) {
    bool yes = text == "1" || text == "true" || text == "on" || text == "yes";
    bool no = text == "0" || text == "false" || text == "off" || text == "no";
    if (!(yes && flag) && !(no && !flag)) __builtin_trap();
  } else if (text == "1" || text == "true" || text == "on" || text == "yes" || text == "0" || text == "false" ||
             text == "off" || text == "no") {
    __builtin_trap();
  }
  std::string terminated = text.c_str(); // what getenv can hold: up to the first NUL
  std::size_t total = 0;
  for (const std::string& item : devrt::detail::split_list(terminated.c_str(), ':')) {
    if (item.empty() || item.find(':') != std::string::npos) __builtin_trap();
    total += item.size();
  }
  if (total > terminated.size()) __builtin_trap();
#if DEVRT_FAULT_INJECTION
  devrt::Status armed = devrt::detail::fault::arm(terminated);
  if (!armed.ok() && (armed.code() != devrt::ErrorCode::invalid_argument ||
                      armed.message().find("DEVRT_FAULT") == std::string_view::npos)) {
    __builtin_trap();
  }
  static_cast<void>(devrt::detail::fault::disarm());
#endif
  return 0;
}
