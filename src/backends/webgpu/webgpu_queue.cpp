// SPDX-License-Identifier: Apache-2.0
// The WebGPU backend's queue: the batch of recorded work and its submission, the uniform ring the
// launches' scalars live in, writes, reads through a kept staging buffer, and waiting. Every
// function here runs on the worker thread (webgpu_state.hpp).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "webgpu_state.hpp"

namespace devrt::webgpu {

namespace {

constexpr std::uint64_t align_down(std::uint64_t value) { return value & ~std::uint64_t{3}; }
constexpr std::uint64_t align_up(std::uint64_t value) { return (value + 3) & ~std::uint64_t{3}; }

// The uniform ring's slots: 256 launches a batch at most.
constexpr std::uint32_t kRingSlots = 256;
// A read's staging buffer is kept for the next read up to this size (larger reads make their own).
constexpr std::uint64_t kStagingKept = std::uint64_t{64} << 20;
// and is never made smaller than this, so that small reads of different sizes share one.
constexpr std::uint64_t kStagingMinimum = std::uint64_t{64} << 10;

void end_pass(const Api& api, Batch& batch) {
  if (batch.pass == nullptr) return;
  api.wgpuComputePassEncoderEnd(batch.pass);
  api.wgpuComputePassEncoderRelease(batch.pass);
  batch.pass = nullptr;
  batch.pipeline = nullptr;
  batch.group = nullptr;
}

// The answer of an asynchronous call that reports a status and a message (a map, the queue's work
// done), set by the callback that callback() describes (on the worker, while it processes events).
struct StatusAnswer {
  std::atomic<bool> done{false};
  WGPUEnum status = 0;
  std::string message;

  template <class Info>
  Info callback() noexcept {
    Info info{};
    info.mode = kCallbackModeAllowProcessEvents;
    info.callback = [](WGPUEnum status, WGPUStringView message, void* data, void*) {
      auto* a = static_cast<StatusAnswer*>(data);
      a->status = status;
      a->message = text(message);
      a->done.store(true, std::memory_order_release);
    };
    info.userdata1 = this;
    return info;
  }
};

// The ring's slots [first, end) into its buffer, in queue order before the batch's submission.
void write_slots(const Api& api, DeviceState& d, std::uint64_t first, std::uint64_t end) {
  UniformRing& ring = d.ring;
  while (first < end) {
    const std::uint64_t index = first % ring.slots;
    const std::uint64_t count = std::min<std::uint64_t>(end - first, ring.slots - index);
    const std::uint64_t offset = index * ring.slot_bytes;
    api.wgpuQueueWriteBuffer(d.queue, ring.buffer, offset, ring.shadow.data() + offset,
                             static_cast<std::size_t>(count * ring.slot_bytes));
    first += count;
  }
}

} // namespace

Status check_device(DeviceState& d) {
  if (d.lost.load(std::memory_order_acquire)) {
    return make_error(ErrorCode::driver_error, "the WebGPU device was lost: ", d.lost_message);
  }
  if (d.pending_code != ErrorCode::ok) {
    const ErrorCode code = d.pending_code;
    std::string message = std::move(d.pending_error);
    d.pending_code = ErrorCode::ok;
    d.pending_error.clear();
    return make_error(code, "work submitted earlier failed: ", message);
  }
  return Status();
}

namespace {

// The batch, begun if there is none: its uniform slots start at the ring's next one.
void begin_batch(const Runtime& rt, DeviceState& d) {
  if (d.batch.encoder != nullptr) return;
  d.batch.encoder = rt.api.wgpuDeviceCreateCommandEncoder(d.device, nullptr);
  d.batch.first_slot = d.ring.next;
}

} // namespace

void note_error(DeviceState& d, const Status& status, std::string_view what) {
  d.idle_through.store(0, std::memory_order_release);
  if (d.pending_code != ErrorCode::ok) return; // the first one is reported
  d.pending_code = status.code();
  d.pending_error = std::string(what) + ": " + std::string(status.message());
}

bool known_idle(const DeviceState& d) {
  const std::uint64_t through = d.idle_through.load(std::memory_order_acquire);
  return through != 0 && through == worker().enqueued() && !d.lost.load(std::memory_order_acquire);
}

namespace {

// Records that the device has run everything the tasks up to this one gave it, with no error.
void mark_idle(DeviceState& d) { d.idle_through.store(worker().running(), std::memory_order_release); }

} // namespace

WGPUCommandEncoder batch_encoder(const Runtime& rt, DeviceState& d) {
  end_pass(rt.api, d.batch);
  begin_batch(rt, d);
  return d.batch.encoder;
}

WGPUComputePassEncoder batch_pass(const Runtime& rt, DeviceState& d) {
  Batch& batch = d.batch;
  if (batch.pass == nullptr) {
    begin_batch(rt, d);
    batch.pass = rt.api.wgpuCommandEncoderBeginComputePass(batch.encoder, nullptr);
  }
  return batch.pass;
}

void submit(const Runtime& rt, DeviceState& d) {
  const Api& api = rt.api;
  Batch& batch = d.batch;
  if (batch.encoder == nullptr) return;
  d.idle_through.store(0, std::memory_order_release);
  end_pass(api, batch);
  write_slots(api, d, batch.first_slot, d.ring.next);
  WGPUCommandBuffer commands = api.wgpuCommandEncoderFinish(batch.encoder, nullptr);
  api.wgpuQueueSubmit(d.queue, 1, &commands);
  api.wgpuCommandBufferRelease(commands);
  api.wgpuCommandEncoderRelease(batch.encoder);
  batch = Batch{};
}

Status flush(const Runtime& rt, DeviceState& d) {
  submit(rt, d);
  return check_device(d);
}

Result<std::uint64_t> take_uniform_slot(const Runtime& rt, DeviceState& d, std::span<const std::uint32_t> words) {
  UniformRing& ring = d.ring;
  if (ring.buffer == nullptr) {
    const std::uint32_t slot_bytes = std::max<std::uint32_t>(256, d.limits.minUniformBufferOffsetAlignment);
    DEVRT_ASSIGN_OR_RETURN(ring.buffer,
                           create_buffer(rt, d, std::uint64_t{slot_bytes} * kRingSlots, kUsageUniform | kUsageCopyDst));
    ring.shadow.assign(std::size_t{slot_bytes} * kRingSlots, std::byte{0});
    ring.slot_bytes = slot_bytes;
    ring.slots = kRingSlots;
  }
  if (words.size() * 4 > ring.slot_bytes) {
    return make_error(ErrorCode::invalid_argument, words.size(), " scalar words exceed a uniform slot of ",
                      ring.slot_bytes, " bytes");
  }
  if (d.batch.encoder != nullptr && ring.next - d.batch.first_slot >= ring.slots) submit(rt, d);
  begin_batch(rt, d);
  const std::uint64_t position = ring.next++;
  std::memcpy(ring.shadow.data() + slot_offset(d, position), words.data(), words.size() * 4);
  return position;
}

bool slot_intact(const DeviceState& d, std::uint64_t position) { return d.ring.next - position <= d.ring.slots; }

std::uint64_t slot_offset(const DeviceState& d, std::uint64_t position) {
  return (position % d.ring.slots) * d.ring.slot_bytes;
}

Status wait_idle(const Runtime& rt, DeviceState& d) {
  DEVRT_RETURN_IF_ERROR(flush(rt, d));
  StatusAnswer answer;
  rt.api.wgpuQueueOnSubmittedWorkDone(d.queue, answer.callback<WGPUQueueWorkDoneCallbackInfo>());
  if (!wait_for(rt, answer.done)) {
    return make_error(ErrorCode::timed_out, "the queue did not finish within 30 s (wgpuQueueOnSubmittedWorkDone)");
  }
  DEVRT_RETURN_IF_ERROR(check_device(d));
  if (answer.status != kSuccess) {
    return make_error(ErrorCode::driver_error, failure("wgpuQueueOnSubmittedWorkDone", answer.status, answer.message));
  }
  mark_idle(d);
  return Status();
}

namespace {

// A MapRead staging buffer of at least `bytes`: the kept one, grown if needed, or (beyond
// kStagingKept) one of its own that `temporary` says to release.
Result<WGPUBuffer> staging_for(const Runtime& rt, DeviceState& d, std::uint64_t bytes, bool& temporary) {
  temporary = bytes > kStagingKept;
  if (temporary) return create_buffer(rt, d, bytes, kUsageMapRead | kUsageCopyDst);
  if (d.staging != nullptr && d.staging_bytes >= bytes) return d.staging;
  std::uint64_t size = kStagingMinimum;
  while (size < bytes) size *= 2;
  DEVRT_ASSIGN_OR_RETURN(WGPUBuffer made, create_buffer(rt, d, size, kUsageMapRead | kUsageCopyDst));
  if (d.staging != nullptr) release_buffer(rt.api, d.staging);
  d.staging = made;
  d.staging_bytes = size;
  return made;
}

Status map_and_copy(const Runtime& rt, WGPUBuffer staging, std::uint64_t bytes, void* out) {
  const Api& api = rt.api;
  StatusAnswer answer;
  api.wgpuBufferMapAsync(staging, kMapRead, 0, static_cast<std::size_t>(bytes),
                         answer.callback<WGPUBufferMapCallbackInfo>());
  if (!wait_for(rt, answer.done))
    return make_error(ErrorCode::timed_out, "wgpuBufferMapAsync did not finish within 30 s");
  if (answer.status != kSuccess)
    return make_error(ErrorCode::driver_error, failure("wgpuBufferMapAsync", answer.status, answer.message));
  const void* mapped = api.wgpuBufferGetConstMappedRange(staging, 0, static_cast<std::size_t>(bytes));
  Status status;
  if (mapped == nullptr) {
    status = make_error(ErrorCode::driver_error, "wgpuBufferGetConstMappedRange returned null");
  } else {
    std::memcpy(out, mapped, static_cast<std::size_t>(bytes));
  }
  api.wgpuBufferUnmap(staging);
  return status;
}

// Reads [offset, offset + bytes) of `source` (both multiples of 4) into `out`: the copy into the
// staging buffer ends the batch, which is submitted, and the staging buffer is mapped.
Status read_aligned(const Runtime& rt, DeviceState& d, WGPUBuffer source, std::uint64_t offset, std::uint64_t bytes,
                    void* out) {
  bool temporary = false;
  DEVRT_ASSIGN_OR_RETURN(WGPUBuffer staging, staging_for(rt, d, bytes, temporary));
  rt.api.wgpuCommandEncoderCopyBufferToBuffer(batch_encoder(rt, d), source, offset, staging, 0, bytes);
  Status status = flush(rt, d);
  if (status.ok()) status = map_and_copy(rt, staging, bytes, out);
  if (temporary) release_buffer(rt.api, staging);
  if (status.ok()) status = check_device(d);
  if (status.ok()) mark_idle(d); // the copy ran after everything before it
  return status;
}

} // namespace

// Writes directly when offset and size are multiples of 4 (the queue copies the host bytes before
// returning), else reads the 4-byte words at the edges first.
Status write_bytes(const Runtime& rt, DeviceState& d, const Allocation& target, std::uint64_t offset,
                   const std::byte* data, std::uint64_t bytes) {
  DEVRT_RETURN_IF_ERROR(flush(rt, d)); // a queue write runs before anything not yet submitted
  d.idle_through.store(0, std::memory_order_release);
  if (offset % 4 == 0 && bytes % 4 == 0) {
    rt.api.wgpuQueueWriteBuffer(d.queue, target.buffer, offset, data, static_cast<std::size_t>(bytes));
    return check_device(d);
  }
  const std::uint64_t begin = align_down(offset);
  const std::uint64_t end = std::min(align_up(offset + bytes), target.size);
  std::vector<std::byte> window(static_cast<std::size_t>(end - begin));
  DEVRT_RETURN_IF_ERROR(read_aligned(rt, d, target.buffer, begin, end - begin, window.data()));
  std::memcpy(window.data() + (offset - begin), data, static_cast<std::size_t>(bytes));
  d.idle_through.store(0, std::memory_order_release); // the read marked it idle
  rt.api.wgpuQueueWriteBuffer(d.queue, target.buffer, begin, window.data(), window.size());
  return check_device(d);
}

Status read_bytes(const Runtime& rt, DeviceState& d, const Allocation& source, std::uint64_t offset, std::byte* out,
                  std::uint64_t bytes) {
  const std::uint64_t begin = align_down(offset);
  const std::uint64_t end = std::min(align_up(offset + bytes), source.size);
  if (begin == offset && end - begin == bytes) return read_aligned(rt, d, source.buffer, begin, bytes, out);
  std::vector<std::byte> window(static_cast<std::size_t>(end - begin));
  DEVRT_RETURN_IF_ERROR(read_aligned(rt, d, source.buffer, begin, end - begin, window.data()));
  std::memcpy(out, window.data() + (offset - begin), static_cast<std::size_t>(bytes));
  return Status();
}

} // namespace devrt::webgpu
