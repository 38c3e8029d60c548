// SPDX-License-Identifier: Apache-2.0
// The worker-process pool. Workers are forked children running worker_main(): they read a request
// (function address, input), run the function and write a response (status code, output or
// message). The parent runs one poll() loop: it hands jobs to idle workers, reads responses, and
// kills workers whose job passed its deadline. A worker that ends mid-job tells exit from crash
// through waitpid.
#include <devrt/toolchain/pool.hpp>
#include <devrt/toolchain/process.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "toolchain_internal.hpp"

namespace devrt::toolchain {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kResponseHeader = sizeof(std::int32_t) + sizeof(std::uint64_t);

// Moves all `size` bytes through `transfer` (::read or ::write), retrying on EINTR and short
// counts; false on end of file or an error.
template <class Buffer, class Transfer>
bool transfer_all(int fd, Buffer* data, std::size_t size, Transfer transfer) noexcept {
  while (size > 0) {
    ssize_t n = transfer(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t size) noexcept {
  return transfer_all(fd, static_cast<const char*>(data), size, ::write);
}

bool read_all(int fd, void* data, std::size_t size) noexcept {
  return transfer_all(fd, static_cast<char*>(data), size, ::read);
}

// A worker's life: requests until end of file, then a normal exit. _exit, never exit: the
// parent's atexit handlers must not run here.
[[noreturn]] void worker_main(int requests, int responses) noexcept {
  for (;;) {
    std::uintptr_t address = 0;
    std::uint64_t size = 0;
    if (!read_all(requests, &address, sizeof address) || !read_all(requests, &size, sizeof size)) ::_exit(0);
    std::string input(size, '\0');
    if (!read_all(requests, input.data(), input.size())) ::_exit(0);
    JobFunction function = nullptr;
    std::memcpy(&function, &address, sizeof function);
    std::string output;
    Status status = function(input, output);
    std::int32_t code = static_cast<std::int32_t>(status.code());
    std::string_view payload = status.ok() ? std::string_view(output) : status.message();
    std::uint64_t payload_size = payload.size();
    if (!write_all(responses, &code, sizeof code) || !write_all(responses, &payload_size, sizeof payload_size) ||
        !write_all(responses, payload.data(), payload.size())) {
      ::_exit(1);
    }
  }
}

} // namespace

std::string_view job_state_name(JobState state) noexcept {
  switch (state) {
  case JobState::succeeded: return "succeeded";
  case JobState::failed: return "failed";
  case JobState::exited: return "exited";
  case JobState::crashed: return "crashed";
  case JobState::timed_out: return "timed_out";
  case JobState::not_run: return "not_run";
  }
  return "unknown";
}

struct ProcessPool::State {
  struct Worker {
    pid_t pid = -1;
    detail::Fd requests;  // parent writes
    detail::Fd responses; // parent reads
    std::size_t jobs_done = 0;
    bool busy = false;
    std::size_t job = 0;
    Clock::time_point start;
    Clock::time_point deadline;
    bool has_deadline = false;
    std::string response;
  };

  PoolOptions options;
  std::vector<Worker> workers;
  PoolStats stats;
  mutable std::mutex mutex;

  Status spawn(Worker& worker) noexcept {
    detail::Fd request_read, request_write, response_read, response_write;
    if (!detail::make_pipe(request_read, request_write) || !detail::make_pipe(response_read, response_write)) {
      return make_error(ErrorCode::internal, "process pool: pipe: ", std::strerror(errno));
    }
    pid_t pid = ::fork();
    if (pid < 0) return make_error(ErrorCode::internal, "process pool: fork: ", std::strerror(errno));
    if (pid == 0) {
      static_cast<void>(::setpgid(0, 0)); // its own group, with whatever a job starts
      // Default signal handling: a crash must end the worker, not run the parent's handlers
      // (a test framework's, a crash reporter's).
      for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
        if (signal_number != SIGKILL && signal_number != SIGSTOP)
          static_cast<void>(std::signal(signal_number, SIG_DFL));
      }
      sigset_t none;
      sigemptyset(&none);
      pthread_sigmask(SIG_SETMASK, &none, nullptr);
      for (Worker& other : workers) {
        other.requests.reset();
        other.responses.reset();
      }
      request_write.reset();
      response_read.reset();
      worker_main(request_read.get(), response_write.get());
    }
    static_cast<void>(::setpgid(pid, pid));
    worker.pid = pid;
    worker.requests = std::move(request_write);
    worker.responses = std::move(response_read);
    worker.jobs_done = 0;
    worker.busy = false;
    worker.response.clear();
    ++stats.workers_started;
    return Status();
  }

  // Ends a worker that is idle: end of file on its requests, then reaped (killed after a grace).
  void retire(Worker& worker) noexcept {
    if (worker.pid < 0) return;
    worker.requests.reset();
    int status = 0;
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (::waitpid(worker.pid, &status, WNOHANG) == worker.pid) {
        worker.pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (worker.pid >= 0) kill_and_reap(worker);
    worker.responses.reset();
  }

  // Drops a worker that has been reaped: it takes no more jobs and a fresh one replaces it.
  static void forget(Worker& worker) noexcept {
    worker.pid = -1;
    worker.requests.reset();
    worker.responses.reset();
    worker.busy = false;
  }

  void kill_and_reap(Worker& worker) noexcept {
    static_cast<void>(kill_process_tree(worker.pid));
    static_cast<void>(detail::wait_for_exit(worker.pid));
    forget(worker);
  }

  // A worker whose response pipe ended mid-job: how it ended.
  void lost_during_job(Worker& worker, JobResult& result) noexcept {
    int status = detail::wait_for_exit(worker.pid);
    forget(worker);
    ++stats.workers_lost;
    if (WIFSIGNALED(status)) {
      result.state = JobState::crashed;
      result.term_signal = WTERMSIG(status);
      result.status =
          Status(ErrorCode::tool_failed, "job crashed its worker: " + detail::signal_description(result.term_signal));
    } else {
      result.state = JobState::exited;
      result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      result.status = make_error(ErrorCode::tool_failed, "job exited its worker with status ", result.exit_code);
    }
  }

  // Reads what the worker sent; true once the whole response is in `result`.
  bool read_response(Worker& worker, JobResult& result) noexcept {
    char buffer[65536];
    ssize_t n = ::read(worker.responses.get(), buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return false;
    if (n <= 0) {
      lost_during_job(worker, result);
      return true;
    }
    worker.response.append(buffer, static_cast<std::size_t>(n));
    if (worker.response.size() < kResponseHeader) return false;
    std::int32_t code = 0;
    std::uint64_t size = 0;
    std::memcpy(&code, worker.response.data(), sizeof code);
    std::memcpy(&size, worker.response.data() + sizeof code, sizeof size);
    if (worker.response.size() < kResponseHeader + size) return false;
    std::string payload = worker.response.substr(kResponseHeader, size);
    worker.response.clear();
    if (code == 0) {
      result.state = JobState::succeeded;
      result.output = std::move(payload);
    } else {
      result.state = JobState::failed;
      result.status = Status(static_cast<ErrorCode>(code), payload);
    }
    worker.busy = false;
    ++worker.jobs_done;
    if (options.max_jobs_per_worker != 0 && worker.jobs_done >= options.max_jobs_per_worker) {
      retire(worker);
      ++stats.workers_recycled;
    }
    return true;
  }

  // Sends a job to an idle worker, starting one if needed (and once more if the old one had died).
  Status dispatch(Worker& worker, const Job& job) noexcept {
    std::uintptr_t address = 0;
    std::memcpy(&address, &job.function, sizeof address);
    std::uint64_t size = job.input.size();
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (worker.pid < 0) DEVRT_RETURN_IF_ERROR(spawn(worker));
      detail::SigpipeGuard guard;
      if (write_all(worker.requests.get(), &address, sizeof address) &&
          write_all(worker.requests.get(), &size, sizeof size) &&
          write_all(worker.requests.get(), job.input.data(), job.input.size())) {
        return Status();
      }
      kill_and_reap(worker); // it died between jobs: start a fresh one
      ++stats.workers_lost;
    }
    return Status(ErrorCode::internal, "process pool: a fresh worker would not take the job");
  }

  void shutdown() noexcept {
    for (Worker& worker : workers) retire(worker);
  }
};

ProcessPool::ProcessPool(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
ProcessPool::ProcessPool(ProcessPool&&) noexcept = default;
ProcessPool& ProcessPool::operator=(ProcessPool&& other) noexcept {
  if (this != &other) {
    if (state_) state_->shutdown();
    state_ = std::move(other.state_);
  }
  return *this;
}
ProcessPool::~ProcessPool() {
  if (state_) state_->shutdown();
}

Result<ProcessPool> ProcessPool::create(const PoolOptions& options) noexcept {
  auto state = std::make_unique<State>();
  state->options = options;
  if (state->options.workers == 0) state->options.workers = std::max(1U, std::thread::hardware_concurrency());
  state->workers.resize(state->options.workers);
  return ProcessPool(std::move(state));
}

std::size_t ProcessPool::worker_count() const noexcept { return state_->options.workers; }

PoolStats ProcessPool::stats() const noexcept {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stats;
}

JobResult ProcessPool::run_one(const Job& job) noexcept {
  std::vector<JobResult> results = run(std::span<const Job>(&job, 1));
  return std::move(results.front());
}

std::vector<JobResult> ProcessPool::run(std::span<const Job> jobs) noexcept {
  std::lock_guard<std::mutex> lock(state_->mutex);
  State& state = *state_;
  std::vector<JobResult> results(jobs.size());
  std::size_t next = 0;
  auto busy_count = [&] {
    return std::count_if(state.workers.begin(), state.workers.end(), [](const State::Worker& w) { return w.busy; });
  };
  while (next < jobs.size() || busy_count() > 0) {
    for (State::Worker& worker : state.workers) {
      while (!worker.busy && next < jobs.size()) {
        const Job& job = jobs[next];
        JobResult& result = results[next];
        std::size_t index = next++;
        if (job.function == nullptr) {
          result.status = make_error(ErrorCode::invalid_argument, "process pool: job ", index, " has no function");
          continue;
        }
        Status sent = state.dispatch(worker, job);
        if (!sent.ok()) {
          result.status = std::move(sent);
          continue;
        }
        std::chrono::milliseconds timeout = job.timeout.count() > 0 ? job.timeout : state.options.default_timeout;
        worker.busy = true;
        worker.job = index;
        worker.start = Clock::now();
        worker.has_deadline = timeout.count() > 0;
        worker.deadline = worker.start + timeout;
        ++state.stats.jobs_run;
      }
    }

    std::vector<pollfd> fds;
    std::vector<State::Worker*> polled;
    Clock::time_point now = Clock::now();
    int wait_ms = -1;
    for (State::Worker& worker : state.workers) {
      if (!worker.busy) continue;
      fds.push_back({worker.responses.get(), POLLIN, 0});
      polled.push_back(&worker);
      if (worker.has_deadline) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(worker.deadline - now).count() + 1;
        wait_ms = wait_ms < 0 ? static_cast<int>(std::max<long long>(left, 0))
                              : std::min(wait_ms, static_cast<int>(std::max<long long>(left, 0)));
      }
    }
    if (fds.empty()) continue;
    int ready = ::poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      State::Worker& worker = *polled[i];
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      JobResult& result = results[worker.job];
      Clock::time_point started = worker.start;
      if (state.read_response(worker, result)) result.elapsed = Clock::now() - started;
    }
    now = Clock::now();
    for (State::Worker& worker : state.workers) {
      if (!worker.busy || !worker.has_deadline || now < worker.deadline) continue;
      JobResult& result = results[worker.job];
      state.kill_and_reap(worker);
      ++state.stats.workers_lost;
      result.state = JobState::timed_out;
      result.elapsed = now - worker.start;
      result.status =
          make_error(ErrorCode::tool_failed, "job timed out after ",
                     std::chrono::duration_cast<std::chrono::milliseconds>(worker.deadline - worker.start).count(),
                     " ms; its worker and every process it started were killed");
    }
  }
  return results;
}

} // namespace devrt::toolchain
