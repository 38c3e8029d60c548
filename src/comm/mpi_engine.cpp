// SPDX-License-Identifier: Apache-2.0
// The MPI engine: CPU memory directly, every other device kind staged through host memory, and
// the bootstrap of every communicator made from an MPI communicator (NCCL's unique id included).
//
// With a timeout every operation is MPI's nonblocking form, driven by MPI_Test until it completes
// or the deadline passes (a dead peer cannot be detected otherwise: a blocking MPI call never
// returns). With timeout 0 the blocking forms run, with MPI's own algorithm choice.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <devrt/comm/mpi.hpp>

#include "comm/engine.hpp"

namespace devrt::comm::detail {
namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

[[gnu::cold]] Status mpi_error(const char* call, int code) {
  return make_error(ErrorCode::driver_error, call, " failed: ", mpi_error_text(code), " (MPI error ", code, ")");
}

// Drives `request` to completion, or returns timed_out at the deadline (the request stays
// pending: MPI cannot cancel a collective). The analyzer's MPI checker cannot follow a request
// into this function, nor accept one left pending on purpose.
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
Status wait(MPI_Request& request, std::chrono::milliseconds timeout, const char* call) {
  if (timeout.count() == 0) {
    int rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? Status{} : mpi_error(call, rc);
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (unsigned spins = 0;; ++spins) {
    int done = 0;
    int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_error(call, rc);
    if (done != 0) return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      return make_error(ErrorCode::timed_out, call, " got no answer from the other ranks within ", timeout.count(),
                        " ms: a peer has exited, hangs, or issues collectives in another order. The communicator "
                        "is failed; end the job (MPI_Abort) or start a new one");
    }
    // Yield once spinning is clearly not enough: oversubscribed ranks must let their peers run.
    if (spins > 4096) std::this_thread::yield();
  }
}
// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

// The predefined MPI type that reduces elements of `dtype`'s scalar type, or MPI_DATATYPE_NULL.
// float16 and bfloat16 travel as MPI_UINT16_T with devrt's own reduction operators.
MPI_Datatype reduction_type(DataType dtype) noexcept {
  switch (dtype.code) {
  case DataTypeCode::signed_int:
    switch (dtype.bits) {
    case 8: return MPI_INT8_T;
    case 16: return MPI_INT16_T;
    case 32: return MPI_INT32_T;
    case 64: return MPI_INT64_T;
    default: return MPI_DATATYPE_NULL;
    }
  case DataTypeCode::unsigned_int:
    switch (dtype.bits) {
    case 8: return MPI_UINT8_T;
    case 16: return MPI_UINT16_T;
    case 32: return MPI_UINT32_T;
    case 64: return MPI_UINT64_T;
    default: return MPI_DATATYPE_NULL;
    }
  case DataTypeCode::floating:
    switch (dtype.bits) {
    case 16: return MPI_UINT16_T;
    case 32: return MPI_FLOAT;
    case 64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
  case DataTypeCode::bfloat: return dtype.bits == 16 ? MPI_UINT16_T : MPI_DATATYPE_NULL;
  default: return MPI_DATATYPE_NULL;
  }
}

bool is_half(DataType dtype) noexcept {
  return dtype.bits == 16 && (dtype.code == DataTypeCode::floating || dtype.code == DataTypeCode::bfloat);
}

template <bool Bfloat, ReduceOp Op>
void half_operator(void* in, void* inout, int* length, MPI_Datatype* /*type*/) {
  reduce_half(in, inout, static_cast<std::size_t>(*length), Bfloat, Op);
}

// devrt's float16/bfloat16 reductions as MPI operators, created once per process.
struct HalfOperators {
  MPI_Op ops[2][4] = {};
  int error = MPI_SUCCESS;
};

const HalfOperators& half_operators() {
  static HalfOperators operators;
  static std::once_flag once;
  std::call_once(once, [] {
    MPI_User_function* functions[2][4] = {
        {&half_operator<false, ReduceOp::sum>, &half_operator<false, ReduceOp::prod>,
         &half_operator<false, ReduceOp::min>, &half_operator<false, ReduceOp::max>},
        {&half_operator<true, ReduceOp::sum>, &half_operator<true, ReduceOp::prod>, &half_operator<true, ReduceOp::min>,
         &half_operator<true, ReduceOp::max>},
    };
    for (int kind = 0; kind < 2; ++kind) {
      for (int op = 0; op < 4; ++op) {
        int rc = MPI_Op_create(functions[kind][op], 1, &operators.ops[kind][op]);
        if (rc != MPI_SUCCESS) operators.error = rc;
      }
    }
  });
  return operators;
}

// avg is a sum followed by a division.
int op_index(ReduceOp op) noexcept { return op == ReduceOp::avg ? 0 : static_cast<int>(op); }

Status reduction_op(DataType dtype, ReduceOp reduce, MPI_Op& op) {
  if (is_half(dtype)) {
    const HalfOperators& operators = half_operators();
    if (operators.error != MPI_SUCCESS) return mpi_error("MPI_Op_create", operators.error);
    op = operators.ops[dtype.code == DataTypeCode::bfloat ? 1 : 0][op_index(reduce)];
    return {};
  }
  static const MPI_Op predefined[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
  op = predefined[op_index(reduce)];
  return {};
}

bool is_reduction(Operation op) noexcept {
  return op == Operation::all_reduce || op == Operation::reduce_scatter || op == Operation::reduce;
}

class MpiEngine final : public Engine {
public:
  MpiEngine(MPI_Comm comm, int rank, int size, Device device, std::chrono::milliseconds timeout) noexcept
      : Engine(rank, size, device, comm::Engine::mpi, timeout), comm_(comm) {}

  ~MpiEngine() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // A failed communicator may have requests pending on its types and its communicator.
    if (finalized != 0 || failed_) return;
    for (auto& [bytes, type] : element_types_) MPI_Type_free(&type);
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  Status supports(const Call& call) const noexcept override {
    std::size_t elements = call.count * call.dtype.lanes;
    if (call.count > static_cast<std::size_t>(INT32_MAX) || elements > static_cast<std::size_t>(INT32_MAX)) {
      return make_error(ErrorCode::unsupported, "MPI counts are int: at most ", INT32_MAX,
                        " elements per call; split the call");
    }
    if (is_reduction(call.op) && reduction_type(call.dtype) == MPI_DATATYPE_NULL) {
      return make_error(ErrorCode::unsupported,
                        "the mpi engine reduces signed and unsigned integers of 8 to 64 bits, float16, bfloat16, "
                        "float32 and float64; moving (all_gather, broadcast, send, recv) takes any type");
    }
    return {};
  }

  Status run(const Call& call) noexcept override {
    if (host_accessible(device().kind)) {
      // Work queued on the stream before the call writes or reads these bytes.
      DEVRT_RETURN_IF_ERROR(devrt::synchronize(call.stream));
      return run_host(call, call.send.host(), call.recv.host());
    }
    return run_staged(call);
  }

  Status synchronize(StreamRef stream) noexcept override { return devrt::synchronize(stream); }
  void* native_handle() const noexcept override { return static_cast<void*>(comm_); }
  void mark_failed() noexcept override { failed_ = true; }

  // Runs `call` as one MPI call on host memory: blocking with no timeout, else nonblocking
  // completed by wait().
  template <class Blocking, class Nonblocking>
  Status issue(const char* blocking_name, const char* nonblocking_name, Blocking blocking, Nonblocking nonblocking) {
    if (timeout().count() == 0) {
      int rc = blocking();
      return rc == MPI_SUCCESS ? Status{} : mpi_error(blocking_name, rc);
    }
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = nonblocking(&request);
    if (rc != MPI_SUCCESS) return mpi_error(nonblocking_name, rc); // NOLINT(clang-analyzer-optin.mpi.MPI-Checker)
    return wait(request, timeout(), nonblocking_name);             // NOLINT(clang-analyzer-optin.mpi.MPI-Checker)
  }

private:
  // A contiguous type of one element (all lanes) for operations that only move bytes.
  Status element_type(DataType dtype, MPI_Datatype& out) {
    std::size_t bytes = dtype.size_bytes();
    for (auto& [size, type] : element_types_) {
      if (size == bytes) {
        out = type;
        return {};
      }
    }
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (int rc = MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type); rc != MPI_SUCCESS) {
      return mpi_error("MPI_Type_contiguous", rc);
    }
    if (int rc = MPI_Type_commit(&type); rc != MPI_SUCCESS) return mpi_error("MPI_Type_commit", rc);
    element_types_.emplace_back(bytes, type);
    out = type;
    return {};
  }

  Status run_host(const Call& call, std::byte* send, std::byte* recv) {
    int count = static_cast<int>(call.count);
    int elements = static_cast<int>(call.count * call.dtype.lanes);
    void* send_or_in_place = call.in_place ? MPI_IN_PLACE : static_cast<void*>(send);
    MPI_Comm comm = comm_;
    if (is_reduction(call.op)) {
      MPI_Datatype type = reduction_type(call.dtype);
      MPI_Op op = MPI_OP_NULL;
      DEVRT_RETURN_IF_ERROR(reduction_op(call.dtype, call.reduce, op));
      Status status;
      std::byte* result = recv;
      if (call.op == Operation::all_reduce) {
        status = issue(
            "MPI_Allreduce", "MPI_Iallreduce",
            [&] { return MPI_Allreduce(send_or_in_place, recv, elements, type, op, comm); },
            [&](MPI_Request* r) { return MPI_Iallreduce(send_or_in_place, recv, elements, type, op, comm, r); });
      } else if (call.op == Operation::reduce_scatter) {
        // In place, MPI leaves the block at the start of the input; NCCL's layout wants it at
        // the rank's block, which recv points to.
        std::byte* out = call.in_place ? send : recv;
        status = issue(
            "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block",
            [&] { return MPI_Reduce_scatter_block(send_or_in_place, out, elements, type, op, comm); },
            [&](MPI_Request* r) {
              return MPI_Ireduce_scatter_block(send_or_in_place, out, elements, type, op, comm, r);
            });
        if (status.ok() && out != recv) std::memmove(recv, out, call.recv.bytes);
      } else {
        bool root = call.root == rank();
        void* reduce_send = root && call.in_place ? MPI_IN_PLACE : static_cast<void*>(send);
        void* reduce_recv = root ? static_cast<void*>(recv) : nullptr;
        status = issue(
            "MPI_Reduce", "MPI_Ireduce",
            [&] { return MPI_Reduce(reduce_send, reduce_recv, elements, type, op, call.root, comm); },
            [&](MPI_Request* r) {
              return MPI_Ireduce(reduce_send, reduce_recv, elements, type, op, call.root, comm, r);
            });
        if (!root) result = nullptr;
      }
      if (status.ok() && call.reduce == ReduceOp::avg && result != nullptr) {
        divide_in_place(result, static_cast<std::size_t>(elements), call.dtype, size());
      }
      return status;
    }
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (call.op != Operation::barrier) {
      DEVRT_RETURN_IF_ERROR(element_type(call.dtype, type));
    }
    switch (call.op) {
    case Operation::all_gather:
      return issue(
          "MPI_Allgather", "MPI_Iallgather",
          [&] { return MPI_Allgather(send_or_in_place, count, type, recv, count, type, comm); },
          [&](MPI_Request* r) { return MPI_Iallgather(send_or_in_place, count, type, recv, count, type, comm, r); });
    case Operation::broadcast:
      if (call.root == rank() && !call.in_place) std::memcpy(recv, send, call.recv.bytes);
      return issue(
          "MPI_Bcast", "MPI_Ibcast", [&] { return MPI_Bcast(recv, count, type, call.root, comm); },
          [&](MPI_Request* r) { return MPI_Ibcast(recv, count, type, call.root, comm, r); });
    case Operation::send:
      return issue(
          "MPI_Send", "MPI_Isend", [&] { return MPI_Send(send, count, type, call.root, 0, comm); },
          [&](MPI_Request* r) { return MPI_Isend(send, count, type, call.root, 0, comm, r); });
    case Operation::recv:
      return issue(
          "MPI_Recv", "MPI_Irecv", [&] { return MPI_Recv(recv, count, type, call.root, 0, comm, MPI_STATUS_IGNORE); },
          [&](MPI_Request* r) { return MPI_Irecv(recv, count, type, call.root, 0, comm, r); });
    case Operation::barrier:
      return issue(
          "MPI_Barrier", "MPI_Ibarrier", [&] { return MPI_Barrier(comm); },
          [&](MPI_Request* r) { return MPI_Ibarrier(comm, r); });
    default: return make_error(ErrorCode::internal, "mpi engine: unexpected operation");
    }
  }

  // Device memory of a kind MPI cannot address: copied to host memory (the stream's work before
  // it finished first), reduced or moved there, copied back. Complete on return.
  Status run_staged(const Call& call) {
    const Range& send = call.send;
    const Range& recv = call.recv;
    // One host region when send and recv overlap (their relative positions kept, so in-place
    // layouts stay in place), else two.
    std::size_t send_at = 0;
    std::size_t recv_at = 0;
    std::size_t total = 0;
    std::uintptr_t send_position = 0;
    std::uintptr_t recv_position = 0;
    if (send.bytes != 0 && recv.bytes != 0 && same_memory(send, recv, send_position, recv_position) &&
        send_position < recv_position + recv.bytes && recv_position < send_position + send.bytes) {
      std::uintptr_t low = std::min(send_position, recv_position);
      send_at = send_position - low;
      recv_at = recv_position - low;
      total = std::max(send_position + send.bytes, recv_position + recv.bytes) - low;
    } else {
      recv_at = (send.bytes + 63) / 64 * 64;
      total = recv_at + recv.bytes;
    }
    if (staging_.size() < total) staging_.resize(total);
    std::byte* host = staging_.data();
    if (send.bytes != 0) {
      if (Status status =
              copy(send.span, send.offset, host_span(host + send_at, send.bytes), 0, send.bytes, call.stream);
          !status.ok()) {
        return make_error(status.code(), "staging through host memory, device to host: ", status.message());
      }
    }
    DEVRT_RETURN_IF_ERROR(devrt::synchronize(call.stream));
    DEVRT_RETURN_IF_ERROR(run_host(call, host + send_at, host + recv_at));
    if (recv.bytes == 0) return {};
    if (Status status = copy(host_span(host + recv_at, recv.bytes), 0, recv.span, recv.offset, recv.bytes, call.stream);
        !status.ok()) {
      return make_error(status.code(), "staging through host memory, host to device: ", status.message());
    }
    return devrt::synchronize(call.stream);
  }

  MPI_Comm comm_;
  bool failed_ = false;
  std::vector<std::pair<std::size_t, MPI_Datatype>> element_types_;
  std::vector<std::byte> staging_;
};

Status check_mpi_ready(const char* call) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized == 0) {
    return make_error(ErrorCode::unavailable, call, ": MPI is not initialised in this process (call MPI_Init or ",
                      "MPI_Init_thread first, and launch with mpirun or srun)");
  }
  if (finalized != 0) return make_error(ErrorCode::unavailable, call, ": MPI is already finalised");
  return {};
}

// NCCL/RCCL's unique id from rank 0 to every rank over the duplicate communicator.
struct IdExchange {
  MpiEngine* bootstrap;
};

Status broadcast_id(void* context, void* id, std::size_t bytes) noexcept {
  MpiEngine& engine = *static_cast<IdExchange*>(context)->bootstrap;
  MPI_Comm comm = static_cast<MPI_Comm>(engine.native_handle());
  int count = static_cast<int>(bytes);
  return engine.issue(
      "MPI_Bcast", "MPI_Ibcast", [&] { return MPI_Bcast(id, count, MPI_BYTE, 0, comm); },
      [&](MPI_Request* r) { return MPI_Ibcast(id, count, MPI_BYTE, 0, comm, r); });
}

} // namespace

Result<std::string> probe_mpi() noexcept {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<std::size_t>(length));
  text = text.substr(0, text.find_first_of(",\n"));
  if (Status status = check_mpi_ready("mpi engine"); !status.ok()) {
    return make_error(status.code(), text, ": ", status.message());
  }
  return text;
}

} // namespace devrt::comm::detail

namespace devrt::comm {

Result<Communicator> create(MPI_Comm comm, Device device, Options options) noexcept {
  DEVRT_RETURN_IF_ERROR(detail::check_mpi_ready("devrt::comm::create"));
  if (comm == MPI_COMM_NULL)
    return make_error(ErrorCode::invalid_argument, "devrt::comm::create: comm is MPI_COMM_NULL");
  if (Result<BackendRef> backend = backend_for(device); !backend.ok()) {
    return make_error(backend.status().code(), "devrt::comm::create(", device, "): ", backend.status().message());
  }
  Engine kind = detail::resolve_engine(options.engine, device);
  std::chrono::milliseconds timeout = detail::resolve_timeout(options.timeout);
  if ((kind == Engine::nccl && device.kind != DeviceKind::cuda) ||
      (kind == Engine::rccl && device.kind != DeviceKind::rocm)) {
    return make_error(ErrorCode::invalid_argument, "devrt::comm::create(", device, "): ", engine_name(kind), " serves ",
                      kind == Engine::nccl ? "cuda" : "rocm", " devices only");
  }
  MPI_Comm duplicate = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  if (int rc = MPI_Comm_idup(comm, &duplicate, &request); rc != MPI_SUCCESS) {
    return detail::mpi_error("devrt::comm::create: MPI_Comm_idup", rc);
  }
  DEVRT_RETURN_IF_ERROR(detail::wait(request, timeout, "devrt::comm::create: MPI_Comm_idup"));
  MPI_Comm_set_errhandler(duplicate, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(duplicate, &rank);
  MPI_Comm_size(duplicate, &size);
  auto engine = std::make_unique<detail::MpiEngine>(duplicate, rank, size, device, timeout);
  if (kind == Engine::mpi) return Communicator(std::move(engine));
  detail::IdExchange exchange{engine.get()};
  Result<std::unique_ptr<detail::Engine>> nccl =
      detail::create_nccl_engine(kind, rank, size, device, timeout, &detail::broadcast_id, &exchange);
  if (!nccl.ok()) {
    return make_error(nccl.status().code(), "devrt::comm::create(rank ", rank, " of ", size, ", ", engine_name(kind),
                      " on ", device, "): ", nccl.status().message());
  }
  return Communicator(std::move(nccl).value());
}

} // namespace devrt::comm
