// SPDX-License-Identifier: Apache-2.0
// The C API: buffers, copies, streams, events, workspaces, modules and launches.
#include "capi/capi_internal.hpp"

#include <new>
#include <utility>
#include <vector>

using namespace devrt;
using namespace devrt::capi;

// The C++ arguments behind a C argument array (a buffer's span and offset, or a scalar's bits).
Result<std::vector<KernelArg>> devrt::capi::to_kernel_args(const devrt_kernel_arg* args, size_t num_args,
                                                           const char* call) noexcept {
  if (num_args > kMaxKernelArgs) {
    return make_error(ErrorCode::invalid_argument, call, ": ", num_args, " arguments (at most ", kMaxKernelArgs, ")");
  }
  if (num_args > 0 && args == nullptr) return make_error(ErrorCode::invalid_argument, call, ": args is NULL");
  std::vector<KernelArg> converted;
  converted.reserve(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const devrt_kernel_arg& arg = args[i];
    if (arg.kind == DEVRT_ARG_BUFFER) {
      // reserved == 1 marks an offset past the span's end (devrt_arg_span): keep it visible.
      std::size_t size = arg.reserved == 1 ? 0 : arg.offset + arg.size;
      Device device{static_cast<DeviceKind>(arg.device_kind), arg.device_id};
      converted.emplace_back(MemorySpan{device, arg.buffer, size}, arg.offset);
    } else if (arg.kind == DEVRT_ARG_SCALAR) {
      DataType type{static_cast<DataTypeCode>(arg.type_code), arg.type_bits, 1};
      converted.push_back(KernelArg::scalar(type, arg.value.u64));
    } else {
      return make_error(ErrorCode::invalid_argument, call, ": argument ", i, " has kind ", arg.kind,
                        " (want DEVRT_ARG_BUFFER or DEVRT_ARG_SCALAR)");
    }
  }
  return converted;
}

extern "C" {

devrt_status devrt_buffer_allocate(devrt_device device, size_t nbytes, size_t alignment, devrt_buffer* out) {
  if (out == nullptr) return null_argument("devrt_buffer_allocate", "out");
  if (nbytes == 0) {
    return fail(make_error(ErrorCode::invalid_argument, "devrt_buffer_allocate on ", to_cpp(device),
                           ": nbytes is 0 (a buffer holds at least one byte)"));
  }
  Result<Buffer> buffer = Buffer::allocate(to_cpp(device), nbytes, alignment == 0 ? kDefaultAlignment : alignment);
  if (!buffer.ok()) return fail(buffer.status());
  return give_handle(out, "devrt_buffer_allocate", std::move(*buffer));
}

void devrt_buffer_release(devrt_buffer buffer) { delete retire(buffer, "devrt_buffer_release"); }

devrt_status devrt_buffer_allocate_on_stream(devrt_device device, size_t nbytes, const devrt_stream_ref* stream,
                                             devrt_buffer* out) {
  if (stream == nullptr) return null_argument("devrt_buffer_allocate_on_stream", "stream");
  if (out == nullptr) return null_argument("devrt_buffer_allocate_on_stream", "out");
  if (nbytes == 0) {
    return fail(make_error(ErrorCode::invalid_argument, "devrt_buffer_allocate_on_stream on ", to_cpp(device),
                           ": nbytes is 0 (a buffer holds at least one byte)"));
  }
  Result<Buffer> buffer = Buffer::allocate(to_cpp(device), nbytes, to_cpp(stream));
  if (!buffer.ok()) return fail(buffer.status());
  return give_handle(out, "devrt_buffer_allocate_on_stream", std::move(*buffer));
}

devrt_span devrt_buffer_span(devrt_buffer buffer) {
  return (buffer = resolve(buffer, "devrt_buffer_span")) != nullptr ? to_c(buffer->buffer.span()) : devrt_span{};
}

devrt_span devrt_host_span(const void* data, size_t size) { return to_c(host_span(data, size)); }

devrt_status devrt_copy(const devrt_span* src, size_t src_offset, const devrt_span* dst, size_t dst_offset,
                        size_t nbytes, const devrt_stream_ref* stream) {
  if (src == nullptr) return null_argument("devrt_copy", "src");
  if (dst == nullptr) return null_argument("devrt_copy", "dst");
  // What devrt_buffer_span and devrt_workspace_span return for a released or NULL handle.
  auto no_memory = [](const devrt_span* span) {
    return span->device.kind == 0 && span->data == nullptr && span->size == 0;
  };
  if (no_memory(src) || no_memory(dst)) {
    return fail(make_error(ErrorCode::invalid_argument, "devrt_copy: ", no_memory(src) ? "src" : "dst",
                           " is an empty span (device type 0, no memory): the span of a released or NULL handle"));
  }
  DEVRT_CAPI_RETURN_IF_ERROR(check_copy_stream("devrt_copy", to_cpp(src->device), to_cpp(dst->device), stream));
  return to_status(copy(to_cpp(*src), src_offset, to_cpp(*dst), dst_offset, nbytes, to_cpp(stream)));
}

devrt_status devrt_stream_create(devrt_device device, devrt_stream* out) {
  if (out == nullptr) return null_argument("devrt_stream_create", "out");
  Result<Stream> stream = Stream::create(to_cpp(device));
  if (!stream.ok()) return fail(stream.status());
  return give_handle(out, "devrt_stream_create", std::move(*stream));
}

void devrt_stream_release(devrt_stream stream) { delete retire(stream, "devrt_stream_release"); }

devrt_stream_ref devrt_stream_get_ref(devrt_stream stream) {
  return (stream = resolve(stream, "devrt_stream_get_ref")) != nullptr ? to_c(stream->stream.ref())
                                                                       : devrt_stream_ref{};
}

devrt_status devrt_stream_synchronize(devrt_stream_ref stream) { return to_status(synchronize(to_cpp(&stream))); }

devrt_stream_ref devrt_current_stream(devrt_device device) { return to_c(current_stream(to_cpp(device))); }

devrt_status devrt_set_current_stream(devrt_stream_ref stream) {
  // As the header promises: a device that does not exist has no stream to make current.
  if (!device_exists(to_cpp(stream.device))) {
    return fail(make_error(ErrorCode::invalid_argument, "devrt_set_current_stream: device ", to_cpp(stream.device),
                           " does not exist"));
  }
  return to_status(set_current_stream(to_cpp(&stream)));
}

devrt_status devrt_event_create(devrt_device device, devrt_event* out) {
  if (out == nullptr) return null_argument("devrt_event_create", "out");
  Result<Event> event = Event::create(to_cpp(device));
  if (!event.ok()) return fail(event.status());
  return give_handle(out, "devrt_event_create", std::move(*event));
}

void devrt_event_release(devrt_event event) { delete retire(event, "devrt_event_release"); }

devrt_status devrt_event_record(devrt_event event, const devrt_stream_ref* stream) {
  if ((event = resolve(event, "devrt_event_record")) == nullptr) return devrt_last_error_code();
  StreamRef ref = stream != nullptr ? to_cpp(stream) : current_stream(event->event.device());
  return to_status(event->event.record(ref));
}

devrt_status devrt_event_synchronize(devrt_event event) {
  if ((event = resolve(event, "devrt_event_synchronize")) == nullptr) return devrt_last_error_code();
  return to_status(event->event.synchronize());
}

devrt_status devrt_event_query(devrt_event event, int* done) {
  if ((event = resolve(event, "devrt_event_query")) == nullptr) return devrt_last_error_code();
  if (done == nullptr) return null_argument("devrt_event_query", "done");
  Result<bool> complete = event->event.query();
  if (!complete.ok()) return fail(complete.status());
  *done = *complete ? 1 : 0;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_event_wait(devrt_event event, const devrt_stream_ref* stream) {
  if ((event = resolve(event, "devrt_event_wait")) == nullptr) return devrt_last_error_code();
  StreamRef ref = stream != nullptr ? to_cpp(stream) : current_stream(event->event.device());
  return to_status(event->event.wait_on(ref));
}

devrt_status devrt_workspace_allocate(devrt_device device, size_t nbytes, devrt_workspace* out) {
  if (out == nullptr) return null_argument("devrt_workspace_allocate", "out");
  Result<Workspace> block = allocate_workspace(to_cpp(device), nbytes);
  if (!block.ok()) return fail(block.status());
  return give_handle(out, "devrt_workspace_allocate", std::move(*block), to_cpp(device));
}

void devrt_workspace_release(devrt_workspace workspace) { delete retire(workspace, "devrt_workspace_release"); }

devrt_span devrt_workspace_span(devrt_workspace workspace) {
  if ((workspace = resolve(workspace, "devrt_workspace_span")) == nullptr) return devrt_span{};
  return to_c(MemorySpan{workspace->device, workspace->workspace.data(), workspace->workspace.size()});
}

devrt_status devrt_workspace_stats(devrt_device device, devrt_pool_stats* stats) {
  if (stats == nullptr) return null_argument("devrt_workspace_stats", "stats");
  Result<WorkspacePool*> pool = workspace_pool(to_cpp(device));
  if (!pool.ok()) return fail(pool.status());
  PoolStats s = (*pool)->stats();
  *stats = devrt_pool_stats{s.reserved_bytes, s.cached_bytes,        s.cache_limit_bytes,
                            s.hits,           s.backend_allocations, s.backend_frees};
  return DEVRT_STATUS_OK;
}

namespace {
devrt_scope_memory_stats to_c(const ScopeMemoryStats& s) noexcept {
  return devrt_scope_memory_stats{s.allocated_bytes, s.allocated_bytes_peak, s.allocations, s.reserved_bytes,
                                  s.reserved_bytes_peak};
}
} // namespace

static_assert(DEVRT_MEMORY_SCOPE_COUNT == kMemoryScopeCount);

devrt_status devrt_memory_stats(devrt_device device, devrt_device_memory_stats* stats) {
  if (stats == nullptr) return null_argument("devrt_memory_stats", "stats");
  Result<MemoryStats> s = memory_stats(to_cpp(device));
  if (!s.ok()) return fail(s.status());
  devrt_device_memory_stats out{};
  out.total = to_c(s->total);
  for (std::int32_t i = 0; i < kMemoryScopeCount; ++i) out.scopes[i] = to_c(s->scopes[i]);
  out.cached_bytes = s->cached_bytes;
  out.cache_hits = s->cache_hits;
  out.cache_misses = s->cache_misses;
  out.history = s->history ? 1 : 0;
  *stats = out;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_stream_pool_stats(devrt_device device, devrt_stream_pool_figures* stats) {
  if (stats == nullptr) return null_argument("devrt_stream_pool_stats", "stats");
  Result<MemoryStats> s = memory_stats(to_cpp(device));
  if (!s.ok()) return fail(s.status());
  *stats = devrt_stream_pool_figures{s->stream_pool_bytes, s->stream_pool_cached_bytes, s->graph_pool_bytes,
                                     s->stream_pool_hits, s->stream_pool_misses};
  return DEVRT_STATUS_OK;
}

devrt_status devrt_empty_cache(devrt_device device) { return to_status(empty_cache(to_cpp(device))); }

devrt_status devrt_graph_held_memory(devrt_device device, uint64_t* bytes, uint64_t* allocations) {
  Result<MemoryStats> s = memory_stats(to_cpp(device));
  if (!s.ok()) return fail(s.status());
  if (bytes != nullptr) *bytes = s->graph_held_bytes;
  if (allocations != nullptr) *allocations = s->graph_held_allocations;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_reset_peak_memory_stats(devrt_device device) {
  return to_status(reset_peak_memory_stats(to_cpp(device)));
}

devrt_status devrt_set_memory_history(int enabled) {
  if (enabled != 0 && enabled != 1) {
    return fail(ErrorCode::invalid_argument,
                "devrt_set_memory_history: enabled is 0 or 1, not " + std::to_string(enabled));
  }
  set_memory_history(enabled == 1);
  return DEVRT_STATUS_OK;
}

devrt_status devrt_memory_snapshot(devrt_device device, char** json) {
  if (json == nullptr) return null_argument("devrt_memory_snapshot", "json");
  Result<std::string> snapshot = memory_snapshot(to_cpp(device));
  if (!snapshot.ok()) return fail(snapshot.status());
  return give_string(*snapshot, json, "devrt_memory_snapshot");
}

devrt_status devrt_shutdown(void) { return to_status(shutdown()); }

devrt_status devrt_module_load(devrt_device device, int32_t format, const void* data, size_t size, const char* options,
                               devrt_module* out) {
  if (out == nullptr) return null_argument("devrt_module_load", "out");
  if (data == nullptr && size > 0) return null_argument("devrt_module_load", "data");
  std::span<const std::byte> bytes(static_cast<const std::byte*>(data), size);
  std::string log;
  Result<Module> module =
      Module::load(to_cpp(device), static_cast<ModuleFormat>(format), bytes, options != nullptr ? options : "", &log);
  if (!module.ok()) {
    if (log.empty() || module.status().message().find(log) != std::string_view::npos) return fail(module.status());
    return fail(module.status().code(), std::string(module.status().message()) + "\nbuild log:\n" + log);
  }
  return give_handle(out, "devrt_module_load", std::move(*module));
}

devrt_status devrt_module_load_file(devrt_device device, int32_t format, const char* path, const char* options,
                                    devrt_module* out) {
  if (path == nullptr) return null_argument("devrt_module_load_file", "path");
  if (out == nullptr) return null_argument("devrt_module_load_file", "out");
  Result<Module> module =
      Module::load_file(to_cpp(device), static_cast<ModuleFormat>(format), path, options != nullptr ? options : "");
  if (!module.ok()) return fail(module.status());
  return give_handle(out, "devrt_module_load_file", std::move(*module));
}

void devrt_module_release(devrt_module module) { delete retire(module, "devrt_module_release"); }

devrt_status devrt_module_function(devrt_module module, const char* name, devrt_function* out) {
  if ((module = resolve(module, "devrt_module_function")) == nullptr) return devrt_last_error_code();
  if (name == nullptr) return null_argument("devrt_module_function", "name");
  if (out == nullptr) return null_argument("devrt_module_function", "out");
  Result<Function> function = module->module.function(name);
  if (!function.ok()) return fail(function.status());
  return give_handle(out, "devrt_module_function", std::move(*function));
}

devrt_status devrt_module_rewritten_instructions(devrt_module module, uint32_t* count) {
  if ((module = resolve(module, "devrt_module_rewritten_instructions")) == nullptr) return devrt_last_error_code();
  if (count == nullptr) return null_argument("devrt_module_rewritten_instructions", "count");
  Result<std::uint32_t> rewritten = module->module.rewritten_instructions();
  if (!rewritten.ok()) return fail(rewritten.status());
  *count = *rewritten;
  return DEVRT_STATUS_OK;
}

void devrt_function_release(devrt_function function) { delete retire(function, "devrt_function_release"); }

devrt_kernel_arg devrt_arg_span(devrt_span span, size_t offset) { return KernelArg(to_cpp(span), offset).raw(); }
devrt_kernel_arg devrt_arg_i32(int32_t value) { return KernelArg(value).raw(); }
devrt_kernel_arg devrt_arg_i64(int64_t value) { return KernelArg(value).raw(); }
devrt_kernel_arg devrt_arg_u32(uint32_t value) { return KernelArg(value).raw(); }
devrt_kernel_arg devrt_arg_f32(float value) { return KernelArg(value).raw(); }
devrt_kernel_arg devrt_arg_f64(double value) { return KernelArg(value).raw(); }

devrt_status devrt_function_launch(devrt_function function, const uint32_t grid[3], const uint32_t block[3],
                                   size_t dynamic_shared_bytes, const devrt_kernel_arg* args, size_t num_args,
                                   const devrt_stream_ref* stream) {
  if ((function = resolve(function, "devrt_function_launch")) == nullptr) return devrt_last_error_code();
  if (grid == nullptr) return null_argument("devrt_function_launch", "grid");
  if (block == nullptr) return null_argument("devrt_function_launch", "block");
  Result<std::vector<KernelArg>> converted = to_kernel_args(args, num_args, "devrt_function_launch");
  if (!converted.ok()) return fail(converted.status());
  LaunchConfig config{{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, dynamic_shared_bytes};
  std::span<const KernelArg> list(converted->data(), converted->size());
  if (stream == nullptr) return to_status(function->function.launch(config, list));
  return to_status(function->function.launch(config, list, to_cpp(stream)));
}

} // extern "C"
