// SPDX-License-Identifier: Apache-2.0
// The WebGPU backend's shared state: the runtime (library, instance, devices), the worker thread
// every call into the implementation runs on, and the helpers the backend's files share. Not
// public API.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_STATE_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_STATE_HPP

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <devrt/backend.hpp>

#include "core/gpu_freed_buffers.hpp"
#include "support/dynamic_library.hpp"
#include "webgpu_api.hpp"

namespace devrt::webgpu {

// The one thread that calls into the implementation. Dawn's OpenGL ES backend binds its EGL
// context to the thread that made the device, and a call from any other thread loses the device
// (eglCreateSync: EGL_BAD_MATCH); webgpu.h objects are not thread-safe either. Every call of this
// backend therefore runs here, in submission order, while the calling thread waits. Started by
// discovery, never stopped (the runtime lives for the process).
class Worker {
public:
  Worker() : thread_([this] { loop(); }) { thread_.detach(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs `work` on the worker thread and returns its result; inline when called from it.
  template <class Work>
  auto run(Work&& work) -> decltype(work()) {
    if (std::this_thread::get_id() == worker_id_.load(std::memory_order_acquire)) return work();
    using Out = decltype(work());
    std::optional<Out> out;
    Task task;
    task.call = [](void* context) {
      auto* pair = static_cast<std::pair<Work*, std::optional<Out>*>*>(context);
      pair->second->emplace((*pair->first)());
    };
    std::pair<Work*, std::optional<Out>*> context{&work, &out};
    task.context = &context;
    std::unique_lock<std::mutex> lock(mutex_);
    tasks_.push_back(&task);
    wake_.notify_all();
    done_.wait(lock, [&] { return task.done; });
    return std::move(*out);
  }

private:
  struct Task {
    void (*call)(void*) = nullptr;
    void* context = nullptr;
    bool done = false;
  };
  void loop() {
    worker_id_.store(std::this_thread::get_id(), std::memory_order_release);
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !tasks_.empty(); });
      Task* task = tasks_.front();
      tasks_.pop_front();
      lock.unlock();
      task->call(task->context);
      lock.lock();
      task->done = true;
      done_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Task*> tasks_;
  std::atomic<std::thread::id> worker_id_{};
  std::thread thread_;
};

// The process's worker. Thread-safe.
Worker& worker();

// One adapter opened as a device.
struct DeviceState {
  WGPUAdapter adapter = nullptr;
  WGPUDevice device = nullptr;
  WGPUQueue queue = nullptr;
  std::string name, description, backend_name;
  WGPUEnum backend_type = 0;
  WGPUEnum adapter_type = 0;
  WGPULimits limits{};
  std::uint32_t subgroup_min_size = 0;
  bool shader_f16 = false;
  bool subgroups = false;
  std::mutex mutex;              // serialises calls into the implementation for this device
  std::atomic<bool> lost{false}; // set by the device-lost callback
  std::string lost_message;      // under mutex
  std::string uncaptured;        // the last error no scope caught, under mutex
};

struct Runtime {
  Status status;
  Api api;
  detail::DynamicLibrary library;
  WGPUInstance instance = nullptr;
  std::vector<std::unique_ptr<DeviceState>> devices;
};

// A buffer: the implementation's handle and the size it was created with (a multiple of 4).
struct Allocation {
  WGPUBuffer buffer = nullptr;
  std::uint64_t size = 0;
};

// The buffer records this backend freed lately (core/gpu_freed_buffers.hpp): copies and launches
// check their handles here before dereferencing them.
detail::FreedBuffers& freed_buffers() noexcept;

// The runtime, discovered (on the worker thread) on first use. Thread-safe.
Runtime& runtime() noexcept;
// The device of a valid index. Thread-safe.
DeviceState& state_of(std::int32_t index);

// The helpers below run on the worker thread.
std::string text(WGPUStringView view);
// Runs the instance's events until `done` is set; false after 30 s.
bool wait_for(const Runtime& rt, const std::atomic<bool>& done);
// The errors of the calls between push_scope() and pop_scope(), as a Status naming `call`:
// out_of_memory for an out-of-memory error, driver_error for the others.
void push_scope(const Api& api, DeviceState& d);
Status pop_scope(const Runtime& rt, DeviceState& d, const char* call);
// driver_error once the device was lost.
Status check_lost(DeviceState& d);
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
  return handle;
}
// A buffer of `bytes` (a multiple of 4) with `usage`, or the error the device reported.
Result<WGPUBuffer> create_buffer(const Runtime& rt, DeviceState& d, std::uint64_t bytes, WGPUFlags usage);
void release_buffer(const Api& api, WGPUBuffer buffer);

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_STATE_HPP
