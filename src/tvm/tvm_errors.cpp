// SPDX-License-Identifier: Apache-2.0
// The assertions TVM's host code makes of its arguments (arg_binder.cc, make_packed_api.cc), said
// in devrt's words with what the call gave, TVM's own words kept after them (tvm_state.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "tvm/tvm_state.hpp"

namespace devrt::tvm::detail {
namespace {

// What one tensor argument is, as `field` says: its dtype, rank, device or shape.
std::string describe_tensor(const DLTensor& t, std::string_view field, Device device, Device shown_as) {
  if (field == "dtype")
    return to_string(DataType{static_cast<DataTypeCode>(t.dtype.code), t.dtype.bits, t.dtype.lanes});
  if (field == "ndim") return std::to_string(t.ndim) + "-D";
  if (field == "device") {
    const Device on = Device::from_dlpack(t.device);
    return to_string(on == shown_as ? device : on);
  }
  std::string shape = "[";
  for (std::int32_t d = 0; d < t.ndim; ++d) shape += (d == 0 ? "" : ", ") + std::to_string(t.shape[d]);
  return shape + "]";
}

// "argument 0 float32, argument 1 int32, ...": the call's tensor arguments by index, the first six
// (an error message holds MessageBuilder::kCapacity bytes, and TVM's words follow).
std::string describe_tensors(const std::vector<DLTensor*>& tensors, std::string_view field, Device device,
                             Device shown_as) {
  std::string out;
  int listed = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i] == nullptr) continue;
    if (++listed > 6) return out + ", ...";
    out += (out.empty() ? "argument " : ", argument ") + std::to_string(i) + " " +
           describe_tensor(*tensors[i], field, device, shown_as);
  }
  return out.empty() ? "no tensors" : out;
}

// One assertion of TVM's argument binder, taken apart: "[Kind: ]Assert fail: <condition>,
// <f>.<param>.<what>", or "[Kind: ]Argument <f>.<param>.<what> has an unsatisfied constraint: E == ...".
struct Assertion {
  std::string param;
  std::string_view what; // after "<param>.": "dtype is expected to be float16", "shape[2] has ..."
  std::string said;      // TVM's words to keep: the error kind, then <what>'s clause alone
};

bool take_apart(std::string_view function, std::string_view text, Assertion& out) {
  // tvm-ffi's errors start with their kind ("RuntimeError: "), kept in front of TVM's words.
  std::string_view kind;
  if (const std::size_t end = text.find("Error: ");
      end != std::string_view::npos && text.substr(0, end).find(' ') == std::string_view::npos) {
    kind = text.substr(0, end + 7);
    text.remove_prefix(end + 7);
  }
  const std::string prefix = std::string(function) + ".";
  // In "Assert fail: <condition>, <f>.<param>.<what>" the last clause names the argument; the
  // condition repeats it as struct reads, and would not fit the message.
  const bool assert_fail = text.starts_with("Assert fail: ");
  const std::size_t clause = assert_fail ? text.rfind(", " + prefix) : std::string_view::npos;
  const std::size_t at = clause != std::string_view::npos ? clause + 2 : text.find(prefix);
  if (at == std::string_view::npos) return false;
  const std::size_t name_end = text.find('.', at + prefix.size());
  if (name_end == std::string_view::npos) return false;
  out.param = std::string(text.substr(at + prefix.size(), name_end - at - prefix.size()));
  out.what = text.substr(name_end + 1);
  out.said = std::string(kind) + std::string(assert_fail ? text.substr(at) : text);
  return true;
}

// The value after `marker` in `text`, up to the next separator.
std::string value_after(std::string_view text, std::string_view marker) {
  const std::size_t p = text.find(marker);
  if (p == std::string_view::npos) return {};
  std::string_view value = text.substr(p + marker.size());
  return std::string(value.substr(0, value.find_first_of(", ;)")));
}

bool is_number(const std::string& text) {
  return !text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string::npos;
}

} // namespace

std::string explain_tvm_error(std::string_view function, const std::string& tvm_error,
                              const std::vector<DLTensor*>& tensors, Device device, Device shown_as) {
  const std::string_view text(tvm_error);
  if (const std::size_t pointer = text.find(": Expect arg["); pointer != std::string_view::npos) {
    const std::size_t close = text.find(']', pointer);
    if (close != std::string_view::npos) {
      return "argument " + std::string(text.substr(pointer + 13, close - pointer - 13)) +
             " must be a tensor (TVM: " + tvm_error + ")";
    }
  }
  Assertion a;
  if (!take_apart(function, text, a)) return tvm_error;
  auto given = [&](std::string_view field) { return describe_tensors(tensors, field, device, shown_as); };
  const std::string head = "argument '" + a.param + "'";
  const std::string tail = " (TVM: " + a.said + ")";
  if (const std::string dtype = value_after(a.what, "dtype is expected to be "); !dtype.empty()) {
    return head + " must be " + dtype + "; the call gave " + given("dtype") + tail;
  }
  if (const std::string rank = value_after(a.what, "ndim is expected to equal "); !rank.empty()) {
    return head + " must have " + rank + " dimensions; the call gave " + given("ndim") + tail;
  }
  std::string expected = value_after(a.what, "unsatisfied constraint: ");
  if (a.what.starts_with("device_type")) {
    // The device type TVM compiled the argument for: "<type> == ..." in its condition.
    if (expected.empty() && text.find("Assert fail: ") != std::string_view::npos) {
      const std::string_view condition = text.substr(text.find("Assert fail: ") + 13);
      expected = std::string(condition.substr(0, condition.find(' ')));
    }
    if (!is_number(expected)) return head + ": " + a.said;
    int type = 0;
    for (char digit : expected) type = type * 10 + (digit - '0');
    return head + " must be on a " + std::string(device_kind_name(static_cast<DeviceKind>(type))) +
           " device; the call gave " + given("device") + tail;
  }
  if (!a.what.starts_with("shape[")) return head + ": " + a.said;
  for (std::string_view wrapper : {"(", "T.int64(", "T.int32("}) {
    if (expected.starts_with(wrapper)) expected.erase(0, wrapper.size());
  }
  // TVM's condition up to its first "==": the rest reads the tensor's struct, and is long.
  const std::size_t equals = a.said.find(" == ", a.said.find("unsatisfied constraint: "));
  const std::string short_tail = equals == std::string::npos ? tail : " (TVM: " + a.said.substr(0, equals) + " == ...)";
  const std::string axis(a.what.substr(0, a.what.find(']') + 1));
  return head + ": its " + axis +
         (is_number(expected) ? " must be " + expected : " disagrees with the other arguments'") + "; the call gave " +
         given("shape") + short_tail;
}

} // namespace devrt::tvm::detail
