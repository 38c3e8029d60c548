// SPDX-License-Identifier: Apache-2.0
// The Communicator: checks every argument once, for every engine, and names the call in errors.
#include <cstdlib>
#include <string>

#include <devrt/comm/communicator.hpp>

#include "comm/engine.hpp"
#include "support/environment.hpp"

namespace devrt::comm {
namespace detail {

std::string_view operation_name(Operation op) noexcept {
  switch (op) {
  case Operation::all_reduce: return "all_reduce";
  case Operation::all_gather: return "all_gather";
  case Operation::reduce_scatter: return "reduce_scatter";
  case Operation::broadcast: return "broadcast";
  case Operation::reduce: return "reduce";
  case Operation::send: return "send";
  case Operation::recv: return "recv";
  case Operation::barrier: return "barrier";
  }
  return "unknown";
}

std::chrono::milliseconds resolve_timeout(std::chrono::milliseconds requested) noexcept {
  if (requested.count() >= 0) return requested;
  // Read when a communicator is made, as MPI and NCCL read theirs.
  const auto fallback = static_cast<std::uint64_t>(kDefaultTimeout.count());
  return std::chrono::milliseconds(
      static_cast<std::int64_t>(::devrt::detail::read_number_env("DEVRT_COMM_TIMEOUT_MS", fallback)));
}

bool same_memory(const Range& a, const Range& b, std::uintptr_t& a_position, std::uintptr_t& b_position) noexcept {
  if (a.span.device != b.span.device) return false;
  const BackendRef backend = Registry::global().find(a.span.device.kind);
  const bool addresses = backend && backend.spans_are_addresses();
  if (!addresses && a.span.data != b.span.data) return false;
  a_position = (addresses ? reinterpret_cast<std::uintptr_t>(a.span.data) : 0) + a.offset;
  b_position = (addresses ? reinterpret_cast<std::uintptr_t>(b.span.data) : 0) + b.offset;
  return true;
}

bool host_accessible(DeviceKind kind) noexcept {
  BackendRef backend = Registry::global().find(kind);
  return backend && backend.host_accessible();
}

comm::Engine resolve_engine(comm::Engine requested, Device device) noexcept {
  if (requested != comm::Engine::automatic) return requested;
  switch (device.kind) {
  case DeviceKind::cuda: return comm::Engine::nccl;
  case DeviceKind::rocm: return comm::Engine::rccl;
  default: return comm::Engine::mpi;
  }
}

} // namespace detail

namespace {

using detail::Call;
using detail::Operation;
using detail::Range;

// "all_reduce(rank 1 of 4, mpi on opencl:0, 1024 x float32, sum)"
std::string describe(const detail::Engine& engine, const Call& call) {
  std::string text(detail::operation_name(call.op));
  text += "(rank " + std::to_string(engine.rank()) + " of " + std::to_string(engine.size()) + ", ";
  text += engine_name(engine.kind());
  text += " on ";
  text += device_kind_name(engine.device().kind);
  text += ":" + std::to_string(engine.device().id);
  if (call.op != Operation::barrier) {
    text += ", " + std::to_string(call.count) + " x " + to_string(call.dtype);
  }
  if (call.op == Operation::all_reduce || call.op == Operation::reduce_scatter || call.op == Operation::reduce) {
    text += ", ";
    text += reduce_op_name(call.reduce);
  }
  if (call.op == Operation::broadcast || call.op == Operation::reduce) text += ", root " + std::to_string(call.root);
  if (call.op == Operation::send || call.op == Operation::recv) text += ", peer " + std::to_string(call.root);
  return text + ")";
}

[[gnu::cold]] Status call_error(const detail::Engine& engine, const Call& call, ErrorCode code, std::string_view what) {
  return make_error(code, describe(engine, call), ": ", what);
}

[[gnu::cold]] Status invalid_communicator(std::string_view op) {
  return make_error(ErrorCode::invalid_argument, op, ": the communicator is empty (default-constructed or moved from)");
}

// a * b, or false when it overflows size_t.
bool multiply(std::size_t a, std::size_t b, std::size_t& out) noexcept { return !__builtin_mul_overflow(a, b, &out); }

// Checks one range the call uses (bytes > 0) and resolves it.
Status resolve_range(const detail::Engine& engine, const Call& call, const char* role, const DeviceRange& range,
                     std::size_t bytes, Range& out) {
  out = Range{range.span, range.offset, bytes};
  if (bytes == 0) return {};
  if (range.span.data == nullptr)
    return call_error(engine, call, ErrorCode::invalid_argument, std::string(role) + " memory is null");
  if (range.span.device != engine.device()) {
    return call_error(engine, call, ErrorCode::invalid_argument,
                      std::string(role) + " memory is on " + std::string(device_kind_name(range.span.device.kind)) +
                          ":" + std::to_string(range.span.device.id) + ", not on the communicator's device");
  }
  if (range.offset > range.span.size || bytes > range.span.size - range.offset) {
    return call_error(engine, call, ErrorCode::out_of_range,
                      std::string(role) + " needs bytes [" + std::to_string(range.offset) + ", " +
                          std::to_string(range.offset) + " + " + std::to_string(bytes) + ") of a " +
                          std::to_string(range.span.size) + "-byte span");
  }
  return {};
}

// In place when recv starts where the operation's rule says; any other overlap is refused.
Status classify_overlap(const detail::Engine& engine, Call& call) {
  if (call.send.bytes == 0 || call.recv.bytes == 0) return {};
  std::uintptr_t send_start = 0;
  std::uintptr_t recv_start = 0;
  if (!detail::same_memory(call.send, call.recv, send_start, recv_start)) return {};
  std::uintptr_t rank_offset = 0;
  const char* rule = "send and recv are the same range";
  switch (call.op) {
  case Operation::all_gather:
    rank_offset = static_cast<std::uintptr_t>(call.send.bytes) * static_cast<std::uintptr_t>(engine.rank());
    call.in_place = send_start == recv_start + rank_offset;
    rule = "send is recv at byte offset rank * count * element size";
    break;
  case Operation::reduce_scatter:
    rank_offset = static_cast<std::uintptr_t>(call.recv.bytes) * static_cast<std::uintptr_t>(engine.rank());
    call.in_place = recv_start == send_start + rank_offset;
    rule = "recv is send at byte offset rank * count * element size";
    break;
  default: call.in_place = send_start == recv_start; break;
  }
  if (call.in_place) return {};
  bool disjoint = send_start + call.send.bytes <= recv_start || recv_start + call.recv.bytes <= send_start;
  if (disjoint) return {};
  return call_error(engine, call, ErrorCode::invalid_argument,
                    "send and recv overlap without being in place (in place means " + std::string(rule) + ")");
}

} // namespace

std::string_view reduce_op_name(ReduceOp op) noexcept {
  switch (op) {
  case ReduceOp::sum: return "sum";
  case ReduceOp::prod: return "prod";
  case ReduceOp::min: return "min";
  case ReduceOp::max: return "max";
  case ReduceOp::avg: return "avg";
  }
  return "unknown";
}

std::string_view engine_name(Engine engine) noexcept {
  switch (engine) {
  case Engine::automatic: return "automatic";
  case Engine::mpi: return "mpi";
  case Engine::nccl: return "nccl";
  case Engine::rccl: return "rccl";
  }
  return "unknown";
}

Result<std::string> probe_engine(Engine engine) noexcept {
  switch (engine) {
  case Engine::nccl:
  case Engine::rccl: return detail::probe_nccl(engine);
  case Engine::mpi: break;
  case Engine::automatic:
    return make_error(ErrorCode::invalid_argument, "probe_engine: name an engine (mpi, nccl or rccl), not automatic");
  }
  return detail::probe_mpi();
}

Communicator::Communicator() noexcept = default;
Communicator::Communicator(std::unique_ptr<detail::Engine> engine) noexcept : engine_(std::move(engine)) {}
Communicator::Communicator(Communicator&& other) noexcept = default;
Communicator& Communicator::operator=(Communicator&& other) noexcept = default;
Communicator::~Communicator() = default;

Result<std::vector<Communicator>> Communicator::create_local(std::span<const Device> devices,
                                                             Options options) noexcept {
  if (devices.empty()) return make_error(ErrorCode::invalid_argument, "Communicator::create_local: no devices");
  Engine engine = detail::resolve_engine(options.engine, devices[0]);
  for (const Device& device : devices) {
    if (detail::resolve_engine(options.engine, device) != engine || device.kind != devices[0].kind) {
      return make_error(ErrorCode::invalid_argument, "Communicator::create_local: devices ", devices[0], " and ",
                        device, " are of different kinds; one engine serves the whole group");
    }
  }
  if (engine == Engine::mpi) {
    return make_error(ErrorCode::unsupported, "Communicator::create_local(", devices[0],
                      ", ...): one process driving several devices needs NCCL (cuda) or RCCL (rocm); for ",
                      device_kind_name(devices[0].kind),
                      " devices run one rank per device under mpirun and use devrt::comm::create(MPI_Comm, ...)");
  }
  return detail::create_local_nccl(engine, devices, detail::resolve_timeout(options.timeout));
}

int Communicator::rank() const noexcept { return engine_ ? engine_->rank() : -1; }
int Communicator::size() const noexcept { return engine_ ? engine_->size() : 0; }
Device Communicator::device() const noexcept { return engine_ ? engine_->device() : Device{}; }
Engine Communicator::engine() const noexcept { return engine_ ? engine_->kind() : Engine::automatic; }
std::chrono::milliseconds Communicator::timeout() const noexcept {
  return engine_ ? engine_->timeout() : std::chrono::milliseconds(0);
}
void Communicator::set_timeout(std::chrono::milliseconds timeout) noexcept {
  if (engine_) engine_->set_timeout(timeout.count() < 0 ? detail::resolve_timeout(timeout) : timeout);
}
Status Communicator::failure() const noexcept {
  if (!engine_) return invalid_communicator("Communicator::failure");
  return engine_->failure();
}
void* Communicator::native_handle() const noexcept { return engine_ ? engine_->native_handle() : nullptr; }

namespace {

// Checks a call and runs it on `engine`; the one path every operation takes.
Status submit(detail::Engine& engine, Call& call, const DeviceRange& send, std::size_t send_bytes,
              const DeviceRange& recv, std::size_t recv_bytes) {
  if (!engine.failure().ok()) {
    return call_error(engine, call, ErrorCode::unavailable,
                      "the communicator failed earlier: " + std::string(engine.failure().message()));
  }
  if (call.op != Operation::barrier) {
    if (Status status = check_data_type(call.dtype); !status.ok()) {
      return call_error(engine, call, ErrorCode::invalid_argument, status.message());
    }
  }
  if (call.stream == StreamRef{}) {
    call.stream = current_stream(engine.device());
  } else if (call.stream.device != engine.device()) {
    return call_error(engine, call, ErrorCode::invalid_argument,
                      "the stream belongs to " + std::string(device_kind_name(call.stream.device.kind)) + ":" +
                          std::to_string(call.stream.device.id) + ", not to the communicator's device");
  }
  DEVRT_RETURN_IF_ERROR(resolve_range(engine, call, "send", send, send_bytes, call.send));
  DEVRT_RETURN_IF_ERROR(resolve_range(engine, call, "recv", recv, recv_bytes, call.recv));
  DEVRT_RETURN_IF_ERROR(classify_overlap(engine, call));
  if (Status status = engine.supports(call); !status.ok())
    return call_error(engine, call, status.code(), status.message());
  if (call.count == 0 && call.op != Operation::barrier) return {};
  Status status = engine.run(call);
  if (status.ok()) return status;
  Status named = call_error(engine, call, status.code(), status.message());
  engine.set_failure(named);
  engine.mark_failed();
  return named;
}

// count * element size (* size() for the gathered side), or an out_of_range error.
Status byte_sizes(const detail::Engine& engine, const Call& call, std::size_t& element_bytes,
                  std::size_t& group_bytes) {
  std::size_t element = call.dtype.size_bytes();
  if (!multiply(call.count, element, element_bytes) ||
      !multiply(element_bytes, static_cast<std::size_t>(engine.size()), group_bytes)) {
    return call_error(engine, call, ErrorCode::out_of_range, "the byte size overflows");
  }
  return {};
}

Status check_rank(const detail::Engine& engine, const Call& call, const char* role) {
  if (call.root < 0 || call.root >= engine.size()) {
    return call_error(engine, call, ErrorCode::out_of_range,
                      std::string(role) + " must be a rank in [0, " + std::to_string(engine.size()) + ")");
  }
  if ((call.op == Operation::send || call.op == Operation::recv) && call.root == engine.rank()) {
    return call_error(engine, call, ErrorCode::invalid_argument, "a rank cannot send to or receive from itself");
  }
  return {};
}

} // namespace

Status Communicator::all_reduce(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype,
                                ReduceOp op, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("all_reduce");
  Call call{Operation::all_reduce, count, dtype, op, 0, {}, {}, false, stream};
  std::size_t bytes = 0;
  std::size_t group = 0;
  DEVRT_RETURN_IF_ERROR(byte_sizes(*engine_, call, bytes, group));
  return submit(*engine_, call, send, bytes, recv, bytes);
}

Status Communicator::all_gather(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype,
                                StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("all_gather");
  Call call{Operation::all_gather, count, dtype, ReduceOp::sum, 0, {}, {}, false, stream};
  std::size_t bytes = 0;
  std::size_t group = 0;
  DEVRT_RETURN_IF_ERROR(byte_sizes(*engine_, call, bytes, group));
  return submit(*engine_, call, send, bytes, recv, group);
}

Status Communicator::reduce_scatter(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype,
                                    ReduceOp op, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("reduce_scatter");
  Call call{Operation::reduce_scatter, count, dtype, op, 0, {}, {}, false, stream};
  std::size_t bytes = 0;
  std::size_t group = 0;
  DEVRT_RETURN_IF_ERROR(byte_sizes(*engine_, call, bytes, group));
  return submit(*engine_, call, send, group, recv, bytes);
}

Status Communicator::broadcast(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype,
                               int root, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("broadcast");
  Call call{Operation::broadcast, count, dtype, ReduceOp::sum, root, {}, {}, false, stream};
  std::size_t bytes = 0;
  std::size_t group = 0;
  DEVRT_RETURN_IF_ERROR(byte_sizes(*engine_, call, bytes, group));
  DEVRT_RETURN_IF_ERROR(check_rank(*engine_, call, "root"));
  return submit(*engine_, call, send, root == engine_->rank() ? bytes : 0, recv, bytes);
}

Status Communicator::reduce(const DeviceRange& send, const DeviceRange& recv, std::size_t count, DataType dtype,
                            ReduceOp op, int root, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("reduce");
  Call call{Operation::reduce, count, dtype, op, root, {}, {}, false, stream};
  std::size_t bytes = 0;
  std::size_t group = 0;
  DEVRT_RETURN_IF_ERROR(byte_sizes(*engine_, call, bytes, group));
  DEVRT_RETURN_IF_ERROR(check_rank(*engine_, call, "root"));
  return submit(*engine_, call, send, bytes, recv, root == engine_->rank() ? bytes : 0);
}

Status Communicator::send(const DeviceRange& data, std::size_t count, DataType dtype, int peer,
                          StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("send");
  Call call{Operation::send, count, dtype, ReduceOp::sum, peer, {}, {}, false, stream};
  std::size_t bytes = 0;
  std::size_t group = 0;
  DEVRT_RETURN_IF_ERROR(byte_sizes(*engine_, call, bytes, group));
  DEVRT_RETURN_IF_ERROR(check_rank(*engine_, call, "peer"));
  return submit(*engine_, call, data, bytes, DeviceRange{}, 0);
}

Status Communicator::recv(const DeviceRange& data, std::size_t count, DataType dtype, int peer,
                          StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("recv");
  Call call{Operation::recv, count, dtype, ReduceOp::sum, peer, {}, {}, false, stream};
  std::size_t bytes = 0;
  std::size_t group = 0;
  DEVRT_RETURN_IF_ERROR(byte_sizes(*engine_, call, bytes, group));
  DEVRT_RETURN_IF_ERROR(check_rank(*engine_, call, "peer"));
  return submit(*engine_, call, DeviceRange{}, 0, data, bytes);
}

Status Communicator::barrier(StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("barrier");
  Call call{Operation::barrier, 0, DataType::uint8(), ReduceOp::sum, 0, {}, {}, false, stream};
  return submit(*engine_, call, DeviceRange{}, 0, DeviceRange{}, 0);
}

Status Communicator::synchronize(StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("synchronize");
  if (stream == StreamRef{}) stream = current_stream(engine_->device());
  if (!engine_->failure().ok()) {
    return make_error(ErrorCode::unavailable,
                      "synchronize: the communicator failed earlier: ", engine_->failure().message());
  }
  Status status = engine_->synchronize(stream);
  if (!status.ok() && status.code() != ErrorCode::invalid_argument) {
    engine_->set_failure(status);
    engine_->mark_failed();
  }
  return status;
}

// ---- Tensors --------------------------------------------------------------------------------

namespace {

// A contiguous tensor of the communicator's device as a range; `written` tensors may not be
// read-only.
Status tensor_range(const Communicator& comm, std::string_view op, const char* role, const Tensor& tensor, bool written,
                    DeviceRange& out) {
  if (!tensor.defined()) return make_error(ErrorCode::invalid_argument, op, ": the ", role, " tensor is undefined");
  if (!tensor.is_contiguous()) {
    return make_error(ErrorCode::unsupported, op, ": the ", role,
                      " tensor is strided; collectives take contiguous tensors");
  }
  if (written && tensor.read_only())
    return make_error(ErrorCode::invalid_argument, op, ": the ", role, " tensor is read-only");
  if (tensor.device() != comm.device()) {
    return make_error(ErrorCode::invalid_argument, op, ": the ", role, " tensor is on ", tensor.device(),
                      ", the communicator on ", comm.device());
  }
  out = DeviceRange(tensor.storage_span(), static_cast<std::size_t>(tensor.byte_offset()));
  return {};
}

// send and recv ranges of two tensors of one dtype whose element counts are recv = send * ratio
// (ratio 0: send = recv * size()).
Status tensor_pair(const Communicator& comm, std::string_view op, const Tensor& send, const Tensor& recv, int ratio,
                   DeviceRange& send_range, DeviceRange& recv_range) {
  DEVRT_RETURN_IF_ERROR(tensor_range(comm, op, "send", send, false, send_range));
  DEVRT_RETURN_IF_ERROR(tensor_range(comm, op, "recv", recv, true, recv_range));
  if (send.dtype() != recv.dtype()) {
    return make_error(ErrorCode::invalid_argument, op, ": send is ", send.dtype(), " but recv is ", recv.dtype());
  }
  std::int64_t expected_recv = ratio > 0 ? send.numel() * ratio : send.numel() / comm.size();
  bool consistent = ratio > 0 || send.numel() % comm.size() == 0;
  if (!consistent || recv.numel() != expected_recv) {
    return make_error(ErrorCode::invalid_argument, op, ": send has ", send.numel(), " elements and recv ", recv.numel(),
                      "; with ", comm.size(), " ranks recv must have ",
                      ratio == 1  ? "as many"
                      : ratio > 1 ? "size() times as many"
                                  : "1/size() as many");
  }
  return {};
}

} // namespace

Status Communicator::all_reduce(const Tensor& send, const Tensor& recv, ReduceOp op, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("all_reduce");
  DeviceRange s;
  DeviceRange r;
  DEVRT_RETURN_IF_ERROR(tensor_pair(*this, "all_reduce", send, recv, 1, s, r));
  return all_reduce(s, r, static_cast<std::size_t>(send.numel()), send.dtype(), op, stream);
}

Status Communicator::all_gather(const Tensor& send, const Tensor& recv, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("all_gather");
  DeviceRange s;
  DeviceRange r;
  DEVRT_RETURN_IF_ERROR(tensor_pair(*this, "all_gather", send, recv, size(), s, r));
  return all_gather(s, r, static_cast<std::size_t>(send.numel()), send.dtype(), stream);
}

Status Communicator::reduce_scatter(const Tensor& send, const Tensor& recv, ReduceOp op, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("reduce_scatter");
  DeviceRange s;
  DeviceRange r;
  DEVRT_RETURN_IF_ERROR(tensor_pair(*this, "reduce_scatter", send, recv, 0, s, r));
  return reduce_scatter(s, r, static_cast<std::size_t>(recv.numel()), recv.dtype(), op, stream);
}

Status Communicator::broadcast(const Tensor& send, const Tensor& recv, int root, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("broadcast");
  DeviceRange s;
  DeviceRange r;
  DEVRT_RETURN_IF_ERROR(tensor_pair(*this, "broadcast", send, recv, 1, s, r));
  return broadcast(s, r, static_cast<std::size_t>(recv.numel()), recv.dtype(), root, stream);
}

Status Communicator::reduce(const Tensor& send, const Tensor& recv, ReduceOp op, int root, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("reduce");
  DeviceRange s;
  DeviceRange r;
  DEVRT_RETURN_IF_ERROR(tensor_pair(*this, "reduce", send, recv, 1, s, r));
  return reduce(s, r, static_cast<std::size_t>(send.numel()), send.dtype(), op, root, stream);
}

Status Communicator::send(const Tensor& data, int peer, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("send");
  DeviceRange range;
  DEVRT_RETURN_IF_ERROR(tensor_range(*this, "send", "send", data, false, range));
  return send(range, static_cast<std::size_t>(data.numel()), data.dtype(), peer, stream);
}

Status Communicator::recv(const Tensor& data, int peer, StreamRef stream) noexcept {
  if (!engine_) return invalid_communicator("recv");
  DeviceRange range;
  DEVRT_RETURN_IF_ERROR(tensor_range(*this, "recv", "recv", data, true, range));
  return recv(range, static_cast<std::size_t>(data.numel()), data.dtype(), peer, stream);
}

// ---- Groups ---------------------------------------------------------------------------------

Group::Group(Engine engine) noexcept : engine_(engine) {
  if (engine_ == Engine::nccl || engine_ == Engine::rccl) {
    started_ = detail::nccl_group_start(engine_);
    open_ = started_.ok();
  }
}

Group::~Group() { static_cast<void>(end()); }

Status Group::end() noexcept {
  if (!started_.ok()) return started_;
  if (!open_) return {};
  open_ = false;
  return detail::nccl_group_end(engine_);
}

} // namespace devrt::comm
