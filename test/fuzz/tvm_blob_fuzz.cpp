// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: devrt::tvm::parse_device_blob over arbitrary bytes (a TVM-built library's
// __tvm_dev_mblob, which a library file of unknown origin carries). A refusal is invalid_argument
// or unsupported with a reason; an accepted blob's modules hold consistent kernels and code.
#include <devrt/tvm.hpp>

#include <cstdint>
#include <span>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  devrt::Result<devrt::tvm::DeviceBlob> blob = devrt::tvm::parse_device_blob(bytes);
  if (!blob.ok()) {
    const devrt::ErrorCode code = blob.status().code();
    if (code != devrt::ErrorCode::invalid_argument && code != devrt::ErrorCode::unsupported) broken("error code");
    if (blob.status().message().empty()) broken("a reason");
    return 0;
  }
  std::size_t total = 0;
  for (const devrt::tvm::DeviceModule& module : blob->modules) {
    if (module.type_key != "vulkan" && module.type_key != "opencl" && module.type_key != "webgpu") broken("type key");
    for (const devrt::tvm::KernelCode& code : module.kernel_code) total += code.code.size() + code.name.size();
    for (const devrt::tvm::KernelInfo& kernel : module.kernels) total += kernel.name.size() + kernel.arg_types.size();
    total += module.source.size();
  }
  if (total > size) broken("no more than the input's bytes");
  return 0;
}
