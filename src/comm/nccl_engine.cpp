// SPDX-License-Identifier: Apache-2.0
// The NCCL engine (CUDA devices) and, through the same API, RCCL (ROCm devices). The library is
// opened with dlopen at first use, never linked: a devrt_comm binary runs where neither exists
// and says why. The few NCCL types used here are declared below from NCCL's documented ABI
// (nccl.h: ncclResult_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId), which RCCL shares.
#include <dlfcn.h>
#include <glob.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/engine.hpp"
#include "support/dynamic_library.hpp"
#include "support/fault_injection.hpp"

namespace devrt::comm::detail {
namespace {

using NcclResult = int; // ncclResult_t
constexpr NcclResult kNcclSuccess = 0;
constexpr NcclResult kNcclInProgress = 7;
using NcclComm = void*;                     // ncclComm_t
using NcclStream = void*;                   // cudaStream_t / hipStream_t: devrt's StreamRef::handle
constexpr std::size_t kUniqueIdBytes = 128; // NCCL_UNIQUE_ID_BYTES
struct NcclUniqueId {
  char internal[kUniqueIdBytes];
};

// ncclDataType_t and ncclRedOp_t values.
enum NcclType : int {
  nccl_int8 = 0,
  nccl_uint8 = 1,
  nccl_int32 = 2,
  nccl_uint32 = 3,
  nccl_int64 = 4,
  nccl_uint64 = 5,
  nccl_float16 = 6,
  nccl_float32 = 7,
  nccl_float64 = 8,
  nccl_bfloat16 = 9,
  nccl_no_type = -1
};
constexpr int kNcclOps[5] = {/*sum*/ 0, /*prod*/ 1, /*min*/ 3, /*max*/ 2, /*avg*/ 4};

struct NcclApi {
  NcclResult (*ncclGetVersion)(int*);
  NcclResult (*ncclGetUniqueId)(NcclUniqueId*);
  NcclResult (*ncclCommInitRank)(NcclComm*, int, NcclUniqueId, int);
  NcclResult (*ncclCommInitAll)(NcclComm*, int, const int*);
  NcclResult (*ncclCommDestroy)(NcclComm);
  NcclResult (*ncclCommAbort)(NcclComm);
  NcclResult (*ncclCommGetAsyncError)(NcclComm, NcclResult*);
  const char* (*ncclGetErrorString)(NcclResult);
  NcclResult (*ncclAllReduce)(const void*, void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*ncclBroadcast)(const void*, void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*ncclReduce)(const void*, void*, std::size_t, int, int, int, NcclComm, NcclStream);
  NcclResult (*ncclAllGather)(const void*, void*, std::size_t, int, NcclComm, NcclStream);
  NcclResult (*ncclReduceScatter)(const void*, void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*ncclSend)(const void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*ncclRecv)(void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*ncclGroupStart)();
  NcclResult (*ncclGroupEnd)();
};

// clang-format off
#define DEVRT_NCCL_SYMBOLS(X) \
  X(ncclGetVersion) \
  X(ncclGetUniqueId) \
  X(ncclCommInitRank) \
  X(ncclCommInitAll) \
  X(ncclCommDestroy) \
  X(ncclCommAbort) \
  X(ncclCommGetAsyncError) \
  X(ncclGetErrorString) \
  X(ncclAllReduce) \
  X(ncclBroadcast) \
  X(ncclReduce) \
  X(ncclAllGather) \
  X(ncclReduceScatter) \
  X(ncclSend) \
  X(ncclRecv) \
  X(ncclGroupStart) \
  X(ncclGroupEnd)
// clang-format on

// One loaded library per engine kind, opened once per process.
struct Library {
  devrt::detail::DynamicLibrary library;
  NcclApi api{};
  Status status;
  std::string description; // "NCCL 2.21.5 (/path/libnccl.so.2)"
};

constexpr const char* kNcclNames[] = {"libnccl.so.2"};
constexpr const char* kRcclNames[] = {"librccl.so.1"};
constexpr devrt::detail::VendorLibrary kVendorLibraries[] = {
    {"NCCL", kNcclNames, "DEVRT_NCCL_LIBRARY", "install it (pip's nvidia-nccl-cu12 brings it with PyTorch)"},
    {"RCCL", kRcclNames, "DEVRT_RCCL_LIBRARY", "install ROCm's rccl"},
};

// Where the library may be when its variable is unset (the environment is read once, under
// load()'s call_once): the dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache), then the
// places pip's nvidia-nccl-cu* and ROCm install it.
std::vector<std::string> candidates(comm::Engine kind) {
  using devrt::detail::read_path_env;
  const bool nccl = kind == comm::Engine::nccl;
  std::vector<std::string> names{nccl ? kNcclNames[0] : kRcclNames[0]};
  std::vector<std::string> patterns;
  if (nccl) {
    const char* tail = "/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2";
    if (const char* venv = read_path_env("VIRTUAL_ENV")) patterns.push_back(std::string(venv) + tail);
    if (const char* conda = read_path_env("CONDA_PREFIX")) patterns.push_back(std::string(conda) + tail);
    if (const char* home = read_path_env("HOME")) patterns.push_back(std::string(home) + "/.local" + tail);
    patterns.emplace_back("/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2");
    patterns.emplace_back("/usr/local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2");
    patterns.emplace_back("/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2");
  } else {
    if (const char* rocm = read_path_env("ROCM_PATH")) patterns.push_back(std::string(rocm) + "/lib/librccl.so.1");
    patterns.emplace_back("/opt/rocm/lib/librccl.so.1");
  }
  for (const std::string& pattern : patterns) {
    glob_t found{};
    if (glob(pattern.c_str(), 0, nullptr, &found) == 0) { // NOLINT(concurrency-mt-unsafe): under call_once
      for (std::size_t i = 0; i < found.gl_pathc; ++i) names.emplace_back(found.gl_pathv[i]);
    }
    globfree(&found);
  }
  return names;
}

std::string version_text(int code) {
  // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 + patch before.
  int major = code >= 10000 ? code / 10000 : code / 1000;
  int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

Library& load(comm::Engine kind) {
  static Library libraries[2];
  static std::once_flag once[2];
  const int index = kind == comm::Engine::nccl ? 0 : 1;
  std::call_once(once[index], [kind, index] {
    Library& lib = libraries[index];
    lib.status = lib.library.open(kVendorLibraries[index], candidates(kind));
    if (!lib.status.ok()) return;
    lib.status = [&]() -> Status {
      DEVRT_RESOLVE_SYMBOLS(lib.library, lib.api, DEVRT_NCCL_SYMBOLS, " (not an NCCL-compatible library)");
      return {};
    }();
    if (!lib.status.ok()) return;
    int version = 0;
    lib.api.ncclGetVersion(&version);
    Dl_info info{};
    std::string path = lib.library.path();
    if (dladdr(reinterpret_cast<void*>(lib.api.ncclGetVersion), &info) != 0 && info.dli_fname != nullptr) {
      path = info.dli_fname;
    }
    lib.description = std::string(kVendorLibraries[index].what) + " " + version_text(version) + " (" + path + ")";
    // Fault-injection builds: NCCL and RCCL share one set of wrappers, so only one is wrapped.
    if (kind == comm::Engine::nccl) DEVRT_FAULT_WRAP_SYMBOLS("nccl", lib.api, DEVRT_NCCL_SYMBOLS);
  });
  return libraries[index];
}

[[gnu::cold]] Status nccl_error(const Library& lib, const char* call, NcclResult result) {
  const char* text = lib.api.ncclGetErrorString != nullptr ? lib.api.ncclGetErrorString(result) : nullptr;
  return make_error(ErrorCode::driver_error, call, " failed: ", text != nullptr ? text : "unknown error",
                    " (ncclResult ", result, ")");
}

int nccl_type(DataType dtype) noexcept {
  if (dtype.code == DataTypeCode::signed_int) {
    return dtype.bits == 8 ? nccl_int8 : dtype.bits == 32 ? nccl_int32 : dtype.bits == 64 ? nccl_int64 : nccl_no_type;
  }
  if (dtype.code == DataTypeCode::unsigned_int) {
    return dtype.bits == 8    ? nccl_uint8
           : dtype.bits == 32 ? nccl_uint32
           : dtype.bits == 64 ? nccl_uint64
                              : nccl_no_type;
  }
  if (dtype.code == DataTypeCode::floating) {
    return dtype.bits == 16   ? nccl_float16
           : dtype.bits == 32 ? nccl_float32
           : dtype.bits == 64 ? nccl_float64
                              : nccl_no_type;
  }
  if (dtype.code == DataTypeCode::bfloat && dtype.bits == 16) return nccl_bfloat16;
  return nccl_no_type;
}

const void* device_address(const Range& range) noexcept {
  return range.bytes == 0 ? nullptr : static_cast<const std::byte*>(range.span.data) + range.offset;
}
void* device_address_mut(const Range& range) noexcept {
  return range.bytes == 0 ? nullptr : static_cast<std::byte*>(range.span.data) + range.offset;
}

class NcclEngine final : public Engine {
public:
  NcclEngine(Library& lib, NcclComm comm, Buffer scratch, comm::Engine kind, int rank, int size, Device device,
             std::chrono::milliseconds timeout) noexcept
      : Engine(rank, size, device, kind, timeout), lib_(lib), comm_(comm), scratch_(std::move(scratch)) {}

  ~NcclEngine() override {
    if (comm_ != nullptr) static_cast<void>(lib_.api.ncclCommDestroy(comm_));
  }

  Status supports(const Call& call) const noexcept override {
    bool reduction =
        call.op == Operation::all_reduce || call.op == Operation::reduce_scatter || call.op == Operation::reduce;
    if (reduction && nccl_type(call.dtype) == nccl_no_type) {
      return make_error(ErrorCode::unsupported, engine_name(kind()),
                        " reduces int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32 and float64");
    }
    return {};
  }

  Status run(const Call& call) noexcept override {
    const NcclApi& api = lib_.api;
    // Reductions count scalar elements of their type; moving operations count bytes, so any
    // element type travels.
    bool reduction =
        call.op == Operation::all_reduce || call.op == Operation::reduce_scatter || call.op == Operation::reduce;
    int type = reduction ? nccl_type(call.dtype) : nccl_uint8;
    std::size_t count = reduction ? call.count * call.dtype.lanes : call.count * call.dtype.size_bytes();
    int op = kNcclOps[static_cast<int>(call.reduce)];
    NcclStream stream = call.stream.handle;
    const void* send = call.in_place ? device_address(call.recv) : device_address(call.send);
    void* recv = device_address_mut(call.recv);
    switch (call.op) {
    case Operation::all_reduce:
      return check("ncclAllReduce", api.ncclAllReduce(send, recv, count, type, op, comm_, stream));
    case Operation::all_gather:
      return check("ncclAllGather", api.ncclAllGather(device_address(call.send), recv, count, type, comm_, stream));
    case Operation::reduce_scatter:
      return check("ncclReduceScatter",
                   api.ncclReduceScatter(device_address(call.send), recv, count, type, op, comm_, stream));
    case Operation::broadcast:
      return check("ncclBroadcast",
                   api.ncclBroadcast(call.root == rank() ? send : recv, recv, count, type, call.root, comm_, stream));
    case Operation::reduce:
      return check("ncclReduce", api.ncclReduce(call.in_place ? recv : device_address(call.send), recv, count, type, op,
                                                call.root, comm_, stream));
    case Operation::send:
      return check("ncclSend", api.ncclSend(device_address(call.send), count, type, call.root, comm_, stream));
    case Operation::recv: return check("ncclRecv", api.ncclRecv(recv, count, type, call.root, comm_, stream));
    case Operation::barrier: {
      // NCCL has no barrier: an all-reduce of one word, waited for (as PyTorch's c10d does).
      Status status =
          check("ncclAllReduce", api.ncclAllReduce(scratch_.data(), scratch_.data(), 1, nccl_int32, 0, comm_, stream));
      return status.ok() ? synchronize(call.stream) : status;
    }
    }
    return make_error(ErrorCode::internal, "nccl engine: unexpected operation");
  }

  // Polls the stream and the communicator's asynchronous error until the deadline; aborts the
  // communicator when it passes (ncclCommAbort frees a kernel stuck on a dead peer).
  Status synchronize(StreamRef stream) noexcept override {
    Result<Event> event = Event::create(device());
    if (!event.ok()) return event.status();
    DEVRT_RETURN_IF_ERROR(event->record(stream));
    auto deadline = std::chrono::steady_clock::now() + timeout();
    for (;;) {
      Result<bool> done = event->query();
      if (!done.ok()) return done.status();
      NcclResult async = kNcclSuccess;
      if (NcclResult r = lib_.api.ncclCommGetAsyncError(comm_, &async); r != kNcclSuccess) {
        return nccl_error(lib_, "ncclCommGetAsyncError", r);
      }
      if (async != kNcclSuccess && async != kNcclInProgress) return nccl_error(lib_, "the communicator", async);
      if (*done) return {};
      if (timeout().count() != 0 && std::chrono::steady_clock::now() >= deadline) {
        static_cast<void>(lib_.api.ncclCommAbort(comm_));
        comm_ = nullptr;
        return make_error(ErrorCode::timed_out, "synchronize: the communicator's work did not finish within ",
                          timeout().count(), " ms (a peer has exited, hangs, or issues collectives in another order); ",
                          "the communicator was aborted (ncclCommAbort)");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void* native_handle() const noexcept override { return comm_; }

private:
  Status check(const char* call, NcclResult result) const {
    return result == kNcclSuccess ? Status{} : nccl_error(lib_, call, result);
  }

  Library& lib_;
  NcclComm comm_;
  Buffer scratch_; // one int32 on the device, for barrier
};

Result<Library*> ready(comm::Engine kind) {
  Library& lib = load(kind);
  if (!lib.status.ok()) return lib.status;
  return &lib;
}

// Makes `device` current on this thread, as NCCL's initialisation expects (it reads the CUDA
// runtime's current device): devrt's CUDA and ROCm backends leave the device's context current
// after a call on it.
Status make_current(Device device) {
  DEVRT_RETURN_IF_ERROR(devrt::synchronize(device));
  return {};
}

} // namespace

Result<std::string> probe_nccl(comm::Engine kind) noexcept {
  Result<Library*> lib = ready(kind);
  if (!lib.ok()) return lib.status();
  // The library alone cannot run: it needs the GPU driver devrt's backend opens.
  DeviceKind device_kind = kind == comm::Engine::nccl ? DeviceKind::cuda : DeviceKind::rocm;
  Result<BackendRef> backend = Registry::global().get(device_kind);
  Status driver = backend.ok() ? backend->availability() : backend.status();
  if (!driver.ok()) {
    return make_error(ErrorCode::unavailable, (*lib)->description, " is installed but cannot run: ", driver.message());
  }
  return (*lib)->description;
}

Result<std::unique_ptr<Engine>> create_nccl_engine(comm::Engine kind, int rank, int size, Device device,
                                                   std::chrono::milliseconds timeout, UniqueIdExchange exchange,
                                                   void* exchange_context) noexcept {
  Result<Library*> lib = ready(kind);
  if (!lib.ok()) return lib.status();
  const NcclApi& api = (*lib)->api;
  DEVRT_RETURN_IF_ERROR(make_current(device));
  NcclUniqueId id{};
  if (rank == 0) {
    if (NcclResult r = api.ncclGetUniqueId(&id); r != kNcclSuccess) return nccl_error(**lib, "ncclGetUniqueId", r);
  }
  DEVRT_RETURN_IF_ERROR(exchange(exchange_context, &id, sizeof id));
  Result<Buffer> scratch = Buffer::allocate(device, sizeof(std::int32_t));
  if (!scratch.ok()) return scratch.status();
  NcclComm comm = nullptr;
  if (NcclResult r = api.ncclCommInitRank(&comm, size, id, rank); r != kNcclSuccess) {
    return nccl_error(**lib, "ncclCommInitRank", r);
  }
  std::unique_ptr<Engine> engine =
      std::make_unique<NcclEngine>(**lib, comm, std::move(scratch).value(), kind, rank, size, device, timeout);
  return engine;
}

Result<std::vector<Communicator>> create_local_nccl(comm::Engine kind, std::span<const Device> devices,
                                                    std::chrono::milliseconds timeout) noexcept {
  Result<Library*> lib = ready(kind);
  if (!lib.ok()) return lib.status();
  std::vector<int> ordinals;
  std::vector<Buffer> scratch;
  for (const Device& device : devices) {
    DEVRT_RETURN_IF_ERROR(make_current(device));
    Result<Buffer> buffer = Buffer::allocate(device, sizeof(std::int32_t));
    if (!buffer.ok()) return buffer.status();
    scratch.push_back(std::move(buffer).value());
    ordinals.push_back(device.id);
  }
  std::vector<NcclComm> comms(devices.size(), nullptr);
  if (NcclResult r = (*lib)->api.ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), ordinals.data());
      r != kNcclSuccess) {
    return nccl_error(**lib, "ncclCommInitAll", r);
  }
  std::vector<Communicator> result;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    result.emplace_back(std::make_unique<NcclEngine>(**lib, comms[i], std::move(scratch[i]), kind, static_cast<int>(i),
                                                     static_cast<int>(devices.size()), devices[i], timeout));
  }
  return result;
}

Status nccl_group_start(comm::Engine kind) noexcept {
  Result<Library*> lib = ready(kind);
  if (!lib.ok()) return lib.status();
  NcclResult r = (*lib)->api.ncclGroupStart();
  return r == kNcclSuccess ? Status{} : nccl_error(**lib, "ncclGroupStart", r);
}

Status nccl_group_end(comm::Engine kind) noexcept {
  Result<Library*> lib = ready(kind);
  if (!lib.ok()) return lib.status();
  NcclResult r = (*lib)->api.ncclGroupEnd();
  return r == kNcclSuccess ? Status{} : nccl_error(**lib, "ncclGroupEnd", r);
}

} // namespace devrt::comm::detail
