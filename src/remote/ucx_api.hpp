// SPDX-License-Identifier: Apache-2.0
// The UCX (UCP) entry points the remote backend and devrt-server use, resolved from libucp.so.0 at
// first use (never linked), and the worker both sides drive. Internal.
#ifndef DEVRT_SRC_REMOTE_UCX_API_HPP
#define DEVRT_SRC_REMOTE_UCX_API_HPP

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <devrt/status.hpp>

#include "support/dynamic_library.hpp"

namespace devrt::remote {

// Every function, once: X(name). Only declarations from ucp.h are used (through decltype), so
// nothing here creates a link-time reference. ucs_status_string comes from libucs, which libucp
// depends on: dlsym on libucp's handle finds it there.
#define DEVRT_UCX_SYMBOLS(X)                                                                                           \
  X(ucp_config_read)                                                                                                   \
  X(ucp_config_release)                                                                                                \
  X(ucp_config_modify)                                                                                                 \
  X(ucp_init_version)                                                                                                  \
  X(ucp_cleanup)                                                                                                       \
  X(ucp_get_version_string)                                                                                            \
  X(ucp_worker_create)                                                                                                 \
  X(ucp_worker_destroy)                                                                                                \
  X(ucp_worker_progress)                                                                                               \
  X(ucp_worker_get_efd)                                                                                                \
  X(ucp_worker_arm)                                                                                                    \
  X(ucp_worker_signal)                                                                                                 \
  X(ucp_worker_set_am_recv_handler)                                                                                    \
  X(ucp_listener_create)                                                                                               \
  X(ucp_listener_destroy)                                                                                              \
  X(ucp_listener_query)                                                                                                \
  X(ucp_ep_create)                                                                                                     \
  X(ucp_ep_close_nbx)                                                                                                  \
  X(ucp_am_send_nbx)                                                                                                   \
  X(ucp_am_recv_data_nbx)                                                                                              \
  X(ucp_am_data_release)                                                                                               \
  X(ucp_request_check_status)                                                                                          \
  X(ucp_request_free)                                                                                                  \
  X(ucp_request_cancel)                                                                                                \
  X(ucs_status_string)

struct UcxApi {
#define DEVRT_UCX_SLOT(name) decltype(&::name) name = nullptr;
  DEVRT_UCX_SYMBOLS(DEVRT_UCX_SLOT)
#undef DEVRT_UCX_SLOT
};

// libucp opened and resolved once per process: `status` is ok or unavailable naming the library
// and why. Thread-safe; never unloaded.
struct UcxLibrary {
  Status status;
  UcxApi api;
  detail::DynamicLibrary library;
};
const UcxLibrary& ucx_library() noexcept;

// "UCX: <call>: <status text>" for a failed UCX call.
Status ucx_error(ErrorCode code, const char* call, ucs_status_t status) noexcept;

// One UCP context and worker with wake-up support: the client keeps one per connection, the server
// one for all its clients. Not thread-safe: its owner serialises every call (ucp worker mode
// UCS_THREAD_MODE_SERIALIZED), except signal(), which any thread may call.
class Worker {
public:
  Worker() noexcept = default;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker();

  Status open() noexcept;
  ucp_worker_h handle() const noexcept { return worker_; }
  // Runs the worker's callbacks until none is pending; true when any ran.
  bool progress() noexcept;
  // Progresses; when nothing ran, keeps progressing for up to `spin`, then sleeps on the worker's
  // event descriptor until something arrives, `wake_ms` passes, or signal() is called. Returns
  // after at most spin + wake_ms. A thread that signals sets `*woken` before signal(): arming the
  // worker drains a signal sent before it, and the flag then stops the sleep.
  void wait(int wake_ms, std::chrono::microseconds spin = {}, const std::atomic<bool>* woken = nullptr) noexcept;
  // Wakes a thread in wait(). Thread-safe.
  void signal() noexcept;

private:
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
};

// One active message in flight: UCX reads its header and data until the send completes, then
// send_message deletes it (and decrements *in_flight when set). `data` points into `payload`, or
// at memory the sender keeps alive for as long.
struct OutgoingMessage {
  std::vector<unsigned char> header;
  std::vector<unsigned char> payload;
  const void* data = nullptr;
  std::size_t bytes = 0;
  std::size_t* in_flight = nullptr;
  // Takes `payload` back once sent (a pool of large buffers), when set.
  void (*recycle)(std::vector<unsigned char>&& payload) = nullptr;
  // Called with sent_context once the send has completed or failed, when set.
  void (*sent)(void* context) = nullptr;
  void* sent_context = nullptr;
};
// Starts sending `message` (taking it) as active message `id` on `endpoint`; `flags` are
// UCP_AM_SEND_FLAG_*. The caller holds the worker's serialisation.
Status send_message(ucp_ep_h endpoint, unsigned id, OutgoingMessage* message, std::uint32_t flags) noexcept;

// Registers `handler` for active message `id` on `worker`, and `unexpected` for every other id from
// 0 to `highest` (>= id), all with `arg`. UCX 1.13 trusts the id a peer sends: a message on an id
// whose entry of the handler table was never set (those below the highest registered are left
// uninitialised) or past the table's end jumps to garbage in the receiving process. Both sides
// therefore cover every id UCX's 16-bit field can carry (wire::kHighestMessage). The caller holds
// the worker.
Status set_message_handlers(ucp_worker_h worker, unsigned id, ucp_am_recv_callback_t handler,
                            ucp_am_recv_callback_t unexpected, unsigned highest, void* arg) noexcept;

// The parsed form of "host:port" (IPv4 dotted quad or a name getaddrinfo resolves).
struct SocketAddress {
  std::string host;
  std::uint16_t port = 0;
};
Result<SocketAddress> parse_address(std::string_view text) noexcept;

} // namespace devrt::remote

#endif // DEVRT_SRC_REMOTE_UCX_API_HPP
