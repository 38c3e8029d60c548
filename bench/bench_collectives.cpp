// SPDX-License-Identifier: Apache-2.0
// All-reduce bandwidth through devrt_comm against the MPI calls beneath it, in the same run, on
// the same ranks and buffers: MPI_Allreduce (what devrt runs with timeout 0) and
// MPI_Iallreduce completed by MPI_Wait (devrt, with a timeout, the default, runs MPI_Iallreduce and
// polls MPI_Test against the deadline). Run under
// mpirun (bench/meson.build: np 2); rank 0 writes the JSON, bench/report_collectives.py prints
// bus bandwidth (nccl-tests' definition: algorithm bandwidth * 2 (n - 1) / n) and the ratios.
//
// Every rank must run the same benchmarks the same number of times, so iteration counts are fixed
// and there is no random interleaving; instead the repetitions are registered round-robin (each
// variant once per round), so that drift on a shared machine falls on every variant alike.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <devrt/comm.hpp>
#include <devrt/devrt.hpp>

namespace {

int g_rank = 0;
int g_size = 1;

// Times one iteration as the slowest rank saw it (a collective ends when its last rank does).
template <class Body>
void run_timed(benchmark::State& state, std::size_t bytes, Body body) {
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (!body()) {
      state.SkipWithError("the operation failed");
      break;
    }
    double elapsed = MPI_Wtime() - start;
    double slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    state.SetIterationTime(slowest);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["ranks"] = g_size;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

struct Buffers {
  std::vector<float> send;
  std::vector<float> recv;
  explicit Buffers(std::size_t count) : send(count, 1.0f), recv(count, 0.0f) {}
};

struct Communicators {
  devrt::comm::Communicator with_timeout; // the default: nonblocking MPI, polled against the deadline
  devrt::comm::Communicator blocking;     // timeout 0: MPI's blocking call
  devrt::comm::Communicator staged;       // opencl:0 when every rank has it: staged through host memory
};

// OpenCL buffers for the staged variant, filled once.
struct DeviceBuffers {
  devrt::Buffer send;
  devrt::Buffer recv;
};

void register_all_reduce(std::size_t bytes, int iterations, int rounds, Communicators& comms) {
  std::size_t count = bytes / sizeof(float);
  auto buffers = std::make_shared<Buffers>(count);
  std::string size = std::to_string(bytes);
  auto host = [](std::vector<float>& v) { return devrt::host_span(v.data(), v.size() * sizeof(float)); };
  using Variant = std::pair<std::string, std::function<bool()>>;
  std::vector<Variant> variants{
      {"raw_mpi_allreduce",
       [buffers, count] {
         return MPI_Allreduce(buffers->send.data(), buffers->recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                              MPI_COMM_WORLD) == MPI_SUCCESS;
       }},
      {"raw_mpi_iallreduce_wait",
       [buffers, count] {
         MPI_Request request = MPI_REQUEST_NULL;
         return MPI_Iallreduce(buffers->send.data(), buffers->recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD, &request) == MPI_SUCCESS &&
                MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS;
       }},
      {"devrt_all_reduce",
       [buffers, count, host, &comms] {
         return comms.with_timeout
             .all_reduce(host(buffers->send), host(buffers->recv), count, devrt::DataType::float32(),
                         devrt::comm::ReduceOp::sum)
             .ok();
       }},
      {"devrt_all_reduce_timeout0",
       [buffers, count, host, &comms] {
         return comms.blocking
             .all_reduce(host(buffers->send), host(buffers->recv), count, devrt::DataType::float32(),
                         devrt::comm::ReduceOp::sum)
             .ok();
       }},
  };
  if (comms.staged.valid()) {
    auto device = std::make_shared<DeviceBuffers>();
    auto send = devrt::Buffer::allocate(comms.staged.device(), bytes);
    auto recv = devrt::Buffer::allocate(comms.staged.device(), bytes);
    if (send.ok() && recv.ok()) {
      device->send = std::move(send).value();
      device->recv = std::move(recv).value();
      static_cast<void>(devrt::copy(devrt::host_span(buffers->send.data(), bytes), device->send.span()));
      static_cast<void>(devrt::synchronize(comms.staged.device()));
      variants.emplace_back("devrt_all_reduce_staged_opencl", [device, count, &comms] {
        return comms.staged
            .all_reduce(device->send, device->recv, count, devrt::DataType::float32(), devrt::comm::ReduceOp::sum)
            .ok();
      });
    }
  }
  for (int round = 0; round < rounds; ++round) {
    for (const Variant& variant : variants) {
      auto body = variant.second;
      benchmark::RegisterBenchmark(("all_reduce/" + variant.first + "/" + size).c_str(),
                                   [body, bytes](benchmark::State& state) { run_timed(state, bytes, body); })
          ->Iterations(iterations)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

// The other ranks run every benchmark and report nothing.
class SilentReporter : public benchmark::BenchmarkReporter {
public:
  bool ReportContext(const Context& /*context*/) override { return true; }
  void ReportRuns(const std::vector<Run>& /*runs*/) override {}
};

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Communicators comms;
  auto with_timeout = devrt::comm::create(MPI_COMM_WORLD, devrt::kHostDevice);
  auto blocking = devrt::comm::create(MPI_COMM_WORLD, devrt::kHostDevice, {.timeout = std::chrono::milliseconds(0)});
  if (!with_timeout.ok() || !blocking.ok()) {
    std::fprintf(stderr, "rank %d: cannot create the communicators: %s%s\n", g_rank,
                 std::string(with_timeout.status().message()).c_str(),
                 std::string(blocking.status().message()).c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  comms.with_timeout = std::move(with_timeout).value();
  comms.blocking = std::move(blocking).value();
  // The staged variant runs only when every rank has an OpenCL device (PoCL in CI).
  int has_opencl = devrt::device_count(devrt::DeviceKind::opencl) > 0 ? 1 : 0;
  int all_have_opencl = 0;
  MPI_Allreduce(&has_opencl, &all_have_opencl, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_have_opencl != 0) {
    auto staged = devrt::comm::create(MPI_COMM_WORLD, devrt::Device{devrt::DeviceKind::opencl, 0});
    if (staged.ok()) comms.staged = std::move(staged).value();
  }

  register_all_reduce(std::size_t{64} << 20, 4, 9, comms); // the figure: 64 MiB float32
  register_all_reduce(std::size_t{1} << 20, 20, 5, comms);
  register_all_reduce(std::size_t{4} << 10, 200, 5, comms);

  // Only rank 0 may open the output file: the others would truncate it.
  std::vector<char*> args(argv, argv + argc);
  if (g_rank != 0) {
    std::erase_if(args, [](const char* arg) { return std::strncmp(arg, "--benchmark_out", 15) == 0; });
  }
  int arg_count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&arg_count, args.data());
  if (g_rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    SilentReporter silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  comms = Communicators();
  std::printf("rank %d: passed\n", g_rank);
  MPI_Finalize();
  return 0;
}
