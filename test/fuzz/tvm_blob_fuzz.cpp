// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: devrt::tvm::parse_device_blob over arbitrary bytes (a TVM-built library's
// device blob, which a library file of unknown origin carries), read as each ABI's blob (TVM <=
// 0.20's; tvm-ffi's, inline or framed). A refusal is invalid_argument or unsupported with a
// reason; an accepted blob's modules hold consistent kernels and code.
#include <devrt/tvm.hpp>

#include <cstdint>
#include <span>
#include <string>

#include "fuzz_check.hpp"

namespace {

void check(std::span<const std::byte> bytes, devrt::tvm::BlobAbi abi) {
  const std::size_t size = bytes.size();
  devrt::Result<devrt::tvm::DeviceBlob> blob = devrt::tvm::parse_device_blob(bytes, abi);
  if (!blob.ok()) {
    const devrt::ErrorCode code = blob.status().code();
    if (code != devrt::ErrorCode::invalid_argument && code != devrt::ErrorCode::unsupported) broken("error code");
    if (blob.status().message().empty()) broken("a reason");
    return;
  }
  std::size_t total = 0;
  for (const devrt::tvm::DeviceModule& module : blob->modules) {
    const std::string& key = module.type_key;
    if (key != "vulkan" && key != "opencl" && key != "webgpu" && key != "cuda" && key != "hip" && key != "rocm" &&
        key != "hsaco") {
      broken("type key");
    }
    for (const devrt::tvm::KernelCode& code : module.kernel_code) total += code.code.size() + code.name.size();
    for (const devrt::tvm::KernelInfo& kernel : module.kernels) total += kernel.name.size() + kernel.arg_types.size();
    total += module.source.size();
  }
  if (total > size) broken("no more than the input's bytes");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  check(bytes, devrt::tvm::BlobAbi::packed);
  check(bytes, devrt::tvm::BlobAbi::ffi);
  return 0;
}
