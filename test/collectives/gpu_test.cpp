// SPDX-License-Identifier: Apache-2.0
// devrt_comm on a CUDA device, one process: NCCL through a device list (ncclCommInitAll) and
// through an MPI singleton (unique id over MPI), and the MPI engine staging CUDA buffers. With one
// rank an all-reduce is a copy, but every call is a real NCCL call on the GPU.
//
// Without a CUDA device it prints the reason and exits 77 (skip); with DEVRT_REQUIRE_GPU=1 (the
// GPU lane) a missing device or NCCL fails instead.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <devrt/backend/registry.hpp>
#include <devrt/comm.hpp>
#include <devrt/devrt.hpp>

namespace {

using devrt::Buffer;
using devrt::DataType;
using devrt::comm::Communicator;
using devrt::comm::ReduceOp;

int g_failures = 0;
int g_checks = 0;

void check(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAILED %s\n", what.c_str());
  }
}

void check_ok(const devrt::Status& status, const std::string& what) {
  check(status.ok(), what + (status.ok() ? "" : ": " + std::string(status.message())));
}

// all_reduce, all_gather, reduce_scatter, broadcast and reduce of 1 Mi floats on one rank: each
// must leave recv equal to send.
void run_operations(Communicator& comm, const std::string& label) {
  constexpr std::size_t kCount = std::size_t{1} << 20;
  devrt::Device device = comm.device();
  auto stream = devrt::Stream::create(device);
  check_ok(stream.status(), label + ": stream");
  auto send = Buffer::allocate(device, kCount * 4);
  auto recv = Buffer::allocate(device, kCount * 4);
  check_ok(send.status(), label + ": allocate");
  if (!stream.ok() || !send.ok() || !recv.ok()) return;
  std::vector<float> input(kCount);
  for (std::size_t i = 0; i < kCount; ++i) input[i] = static_cast<float>(i % 1000);
  check_ok(devrt::copy(devrt::host_span(input.data(), kCount * 4), send->span(), *stream), label + ": upload");
  struct Step {
    const char* name;
    devrt::Status (*run)(Communicator&, const Buffer&, const Buffer&, std::size_t, devrt::StreamRef);
  };
  const Step steps[] = {
      {"all_reduce", [](Communicator& c, const Buffer& s, const Buffer& r, std::size_t n,
                        devrt::StreamRef st) { return c.all_reduce(s, r, n, DataType::float32(), ReduceOp::sum, st); }},
      {"all_gather", [](Communicator& c, const Buffer& s, const Buffer& r, std::size_t n,
                        devrt::StreamRef st) { return c.all_gather(s, r, n, DataType::float32(), st); }},
      {"reduce_scatter",
       [](Communicator& c, const Buffer& s, const Buffer& r, std::size_t n, devrt::StreamRef st) {
         return c.reduce_scatter(s, r, n, DataType::float32(), ReduceOp::max, st);
       }},
      {"broadcast", [](Communicator& c, const Buffer& s, const Buffer& r, std::size_t n,
                       devrt::StreamRef st) { return c.broadcast(s, r, n, DataType::float32(), 0, st); }},
      {"reduce", [](Communicator& c, const Buffer& s, const Buffer& r, std::size_t n,
                    devrt::StreamRef st) { return c.reduce(s, r, n, DataType::float32(), ReduceOp::avg, 0, st); }},
  };
  for (const Step& step : steps) {
    std::vector<float> output(kCount, -1.0f);
    check_ok(devrt::copy(devrt::host_span(output.data(), kCount * 4), recv->span(), *stream), label + ": clear");
    check_ok(step.run(comm, *send, *recv, kCount, *stream), label + ": " + step.name);
    check_ok(comm.synchronize(*stream), label + ": synchronize after " + step.name);
    check_ok(devrt::copy(recv->span(), devrt::host_span(output.data(), kCount * 4), *stream), label + ": download");
    check_ok(stream->synchronize(), label + ": stream synchronize");
    check(output == input, label + ": " + step.name + " of one rank leaves recv == send");
  }
  check_ok(comm.barrier(*stream), label + ": barrier");
}

} // namespace

int main(int argc, char** argv) {
  const bool require =
      std::getenv("DEVRT_REQUIRE_GPU") != nullptr && std::strcmp(std::getenv("DEVRT_REQUIRE_GPU"), "1") == 0;
  devrt::Device gpu{devrt::DeviceKind::cuda, 0};
  if (auto backend = devrt::backend_for(gpu); !backend.ok()) {
    std::printf("%s: no CUDA device: %s\n", require ? "FAILED" : "SKIP",
                std::string(backend.status().message()).c_str());
    return require ? 1 : 77;
  }
  auto nccl = devrt::comm::probe_engine(devrt::comm::Engine::nccl);
  if (!nccl.ok()) {
    std::printf("%s: NCCL: %s\n", require ? "FAILED" : "SKIP", std::string(nccl.status().message()).c_str());
    return require ? 1 : 77;
  }
  std::printf("%s\n", nccl->c_str());

  auto local = Communicator::create_local(std::span<const devrt::Device>(&gpu, 1));
  check_ok(local.status(), "create_local(cuda:0)");
  if (local.ok()) run_operations((*local)[0], "nccl, device list");

  MPI_Init(&argc, &argv);
  auto bootstrapped = devrt::comm::create(MPI_COMM_WORLD, gpu);
  check_ok(bootstrapped.status(), "create(MPI_COMM_WORLD, cuda:0): NCCL with its id over MPI");
  if (bootstrapped.ok()) {
    check(bootstrapped->engine() == devrt::comm::Engine::nccl, "cuda picks nccl");
    run_operations(*bootstrapped, "nccl, MPI bootstrap");
  }
  auto staged = devrt::comm::create(MPI_COMM_WORLD, gpu, {.engine = devrt::comm::Engine::mpi});
  check_ok(staged.status(), "create(MPI_COMM_WORLD, cuda:0, engine mpi)");
  if (staged.ok()) run_operations(*staged, "mpi, staged CUDA buffers");
  if (bootstrapped.ok()) *bootstrapped = Communicator();
  if (staged.ok()) *staged = Communicator();
  MPI_Finalize();
  std::printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
