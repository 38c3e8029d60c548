// SPDX-License-Identifier: Apache-2.0
// The WebGPU backend's worker: the one thread every call into the implementation runs on, with its
// spin-then-block hand-over. Not public API.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_WORKER_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_WORKER_HPP

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace devrt::webgpu {

// The one thread that calls into the implementation. Dawn's OpenGL ES backend binds its EGL
// context to the thread that made the device, and a call from any other thread loses the device
// (eglCreateSync: EGL_BAD_MATCH); webgpu.h objects are not thread-safe either. Every call of this
// backend therefore runs here, in submission order, while the calling thread waits. Both sides
// poll for kSpin before they block (the caller for its result, the worker for the next task), so
// that a run of calls hands over in well under a microsecond instead of two futex wake-ups (30 us
// a call on the CI machine). Started by discovery, never stopped (the runtime lives for the
// process).
class Worker {
public:
  Worker() : thread_([this] { loop(); }) { thread_.detach(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Queues `work` (a callable taking nothing and returning nothing) to run on the worker thread
  // after everything queued before, and returns at once; false when there is no memory for it.
  // Inline when called from the worker.
  template <class Work>
  bool post(Work work) {
    if (std::this_thread::get_id() == worker_id_.load(std::memory_order_acquire)) {
      work();
      return true;
    }
    struct Posted {
      Task task;
      Work work;
    };
    auto* posted = new (std::nothrow) Posted{{}, std::move(work)};
    if (posted == nullptr) return false;
    posted->task.call = [](void* self) {
      auto* p = static_cast<Posted*>(self);
      p->work();
      delete p;
    };
    posted->task.context = posted;
    posted->task.posted = true;
    enqueue(&posted->task);
    return true;
  }

  // How many tasks were queued so far. Thread-safe.
  std::uint64_t enqueued() const noexcept { return enqueued_.load(std::memory_order_acquire); }
  // The number of the task running now (1 for the first one queued); on the worker thread only.
  std::uint64_t running() const noexcept { return running_; }

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
    enqueue(&task);
    if (!poll([&] { return task.done.load(std::memory_order_acquire); })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return task.done.load(std::memory_order_acquire); });
    }
    return std::move(*out);
  }

private:
  static constexpr auto kSpin = std::chrono::microseconds(100);
  static constexpr unsigned kBusyPolls = 4096; // a few microseconds of loads, no system call

  struct Task {
    void (*call)(void*) = nullptr;
    void* context = nullptr;
    bool posted = false; // owned by the queue: deleted by its call, nobody waits for it
    std::atomic<bool> done{false};
  };

  void enqueue(Task* task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(task);
      queued_.fetch_add(1, std::memory_order_release);
      enqueued_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_one(); // no system call when the worker is polling
  }

  // Polls `ready` for kSpin (busy for the first microseconds, then yielding the core between
  // polls); whether it became true.
  template <class Ready>
  static bool poll(Ready ready) {
    const auto start = std::chrono::steady_clock::now();
    for (unsigned polls = 0;; ++polls) {
      if (ready()) return true;
      if (polls < kBusyPolls) continue;
      const auto waited = std::chrono::steady_clock::now() - start;
      if (waited > kSpin) return false;
      std::this_thread::yield();
    }
  }

  void loop() {
    worker_id_.store(std::this_thread::get_id(), std::memory_order_release);
    for (;;) {
      if (!poll([&] { return queued_.load(std::memory_order_acquire) != 0; })) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return !tasks_.empty(); });
      }
      Task* task = nullptr;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        task = tasks_.front();
        tasks_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
        ++running_;
      }
      const bool posted = task->posted;
      task->call(task->context);
      if (posted) continue;
      task->done.store(true, std::memory_order_release);
      { std::lock_guard<std::mutex> lock(mutex_); } // a caller between its check and its wait sees done
      done_.notify_all();                           // no system call when no caller is blocked
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Task*> tasks_;
  std::atomic<std::size_t> queued_{0};
  std::atomic<std::uint64_t> enqueued_{0};
  std::uint64_t running_ = 0; // the worker's
  std::atomic<std::thread::id> worker_id_{};
  std::thread thread_;
};

// The process's worker. Thread-safe.
Worker& worker();

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_WORKER_HPP
