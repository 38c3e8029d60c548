// SPDX-License-Identifier: Apache-2.0
// TVM's vm.time_evaluator over devrt's TimeEvaluator (devrt/tvm_vm.hpp's time_function): each call
// one whole VM function, the KV caches among its arguments put back to their starting length first
// so that every call measures the same step.
#include <devrt/stream.hpp>
#include <devrt/timing.hpp>

#include "tvm/tvm_vm_value.hpp"

namespace devrt::tvm {
namespace {

// A KV cache's length (and sliding-window position) when the run began.
struct CacheMark {
  detail::KvCacheBox* cache;
  std::int64_t fill_count;
  std::int64_t window_position;
};

constexpr int kMaxTupleDepth = 64;

Status find_caches(std::span<const Value> values, int depth, std::vector<CacheMark>& marks) {
  if (depth > kMaxTupleDepth) {
    return make_error(ErrorCode::invalid_argument, "Relax VM time_function: tuples nested past ", kMaxTupleDepth);
  }
  for (const Value& v : values) {
    if (v.kind() == Value::Kind::tuple) {
      DEVRT_RETURN_IF_ERROR(find_caches(v.tuple(), depth + 1, marks));
    } else if (v.kind() == Value::Kind::object && v.type_key() == "relax.vm.AttentionKVCache") {
      detail::KvCacheBox* cache = detail::unbox<detail::KvCacheBox>(v);
      marks.push_back({cache, cache->fill_count, cache->window_position});
    }
  }
  return Status();
}

void rewind(std::span<const CacheMark> marks) noexcept {
  for (const CacheMark& mark : marks) {
    mark.cache->fill_count = mark.fill_count;
    mark.cache->window_position = mark.window_position;
  }
}

// The current stream of the stream's device is `stream` while it lives (the VM queues its
// kernels on the current stream; the evaluator marks its own).
class CurrentStream {
public:
  explicit CurrentStream(StreamRef stream) noexcept : previous_(current_stream(stream.device)) {
    status_ = set_current_stream(stream);
  }
  ~CurrentStream() {
    if (status_.ok()) static_cast<void>(set_current_stream(previous_));
  }
  CurrentStream(const CurrentStream&) = delete;
  CurrentStream& operator=(const CurrentStream&) = delete;
  const Status& status() const noexcept { return status_; }

private:
  StreamRef previous_;
  Status status_;
};

} // namespace

Result<std::vector<double>> time_function(VirtualMachine& vm, TimeEvaluator& evaluator, std::string_view name,
                                          std::span<const Value> args) noexcept {
  if (vm.devices().empty()) return make_error(ErrorCode::invalid_argument, "Relax VM: an empty VirtualMachine");
  const Device device = vm.devices()[0];
  if (evaluator.device() != device) {
    return make_error(ErrorCode::invalid_argument, "Relax VM time_function: the evaluator measures ",
                      to_string(evaluator.device()), ", the VM runs on ", to_string(device));
  }
  if (evaluator.replays_captures()) {
    return make_error(ErrorCode::unsupported, "Relax VM time_function on ", to_string(device),
                      ": a remote device times a captured batch, and a capture cannot replay the VM's host work "
                      "(shape heap, storage, KV caches run in this process); time VirtualMachine::call with a "
                      "host clock instead");
  }
  std::vector<CacheMark> marks;
  DEVRT_RETURN_IF_ERROR(find_caches(args, 0, marks));
  auto one_step = [&](StreamRef stream) noexcept -> Status {
    CurrentStream current(stream);
    DEVRT_RETURN_IF_ERROR(current.status());
    rewind(marks);
    return vm.call(name, args).status();
  };
  Result<std::vector<double>> seconds = evaluator.run(one_step);
  rewind(marks);
  return seconds;
}

} // namespace devrt::tvm
