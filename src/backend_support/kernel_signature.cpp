// SPDX-License-Identifier: Apache-2.0
#include "backend_support/kernel_signature.hpp"

#include <devrt/detail/message.hpp>
#include <devrt/dtype.hpp>

namespace devrt::detail {
namespace {

void append_param(MessageBuilder& m, const KernelParam& param) {
  switch (param.kind) {
  case KernelParam::Kind::buffer: m.append("buffer"); break;
  case KernelParam::Kind::texture: m.append("texture"); break;
  case KernelParam::Kind::scalar: append_part(m, DataType{static_cast<DataTypeCode>(param.code), param.bits, 1}); break;
  case KernelParam::Kind::any_scalar:
    if (param.bits == 0) {
      m.append("scalar");
    } else {
      append_parts(m, "scalar of ", unsigned{param.bits}, " bits");
    }
    break;
  }
}

void append_arg(MessageBuilder& m, const devrt_kernel_arg& arg) {
  if (arg.kind == DEVRT_ARG_BUFFER) {
    m.append("buffer");
  } else if (arg.kind == DEVRT_ARG_TEXTURE) {
    m.append("texture");
  } else {
    append_part(m, DataType{static_cast<DataTypeCode>(arg.type_code), arg.type_bits, 1});
  }
}

bool matches(const KernelParam& param, const devrt_kernel_arg& arg) noexcept {
  switch (param.kind) {
  case KernelParam::Kind::buffer: return arg.kind == DEVRT_ARG_BUFFER;
  case KernelParam::Kind::texture: return arg.kind == DEVRT_ARG_TEXTURE;
  case KernelParam::Kind::scalar:
    return arg.kind == DEVRT_ARG_SCALAR && arg.type_code == param.code && arg.type_bits == param.bits;
  case KernelParam::Kind::any_scalar:
    return arg.kind == DEVRT_ARG_SCALAR && (param.bits == 0 || arg.type_bits == param.bits);
  }
  return false;
}

[[gnu::cold, gnu::noinline]] Status mismatch(std::string_view kernel, const KernelSignature& signature,
                                             const devrt_kernel_arg* args, std::uint32_t num_args,
                                             std::uint32_t first_bad) noexcept {
  if constexpr (!DEVRT_ERROR_MESSAGES) return make_error(ErrorCode::invalid_argument); // the code alone
  MessageBuilder m;
  append_parts(m, "kernel '", kernel, "' takes ", signature.count,
               signature.count == 1 ? " argument (" : " arguments (");
  for (std::uint32_t i = 0; i < signature.count; ++i) {
    if (i > 0) m.append(", ");
    append_param(m, signature.params[i]);
  }
  m.append(")");
  if (num_args != signature.count) {
    append_parts(m, " but was given ", num_args);
  } else {
    append_parts(m, "; argument ", first_bad, " is ");
    append_arg(m, args[first_bad]);
  }
  return Status(ErrorCode::invalid_argument, m.view());
}

} // namespace

bool parse_kernel_signature(std::string_view text, KernelSignature& out) noexcept {
  out = KernelSignature();
  out.known = true;
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (text.empty()) return true;
  while (true) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (out.count == kMaxKernelArgs) return false;
    if (item == "buffer") {
      out.add(KernelParam{KernelParam::Kind::buffer, 0, 0});
    } else {
      Result<DataType> type = parse_data_type(item);
      if (!type.ok() || type->lanes != 1 || type->bits % 8 != 0 || type->bits > 64 || type->bits == 0) return false;
      out.add(KernelParam{KernelParam::Kind::scalar, static_cast<std::uint8_t>(type->code), type->bits});
    }
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

Status check_kernel_args(std::string_view kernel, const KernelSignature& signature, const devrt_kernel_arg* args,
                         std::uint32_t num_args) noexcept {
  if (!signature.known) return Status();
  if (num_args != signature.count) [[unlikely]]
    return mismatch(kernel, signature, args, num_args, 0);
  for (std::uint32_t i = 0; i < num_args; ++i) {
    if (!matches(signature.params[i], args[i])) [[unlikely]]
      return mismatch(kernel, signature, args, num_args, i);
  }
  return Status();
}

} // namespace devrt::detail
