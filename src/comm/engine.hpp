// SPDX-License-Identifier: Apache-2.0
// What a collectives engine implements for devrt_comm's Communicator. The Communicator checks
// every argument and names the call in errors; an engine receives only valid, resolved calls.
// Not public API.
#ifndef DEVRT_SRC_COMM_ENGINE_HPP
#define DEVRT_SRC_COMM_ENGINE_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <devrt/backend/registry.hpp>
#include <devrt/comm/communicator.hpp>

namespace devrt::comm::detail {

enum class Operation : std::uint8_t { all_reduce, all_gather, reduce_scatter, broadcast, reduce, send, recv, barrier };

std::string_view operation_name(Operation op) noexcept;

// A checked byte range: [offset, offset + bytes) lies inside span. bytes == 0 when the rank does
// not use it (broadcast's send off the root, reduce's recv off the root, barrier).
struct Range {
  MemorySpan span;
  std::size_t offset = 0;
  std::size_t bytes = 0;

  // Host address of the first byte; only for host-accessible spans.
  std::byte* host() const noexcept { return static_cast<std::byte*>(span.data) + offset; }
};

// One operation, as every rank's engine sees it.
struct Call {
  Operation op = Operation::barrier;
  std::size_t count = 0; // elements per rank (all_gather's send, reduce_scatter's recv)
  DataType dtype;
  ReduceOp reduce = ReduceOp::sum;
  int root = 0; // broadcast/reduce root; send/recv peer
  Range send;   // what this rank reads
  Range recv;   // what this rank writes
  bool in_place = false;
  StreamRef stream; // on the communicator's device
};

class Engine {
public:
  Engine(int rank, int size, Device device, comm::Engine kind, std::chrono::milliseconds timeout) noexcept
      : rank_(rank), size_(size), device_(device), kind_(kind), timeout_(timeout) {}
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  virtual ~Engine() = default;

  // Unsupported combinations of operation, dtype and reduction, with the reason; checked before
  // run().
  virtual Status supports(const Call& call) const noexcept = 0;
  // Runs or enqueues the call. A timed_out or engine failure makes the Communicator failed.
  virtual Status run(const Call& call) noexcept = 0;
  virtual Status synchronize(StreamRef stream) noexcept = 0;
  virtual void* native_handle() const noexcept = 0;
  // Called once the communicator has failed: the engine must not wait on its peers again, and
  // its destructor must not free what pending operations still use.
  virtual void mark_failed() noexcept {}

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  Device device() const noexcept { return device_; }
  comm::Engine kind() const noexcept { return kind_; }
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }
  const Status& failure() const noexcept { return failure_; }
  void set_failure(Status failure) noexcept { failure_ = static_cast<Status&&>(failure); }

private:
  int rank_;
  int size_;
  Device device_;
  comm::Engine kind_;
  std::chrono::milliseconds timeout_;
  Status failure_;
};

// Whether two ranges lie in one allocation, and if so their positions in a common numbering
// (addresses where the backend's spans are addresses, else offsets within one handle: OpenCL,
// Vulkan, WebGPU). The backend's capabilities decide, never the device kind. Both paths that care
// (the overlap check and MPI's staging) use this one rule.
bool same_memory(const Range& a, const Range& b, std::uintptr_t& a_position, std::uintptr_t& b_position) noexcept;

// Memory the host reads and writes through its address: the kind's backend says
// DEVRT_CAP_HOST_ACCESSIBLE (cpu, cuda_host).
bool host_accessible(DeviceKind kind) noexcept;

// Options::timeout resolved: a negative value becomes DEVRT_COMM_TIMEOUT_MS or kDefaultTimeout.
std::chrono::milliseconds resolve_timeout(std::chrono::milliseconds requested) noexcept;

// The engine `requested` resolves to for `device` (automatic: by kind).
comm::Engine resolve_engine(comm::Engine requested, Device device) noexcept;

// NCCL/RCCL (nccl_engine.cpp). The unique id is made on rank 0 and handed to every rank by the
// caller through `exchange` (MPI_Bcast for create(MPI_Comm, ...)).
using UniqueIdExchange = Status (*)(void* context, void* id, std::size_t bytes) noexcept;
Result<std::unique_ptr<Engine>> create_nccl_engine(comm::Engine kind, int rank, int size, Device device,
                                                   std::chrono::milliseconds timeout, UniqueIdExchange exchange,
                                                   void* exchange_context) noexcept;
Result<std::vector<Communicator>> create_local_nccl(comm::Engine kind, std::span<const Device> devices,
                                                    std::chrono::milliseconds timeout) noexcept;
Result<std::string> probe_nccl(comm::Engine kind) noexcept;
// The MPI library's version line, or unavailable when MPI is not initialised (mpi_engine.cpp).
Result<std::string> probe_mpi() noexcept;
Status nccl_group_start(comm::Engine kind) noexcept;
Status nccl_group_end(comm::Engine kind) noexcept;

// The elementwise reductions MPI lacks (avg; float16 and bfloat16) on host memory (reduce.cpp).
// divide_in_place: data[i] /= divisor for `count` elements of `dtype` (avg after sum).
void divide_in_place(std::byte* data, std::size_t count, DataType dtype, int divisor) noexcept;
// inout[i] = op(in[i], inout[i]) for 16-bit floats (float16 or bfloat16), computed in float.
void reduce_half(const void* in, void* inout, std::size_t count, bool bfloat, ReduceOp op) noexcept;

} // namespace devrt::comm::detail

#endif // DEVRT_SRC_COMM_ENGINE_HPP
