// SPDX-License-Identifier: Apache-2.0
// The WebGPU backend's shared state: the runtime (library, instance, devices) and the helpers the
// backend's files share; every call into the implementation runs on the worker (webgpu_worker.hpp).
// Not public API.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_STATE_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_STATE_HPP

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <devrt/backend/backend.hpp>

#include "backend_support/gpu_freed_buffers.hpp"
#include "support/dynamic_library.hpp"
#include "webgpu_api.hpp"
#include "webgpu_target.hpp"
#include "webgpu_worker.hpp"

namespace devrt::webgpu {

// The work recorded since the queue's last submission: launches go into one compute pass of one
// command encoder (device-to-device copies into the encoder between passes), their scalars into
// slots of the device's uniform ring, and the whole is submitted by flush() when anything else
// needs the queue (a write, a read, an event, a synchronize, a free) or the ring is full. WebGPU
// orders the dispatches of a pass, so the batch keeps the stream's order.
struct Batch {
  WGPUCommandEncoder encoder = nullptr;
  WGPUComputePassEncoder pass = nullptr;
  WGPUComputePipeline pipeline = nullptr; // bound in the open pass
  WGPUBindGroup group = nullptr;          // bound in the open pass
  std::uint64_t first_slot = 0;           // the ring position of the batch's first uniform slot
};

// The launches' scalars: `slots` slots of `slot_bytes` (minUniformBufferOffsetAlignment or more)
// in one uniform buffer, taken in turn, written from `shadow` when their batch is submitted. A slot
// keeps its bytes until the ring comes round to it again, so a launch that repeats the scalars of
// the one before reuses its slot and bind group.
struct UniformRing {
  WGPUBuffer buffer = nullptr;
  std::vector<std::byte> shadow;
  std::uint64_t next = 0; // slots taken so far
  std::uint32_t slot_bytes = 0, slots = 0;
};

// One adapter opened as a device. Its fields change on the worker thread only.
struct DeviceState {
  WGPUAdapter adapter = nullptr;
  WGPUDevice device = nullptr;
  WGPUQueue queue = nullptr;
  std::string name, description, backend_name;
  WGPUEnum backend_type = 0;
  WGPULimits limits{};
  std::uint32_t subgroup_min_size = 0;
  bool shader_f16 = false;
  bool subgroups = false;
  std::atomic<bool> lost{false}; // set by the device-lost callback
  std::string lost_message;
  // The first error no error scope caught (the uncaptured-error callback), reported once by the
  // next check_device().
  ErrorCode pending_code = ErrorCode::ok;
  std::string pending_error;
  // The worker task after which the device had run everything and reported no error (0: none
  // known): a synchronize with no task queued since returns without the worker.
  std::atomic<std::uint64_t> idle_through{0};
  Batch batch;
  UniformRing ring;
  WGPUBuffer staging = nullptr; // the MapRead buffer reads go through, kept for the next read
  std::uint64_t staging_bytes = 0;
};

struct Runtime {
  Status status;
  Api api;
  detail::DynamicLibrary library;
  // Mesa's surfaceless EGL display, opened by devrt for Dawn's OpenGL ES backend (null without
  // libEGL): no display server and no EGL_PLATFORM variable needed.
  detail::DynamicLibrary egl;
  void* (*egl_get_proc)(const char*) = nullptr;
  void* egl_display = nullptr;
  WGPUInstance instance = nullptr;
  std::vector<std::unique_ptr<DeviceState>> devices;
};

// A buffer: the implementation's handle and the size it was created with (a multiple of 4).
struct Allocation {
  WGPUBuffer buffer = nullptr;
  std::uint64_t size = 0;
};

// The buffer records this backend freed lately (backend_support/gpu_freed_buffers.hpp): copies and launches
// check their handles here before dereferencing them.
detail::FreedBuffers& freed_buffers() noexcept;

// The runtime, discovered (on the worker thread) on first use. Thread-safe.
Runtime& runtime() noexcept;
// An open device's state (WebgpuBackend::open_device).
inline DeviceState& state_of(const BackendDevice& device) noexcept { return backend_state<DeviceState>(device); }

// What target detection reads of the device's adapter.
AdapterFacts adapter_facts(const DeviceState& d);

// The helpers below run on the worker thread.
std::string text(WGPUStringView view);
// "<call> failed (status <n>)[: <message>]".
std::string failure(const char* call, WGPUEnum status, const std::string& message);
// Runs the instance's events until `done` is set; false after 30 s.
bool wait_for(const Runtime& rt, const std::atomic<bool>& done);
// The errors of the calls between push_scope() and pop_scope(), as a Status naming `call`:
// out_of_memory for an out-of-memory error, driver_error for the others.
void push_scope(const Api& api, DeviceState& d);
Status pop_scope(const Runtime& rt, DeviceState& d, const char* call);
// driver_error once the device was lost; else the error the device reported since the last check
// (an operation recorded earlier failed when the queue ran it), once.
Status check_device(DeviceState& d);
// Keeps `status` of an operation that ran after its caller returned (`what`: "the launch of
// 'vadd'", "a copy to the device") as the device's pending error, if none is pending, for the next
// check_device().
void note_error(DeviceState& d, const Status& status, std::string_view what);
// Whether the device has run everything queued so far without an error; thread-safe.
bool known_idle(const DeviceState& d);
// The object `create()` makes, or the error its error scopes caught (the object, if any, released
// with `release`).
template <class Handle, class Create, class Release>
Result<Handle> create_scoped(const Runtime& rt, DeviceState& d, const char* call, Create create, Release release) {
  push_scope(rt.api, d);
  Handle handle = create();
  Status status = pop_scope(rt, d, call);
  if (!status.ok()) {
    if (handle != nullptr) release(handle);
    return status;
  }
  if (handle == nullptr) return make_error(ErrorCode::out_of_memory, call, " returned null");
  return handle;
}
// A buffer of `bytes` (a multiple of 4) with `usage`, or the error the device reported.
Result<WGPUBuffer> create_buffer(const Runtime& rt, DeviceState& d, std::uint64_t bytes, WGPUFlags usage);
void release_buffer(const Api& api, WGPUBuffer buffer);

// The adapter's device (with every feature and limit it offers) and its queue, into `d`; and their
// release with the buffers the device kept (webgpu_device.cpp). On the worker thread.
Status request_device(Runtime& rt, DeviceState& d);
void release_device(Runtime& rt, DeviceState& d);

// The queue (webgpu_queue.cpp); all on the worker thread.
// Submits the batch, if any; errors stay pending.
void submit(const Runtime& rt, DeviceState& d);
// submit(), then check_device().
Status flush(const Runtime& rt, DeviceState& d);
// The batch's encoder, outside any compute pass (begun if there is no batch).
WGPUCommandEncoder batch_encoder(const Runtime& rt, DeviceState& d);
// The batch's open compute pass (begun if there is none).
WGPUComputePassEncoder batch_pass(const Runtime& rt, DeviceState& d);
// A uniform slot holding `words` for a launch of the batch, as its ring position; the batch is
// submitted first when every slot belongs to it.
Result<std::uint64_t> take_uniform_slot(const Runtime& rt, DeviceState& d, std::span<const std::uint32_t> words);
// Whether the slot at ring position `position` still holds what it was given.
bool slot_intact(const DeviceState& d, std::uint64_t position);
// The slot's offset in the ring's buffer.
std::uint64_t slot_offset(const DeviceState& d, std::uint64_t position);
// Host bytes into a buffer (after the batch), and a buffer's bytes into host memory (complete on
// return), at any offset and size.
Status write_bytes(const Runtime& rt, DeviceState& d, const Allocation& target, std::uint64_t offset,
                   const std::byte* data, std::uint64_t bytes);
Status read_bytes(const Runtime& rt, DeviceState& d, const Allocation& source, std::uint64_t offset, std::byte* out,
                  std::uint64_t bytes);
// Waits until the queue has run everything submitted and batched.
Status wait_idle(const Runtime& rt, DeviceState& d);

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_STATE_HPP
