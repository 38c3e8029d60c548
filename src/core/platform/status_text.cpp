// SPDX-License-Identifier: Apache-2.0
// Status as text (devrt/status.hpp). A file of its own: a static link (firmware, DSP images) pulls
// it in only where a program calls it.
#include <devrt/status.hpp>

namespace devrt {

std::string to_string(const Status& status) {
  if (status.ok()) return "ok";
  std::string text(error_code_name(status.code()));
  text += ": ";
  text += status.message();
  return text;
}

} // namespace devrt
