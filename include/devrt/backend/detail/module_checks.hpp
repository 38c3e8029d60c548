// SPDX-License-Identifier: Apache-2.0
// The argument checks of kernel launches, shared by Function::launch and devrt/backend/direct.hpp; built
// in module.cpp.
#ifndef DEVRT_BACKEND_DETAIL_MODULE_CHECKS_HPP
#define DEVRT_BACKEND_DETAIL_MODULE_CHECKS_HPP

#include <cstdint>
#include <span>
#include <string_view>

#include <devrt/backend/backend_abi.h>
#include <devrt/device.hpp>
#include <devrt/module.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>

namespace devrt::detail {

// Checks a launch of `function_name` on `device` and fills `desc` (whose args point at `raw`,
// kMaxKernelArgs entries): extents >= 1 whose product fits 32 bits, at most kMaxKernelArgs
// arguments, buffers on `device` with offsets inside them, valid scalar types, textures on
// `device` only when the backend has textures (`accepts_textures`), the stream on `device`. Errors
// name the kernel, grid and block.
Status check_launch(Device device, std::string_view function_name, const LaunchConfig& config,
                    std::span<const KernelArg> args, StreamRef stream, devrt_kernel_arg* raw, devrt_launch_desc& desc,
                    bool accepts_textures) noexcept;

// unsupported, naming the formats `backend` loads, unless `format`'s DEVRT_MODULE_FORMAT_BIT is in
// `formats` (a backend table's module_formats; 0 declares nothing and passes every format).
Status check_module_format(std::string_view backend, Device device, std::uint32_t formats,
                           ModuleFormat format) noexcept;

} // namespace devrt::detail

#endif // DEVRT_BACKEND_DETAIL_MODULE_CHECKS_HPP
