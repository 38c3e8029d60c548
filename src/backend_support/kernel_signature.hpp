// SPDX-License-Identifier: Apache-2.0
// What a kernel's parameters are, as far as a backend knows them, and the check of a launch's
// arguments against them. Shared by the backends; not public API.
#ifndef DEVRT_SRC_BACKEND_SUPPORT_KERNEL_SIGNATURE_HPP
#define DEVRT_SRC_BACKEND_SUPPORT_KERNEL_SIGNATURE_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <devrt/backend/backend_abi.h>
#include <devrt/module.hpp>
#include <devrt/status.hpp>

namespace devrt::detail {

struct KernelParam {
  enum class Kind : std::uint8_t { buffer, scalar, any_scalar, texture };
  Kind kind = Kind::buffer;
  std::uint8_t code = 0; // scalar: DLPack type code
  std::uint8_t bits = 0; // scalar and any_scalar: size in bits (0 for an any_scalar of unknown size)
};

// A kernel's parameters. `known` is false when the backend cannot tell (then only what the
// backend itself needs is checked). A plain value.
struct KernelSignature {
  bool known = false;
  std::uint32_t count = 0;
  KernelParam params[kMaxKernelArgs];

  void add(KernelParam param) noexcept {
    if (count < kMaxKernelArgs) params[count++] = param;
  }
};

// Parses "buffer,float32,int32" (spaces allowed after commas; "" is no parameters). False on a
// name that is neither `buffer` nor a scalar type, or on more than kMaxKernelArgs parameters.
bool parse_kernel_signature(std::string_view text, KernelSignature& out) noexcept;

// invalid_argument when `args` do not match `signature` (count, buffer vs scalar, scalar type),
// naming `kernel`, the expected list and the first mismatch; ok when the signature is unknown.
Status check_kernel_args(std::string_view kernel, const KernelSignature& signature, const devrt_kernel_arg* args,
                         std::uint32_t num_args) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_BACKEND_SUPPORT_KERNEL_SIGNATURE_HPP
