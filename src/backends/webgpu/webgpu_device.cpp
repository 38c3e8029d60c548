// SPDX-License-Identifier: Apache-2.0
// A WebGPU device's opening and closing: the adapter's device requested with everything it offers,
// and released with what the device kept (webgpu_state.hpp).
#include <string>
#include <vector>

#include "webgpu_backend.hpp"
#include "webgpu_state.hpp"

namespace devrt::webgpu {

// The adapter's device (with every feature and limit it offers) and its queue, into `d`.
Status request_device(Runtime& rt, DeviceState& d) {
  const Api& api = rt.api;
  d.lost.store(false, std::memory_order_relaxed);
  d.lost_message.clear();
  d.pending_code = ErrorCode::ok;
  d.pending_error.clear();
  d.idle_through.store(0, std::memory_order_relaxed);
  std::vector<WGPUEnum> features;
  if (d.shader_f16) features.push_back(kFeatureShaderF16);
  if (d.subgroups) features.push_back(kFeatureSubgroups);
  struct Answer {
    std::atomic<bool> done{false};
    WGPUEnum status = 0;
    WGPUDevice device = nullptr;
    std::string message;
  } answer;
  WGPUDeviceDescriptor descriptor{};
  descriptor.requiredFeatureCount = features.size();
  descriptor.requiredFeatures = features.data();
  descriptor.requiredLimits = &d.limits; // everything the adapter offers, not the defaults
  descriptor.deviceLostCallbackInfo.mode = kCallbackModeAllowProcessEvents;
  descriptor.deviceLostCallbackInfo.callback = [](const WGPUDevice*, WGPUEnum reason, WGPUStringView message,
                                                  void* data, void*) {
    // Destroyed (2) and CallbackCancelled (3): devrt released the device (close_device) or the
    // instance went; nothing was lost.
    if (reason == kDeviceLostDestroyed || reason == kDeviceLostCallbackCancelled) return;
    auto* state = static_cast<DeviceState*>(data);
    state->lost_message = text(message);
    state->lost.store(true, std::memory_order_release);
  };
  descriptor.deviceLostCallbackInfo.userdata1 = &d;
  // Called on the worker thread, from the call that failed or from processing events.
  descriptor.uncapturedErrorCallbackInfo.callback = [](const WGPUDevice*, WGPUEnum type, WGPUStringView message,
                                                       void* data, void*) {
    auto* state = static_cast<DeviceState*>(data);
    state->idle_through.store(0, std::memory_order_release);
    if (state->pending_code != ErrorCode::ok) return; // the first one is reported
    state->pending_code = type == kErrorOutOfMemory ? ErrorCode::out_of_memory : ErrorCode::driver_error;
    state->pending_error = text(message);
  };
  descriptor.uncapturedErrorCallbackInfo.userdata1 = &d;
  WGPURequestDeviceCallbackInfo callback{};
  callback.mode = kCallbackModeAllowProcessEvents;
  callback.callback = [](WGPUEnum status, WGPUDevice device, WGPUStringView message, void* data, void*) {
    auto* a = static_cast<Answer*>(data);
    a->status = status;
    if (status == kSuccess) a->device = device;
    a->message = text(message);
    a->done.store(true, std::memory_order_release);
  };
  callback.userdata1 = &answer;
  api.wgpuAdapterRequestDevice(d.adapter, &descriptor, callback);
  if (!wait_for(rt, answer.done)) return make_error(ErrorCode::driver_error, "no answer to wgpuAdapterRequestDevice");
  if (answer.device == nullptr) {
    return make_error(ErrorCode::driver_error, failure("wgpuAdapterRequestDevice", answer.status, answer.message));
  }
  d.device = answer.device;
  d.queue = api.wgpuDeviceGetQueue(d.device);
  return Status();
}

// Releases the device and what it holds (the uniform ring, the read staging buffer, the queue).
// On the worker thread, with nothing of the device's left in flight.
void release_device(Runtime& rt, DeviceState& d) {
  const Api& api = rt.api;
  if (d.ring.buffer != nullptr) release_buffer(api, d.ring.buffer);
  d.ring = UniformRing{};
  if (d.staging != nullptr) release_buffer(api, d.staging);
  d.staging = nullptr;
  d.staging_bytes = 0;
  if (d.queue != nullptr) api.wgpuQueueRelease(d.queue);
  d.queue = nullptr;
  if (d.device != nullptr) api.wgpuDeviceRelease(d.device);
  d.device = nullptr;
}

Status WebgpuBackend::open_device(BackendDevice& device) noexcept {
  Runtime& rt = runtime();
  DEVRT_RETURN_IF_ERROR(rt.status);
  DeviceState& d = *rt.devices[static_cast<std::size_t>(device.index)];
  DEVRT_RETURN_IF_ERROR(worker().run([&] {
    Status requested = request_device(rt, d);
    if (!requested.ok()) release_device(rt, d);
    return requested;
  }));
  device.state = &d;
  return Status();
}

Status WebgpuBackend::close_device(BackendDevice& device) noexcept {
  Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  device.state = nullptr;
  return worker().run([&] {
    Status idle = wait_idle(rt, d);
    release_device(rt, d);
    return idle;
  });
}

} // namespace devrt::webgpu
