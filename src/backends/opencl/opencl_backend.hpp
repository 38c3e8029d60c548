// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend: every device of every platform, libOpenCL.so.1 opened at first use.
//
// Memory is cl_mem handles (offsets applied by the backend); streams are in-order command queues
// (the device's default queue for the null stream); events are markers; modules are programs
// built from OpenCL C or loaded from program binaries; a launch maps grid x block to the global
// size and block to the local size. Every member is thread-safe: OpenCL objects are, except
// kernel arguments, which are set and enqueued under one lock per kernel.
#ifndef DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP

#include <devrt/backend.hpp>
#include <devrt/config.hpp>

namespace devrt::opencl {

class OpenclBackend {
public:
  static constexpr std::string_view name = "opencl";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_OPENCL); // declared in meson.build

  // availability(): unavailable when libOpenCL.so.1 cannot be opened, no platform (ICD) is
  // installed, or the platforms have no devices; the message says which.
  DEVRT_BACKEND_DECLARE_DISCOVERY
  // Each open device's state is its ClDevice (context and default queue, made at discovery);
  // close_device waits for the default queue (clFinish), so nothing devrt queued is left running.
  Status open_device(BackendDevice& device) noexcept;
  Status close_device(BackendDevice& device) noexcept;
  // kind "opencl": device limits, OpenCL C version, fp16/fp64/subgroup support, extensions.
  Result<Target> detect_target(const BackendDevice& device) noexcept;

  // copy(): host->device copies are queued without blocking (the host memory must stay valid until the
  // stream is synchronized); device->host copies block until the bytes are in host memory (after
  // the stream's earlier work), as TVM's and CUDA's plain copies do; device<->device on one
  // device is clEnqueueCopyBuffer; between two OpenCL devices the copy goes through the host and
  // blocks.
  DEVRT_BACKEND_DECLARE_MEMORY
  DEVRT_BACKEND_DECLARE_STREAMS
  DEVRT_BACKEND_DECLARE_EVENTS

  // module_load: opencl_c (built with the options plus -cl-kernel-arg-info) and opencl_binary.
  // launch: a `__local` pointer parameter receives dynamic_shared_bytes and is not one of the
  // launch's arguments. Buffer offsets must be multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN
  // (sub-buffers).
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::opencl_c, ModuleFormat::opencl_binary};
  static constexpr bool checked_launch_arguments = true;
  static constexpr bool texture_arguments = true;
  DEVRT_BACKEND_DECLARE_MODULES
  Result<ModuleBinary> module_binary(const BackendDevice& device, void* module) noexcept;

  // Textures (global.texture, -nhwc, -weight) are CL_RGBA image2d_t objects of the element type's
  // channel type, on devices with CL_DEVICE_IMAGE_SUPPORT; float16 texels where the context lists
  // CL_RGBA/CL_HALF_FLOAT. A kernel takes one as an image2d_t argument (DEVRT_ARG_TEXTURE).
  DEVRT_BACKEND_DECLARE_TEXTURES
};

static_assert(Backend<OpenclBackend> && BackendDeviceLifecycle<OpenclBackend> && BackendEvents<OpenclBackend> &&
              BackendTargetDetection<OpenclBackend> && BackendModules<OpenclBackend> &&
              BackendModuleBinary<OpenclBackend> && BackendTextures<OpenclBackend>);

} // namespace devrt::opencl

#endif // DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP
