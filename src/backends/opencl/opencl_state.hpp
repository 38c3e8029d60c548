// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend's state, shared by its files (internal):
//   opencl_backend.cpp  the runtime, discovery, attributes, memory, copies, streams and events;
//   opencl_module.cpp   programs, kernels and launches;
//   opencl_image.cpp    textures (memory scopes global.texture*) as image2d_t;
//   opencl_target.cpp   the device as a compiler target (Adreno detection), a pure function.
// The runtime is loaded once and never torn down (drivers outlive static destructors).
#ifndef DEVRT_SRC_BACKENDS_OPENCL_OPENCL_STATE_HPP
#define DEVRT_SRC_BACKENDS_OPENCL_OPENCL_STATE_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <devrt/backend/backend.hpp>

#include "backend_support/gpu_freed_buffers.hpp"
#include "opencl_api.hpp"
#include "support/dynamic_library.hpp"

namespace devrt::opencl {

struct ClDevice {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr; // the default stream
  // The queue timed events mark on (CL_QUEUE_PROFILING_ENABLE), made at the first timed event.
  cl_command_queue profiling_queue = nullptr;
  std::unique_ptr<std::mutex> profiling_mutex = std::make_unique<std::mutex>();
  // Graphs (opencl_module.cpp): cl_khr_command_buffer's functions, resolved at the first graph
  // under graph_mutex; graph_support 1 when usable, 0 when the device cannot (graph_unsupported
  // says why), -1 before the first graph or after a failure worth trying again.
  std::unique_ptr<std::mutex> graph_mutex = std::make_unique<std::mutex>();
  int graph_support = -1;
  std::string graph_unsupported;
  CommandBufferApi command_buffers;
  std::string name, vendor, version, driver_version, c_version, extensions, platform_name;
  cl_device_type type = 0;
  std::size_t max_work_group_size = 0;
  std::size_t max_work_item_sizes[3] = {0, 0, 0};
  cl_ulong local_memory = 0;
  cl_ulong global_memory = 0;
  cl_ulong max_allocation = 0;
  cl_ulong global_cache = 0;
  cl_uint compute_units = 0;
  cl_uint clock_mhz = 0;
  cl_uint base_address_align_bits = 0;
  cl_uint image_pitch_alignment = 0;
  cl_bool image_support = CL_FALSE;
  std::size_t image2d_max_width = 0;
  std::size_t image2d_max_height = 0;
  std::size_t image_max_array_size = 0;
  bool half_texels = false; // CL_RGBA / CL_HALF_FLOAT images listed by the context
  std::size_t preferred_multiple = 0;
};

struct Runtime {
  Status status;
  Api api;
  detail::DynamicLibrary library;
  std::vector<ClDevice> devices;
};

// The device as a compiler target: TVM's "opencl" kind, or `opencl -device=adreno` (keys adreno,
// opencl, gpu) for a Qualcomm Adreno GPU, with the texture limits TVM's Adreno schedules read. A
// pure function of the properties (opencl_target.cpp), tested against recorded clinfo output.
Target describe_target(const ClDevice& device);
// Whether `device` is a Qualcomm Adreno GPU: "Adreno" in its name, or a GPU whose vendor is
// Qualcomm (older drivers name it "QUALCOMM Adreno(TM)", newer ones add the model).
bool is_adreno(const ClDevice& device);

// Whether the device's context lists CL_RGBA images of channel type `type` for reading and writing
// (opencl_image.cpp). Thread-safe.
Result<bool> rgba_image_supported(const Api& api, const ClDevice& device, cl_channel_type type) noexcept;

// driver_error (out_of_memory for the allocation failures) naming the call and the code.
[[gnu::cold]] Status cl_error(const char* call, cl_int code);

#define DEVRT_CL_CHECK(call_text, expr)                                                                                \
  do {                                                                                                                 \
    cl_int devrt_cl_code = (expr);                                                                                     \
    if (devrt_cl_code != CL_SUCCESS) [[unlikely]]                                                                      \
      return cl_error(call_text, devrt_cl_code);                                                                       \
  } while (0)

// The backend's process-wide state, discovered on first use.
Runtime& runtime() noexcept;

// The buffers this backend freed lately (backend_support/gpu_freed_buffers.hpp), checked by copies and
// launches before the driver sees a handle.
detail::FreedBuffers& freed_buffers() noexcept;

// The device discovery described (its context and queues are made by open_device).
inline ClDevice& device_of(std::int32_t id) noexcept { return runtime().devices[static_cast<std::size_t>(id)]; }

// An open device's state: its ClDevice (OpenclBackend::open_device).
inline ClDevice& state_of(const BackendDevice& device) noexcept { return backend_state<ClDevice>(device); }

// The queue a stream handle names; null is the device's default queue.
inline cl_command_queue queue_of(const ClDevice& device, void* stream) noexcept {
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : device.queue;
}

// Sub-buffer origins must be multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN (given in bits).
inline std::size_t buffer_offset_alignment(const ClDevice& device) noexcept {
  return std::max<std::size_t>(device.base_address_align_bits / 8, 1);
}

} // namespace devrt::opencl

#endif // DEVRT_SRC_BACKENDS_OPENCL_OPENCL_STATE_HPP
