// SPDX-License-Identifier: Apache-2.0
// libucp opened at first use, and the worker the remote backend and devrt-server drive.
#include "remote/ucx_api.hpp"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>

namespace devrt::remote {
namespace {

constexpr const char* kUcpNames[] = {"libucp.so.0", "libucp.so"};
constexpr detail::VendorLibrary kUcp{"UCX", kUcpNames, "DEVRT_UCX_LIBRARY", "Debian: apt-get install libucx0"};

Status open_ucx(UcxLibrary& ucx) noexcept {
  DEVRT_RETURN_IF_ERROR(ucx.library.open(kUcp));
  DEVRT_RESOLVE_SYMBOLS(ucx.library, ucx.api, DEVRT_UCX_SYMBOLS, " (UCX 1.13 or later is needed)");
  return Status();
}

} // namespace

const UcxLibrary& ucx_library() noexcept {
  // Built once, never destroyed: UCX's own threads and atexit handlers outlive static destructors.
  static UcxLibrary* const library = [] {
    auto* ucx = new UcxLibrary();
    ucx->status = open_ucx(*ucx);
    return ucx;
  }();
  return *library;
}

Status ucx_error(ErrorCode code, const char* call, ucs_status_t status) noexcept {
  const UcxLibrary& ucx = ucx_library();
  const char* text = ucx.api.ucs_status_string != nullptr ? ucx.api.ucs_status_string(status) : "unknown status";
  return make_error(code, "UCX ", call, ": ", text, " (", static_cast<int>(status), ")");
}

Worker::~Worker() {
  const UcxApi& ucx = ucx_library().api;
  if (worker_ != nullptr) ucx.ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucx.ucp_cleanup(context_);
}

Status Worker::open() noexcept {
  const UcxLibrary& library = ucx_library();
  DEVRT_RETURN_IF_ERROR(library.status);
  const UcxApi& ucx = library.api;
  ucp_config_t* config = nullptr;
  ucs_status_t s = ucx.ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) return ucx_error(ErrorCode::unavailable, "ucp_config_read", s);
  // devrt's endpoints ask UCX to report a failed peer (UCP_ERR_HANDLING_MODE_PEER). UCX 1.13's
  // shared-memory transports offer that only when told to (they then watch the peer's process);
  // without it, UCX keeps every connection on one host on TCP (a round trip of 9 us instead of 2).
  // The environment's own setting wins.
  if (detail::read_text_env("UCX_MM_ERROR_HANDLING") == nullptr &&
      detail::read_text_env("UCX_POSIX_ERROR_HANDLING") == nullptr &&
      detail::read_text_env("UCX_SYSV_ERROR_HANDLING") == nullptr) {
    static_cast<void>(ucx.ucp_config_modify(config, "MM_ERROR_HANDLING", "y")); // older UCX: TCP, as before
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  s = ucx.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context_);
  ucx.ucp_config_release(config);
  if (s != UCS_OK) return ucx_error(ErrorCode::unavailable, "ucp_init", s);
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  s = ucx.ucp_worker_create(context_, &worker_params, &worker_);
  if (s != UCS_OK) return ucx_error(ErrorCode::unavailable, "ucp_worker_create", s);
  s = ucx.ucp_worker_get_efd(worker_, &event_fd_);
  if (s != UCS_OK) return ucx_error(ErrorCode::unavailable, "ucp_worker_get_efd", s);
  return Status();
}

bool Worker::progress() noexcept {
  const UcxApi& ucx = ucx_library().api;
  bool any = false;
  while (ucx.ucp_worker_progress(worker_) != 0) any = true;
  return any;
}

void Worker::wait(int wake_ms, std::chrono::microseconds spin, const std::atomic<bool>* woken) noexcept {
  const UcxApi& ucx = ucx_library().api;
  if (progress()) return;
  // An answer that comes back within `spin` is taken without a sleep and the wake-up after it (tens
  // of microseconds each); yielding lets a thread of this process that has work take the core.
  if (spin.count() > 0) {
    const auto until = std::chrono::steady_clock::now() + spin;
    do {
      if (progress()) return;
      ::sched_yield();
    } while (std::chrono::steady_clock::now() < until);
  }
  // Armed: nothing is pending, and the descriptor fires on the next event (UCS_ERR_BUSY: something
  // arrived meanwhile; the caller progresses again).
  if (ucx.ucp_worker_arm(worker_) != UCS_OK) return;
  // Arming drains a signal() that came before it: the flag its caller set first says so.
  if (woken != nullptr && woken->load(std::memory_order_acquire)) return;
  pollfd fd{event_fd_, POLLIN, 0};
  static_cast<void>(::poll(&fd, 1, wake_ms));
}

void Worker::signal() noexcept {
  if (worker_ != nullptr) static_cast<void>(ucx_library().api.ucp_worker_signal(worker_));
}

Status set_message_handlers(ucp_worker_h worker, unsigned id, ucp_am_recv_callback_t handler,
                            ucp_am_recv_callback_t unexpected, unsigned highest, void* arg) noexcept {
  const UcxApi& ucx = ucx_library().api;
  // Highest first: the table is sized once.
  for (unsigned each = highest + 1; each-- > 0;) {
    ucp_am_handler_param_t param{};
    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    param.id = each;
    param.cb = each == id ? handler : unexpected;
    param.arg = arg;
    const ucs_status_t s = ucx.ucp_worker_set_am_recv_handler(worker, &param);
    if (s != UCS_OK) return ucx_error(ErrorCode::unavailable, "ucp_worker_set_am_recv_handler", s);
  }
  return Status();
}

namespace {
void message_sent(OutgoingMessage* message) noexcept {
  if (message->in_flight != nullptr) --*message->in_flight;
  if (message->recycle != nullptr) message->recycle(std::move(message->payload));
  if (message->sent != nullptr) message->sent(message->sent_context);
  delete message;
}
void on_message_sent(void* request, ucs_status_t, void* user_data) noexcept {
  message_sent(static_cast<OutgoingMessage*>(user_data));
  ucx_library().api.ucp_request_free(request);
}
} // namespace

Status send_message(ucp_ep_h endpoint, unsigned id, OutgoingMessage* message, std::uint32_t flags) noexcept {
  const UcxApi& ucx = ucx_library().api;
  if (message->in_flight != nullptr) ++*message->in_flight;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &on_message_sent;
  param.user_data = message;
  param.flags = flags;
  ucs_status_ptr_t request = ucx.ucp_am_send_nbx(endpoint, id, message->header.data(), message->header.size(),
                                                 message->data, message->bytes, &param);
  if (request == nullptr) { // done at once
    message_sent(message);
    return Status();
  }
  if (UCS_PTR_IS_ERR(request)) {
    message_sent(message);
    return ucx_error(ErrorCode::unavailable, "ucp_am_send_nbx", UCS_PTR_STATUS(request));
  }
  return Status();
}

Result<SocketAddress> parse_address(std::string_view text) noexcept {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return make_error(ErrorCode::invalid_argument, "remote address '", text, "' is not host:port");
  }
  unsigned port = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(first, last, port);
  if (error != std::errc() || end != last || port == 0 || port > 65535) {
    return make_error(ErrorCode::invalid_argument, "remote address '", text, "': the port must be 1 to 65535");
  }
  SocketAddress address;
  address.host = std::string(text.substr(0, colon));
  address.port = static_cast<std::uint16_t>(port);
  return address;
}

} // namespace devrt::remote
