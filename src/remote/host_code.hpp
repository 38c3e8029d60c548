// SPDX-License-Identifier: Apache-2.0
// What devrt-server counts as host code, and what a module it compiles may read (docs/remote.md,
// "Threat model"). Pure functions of what a device and a module say about themselves, so that the
// decisions are tested against recorded devices (test/fixtures) as well as the ones present.
#ifndef DEVRT_SRC_REMOTE_HOST_CODE_HPP
#define DEVRT_SRC_REMOTE_HOST_CODE_HPP

#include <cstdint>
#include <string_view>

#include <devrt/backend/backend_abi.h>
#include <devrt/device.hpp>
#include <devrt/module.hpp>
#include <devrt/status.hpp>
#include <devrt/target.hpp>

namespace devrt::server {

// The module formats that are native code for the server's own CPU.
inline constexpr std::uint32_t kHostCodeFormats =
    DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_HOST_TABLE) | DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_SHARED_OBJECT);

// True when a device's kernels run as native code in the server's own address space, so that any
// module loaded on it is host code: the cpu backend; an OpenCL device of type CPU (target "device"
// "cpu"); a Vulkan physical device of type CPU (target "device_type" "cpu"); and any device whose
// name or driver names a CPU implementation of a GPU API (llvmpipe, lavapipe, softpipe,
// SwiftShader, WARP), which is how a WebGPU adapter over Mesa's OpenGL ES shows it. `target` may be
// empty (a device that cannot describe itself); `name` is its device_name attribute. Thread-safe.
bool kernels_run_in_process(DeviceKind kind, const Target& target, std::string_view name) noexcept;

// Ok when compiling `source` as OpenCL C reads no file: no preprocessing directive but #define,
// #undef, the conditionals, #pragma, #error, #warning and #line (so no #include, #include_next,
// #import or #embed, however spelt: across backslash-newline splices, after comments, as the
// digraph %: or the trigraph ??=), and no __has_include, __has_include_next or __has_embed.
// Else permission_denied naming the line and the directive. Thread-safe.
Status check_source_reads_no_files(std::string_view source) noexcept;

// Ok when a module's build options name no file: every word is -D or -U with its definition (in
// one word or the next), -w, -Werror, or a -cl- option without a path, and none names a response
// file (@file). Anything else (-I, -include, -imacros, -o, -x, plain words a compiler would take as
// inputs) is permission_denied naming the word. Thread-safe.
Status check_build_options(std::string_view options) noexcept;

} // namespace devrt::server

#endif // DEVRT_SRC_REMOTE_HOST_CODE_HPP
