// SPDX-License-Identifier: Apache-2.0
// Every collective, every dtype, in and out of place, on one device kind, under mpirun: each rank
// checks its results against a reference computed locally from every rank's known inputs.
//
// usage: mpirun -np N collectives-test <device>            (cpu:0, opencl:0, vulkan:0, ...)
//        mpirun -np N collectives-test <device> --peer-exits (the last rank exits early; the
//                                                              others must time out, not hang)
// Each rank ends by printing "rank R: passed" (run_mpi.py counts them) or its failures; a device
// that is not present here makes every rank exit 77 (skip) with the reason.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <devrt/backend/registry.hpp>
#include <devrt/comm.hpp>
#include <devrt/devrt.hpp>

namespace {

using devrt::Buffer;
using devrt::DataType;
using devrt::ErrorCode;
using devrt::Status;
using devrt::comm::Communicator;
using devrt::comm::DeviceRange;
using devrt::comm::ReduceOp;

int g_rank = 0;
int g_size = 1;
int g_checks = 0;
int g_failures = 0;

void check(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("rank %d: FAILED %s\n", g_rank, what.c_str());
  }
}

void check_ok(const Status& status, const std::string& what) {
  check(status.ok(), what + (status.ok() ? "" : ": " + std::string(status.message())));
}

void check_error(const Status& status, ErrorCode code, std::initializer_list<const char*> words,
                 const std::string& what) {
  bool ok = status.code() == code;
  for (const char* word : words) ok = ok && std::string(status.message()).find(word) != std::string::npos;
  check(ok, what + ": got " + std::string(devrt::error_code_name(status.code())) + " \"" +
                std::string(status.message()) + "\"");
}

// ---- Element encoding: the test's values are small integers and quarters, exact in every type.

std::uint16_t to_half(double value) {
  if (value == 0) return 0;
  std::uint16_t sign = value < 0 ? 0x8000 : 0;
  double magnitude = std::fabs(value);
  int exponent = static_cast<int>(std::floor(std::log2(magnitude)));
  auto mantissa = static_cast<std::uint16_t>(std::lround((magnitude / std::ldexp(1.0, exponent) - 1.0) * 1024));
  return static_cast<std::uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

double from_half(std::uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  double magnitude =
      exponent == 0 ? std::ldexp(bits & 0x3ff, -24) : std::ldexp(1.0 + (bits & 0x3ff) / 1024.0, exponent - 15);
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

template <class T>
void put(std::byte* at, T value) {
  std::memcpy(at, &value, sizeof value);
}
template <class T>
T get(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

void encode(double value, DataType dtype, std::byte* at) {
  switch (dtype.code) {
  case devrt::DataTypeCode::signed_int:
    if (dtype.bits == 8) put(at, static_cast<std::int8_t>(value));
    if (dtype.bits == 16) put(at, static_cast<std::int16_t>(value));
    if (dtype.bits == 32) put(at, static_cast<std::int32_t>(value));
    if (dtype.bits == 64) put(at, static_cast<std::int64_t>(value));
    return;
  case devrt::DataTypeCode::unsigned_int:
    if (dtype.bits == 8) put(at, static_cast<std::uint8_t>(value));
    if (dtype.bits == 16) put(at, static_cast<std::uint16_t>(value));
    if (dtype.bits == 32) put(at, static_cast<std::uint32_t>(value));
    if (dtype.bits == 64) put(at, static_cast<std::uint64_t>(value));
    return;
  case devrt::DataTypeCode::floating:
    if (dtype.bits == 16) put(at, to_half(value));
    if (dtype.bits == 32) put(at, static_cast<float>(value));
    if (dtype.bits == 64) put(at, value);
    return;
  case devrt::DataTypeCode::bfloat: {
    auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(value));
    put(at, static_cast<std::uint16_t>(bits >> 16));
    return;
  }
  case devrt::DataTypeCode::boolean: put(at, static_cast<std::uint8_t>(value != 0)); return;
  default: return;
  }
}

double decode(DataType dtype, const std::byte* at) {
  switch (dtype.code) {
  case devrt::DataTypeCode::signed_int:
    if (dtype.bits == 8) return get<std::int8_t>(at);
    if (dtype.bits == 16) return get<std::int16_t>(at);
    if (dtype.bits == 32) return get<std::int32_t>(at);
    return static_cast<double>(get<std::int64_t>(at));
  case devrt::DataTypeCode::unsigned_int:
    if (dtype.bits == 8) return get<std::uint8_t>(at);
    if (dtype.bits == 16) return get<std::uint16_t>(at);
    if (dtype.bits == 32) return get<std::uint32_t>(at);
    return static_cast<double>(get<std::uint64_t>(at));
  case devrt::DataTypeCode::floating:
    if (dtype.bits == 16) return from_half(get<std::uint16_t>(at));
    if (dtype.bits == 32) return get<float>(at);
    return get<double>(at);
  case devrt::DataTypeCode::bfloat:
    return std::bit_cast<float>(static_cast<std::uint32_t>(get<std::uint16_t>(at)) << 16);
  case devrt::DataTypeCode::boolean: return get<std::uint8_t>(at);
  default: return 0;
  }
}

// Rank r's input element i: 1, 2 or 3 (products of four ranks stay within int8).
double input(int rank, std::size_t i, DataType dtype) {
  if (dtype.code == devrt::DataTypeCode::boolean) return static_cast<double>((static_cast<std::size_t>(rank) + i) % 2);
  return 1.0 + static_cast<double>((static_cast<std::size_t>(rank) + i) % 3);
}

double reference(ReduceOp op, std::size_t i, DataType dtype) {
  double result = input(0, i, dtype);
  for (int r = 1; r < g_size; ++r) {
    double x = input(r, i, dtype);
    switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: result += x; break;
    case ReduceOp::prod: result *= x; break;
    case ReduceOp::min: result = std::min(result, x); break;
    case ReduceOp::max: result = std::max(result, x); break;
    }
  }
  if (op == ReduceOp::avg) {
    bool integer = dtype.code == devrt::DataTypeCode::signed_int || dtype.code == devrt::DataTypeCode::unsigned_int;
    result = integer ? std::trunc(result / g_size) : result / g_size;
  }
  return result;
}

std::string name(DataType dtype) { return devrt::to_string(dtype); }

// ---- Device memory helpers --------------------------------------------------------------

struct Fixture {
  Communicator& comm;
  devrt::Device device;
  devrt::StreamRef stream;
};

Buffer make_buffer(Fixture& f, std::size_t bytes) {
  devrt::Result<Buffer> buffer = Buffer::allocate(f.device, bytes == 0 ? 1 : bytes);
  if (!buffer.ok()) {
    std::printf("rank %d: cannot allocate %zu bytes: %s\n", g_rank, bytes,
                std::string(buffer.status().message()).c_str());
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return std::move(buffer).value();
}

void upload(Fixture& f, const Buffer& buffer, std::size_t offset, const std::vector<std::byte>& bytes) {
  check_ok(devrt::copy(devrt::host_span(bytes.data(), bytes.size()), 0, buffer.span(), offset, bytes.size(), f.stream),
           "upload");
  check_ok(devrt::synchronize(f.stream), "upload: synchronize");
}

std::vector<std::byte> download(Fixture& f, const Buffer& buffer, std::size_t offset, std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  check_ok(devrt::copy(buffer.span(), offset, devrt::host_span(out.data(), bytes), 0, bytes, f.stream), "download");
  check_ok(devrt::synchronize(f.stream), "download: synchronize");
  return out;
}

// `count` elements of rank `rank`'s input, starting at element `first`.
std::vector<std::byte> inputs(int rank, std::size_t first, std::size_t count, DataType dtype) {
  std::vector<std::byte> bytes(count * dtype.size_bytes());
  std::size_t scalars = dtype.lanes;
  for (std::size_t i = 0; i < count * scalars; ++i) {
    DataType scalar{dtype.code, dtype.bits, 1};
    encode(input(rank, first * scalars + i, dtype), scalar, bytes.data() + i * (dtype.bits / 8));
  }
  return bytes;
}

// Compares `bytes` (count elements from element `first` of the reference) with `expected(i)`.
template <class Expected>
void compare(const std::vector<std::byte>& bytes, std::size_t first, std::size_t count, DataType dtype,
             const std::string& what, Expected expected) {
  DataType scalar{dtype.code, dtype.bits, 1};
  std::size_t scalars = count * dtype.lanes;
  std::size_t wrong = 0;
  std::string example;
  for (std::size_t i = 0; i < scalars; ++i) {
    double got = decode(scalar, bytes.data() + i * (dtype.bits / 8));
    double want = expected(first * dtype.lanes + i);
    if (got != want) {
      if (wrong++ == 0)
        example = "element " + std::to_string(i) + " is " + std::to_string(got) + ", want " + std::to_string(want);
    }
  }
  check(wrong == 0, what + ": " + std::to_string(wrong) + " wrong elements, " + example);
}

constexpr std::size_t kCount = 37; // elements per rank: odd, so no size lines up by chance

// ---- Reductions -------------------------------------------------------------------------

void all_reduce_case(Fixture& f, DataType dtype, ReduceOp op, bool in_place, std::size_t count) {
  std::string what =
      "all_reduce " + name(dtype) + " " + std::string(reduce_op_name(op)) + (in_place ? " in place" : "");
  std::size_t bytes = count * dtype.size_bytes();
  Buffer send = make_buffer(f, bytes);
  Buffer recv = make_buffer(f, bytes);
  upload(f, send, 0, inputs(g_rank, 0, count, dtype));
  const Buffer& out = in_place ? send : recv;
  check_ok(f.comm.all_reduce(send, out, count, dtype, op, f.stream), what);
  compare(download(f, out, 0, bytes), 0, count, dtype, what, [&](std::size_t i) { return reference(op, i, dtype); });
}

void reduce_scatter_case(Fixture& f, DataType dtype, ReduceOp op, bool in_place) {
  std::string what =
      "reduce_scatter " + name(dtype) + " " + std::string(reduce_op_name(op)) + (in_place ? " in place" : "");
  std::size_t block = kCount * dtype.size_bytes();
  Buffer send = make_buffer(f, block * static_cast<std::size_t>(g_size));
  Buffer recv = make_buffer(f, block);
  upload(f, send, 0, inputs(g_rank, 0, kCount * static_cast<std::size_t>(g_size), dtype));
  std::size_t mine = block * static_cast<std::size_t>(g_rank);
  Status status = in_place ? f.comm.reduce_scatter(send, DeviceRange(send, mine), kCount, dtype, op, f.stream)
                           : f.comm.reduce_scatter(send, recv, kCount, dtype, op, f.stream);
  check_ok(status, what);
  std::vector<std::byte> got = in_place ? download(f, send, mine, block) : download(f, recv, 0, block);
  compare(got, kCount * static_cast<std::size_t>(g_rank), kCount, dtype, what,
          [&](std::size_t i) { return reference(op, i, dtype); });
}

void reduce_case(Fixture& f, DataType dtype, ReduceOp op, bool in_place) {
  int root = g_size - 1;
  std::string what = "reduce " + name(dtype) + " " + std::string(reduce_op_name(op)) + " root " + std::to_string(root) +
                     (in_place ? " in place" : "");
  std::size_t bytes = kCount * dtype.size_bytes();
  Buffer send = make_buffer(f, bytes);
  Buffer recv = make_buffer(f, bytes);
  upload(f, send, 0, inputs(g_rank, 0, kCount, dtype));
  const Buffer& out = in_place ? send : recv;
  check_ok(f.comm.reduce(send, out, kCount, dtype, op, root, f.stream), what);
  if (g_rank == root) {
    compare(download(f, out, 0, bytes), 0, kCount, dtype, what, [&](std::size_t i) { return reference(op, i, dtype); });
  } else if (!in_place) {
    // Off the root recv is not touched: it still holds what it held (zero-filled below).
    compare(download(f, send, 0, bytes), 0, kCount, dtype, what + " (send unchanged)",
            [&](std::size_t i) { return input(g_rank, i, dtype); });
  }
}

// ---- Moving data ------------------------------------------------------------------------

void all_gather_case(Fixture& f, DataType dtype, bool in_place) {
  std::string what = "all_gather " + name(dtype) + (in_place ? " in place" : "");
  std::size_t block = kCount * dtype.size_bytes();
  Buffer send = make_buffer(f, block);
  Buffer recv = make_buffer(f, block * static_cast<std::size_t>(g_size));
  std::size_t mine = block * static_cast<std::size_t>(g_rank);
  if (in_place) {
    upload(f, recv, mine, inputs(g_rank, 0, kCount, dtype));
    // On the CPU the rank's block is given as a span of its own (in place by address); elsewhere
    // as an offset into recv's handle.
    DeviceRange block_range =
        f.device.kind == devrt::DeviceKind::cpu
            ? DeviceRange(devrt::MemorySpan{f.device, static_cast<std::byte*>(recv.data()) + mine, block})
            : DeviceRange(recv, mine);
    check_ok(f.comm.all_gather(block_range, recv, kCount, dtype, f.stream), what);
  } else {
    upload(f, send, 0, inputs(g_rank, 0, kCount, dtype));
    check_ok(f.comm.all_gather(send, recv, kCount, dtype, f.stream), what);
  }
  std::vector<std::byte> got = download(f, recv, 0, block * static_cast<std::size_t>(g_size));
  std::size_t per_rank = kCount * dtype.lanes;
  compare(got, 0, kCount * static_cast<std::size_t>(g_size), dtype, what,
          [&](std::size_t i) { return input(static_cast<int>(i / per_rank), i % per_rank, dtype); });
}

void broadcast_case(Fixture& f, DataType dtype, bool in_place) {
  int root = 1 % g_size;
  std::string what = "broadcast " + name(dtype) + " root " + std::to_string(root) + (in_place ? " in place" : "");
  std::size_t bytes = kCount * dtype.size_bytes();
  Buffer send = make_buffer(f, bytes);
  Buffer recv = make_buffer(f, bytes);
  upload(f, send, 0, inputs(g_rank, 0, kCount, dtype));
  const Buffer& out = in_place ? send : recv;
  check_ok(f.comm.broadcast(send, out, kCount, dtype, root, f.stream), what);
  compare(download(f, out, 0, bytes), 0, kCount, dtype, what, [&](std::size_t i) { return input(root, i, dtype); });
}

// A ring: rank r sends to r+1 and receives from r-1 (even ranks send first, odd ranks receive
// first, as with blocking MPI_Send/MPI_Recv).
void send_recv_case(Fixture& f, DataType dtype) {
  if (g_size % 2 != 0) return;
  std::string what = "send/recv ring " + name(dtype);
  int next = (g_rank + 1) % g_size;
  int previous = (g_rank + g_size - 1) % g_size;
  std::size_t bytes = kCount * dtype.size_bytes();
  Buffer out = make_buffer(f, bytes);
  Buffer in = make_buffer(f, bytes);
  upload(f, out, 0, inputs(g_rank, 0, kCount, dtype));
  if (g_rank % 2 == 0) {
    check_ok(f.comm.send(out, kCount, dtype, next, f.stream), what + ": send");
    check_ok(f.comm.recv(in, kCount, dtype, previous, f.stream), what + ": recv");
  } else {
    check_ok(f.comm.recv(in, kCount, dtype, previous, f.stream), what + ": recv");
    check_ok(f.comm.send(out, kCount, dtype, next, f.stream), what + ": send");
  }
  compare(download(f, in, 0, bytes), 0, kCount, dtype, what, [&](std::size_t i) { return input(previous, i, dtype); });
}

void tensor_case(Fixture& f) {
  std::string what = "all_reduce on tensors";
  auto send = devrt::Tensor::empty({3, 5}, DataType::float32(), f.device);
  auto recv = devrt::Tensor::empty({3, 5}, DataType::float32(), f.device);
  check_ok(send.status(), what + ": Tensor::empty");
  if (!send.ok() || !recv.ok()) return;
  std::vector<std::byte> data = inputs(g_rank, 0, 15, DataType::float32());
  check_ok(send->copy_from_host(data.data(), data.size(), f.stream), what + ": copy_from_host");
  check_ok(f.comm.all_reduce(*send, *recv, ReduceOp::max, f.stream), what);
  std::vector<std::byte> got(data.size());
  check_ok(recv->copy_to_host(got.data(), got.size(), f.stream), what + ": copy_to_host");
  check_ok(devrt::synchronize(f.stream), what + ": synchronize");
  compare(got, 0, 15, DataType::float32(), what,
          [&](std::size_t i) { return reference(ReduceOp::max, i, DataType::float32()); });

  auto gathered = devrt::Tensor::empty({static_cast<std::int64_t>(g_size), 3, 5}, DataType::float32(), f.device);
  check_ok(gathered.status(), "Tensor::empty (gathered)");
  if (gathered.ok()) {
    check_ok(f.comm.all_gather(*send, *gathered, f.stream), "all_gather on tensors");
    check_error(f.comm.all_gather(*send, *recv, f.stream), ErrorCode::invalid_argument, {"all_gather", "15 elements"},
                "all_gather on tensors of the wrong sizes");
  }
}

// ---- Errors: every rank makes the same mistakes, so none waits on another -----------------

void error_cases(Fixture& f) {
  const std::size_t bytes = kCount * 4;
  Buffer a = make_buffer(f, bytes);
  Buffer b = make_buffer(f, bytes);
  std::string rank_words = "rank " + std::to_string(g_rank) + " of " + std::to_string(g_size);
  const char* rank_text = rank_words.c_str();

  check_error(f.comm.all_reduce(a, DeviceRange(b, 8), kCount, DataType::float32(), ReduceOp::sum, f.stream),
              ErrorCode::out_of_range, {"all_reduce(", rank_text, "37 x float32", "sum", "recv"},
              "recv range too small");
  check_error(f.comm.all_reduce(DeviceRange(a, 4), a, kCount - 1, DataType::float32(), ReduceOp::sum, f.stream),
              ErrorCode::invalid_argument, {"overlap", rank_text}, "overlapping send and recv");
  check_error(f.comm.broadcast(a, b, kCount, DataType::float32(), g_size, f.stream), ErrorCode::out_of_range,
              {"broadcast(", "root", rank_text}, "broadcast root out of range");
  check_error(f.comm.send(a, kCount, DataType::float32(), g_rank, f.stream), ErrorCode::invalid_argument,
              {"itself", "peer"}, "send to itself");
  check_error(f.comm.all_reduce(a, b, kCount, DataType::boolean(), ReduceOp::sum, f.stream), ErrorCode::unsupported,
              {"bool", "reduces"}, "sum of bool");
  check_error(f.comm.all_reduce(devrt::MemorySpan{f.device, nullptr, bytes}, b, kCount, DataType::float32(),
                                ReduceOp::sum, f.stream),
              ErrorCode::invalid_argument, {"null"}, "null send");
  check_error(f.comm.all_reduce(a, b, kCount, DataType{devrt::DataTypeCode::floating, 12, 1}, ReduceOp::sum, f.stream),
              ErrorCode::invalid_argument, {"all_reduce("}, "malformed dtype");
  check_error(f.comm.all_reduce(a, b, SIZE_MAX / 2, DataType::float32(), ReduceOp::sum, f.stream),
              ErrorCode::out_of_range, {"overflows"}, "huge count");
  check_ok(f.comm.all_reduce(a, b, 0, DataType::float32(), ReduceOp::sum, f.stream), "count 0 is a no-op");
  if (f.device.kind == devrt::DeviceKind::cpu) {
    // Host memory overlaps by address, whatever spans describe it.
    devrt::MemorySpan inner{f.device, static_cast<std::byte*>(a.data()) + 4, bytes - 4};
    check_error(f.comm.all_reduce(inner, a, kCount - 1, DataType::float32(), ReduceOp::sum, f.stream),
                ErrorCode::invalid_argument, {"overlap"}, "overlapping spans of one host array");
  }
  if (f.device.kind != devrt::DeviceKind::cpu) {
    std::vector<float> host(kCount);
    check_error(f.comm.all_reduce(devrt::host_span(host.data(), bytes), b, kCount, DataType::float32(), ReduceOp::sum,
                                  f.stream),
                ErrorCode::invalid_argument, {"send memory is on cpu:0"}, "host memory on a device communicator");
    auto host_stream = devrt::Stream::create(devrt::kHostDevice);
    check_ok(host_stream.status(), "a CPU stream");
    if (host_stream.ok()) {
      check_error(f.comm.all_reduce(a, b, kCount, DataType::float32(), ReduceOp::sum, host_stream->ref()),
                  ErrorCode::invalid_argument, {"the stream belongs to cpu:0"}, "stream of another device");
    }
  }
  check_ok(f.comm.failure(), "argument errors leave the communicator usable");
}

int peer_exits(Fixture& f) {
  f.comm.set_timeout(std::chrono::milliseconds(1500));
  check_ok(f.comm.barrier(f.stream), "barrier before the peer exits");
  if (g_rank == g_size - 1) {
    std::printf("rank %d: passed (exits now, without MPI_Finalize)\n", g_rank);
    std::fflush(stdout);
    _exit(0);
  }
  Buffer a = make_buffer(f, 64);
  auto start = std::chrono::steady_clock::now();
  Status status = f.comm.all_reduce(a, a, 16, DataType::float32(), ReduceOp::sum, f.stream);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string rank_words = "rank " + std::to_string(g_rank) + " of " + std::to_string(g_size);
  check_error(status, ErrorCode::timed_out, {"all_reduce(", rank_words.c_str(), "16 x float32", "1500 ms"},
              "all_reduce with a dead peer");
  check(seconds >= 1.4 && seconds < 10, "timed out after " + std::to_string(seconds) + " s (timeout 1.5 s)");
  check_error(f.comm.barrier(f.stream), ErrorCode::unavailable, {"failed earlier", "1500 ms"}, "the next call");
  check_error(f.comm.failure(), ErrorCode::timed_out, {}, "failure()");
  std::printf("rank %d: timed out after %.2f s: %s\n", g_rank, seconds, std::string(status.message()).c_str());
  std::printf("rank %d: %d checks, %d failed\n", g_rank, g_checks, g_failures);
  if (g_failures == 0) std::printf("rank %d: passed\n", g_rank);
  std::fflush(stdout);
  // The communicator cannot be freed nor MPI finalised with a collective pending: end here.
  _exit(g_failures == 0 ? 0 : 1);
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc < 2) {
    std::fprintf(stderr, "usage: collectives-test <device> [--peer-exits]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::string spec = argv[1];
  auto kind = devrt::parse_device_kind(spec.substr(0, spec.find(':')));
  devrt::Device device{kind.ok() ? *kind : devrt::DeviceKind::cpu,
                       spec.find(':') == std::string::npos ? 0 : std::stoi(spec.substr(spec.find(':') + 1))};
  if (auto backend = devrt::backend_for(device); !kind.ok() || !backend.ok()) {
    if (g_rank == 0) {
      std::printf("SKIP: %s is not available here: %s\n", spec.c_str(),
                  std::string(kind.ok() ? backend.status().message() : kind.status().message()).c_str());
    }
    MPI_Finalize();
    return 77;
  }
  auto created = devrt::comm::create(MPI_COMM_WORLD, device, {.timeout = std::chrono::seconds(120)});
  if (!created.ok()) {
    std::printf("rank %d: FAILED create: %s\n", g_rank, std::string(created.status().message()).c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  Communicator comm = std::move(created).value();
  auto stream = devrt::Stream::create(device);
  Fixture f{comm, device, stream.ok() ? stream->ref() : devrt::current_stream(device)};
  check(comm.rank() == g_rank && comm.size() == g_size, "rank and size agree with MPI_COMM_WORLD");
  check(comm.engine() == devrt::comm::Engine::mpi, "the mpi engine serves " + spec);
  if (argc > 2 && std::string(argv[2]) == "--peer-exits") return peer_exits(f);

  const DataType reducible[] = {DataType::int8(),    DataType::uint8(),    DataType::int16(),   DataType::uint16(),
                                DataType::int32(),   DataType::uint32(),   DataType::int64(),   DataType::uint64(),
                                DataType::float16(), DataType::bfloat16(), DataType::float32(), DataType::float64()};
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};
  for (DataType dtype : reducible) {
    for (ReduceOp op : ops) {
      for (bool in_place : {false, true}) {
        all_reduce_case(f, dtype, op, in_place, kCount);
        reduce_scatter_case(f, dtype, op, in_place);
        reduce_case(f, dtype, op, in_place);
      }
    }
  }
  // Moving data takes any element type, short vectors and bool included.
  const DataType movable[] = {DataType::int8(),     DataType::uint16(),
                              DataType::int32(),    DataType::float16(),
                              DataType::bfloat16(), DataType::float32(),
                              DataType::float64(),  DataType::uint64(),
                              DataType::boolean(),  DataType{devrt::DataTypeCode::floating, 32, 4}};
  for (DataType dtype : movable) {
    for (bool in_place : {false, true}) {
      all_gather_case(f, dtype, in_place);
      broadcast_case(f, dtype, in_place);
    }
    send_recv_case(f, dtype);
  }
  all_reduce_case(f, DataType::float32(), ReduceOp::sum, false, std::size_t{1} << 20); // 4 MiB
  tensor_case(f);
  error_cases(f);
  check_ok(comm.barrier(f.stream), "barrier");

  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  std::printf("rank %d: %d checks, %d failed here, %d on all ranks\n", g_rank, g_checks, g_failures, failures);
  if (failures == 0) std::printf("rank %d: passed\n", g_rank);
  std::fflush(stdout);
  comm = Communicator();
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
