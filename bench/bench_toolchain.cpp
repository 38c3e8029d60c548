// SPDX-License-Identifier: Apache-2.0
// devrt_toolchain: the worker pool's throughput for short jobs against starting a process per
// job (fork, or posix_spawn of /bin/true), and NVRTC through compile_cuda, cold vs cached.
#include <devrt/nvrtc.hpp>
#include <devrt/toolchain/cuda.hpp>
#include <devrt/toolchain/pool.hpp>
#include <devrt/toolchain/process.hpp>

#include <benchmark/benchmark.h>

#include <atomic>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace devrt::toolchain;

constexpr int kJobsPerBatch = 64;

devrt::Status short_job(std::string_view input, std::string& output) {
  output.assign(input.rbegin(), input.rend());
  return devrt::Status();
}

std::vector<Job> batch() {
  std::vector<Job> jobs;
  for (int i = 0; i < kJobsPerBatch; ++i) jobs.push_back(Job{&short_job, "job-" + std::to_string(i), {}});
  return jobs;
}

// The pool, warm: its workers are started before timing.
void BM_PoolShortJobs(benchmark::State& state) {
  PoolOptions options;
  options.workers = static_cast<std::size_t>(state.range(0));
  devrt::Result<ProcessPool> pool = ProcessPool::create(options);
  if (!pool.ok()) {
    state.SkipWithError("no pool");
    return;
  }
  std::vector<Job> jobs = batch();
  static_cast<void>(pool->run(jobs));
  for (auto _ : state) {
    std::vector<JobResult> results = pool->run(jobs);
    benchmark::DoNotOptimize(results.data());
    if (results.back().state != JobState::succeeded) state.SkipWithError("a job failed");
  }
  state.SetItemsProcessed(state.iterations() * kJobsPerBatch);
}
BENCHMARK(BM_PoolShortJobs)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One fork per job: what the pool saves. The child runs the same function and reports through
// a pipe; the parent waits for it.
void BM_ForkPerJob(benchmark::State& state) {
  std::vector<Job> jobs = batch();
  for (auto _ : state) {
    for (const Job& job : jobs) {
      int fds[2];
      if (::pipe(fds) != 0) state.SkipWithError("pipe");
      pid_t pid = ::fork();
      if (pid == 0) {
        std::string output;
        static_cast<void>(job.function(job.input, output));
        static_cast<void>(::write(fds[1], output.data(), output.size()));
        ::_exit(0);
      }
      ::close(fds[1]);
      char buffer[64];
      benchmark::DoNotOptimize(::read(fds[0], buffer, sizeof buffer));
      ::close(fds[0]);
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
  }
  state.SetItemsProcessed(state.iterations() * kJobsPerBatch);
}
BENCHMARK(BM_ForkPerJob)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One new program per job, as a driver that shells out does (run_process of /bin/true).
void BM_SpawnPerJob(benchmark::State& state) {
  ProcessOptions options;
  options.argv = {"/bin/true"};
  for (auto _ : state) {
    for (int i = 0; i < kJobsPerBatch; ++i) {
      devrt::Result<ProcessResult> result = run_process(options);
      if (!result.ok() || !result->succeeded()) state.SkipWithError("/bin/true failed");
    }
  }
  state.SetItemsProcessed(state.iterations() * kJobsPerBatch);
}
BENCHMARK(BM_SpawnPerJob)->Unit(benchmark::kMicrosecond)->UseRealTime();

constexpr const char* kKernel = R"(extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

// NVRTC through compile_cuda: every iteration a new source (a cache miss), or the same one (a hit).
void BM_CompileCudaNvrtc(benchmark::State& state) {
  if (!devrt::nvrtc::availability().ok()) {
    state.SkipWithError("NVRTC unavailable");
    return;
  }
  bool cached = state.range(0) == 1;
  CudaCompileOptions options;
  options.compiler = CudaCompiler::nvrtc;
  options.arch = {"compute_80"};
  static std::atomic<int> unique{0};
  std::string warm = std::string(kKernel) + "// warm\n";
  static_cast<void>(compile_cuda(warm, options));
  for (auto _ : state) {
    std::string source = cached ? warm
                                : std::string(kKernel) + "// " + std::to_string(::getpid()) + "-" +
                                      std::to_string(unique.fetch_add(1)) + "\n";
    devrt::Result<std::vector<std::byte>> ptx = compile_cuda(source, options);
    if (!ptx.ok()) state.SkipWithError("compile failed");
    benchmark::DoNotOptimize(ptx);
  }
  state.SetLabel(cached ? "cached" : "cold");
}
BENCHMARK(BM_CompileCudaNvrtc)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
