// SPDX-License-Identifier: Apache-2.0
// Collectives over a group of ranks, one device per rank, driven by the engines people already run
// at scale: NCCL for CUDA devices, RCCL for ROCm devices, MPI for CPU memory and, by staging
// through host memory, for every other kind (see docs/collectives.md). Part of devrt_comm.
//
// A Communicator is made from an MPI communicator (devrt/comm/mpi.hpp: MPI is the bootstrap and
// the launcher) or, for one process driving several local GPUs, from a list of devices. Its
// operations take device memory (a MemorySpan or Buffer with a byte offset, or a Tensor) and are
// ordered on a devrt stream of the communicator's device.
#ifndef DEVRT_COMM_COMMUNICATOR_HPP
#define DEVRT_COMM_COMMUNICATOR_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/device.hpp>
#include <devrt/dtype.hpp>
#include <devrt/memory.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>
#include <devrt/tensor.hpp>

namespace devrt::comm {

enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };

// Which library carries the data. `automatic` picks by the device's kind: cuda -> nccl,
// rocm -> rccl, every other kind -> mpi (cpu memory directly, other kinds staged through host
// memory).
enum class Engine : std::uint8_t { automatic, mpi, nccl, rccl };

// Stable lower-case names ("all_reduce" is an operation; these are "sum", "nccl"). Thread-safe.
std::string_view reduce_op_name(ReduceOp op) noexcept;
std::string_view engine_name(Engine engine) noexcept;

// Whether `engine` can run in this process, and which library and version would: ok with a line
// such as "NCCL 2.21.5 (/opt/venv/.../nvidia/nccl/lib/libnccl.so.2)", else `unavailable` with
// every place searched and why each failed. The first call for nccl/rccl opens the library (see
// docs/collectives.md for the search path). `automatic` is invalid_argument. Thread-safe.
Result<std::string> probe_engine(Engine engine) noexcept;

// How long an operation waits for the other ranks before it fails with `timed_out` (and the
// communicator with it), unless the environment's DEVRT_COMM_TIMEOUT_MS says otherwise.
inline constexpr std::chrono::milliseconds kDefaultTimeout{std::chrono::minutes(10)};

struct Options {
  Engine engine = Engine::automatic;
  // 0 waits forever: MPI then uses its blocking calls (its own algorithm choice, no polling).
  // Negative: kDefaultTimeout, or DEVRT_COMM_TIMEOUT_MS when set.
  std::chrono::milliseconds timeout{-1};
};

// A byte position in device memory: `span` from `offset`. Operations read or write
// count * dtype.size_bytes() bytes there (per rank for all_gather's output and reduce_scatter's
// input: count * size() bytes). Two ranges over the same memory are the same range when their
// data and offset agree. A plain value.
struct DeviceRange {
  MemorySpan span;
  std::size_t offset = 0;

  DeviceRange() noexcept = default;
  DeviceRange(const MemorySpan& memory, std::size_t byte_offset = 0) noexcept : span(memory), offset(byte_offset) {}
  DeviceRange(const Buffer& buffer, std::size_t byte_offset = 0) noexcept : span(buffer.span()), offset(byte_offset) {}
};

namespace detail {
class Engine;
} // namespace detail

// One rank's end of a group. Move-only; destroying it frees the engine's communicator
// (MPI_Comm_free, ncclCommDestroy), or, once it has failed, leaves the engine's state to the end
// of the process (a collective a dead peer never joined cannot be cancelled).
//
// Thread-safety: one thread at a time per Communicator, as with MPI and NCCL communicators; all
// ranks must issue the same collectives in the same order.
//
// In-place use (NCCL's rules): all_reduce, broadcast and reduce are in place when send and recv
// are the same range; all_gather when send is recv at byte offset rank * count * dtype size;
// reduce_scatter when recv is send at that offset. Any other overlap is invalid_argument.
//
// Completion: an operation is ordered on `stream` (default: the calling thread's current stream
// of the communicator's device), after the work queued there before it. NCCL and RCCL only
// enqueue: call synchronize() (which applies the timeout) rather than devrt::synchronize, whose
// wait on a dead peer would never end. MPI operations, staged or not, are complete on return.
//
// Errors name the operation, rank, group size, engine, device, count and dtype:
// "all_reduce(rank 1 of 4, mpi on opencl:0, 1024 x float32, sum): ...". A `timed_out` or an
// engine error fails the communicator: every later call returns `unavailable` naming the first
// failure. Argument errors (`invalid_argument`, `out_of_range`, `unsupported`) leave it usable.
class Communicator {
public:
  Communicator() noexcept;
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  ~Communicator();

  // One communicator per device of this process, rank i on devices[i] (ncclCommInitAll): every
  // device cuda (NCCL) or every device rocm (RCCL). Use group() to issue one operation on all of
  // them from one thread. Other kinds are `unsupported`: run one process per device under mpirun.
  static Result<std::vector<Communicator>> create_local(std::span<const Device> devices, Options options = {}) noexcept;

  bool valid() const noexcept { return engine_ != nullptr; }
  int rank() const noexcept;
  int size() const noexcept;
  Device device() const noexcept;
  Engine engine() const noexcept;
  std::chrono::milliseconds timeout() const noexcept;
  // 0 waits forever. Takes effect from the next operation.
  void set_timeout(std::chrono::milliseconds timeout) noexcept;
  // ok, or the error that failed the communicator.
  Status failure() const noexcept;

  // recv = op over ranks of send, `count` elements.
  Status all_reduce(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype, ReduceOp op,
                    StreamRef stream = {}) noexcept;
  // recv (count * size() elements) = every rank's send (count elements) in rank order.
  Status all_gather(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype,
                    StreamRef stream = {}) noexcept;
  // recv (count elements) = block `rank` of op over ranks of send (count * size() elements).
  Status reduce_scatter(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype,
                        ReduceOp op, StreamRef stream = {}) noexcept;
  // recv on every rank = send on `root` (send is read on root only).
  Status broadcast(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype, int root,
                   StreamRef stream = {}) noexcept;
  // recv on `root` = op over ranks of send (recv is written on root only).
  Status reduce(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype, ReduceOp op,
                int root, StreamRef stream = {}) noexcept;
  // Point to point; `peer` must call the matching recv/send with the same count and dtype.
  Status send(const DeviceRange& data, std::size_t count, DataType dtype, int peer, StreamRef stream = {}) noexcept;
  Status recv(const DeviceRange& data, std::size_t count, DataType dtype, int peer, StreamRef stream = {}) noexcept;
  // Returns once every rank has called barrier (host-blocking on every engine).
  Status barrier(StreamRef stream = {}) noexcept;

  // Tensor forms: contiguous tensors on the communicator's device; count and dtype are the
  // tensors' (all_gather: recv has size() times send's elements; reduce_scatter the reverse).
  Status all_reduce(const Tensor& send, const Tensor& recv, ReduceOp op, StreamRef stream = {}) noexcept;
  Status all_gather(const Tensor& send, const Tensor& recv, StreamRef stream = {}) noexcept;
  Status reduce_scatter(const Tensor& send, const Tensor& recv, ReduceOp op, StreamRef stream = {}) noexcept;
  Status broadcast(const Tensor& send, const Tensor& recv, int root, StreamRef stream = {}) noexcept;
  Status reduce(const Tensor& send, const Tensor& recv, ReduceOp op, int root, StreamRef stream = {}) noexcept;
  Status send(const Tensor& data, int peer, StreamRef stream = {}) noexcept;
  Status recv(const Tensor& data, int peer, StreamRef stream = {}) noexcept;

  // Waits for this communicator's work queued on `stream`, up to the timeout; on NCCL/RCCL also
  // reports the engine's asynchronous errors, and aborts the communicator on timeout.
  Status synchronize(StreamRef stream = {}) noexcept;

  // The engine's own handle (MPI_Comm of the communicator's duplicate, ncclComm_t), for calls
  // devrt does not wrap. Owned by the Communicator.
  void* native_handle() const noexcept;

  explicit Communicator(std::unique_ptr<detail::Engine> engine) noexcept;

private:
  std::unique_ptr<detail::Engine> engine_;
};

// Brackets operations on several communicators issued from one thread (ncclGroupStart/End): the
// operations of local communicators must be issued inside one, or the first one waits forever for
// ranks the thread has not reached yet. end() returns the engine's verdict. No-op for MPI.
// Not thread-safe; one group per thread at a time.
class Group {
public:
  explicit Group(Engine engine) noexcept;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group();
  Status end() noexcept;

private:
  Engine engine_;
  bool open_ = false;
  Status started_;
};

} // namespace devrt::comm

#endif // DEVRT_COMM_COMMUNICATOR_HPP
