// SPDX-License-Identifier: Apache-2.0
// devrt_comm in one process, without mpirun: what each engine says about itself here, the
// errors before MPI is initialised, device lists, empty communicators, and a singleton
// communicator (MPI's blocking path, timeout 0) through every operation; the one rule for whether
// two ranges are the same memory, by each kind's capabilities.
//
// usage: comm-engines-test                 (everything above)
//        comm-engines-test --broken-nccl   (DEVRT_NCCL_LIBRARY names a library that is not NCCL)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <devrt/comm.hpp>
#include <devrt/devrt.hpp>

#include "comm/engine.hpp"

namespace {

using devrt::DataType;
using devrt::ErrorCode;
using devrt::Status;
using devrt::comm::Engine;
using devrt::comm::ReduceOp;

int g_checks = 0;
int g_failures = 0;

void check(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAILED %s\n", what.c_str());
  }
}

bool contains(const Status& status, const char* word) {
  return std::string(status.message()).find(word) != std::string::npos;
}

void check_error(const Status& status, ErrorCode code, std::initializer_list<const char*> words,
                 const std::string& what) {
  bool ok = status.code() == code;
  for (const char* word : words) ok = ok && contains(status, word);
  check(ok, what + ": got " + std::string(devrt::error_code_name(status.code())) + " \"" +
                std::string(status.message()) + "\"");
}

// NCCL and RCCL: available with a description, or unavailable naming the library and the way
// to point devrt at it. On this project's CI neither is installed.
void probe_vendor(Engine engine, const char* soname, const char* variable, const char* prefix, const char* driver) {
  auto probe = devrt::comm::probe_engine(engine);
  if (probe.ok()) {
    std::printf("%s: %s\n", std::string(devrt::comm::engine_name(engine)).c_str(), probe->c_str());
    check(probe->rfind(prefix, 0) == 0, "probe_engine describes the library");
  } else {
    std::printf("%s: unavailable: %s\n", std::string(devrt::comm::engine_name(engine)).c_str(),
                std::string(probe.status().message()).c_str());
    // Either the library is missing (where it was looked for), or it is there and the driver is
    // not (what the GPU backend says).
    bool installed = contains(probe.status(), "is installed but cannot run");
    if (installed) {
      check_error(probe.status(), ErrorCode::unavailable, {prefix, "cannot run", driver},
                  std::string("probe ") + soname);
    } else {
      check_error(probe.status(), ErrorCode::unavailable, {soname, variable}, std::string("probe ") + soname);
    }
  }
}

std::vector<std::string> g_warnings;
void keep_warning(devrt::LogLevel level, std::string_view message, void*) {
  if (level == devrt::LogLevel::warning) g_warnings.emplace_back(message);
}

// DEVRT_COMM_TIMEOUT_MS by the rule of every number variable (docs/environment.md): a bad value is a
// warning naming it and the default used, a good one the timeout of a communicator made without one.
void timeout_from_environment() {
  devrt::set_log_sink(&keep_warning, nullptr);
  ::setenv("DEVRT_COMM_TIMEOUT_MS", "10s", 1);
  auto bad = devrt::comm::create(MPI_COMM_WORLD, devrt::kHostDevice);
  check(bad.ok() && bad->timeout() == devrt::comm::kDefaultTimeout, "a bad DEVRT_COMM_TIMEOUT_MS: the default");
  check(g_warnings.size() == 1 &&
            g_warnings[0].find("DEVRT_COMM_TIMEOUT_MS=10s is not a whole number from 0 to") != std::string::npos &&
            g_warnings[0].find("; using 600000") != std::string::npos,
        "a bad DEVRT_COMM_TIMEOUT_MS is named with the default used");
  ::setenv("DEVRT_COMM_TIMEOUT_MS", "2500", 1);
  auto good = devrt::comm::create(MPI_COMM_WORLD, devrt::kHostDevice);
  check(good.ok() && good->timeout() == std::chrono::milliseconds(2500), "DEVRT_COMM_TIMEOUT_MS=2500 is the timeout");
  ::unsetenv("DEVRT_COMM_TIMEOUT_MS");
  devrt::set_log_sink(nullptr);
}

void singleton_operations() {
  auto created = devrt::comm::create(MPI_COMM_WORLD, devrt::kHostDevice, {.timeout = std::chrono::milliseconds(0)});
  check(created.ok(), "create on MPI_COMM_WORLD of one rank: " + std::string(created.status().message()));
  if (!created.ok()) return;
  devrt::comm::Communicator comm = std::move(created).value();
  check(comm.size() == 1 && comm.rank() == 0 && comm.timeout().count() == 0, "singleton rank, size and timeout");
  check(comm.native_handle() != nullptr, "native_handle is the duplicate MPI_Comm");
  std::vector<float> a{1, 2, 3, 4};
  std::vector<float> b(4, 0);
  auto span = [](std::vector<float>& v) { return devrt::host_span(v.data(), v.size() * sizeof(float)); };
  check(comm.all_reduce(span(a), span(b), 4, DataType::float32(), ReduceOp::avg).ok() && b == a,
        "all_reduce of one rank");
  b.assign(4, 0);
  check(comm.all_gather(span(a), span(b), 4, DataType::float32()).ok() && b == a, "all_gather of one rank");
  b.assign(4, 0);
  check(comm.reduce_scatter(span(a), span(b), 4, DataType::float32(), ReduceOp::max).ok() && b == a,
        "reduce_scatter of one rank");
  b.assign(4, 0);
  check(comm.broadcast(span(a), span(b), 4, DataType::float32(), 0).ok() && b == a, "broadcast of one rank");
  b.assign(4, 0);
  check(comm.reduce(span(a), span(b), 4, DataType::float32(), ReduceOp::min, 0).ok() && b == a, "reduce of one rank");
  check(comm.all_reduce(span(a), span(a), 4, DataType::float32(), ReduceOp::prod).ok() && a[3] == 4,
        "in-place all_reduce of one rank");
  check(comm.barrier().ok(), "barrier of one rank");
  check(comm.synchronize().ok(), "synchronize");
  check_error(comm.send(span(a), 4, DataType::float32(), 0), ErrorCode::invalid_argument,
              {"send(rank 0 of 1", "itself"}, "send to itself");
  check_error(comm.recv(span(a), 4, DataType::float32(), 1), ErrorCode::out_of_range, {"peer must be a rank in [0, 1)"},
              "recv from a rank that does not exist");
  devrt::Device missing{devrt::DeviceKind::cpu, 7};
  check_error(devrt::comm::create(MPI_COMM_WORLD, missing).status(), ErrorCode::invalid_argument, {"cpu:7"},
              "create on a device that does not exist");
  check_error(devrt::comm::create(MPI_COMM_NULL, devrt::kHostDevice).status(), ErrorCode::invalid_argument,
              {"MPI_COMM_NULL"}, "create on MPI_COMM_NULL");
  // A CUDA device: here the CUDA backend has no driver, and that is what the error says.
  auto cuda = devrt::comm::create(MPI_COMM_WORLD, devrt::Device{devrt::DeviceKind::cuda, 0});
  if (!cuda.ok()) {
    std::printf("create on cuda:0: %s\n", std::string(cuda.status().message()).c_str());
    check(cuda.status().code() == ErrorCode::unavailable || cuda.status().code() == ErrorCode::invalid_argument,
          "create on cuda:0 without a GPU says why");
    check(contains(cuda.status(), "cuda"), "the reason names cuda");
  }
}

} // namespace

// Handles (OpenCL, Vulkan, WebGPU) are compared as handles: two allocations whose handle values
// lie within a buffer's size of each other are not one memory. Addresses (the CPU) are positions.
void same_memory_rule() {
  using devrt::comm::detail::Range;
  auto fake = [](devrt::DeviceKind kind, std::uintptr_t value, std::size_t offset) {
    return Range{devrt::MemorySpan{devrt::Device{kind, 0}, reinterpret_cast<void*>(value), 256}, offset, 64};
  };
  for (devrt::DeviceKind kind : {devrt::DeviceKind::opencl, devrt::DeviceKind::vulkan, devrt::DeviceKind::webgpu}) {
    const std::string name(devrt::device_kind_name(kind));
    std::uintptr_t a = 0, b = 0;
    check(!devrt::comm::detail::same_memory(fake(kind, 0x1000, 0), fake(kind, 0x1040, 0), a, b),
          name + ": two handles 64 apart are two allocations");
    check(devrt::comm::detail::same_memory(fake(kind, 0x1000, 0), fake(kind, 0x1000, 32), a, b) && a == 0 && b == 32,
          name + ": one handle, positions are its offsets");
  }
  std::uintptr_t a = 0, b = 0;
  check(devrt::comm::detail::same_memory(fake(devrt::DeviceKind::cpu, 0x1000, 0),
                                         fake(devrt::DeviceKind::cpu, 0x1040, 0), a, b) &&
            b - a == 0x40,
        "cpu: addresses are positions");
  check(!devrt::comm::detail::same_memory(fake(devrt::DeviceKind::vulkan, 0x1000, 0),
                                          fake(devrt::DeviceKind::opencl, 0x1000, 0), a, b),
        "different devices are different memory");
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--broken-nccl") == 0) {
    auto probe = devrt::comm::probe_engine(Engine::nccl);
    std::printf("nccl: %s\n", std::string(probe.status().message()).c_str());
    check_error(probe.status(), ErrorCode::unavailable, {"lacks ncclGetVersion", "not an NCCL-compatible library"},
                "a library that is not NCCL is refused by name");
    check_error(devrt::comm::Group(Engine::nccl).end(), ErrorCode::unavailable, {"lacks"}, "Group on a broken NCCL");
    std::printf("%d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
  }

  same_memory_rule();

  // Before MPI_Init.
  check_error(devrt::comm::probe_engine(Engine::mpi).status(), ErrorCode::unavailable, {"not initialised", "MPI_Init"},
              "probe mpi before MPI_Init");
  check_error(devrt::comm::create(MPI_COMM_WORLD, devrt::kHostDevice).status(), ErrorCode::unavailable,
              {"devrt::comm::create", "not initialised"}, "create before MPI_Init");
  check_error(devrt::comm::probe_engine(Engine::automatic).status(), ErrorCode::invalid_argument, {"automatic"},
              "probe automatic");
  probe_vendor(Engine::nccl, "libnccl.so.2", "DEVRT_NCCL_LIBRARY", "NCCL ", "cuda");
  probe_vendor(Engine::rccl, "librccl.so.1", "DEVRT_RCCL_LIBRARY", "RCCL ", "rocm");

  // Device lists.
  devrt::Device two_cpus[] = {devrt::kHostDevice, devrt::kHostDevice};
  check_error(devrt::comm::Communicator::create_local(two_cpus).status(), ErrorCode::unsupported, {"mpirun", "cpu"},
              "create_local on CPUs");
  check_error(devrt::comm::Communicator::create_local({}).status(), ErrorCode::invalid_argument, {"no devices"},
              "create_local on no devices");
  devrt::Device mixed[] = {devrt::Device{devrt::DeviceKind::cuda, 0}, devrt::kHostDevice};
  check_error(devrt::comm::Communicator::create_local(mixed).status(), ErrorCode::invalid_argument, {"different kinds"},
              "create_local on mixed kinds");
  check(devrt::comm::Group(Engine::mpi).end().ok(), "a group is a no-op for MPI");

  // An empty communicator refuses every call.
  devrt::comm::Communicator empty;
  check(!empty.valid() && empty.size() == 0 && empty.rank() == -1, "an empty communicator");
  check_error(empty.barrier(), ErrorCode::invalid_argument, {"barrier", "empty"}, "barrier on an empty communicator");
  check_error(empty.all_reduce(devrt::MemorySpan{}, devrt::MemorySpan{}, 1, DataType::float32(), ReduceOp::sum),
              ErrorCode::invalid_argument, {"all_reduce", "empty"}, "all_reduce on an empty communicator");

  MPI_Init(&argc, &argv);
  auto mpi = devrt::comm::probe_engine(Engine::mpi);
  check(mpi.ok() && mpi->find("MPI") != std::string::npos, "probe mpi after MPI_Init");
  if (mpi.ok()) std::printf("mpi: %s\n", mpi->c_str());
  singleton_operations();
  timeout_from_environment();
  MPI_Finalize();
  std::printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
