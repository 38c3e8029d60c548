// SPDX-License-Identifier: Apache-2.0
// A client's queue and thread, and the commands the UCX thread runs for it (session.hpp).
#include <chrono>
#include <string>

#include "remote/session.hpp"

namespace devrt::server {

namespace {
// Commands a client may have queued beyond the one running: a sequence number further ahead is out
// of order.
constexpr std::uint64_t kSequenceWindow = 1u << 16;
// A launch the UCX thread ran that took longer (a driver's full queue; a preemption takes a few
// milliseconds at most): that client's launches go to its own thread from then on, so that they
// hold up no other client again.
constexpr std::chrono::milliseconds kSlowLaunch{20};
} // namespace

Incoming* Client::accept(const wire::Command& command, std::size_t bytes, std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes > message_limit_) {
    why = "a message of " + std::to_string(bytes) + " bytes, beyond this server's largest (--max-message " +
          std::to_string(message_limit_) + ")";
    return nullptr;
  }
  // Every path a command takes (queued, run on arrival, moved in place) starts here.
  if (!wire::payload_fits(command, bytes)) {
    why = "command " + std::to_string(command.op) + " with a payload of " + std::to_string(bytes) + " bytes";
    return nullptr;
  }
  // Before the handshake: its next step, nothing queued behind it.
  const auto op = static_cast<Op>(command.op);
  if (!executor_.joinable() && ((op != Op::hello && op != Op::authenticate) || command.sequence != next_sequence_ ||
                                running_ || !queue_.empty())) {
    why = "command " + std::to_string(command.op) + " (sequence number " + std::to_string(command.sequence) +
          ") before the handshake completed";
    return nullptr;
  }
  if (command.sequence < next_sequence_ || command.sequence - next_sequence_ >= kSequenceWindow ||
      queue_.count(command.sequence) != 0) {
    why = "command sequence number " + std::to_string(command.sequence) + " out of order (expected " +
          std::to_string(next_sequence_) + " onwards)";
    return nullptr;
  }
  // Payloads waiting to run: a client may queue a few of the largest messages, no more.
  if (queued_bytes_ + bytes > 4 * message_limit_) {
    why = "more than " + std::to_string(4 * message_limit_) + " bytes of commands queued";
    return nullptr;
  }
  queued_bytes_ += bytes;
  auto incoming = std::make_unique<Incoming>();
  incoming->command = command;
  incoming->bytes = bytes;
  Incoming* raw = incoming.get();
  queue_[command.sequence] = std::move(incoming);
  return raw;
}

std::unique_ptr<Incoming> Client::take_next() {
  auto it = queue_.find(next_sequence_);
  std::unique_ptr<Incoming> next = std::move(it->second);
  queue_.erase(it);
  queued_bytes_ -= next->bytes;
  ++next_sequence_;
  running_ = true;
  return next;
}

void Client::finish(Incoming& done, bool goes_on) {
  give_staging(std::move(done.data));
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    // After a violation nothing more runs: the UCX thread ends the connection and closes us.
    serving_ = serving_ && goes_on;
    // The client's thread waits for a command or for the end; waking it for neither costs a
    // context switch on every command the UCX thread answers itself.
    auto it = queue_.find(next_sequence_);
    wake = closing_ || (it != queue_.end() && it->second->ready);
  }
  if (wake) wake_.notify_one();
}

void Client::handshake_step(Incoming* incoming) {
  std::unique_ptr<Incoming> step;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming->ready = true;
    if (running_ || !serving_ || closing_ || incoming->command.sequence != next_sequence_) return;
    step = take_next();
  }
  const bool goes_on = runner_.run(step->command, step->data);
  finish(*step, goes_on);
  if (goes_on && runner_.handshaken()) executor_ = std::thread([this] { run(); });
}

void Client::ready(Incoming* incoming) {
  if (!executor_.joinable()) {
    handshake_step(incoming);
    return;
  }
  std::unique_ptr<Incoming> next;
  const void* lent = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming->ready = true;
    // The next command, with this client's thread idle, that runs at once: run here, on the UCX
    // thread, without handing it over and back (CommandRunner::runs_on_arrival). A round trip
    // then costs about what the transport's does, and a launch what a one-way message does.
    if (!running_ && serving_ && !closing_ && incoming->command.sequence == next_sequence_) {
      if (runner_.runs_on_arrival(incoming->command)) {
        next = take_next();
      } else if ((lent = runner_.read_in_place(incoming->command)) != nullptr) {
        in_place_ = take_next();
      }
    }
  }
  if (lent != nullptr) {
    // A read of host memory: the reply is sent from it, and nothing else runs until it has gone.
    Outgoing out;
    out.endpoint = endpoint_;
    out.reply = wire::Reply::for_op(in_place_->command.op);
    out.reply.sequence = in_place_->command.sequence;
    out.lent = lent;
    out.lent_bytes = in_place_->command.request<wire::Read>().bytes;
    out.lender = this;
    host_.send(std::move(out));
    return;
  }
  if (!next) {
    wake_.notify_one();
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  const bool goes_on = runner_.run(next->command, next->data);
  if (static_cast<Op>(next->command.op) == Op::launch && std::chrono::steady_clock::now() - started > kSlowLaunch) {
    runner_.run_launches_on_arrival(false);
  }
  finish(*next, goes_on);
}

void* Client::receive_in_place(Incoming* incoming) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_ || !serving_ || closing_ || incoming->command.sequence != next_sequence_) return nullptr;
  void* place = runner_.write_in_place(incoming->command, incoming->bytes);
  if (place != nullptr) in_place_ = take_next();
  return place;
}

void Client::in_place_done() {
  std::unique_ptr<Incoming> done = std::move(in_place_);
  finish(*done, true);
}

void Client::run() {
  for (;;) {
    std::unique_ptr<Incoming> next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] {
        auto it = queue_.find(next_sequence_);
        return closing_ || (serving_ && !running_ && it != queue_.end() && it->second->ready);
      });
      if (closing_) break;
      next = take_next();
    }
    finish(*next, runner_.run(next->command, next->data));
  }
  {
    // The UCX thread runs nothing more once closing_ is set; wait for what it runs now.
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [this] { return !running_; });
  }
  runner_.release_all();
  finished_.store(true, std::memory_order_release);
}

} // namespace devrt::server
