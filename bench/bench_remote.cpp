// SPDX-License-Identifier: Apache-2.0
// Remote devices against raw UCX, in one run over one transport (UCX_TLS as the run sets it, for
// both ends): devrt's remote backend talking to a devrt-server child, beside a raw UCX program
// doing the same exchange with an echo child (active messages, the same header and payload
// sizes). Rows are <transport>/<devrt|raw>/<what>; bench/report_remote.py prints the ratios.
//
// The raw side is UCX at its fastest: both ends poll without sleeping while messages come. devrt's
// client and server wait as they always do (docs/remote.md, "Waiting and speed").
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <devrt/devrt.hpp>
#include <devrt/remote.hpp>

#include "remote/connection.hpp"
#include "remote/protocol.hpp"
#include "remote/ucx_api.hpp"

namespace {

namespace remote = devrt::remote;
namespace wire = devrt::remote::wire;

constexpr int kLaunchBatch = 1000;
constexpr std::size_t kBulkBytes = std::size_t{64} << 20;
// A no-op launch's message: the command, and three arguments (a buffer and two scalars).
constexpr std::size_t kLaunchPayloadBytes = 3 * sizeof(wire::LaunchArg);

// The raw side's endpoints check for a failed peer as devrt's do (UCP_ERR_HANDLING_MODE_PEER), which
// keeps UCX 1.13 on TCP even where shared memory is allowed; DEVRT_BENCH_RAW_ERROR_MODE=none
// measures the raw side without the check (then shared memory carries it).
ucp_err_handling_mode_t raw_error_mode() {
  const char* mode = std::getenv("DEVRT_BENCH_RAW_ERROR_MODE");
  return mode != nullptr && std::strcmp(mode, "none") == 0 ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
}

// The raw exchange's active messages.
enum RawMessage : unsigned { ping = 10, one_way = 11, put = 12, get = 13, pong = 14 };

std::string transport() {
  const char* tls = std::getenv("DEVRT_BENCH_TRANSPORT");
  return tls != nullptr ? tls : "default";
}

// ---- Child processes -------------------------------------------------------------------------------

pid_t spawn(std::vector<std::string> argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  return pid;
}

std::string wait_for_line(const std::string& path) {
  for (int i = 0; i < 600; ++i) {
    std::ifstream file(path);
    std::string line;
    if (std::getline(file, line) && !line.empty()) return line;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {};
}

// ---- Raw UCX ---------------------------------------------------------------------------------------

const remote::UcxApi& ucx() { return remote::ucx_library().api; }

// Sends one active message, copying nothing; a request still in flight is kept in `pending`.
bool raw_send(ucp_ep_h endpoint, unsigned id, const void* header, std::size_t header_bytes, const void* data,
              std::size_t bytes, std::vector<void*>& pending) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_REPLY;
  ucs_status_ptr_t request = ucx().ucp_am_send_nbx(endpoint, id, header, header_bytes, data, bytes, &param);
  if (UCS_PTR_IS_ERR(request)) return false;
  if (request != nullptr) pending.push_back(request);
  return true;
}

void complete(remote::Worker& worker, std::vector<void*>& pending) {
  for (void* request : pending) {
    while (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) worker.progress();
    ucx().ucp_request_free(request);
  }
  pending.clear();
}

// The echo child: answers a ping with a pong, takes a put's data and answers, answers a get with
// kBulkBytes; one-way messages it only receives. Polls without sleeping until killed.
struct Echo {
  remote::Worker worker;
  std::vector<unsigned char> bulk = std::vector<unsigned char>(kBulkBytes, 1);
  std::vector<std::pair<ucp_ep_h, unsigned>> answers; // (endpoint, what) to send after progress
  int receiving = 0;
  std::uint64_t received = 0;

  static void on_connection(ucp_conn_request_h request, void* arg) {
    auto* echo = static_cast<Echo*>(arg);
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.conn_request = request;
    params.err_mode = raw_error_mode();
    ucp_ep_h endpoint = nullptr;
    static_cast<void>(ucx().ucp_ep_create(echo->worker.handle(), &params, &endpoint));
  }
  static void on_put_data(void* request, ucs_status_t, std::size_t, void* user_data) {
    auto* pair = static_cast<std::pair<Echo*, ucp_ep_h>*>(user_data);
    pair->first->answers.emplace_back(pair->second, pong);
    delete pair;
    ucx().ucp_request_free(request);
  }
  static ucs_status_t on_message(void* arg, const void* header, std::size_t, void* data, std::size_t bytes,
                                 const ucp_am_recv_param_t* param) {
    auto* echo = static_cast<Echo*>(arg);
    unsigned id = 0;
    std::memcpy(&id, header, sizeof id);
    ++echo->received;
    if (id == one_way) return UCS_OK;
    if (id == put && (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
      ucp_request_param_t receive{};
      receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      receive.cb.recv_am = &on_put_data;
      receive.user_data = new std::pair<Echo*, ucp_ep_h>(echo, param->reply_ep);
      ucs_status_ptr_t r = ucx().ucp_am_recv_data_nbx(echo->worker.handle(), data, echo->bulk.data(), bytes, &receive);
      if (r == nullptr) on_put_data(nullptr, UCS_OK, 0, receive.user_data);
      return UCS_OK;
    }
    if (id == put && bytes > 0) std::memcpy(echo->bulk.data(), data, bytes);
    echo->answers.emplace_back(param->reply_ep, id == get ? get : pong);
    return UCS_OK;
  }

  int run(const char* address_file) {
    if (!worker.open().ok()) return 1;
    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    handler.cb = &Echo::on_message;
    handler.arg = this;
    for (unsigned id : {ping, one_way, put, get}) {
      handler.id = id;
      if (ucx().ucp_worker_set_am_recv_handler(worker.handle(), &handler) != UCS_OK) return 1;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ucp_listener_params_t params{};
    params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&address);
    params.sockaddr.addrlen = sizeof address;
    params.conn_handler.cb = &Echo::on_connection;
    params.conn_handler.arg = this;
    ucp_listener_h listener = nullptr;
    if (ucx().ucp_listener_create(worker.handle(), &params, &listener) != UCS_OK) return 1;
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    if (ucx().ucp_listener_query(listener, &attr) != UCS_OK) return 1;
    const auto* bound = reinterpret_cast<const sockaddr_in*>(&attr.sockaddr);
    {
      const std::string partial = std::string(address_file) + ".partial";
      std::ofstream(partial) << "127.0.0.1:" << ntohs(bound->sin_port) << "\n";
      std::rename(partial.c_str(), address_file);
    }
    std::vector<void*> pending;
    const wire::ReplyHeader reply{}; // a ping's or a read's reply: the header alone
    // Polls without sleeping while messages come (the raw rows), sleeps once idle for 10 ms: the
    // devrt rows then have the machine's cores to themselves.
    auto active = std::chrono::steady_clock::now();
    for (;;) {
      if (worker.progress() || !pending.empty()) {
        active = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - active > std::chrono::milliseconds(10)) {
        worker.wait(100);
      }
      for (auto [endpoint, what] : answers) {
        const bool bulk_reply = what == get;
        static_cast<void>(raw_send(endpoint, pong, &reply, sizeof reply, bulk_reply ? bulk.data() : nullptr,
                                   bulk_reply ? bulk.size() : 0, pending));
      }
      answers.clear();
      for (auto it = pending.begin(); it != pending.end();) {
        if (ucx().ucp_request_check_status(*it) == UCS_INPROGRESS) {
          ++it;
        } else {
          ucx().ucp_request_free(*it);
          it = pending.erase(it);
        }
      }
    }
  }
};

// The raw client: one endpoint to the echo child; waits poll without sleeping.
struct RawClient {
  remote::Worker worker;
  ucp_ep_h endpoint = nullptr;
  std::uint64_t answers = 0;
  int receiving = 0;
  std::vector<unsigned char> bulk = std::vector<unsigned char>(kBulkBytes, 2);
  std::vector<void*> pending;
  std::string error;

  static void on_data(void* request, ucs_status_t, std::size_t, void* user_data) {
    auto* c = static_cast<RawClient*>(user_data);
    --c->receiving;
    ++c->answers;
    ucx().ucp_request_free(request);
  }
  static ucs_status_t on_pong(void* arg, const void*, std::size_t, void* data, std::size_t bytes,
                              const ucp_am_recv_param_t* param) {
    auto* c = static_cast<RawClient*>(arg);
    if (bytes == 0) {
      ++c->answers;
      return UCS_OK;
    }
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
      std::memcpy(c->bulk.data(), data, bytes);
      ++c->answers;
      return UCS_OK;
    }
    ucp_request_param_t receive{};
    receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    receive.cb.recv_am = &on_data;
    receive.user_data = c;
    ++c->receiving;
    ucs_status_ptr_t r = ucx().ucp_am_recv_data_nbx(c->worker.handle(), data, c->bulk.data(), bytes, &receive);
    if (r == nullptr) {
      --c->receiving;
      ++c->answers;
    }
    return UCS_OK;
  }

  bool open(const std::string& address) {
    if (devrt::Status s = worker.open(); !s.ok()) {
      error = std::string(s.message());
      return false;
    }
    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    handler.id = pong;
    handler.cb = &RawClient::on_pong;
    handler.arg = this;
    if (ucx().ucp_worker_set_am_recv_handler(worker.handle(), &handler) != UCS_OK) return false;
    sockaddr_in peer{};
    peer.sin_family = AF_INET;
    const std::size_t colon = address.find(':');
    peer.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &peer.sin_addr);
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&peer);
    params.sockaddr.addrlen = sizeof peer;
    params.err_mode = raw_error_mode();
    if (ucx().ucp_ep_create(worker.handle(), &params, &endpoint) != UCS_OK) {
      error = "ucp_ep_create failed";
      return false;
    }
    return exchange(ping, nullptr, 0); // the connection is up once an answer came back
  }

  // Sends `id` (the command header's size, with `bytes` of data) and waits for its answer.
  bool exchange(unsigned id, const void* data, std::size_t bytes) {
    wire::Header header{}; // a ping's size: a header and no request
    header.op = id;
    const std::uint64_t expected = answers + 1;
    if (!raw_send(endpoint, id, &header, sizeof header, data, bytes, pending)) return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (answers < expected || receiving > 0) {
      worker.progress();
      if (std::chrono::steady_clock::now() > deadline) return false;
    }
    complete(worker, pending);
    return true;
  }

  // UCX reads a message's header and data until its send completes: these outlive every send.
  // A launch's command: its header and request.
  std::vector<unsigned char> one_way_header = [] {
    wire::Command c = wire::make_command(wire::Launch{});
    c.op = one_way;
    std::vector<unsigned char> bytes;
    c.encode(bytes);
    return bytes;
  }();
  unsigned char one_way_payload[kLaunchPayloadBytes] = {};

  bool send_one_way() {
    const bool sent = raw_send(endpoint, one_way, one_way_header.data(), one_way_header.size(), one_way_payload,
                               sizeof one_way_payload, pending);
    worker.progress();
    return sent;
  }
};

RawClient* raw_client = nullptr;

// ---- devrt's side ----------------------------------------------------------------------------------

// The `scale` kernel on one OpenCL device (launched with n = 0: it binds a buffer and two scalars,
// and does nothing).
struct NoOpKernel {
  devrt::Device device;
  bool ready = false;
  devrt::Module module;
  devrt::Function scale;
  devrt::Buffer buffer;
  std::string error;

  void prepare(devrt::Device on) {
    device = on;
    std::ifstream source(DEVRT_BENCH_OPENCL_SOURCE);
    const std::string code((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
    devrt::Result<devrt::Module> loaded = devrt::Module::load(device, devrt::ModuleFormat::opencl_c, code);
    devrt::Result<devrt::Function> function =
        loaded.ok() ? loaded->function("scale") : devrt::Result<devrt::Function>(loaded.status());
    devrt::Result<devrt::Buffer> allocated = devrt::Buffer::allocate(device, 4096);
    if (!function.ok() || !allocated.ok()) {
      error = std::string((function.ok() ? allocated.status() : function.status()).message());
      return;
    }
    module = std::move(loaded).value();
    scale = std::move(function).value();
    buffer = std::move(allocated).value();
    ready = true;
  }

  devrt::Status launch(devrt::StreamRef stream) const {
    return scale.launch({.grid = {1}, .block = {1}}, {buffer, 1.0f, std::int32_t{0}}, stream);
  }

  // Kernel and buffer go back while the device (a remote one's server) is still there.
  void release() {
    static_cast<void>(buffer.reset());
    scale = devrt::Function();
    module = devrt::Module();
  }
};

struct DevrtSide {
  devrt::Device memory; // the server's CPU device: host memory there
  NoOpKernel compute;   // on the server's OpenCL device (PoCL in CI)
  NoOpKernel local;     // on this process's own first OpenCL device: the driver's floor
  std::vector<unsigned char> host = std::vector<unsigned char>(kBulkBytes, 3);
};
DevrtSide* side = nullptr;

// ---- The benchmarks --------------------------------------------------------------------------------

void raw_round_trip(benchmark::State& state) {
  for (auto _ : state) {
    if (!raw_client->exchange(ping, nullptr, 0)) state.SkipWithError("the echo did not answer");
  }
}

void devrt_synchronize(benchmark::State& state) {
  const devrt::StreamRef stream = devrt::current_stream(side->memory);
  for (auto _ : state) {
    if (!devrt::synchronize(stream).ok()) state.SkipWithError("synchronize failed");
  }
}

// The remote backend's connection alone: a ping round trip, no device or devrt API call around it.
std::unique_ptr<remote::Connection> ping_connection;

void devrt_ping(benchmark::State& state) {
  if (!ping_connection) return state.SkipWithError("no second connection");
  const wire::Command ping = wire::make_command(wire::Ping{});
  for (auto _ : state) {
    remote::Answer answer;
    if (!ping_connection->call(ping, {}, answer).ok()) state.SkipWithError("ping failed");
  }
}

// kLaunchBatch one-way sends timed (an iteration is the batch), then one untimed round trip (they
// have all arrived).
void raw_one_way(benchmark::State& state) {
  for (auto _ : state) {
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunchBatch; ++i) raw_client->send_one_way();
    const auto issued = std::chrono::steady_clock::now();
    if (!raw_client->exchange(ping, nullptr, 0)) state.SkipWithError("the echo did not answer");
    state.SetIterationTime(std::chrono::duration<double>(issued - started).count());
  }
  state.SetItemsProcessed(state.iterations() * kLaunchBatch);
}

// kLaunchBatch no-op launches timed (what the caller waits for; an iteration is the batch), then one
// untimed synchronize.
void devrt_launch_issue(benchmark::State& state) {
  const NoOpKernel& kernel = side->compute;
  if (!kernel.ready) return state.SkipWithError(kernel.error.c_str());
  const devrt::StreamRef stream = devrt::current_stream(kernel.device);
  for (auto _ : state) {
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunchBatch; ++i) static_cast<void>(kernel.launch(stream));
    const auto issued = std::chrono::steady_clock::now();
    if (!devrt::synchronize(stream).ok()) state.SkipWithError("launch failed");
    state.SetIterationTime(std::chrono::duration<double>(issued - started).count());
  }
  state.SetItemsProcessed(state.iterations() * kLaunchBatch);
}

// kLaunchBatch no-op launches and one synchronize, all timed: on the remote device, or on this
// process's own OpenCL device (the same driver as the server's here: what the driver alone costs).
void devrt_launch_batch(benchmark::State& state, bool local) {
  const NoOpKernel& kernel = local ? side->local : side->compute;
  if (!kernel.ready) return state.SkipWithError(kernel.error.c_str());
  const devrt::StreamRef stream = devrt::current_stream(kernel.device);
  for (auto _ : state) {
    for (int i = 0; i < kLaunchBatch; ++i) static_cast<void>(kernel.launch(stream));
    if (!devrt::synchronize(stream).ok()) state.SkipWithError("launch failed");
  }
  state.SetItemsProcessed(state.iterations() * kLaunchBatch);
}

void raw_put(benchmark::State& state) {
  for (auto _ : state) {
    if (!raw_client->exchange(put, raw_client->bulk.data(), kBulkBytes)) state.SkipWithError("put failed");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBulkBytes));
}

void raw_get(benchmark::State& state) {
  for (auto _ : state) {
    if (!raw_client->exchange(get, nullptr, 0)) state.SkipWithError("get failed");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBulkBytes));
}

// kBulkBytes to or from a remote device's memory, complete on return.
// An allocation on the server and its free, each time from the server (the client's Buffer cache
// emptied): what the server's clearing of new memory costs, on its host memory or PoCL.
void devrt_allocate_free(benchmark::State& state, bool driver) {
  const devrt::Device device = driver ? side->compute.device : side->memory;
  if (driver && !side->compute.ready) state.SkipWithError(side->compute.error.c_str());
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    if (!devrt::Buffer::allocate(device, bytes).ok()) { // freed into this client's cache at the ';'
      state.SkipWithError("allocate failed");
      break;
    }
    if (!devrt::empty_cache(device).ok()) state.SkipWithError("empty_cache failed");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void devrt_copy(benchmark::State& state, bool to_device, bool driver) {
  if (driver && !side->compute.ready) return state.SkipWithError(side->compute.error.c_str());
  const devrt::Device device = driver ? side->compute.device : side->memory;
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(device, kBulkBytes);
  if (!buffer.ok()) return state.SkipWithError(std::string(buffer.status().message()).c_str());
  const devrt::StreamRef stream = devrt::current_stream(device);
  for (auto _ : state) {
    devrt::Status s = to_device ? devrt::copy(devrt::host_span(side->host.data(), kBulkBytes), *buffer, stream)
                                : devrt::copy(*buffer, devrt::host_span(side->host.data(), kBulkBytes), stream);
    if (s.ok()) s = devrt::synchronize(stream);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBulkBytes));
}

void register_all() {
  const std::string t = transport() + "/";
  // Interleaved: each pair alternates, so the machine's interference falls on both alike.
  benchmark::RegisterBenchmark((t + "raw/round_trip").c_str(), raw_round_trip)->MinTime(0.2)->UseRealTime();
  benchmark::RegisterBenchmark((t + "devrt/synchronize").c_str(), devrt_synchronize)->MinTime(0.2)->UseRealTime();
  benchmark::RegisterBenchmark((t + "devrt/connection_ping").c_str(), devrt_ping)->MinTime(0.2)->UseRealTime();
  benchmark::RegisterBenchmark((t + "raw/one_way_send_x1000").c_str(), raw_one_way)->UseManualTime()->MinTime(0.2);
  benchmark::RegisterBenchmark((t + "devrt/launch_issue_x1000").c_str(), devrt_launch_issue)
      ->UseManualTime()
      ->MinTime(0.2);
  benchmark::RegisterBenchmark((t + "devrt/launch_1000_synchronize").c_str(), devrt_launch_batch, false)
      ->MinTime(0.2)
      ->UseRealTime();
  benchmark::RegisterBenchmark((t + "local/launch_1000_synchronize").c_str(), devrt_launch_batch, true)
      ->MinTime(0.2)
      ->UseRealTime();
  benchmark::RegisterBenchmark((t + "raw/put_64MiB").c_str(), raw_put)->MinTime(0.5)->UseRealTime();
  benchmark::RegisterBenchmark((t + "raw/get_64MiB").c_str(), raw_get)->MinTime(0.5)->UseRealTime();
  benchmark::RegisterBenchmark((t + "devrt/to_server_64MiB").c_str(), devrt_copy, true, false)
      ->MinTime(0.5)
      ->UseRealTime();
  benchmark::RegisterBenchmark((t + "devrt/from_server_64MiB").c_str(), devrt_copy, false, false)
      ->MinTime(0.5)
      ->UseRealTime();
  benchmark::RegisterBenchmark((t + "devrt/to_driver_64MiB").c_str(), devrt_copy, true, true)
      ->MinTime(0.5)
      ->UseRealTime();
  benchmark::RegisterBenchmark((t + "devrt/from_driver_64MiB").c_str(), devrt_copy, false, true)
      ->MinTime(0.5)
      ->UseRealTime();
  for (const bool driver : {false, true}) {
    benchmark::RegisterBenchmark((t + (driver ? "devrt/allocate_free_driver" : "devrt/allocate_free_server")).c_str(),
                                 devrt_allocate_free, driver)
        ->Arg(4 << 10)
        ->Arg(1 << 20)
        ->Arg(64 << 20)
        ->MinTime(0.2)
        ->UseRealTime();
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--echo") == 0) return Echo().run(argv[2]);
  char folder[] = "/tmp/devrt-bench-remote-XXXXXX";
  if (::mkdtemp(folder) == nullptr) return 1;
  const std::string server_file = std::string(folder) + "/server", echo_file = std::string(folder) + "/echo";
  // PoCL's kernels run inside the server: its launches are host code, for a keyed server only.
  const std::string key_file = std::string(folder) + "/key";
  // DEVRT_BENCH_SERVER_PROGRAM: another devrt-server of the same protocol (an earlier build's).
  const char* other_server = std::getenv("DEVRT_BENCH_SERVER_PROGRAM");
  const std::string program = other_server != nullptr ? other_server : DEVRT_BENCH_SERVER;
  const pid_t keygen = spawn({program, "--generate-key", key_file});
  ::waitpid(keygen, nullptr, 0);
  const pid_t server = spawn(
      {program, "--devices", "opencl,cpu", "--key-file", key_file, "--allow-host-code", "--address-file", server_file});
  const pid_t echo = spawn({"/proc/self/exe", "--echo", echo_file});
  const std::string server_address = wait_for_line(server_file), echo_address = wait_for_line(echo_file);
  int status = 1;
  RawClient raw;
  DevrtSide devrt_side;
  remote::ConnectOptions keyed;
  keyed.key_file = key_file;
  devrt::Result<std::vector<devrt::Device>> devices = devrt::remote::connect(server_address, keyed);
  if (server_address.empty() || echo_address.empty() || !devices.ok()) {
    std::fprintf(stderr, "bench-remote: the server or the echo did not start%s%s\n", devices.ok() ? "" : ": ",
                 devices.ok() ? "" : std::string(devices.status().message()).c_str());
  } else if (!raw.open(echo_address)) {
    std::fprintf(stderr, "bench-remote: cannot reach the echo: %s\n", raw.error.c_str());
  } else {
    devrt_side.compute.error = "the server exports no OpenCL device";
    for (devrt::Device d : *devices) {
      devrt::Result<remote::DeviceInfo> info = remote::describe(d);
      if (!info.ok()) continue;
      if (info->kind == devrt::DeviceKind::cpu) devrt_side.memory = d;
      if (info->kind == devrt::DeviceKind::opencl && !devrt_side.compute.ready) devrt_side.compute.prepare(d);
    }
    devrt_side.local.error = "this process has no OpenCL device";
    if (devrt::device_count(devrt::DeviceKind::opencl) > 0) {
      devrt_side.local.prepare(devrt::Device{devrt::DeviceKind::opencl, 0});
    }
    if (auto opened = remote::Connection::open(server_address, key_file); opened.ok())
      ping_connection = std::move(opened).value();
    raw_client = &raw;
    side = &devrt_side;
    benchmark::Initialize(&argc, argv);
    benchmark::AddCustomContext("transport", transport());
    benchmark::AddCustomContext("raw error mode", raw_error_mode() == UCP_ERR_HANDLING_MODE_NONE ? "none" : "peer");
    register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    status = 0;
  }
  ping_connection.reset();
  devrt_side.compute.release();
  devrt_side.local.release();
  ::kill(server, SIGTERM);
  ::kill(echo, SIGKILL);
  ::waitpid(server, nullptr, 0);
  ::waitpid(echo, nullptr, 0);
  return status;
}
