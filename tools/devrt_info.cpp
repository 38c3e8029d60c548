// SPDX-License-Identifier: Apache-2.0
// devrt-info: what devrt sees on this machine (like clinfo / vulkaninfo), and a self-test.
//
//   devrt-info             every backend (compiled in; available or why not), every device with
//                          every attribute
//   devrt-info --json      the same as JSON (keys documented in docs/devrt-info.md)
//   devrt-info --selftest  allocate -> copy -> verify on every available device; exit 1 on failure
//   devrt-info --build     how this devrt was built, and what it finds at run time
// {fmt} 9 (Debian 12) parses a fill character into a 4-byte array with a loop that GCC 12's
// optimiser misreads at -O3 as writing past it (-Wstringop-overflow, fixed in {fmt} 10): silenced
// for {fmt}'s headers only, where the diagnostic is located.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include <fmt/format.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <devrt/backend/attribute_value.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/build_info.hpp>
#include <devrt/devrt.hpp>
#include <devrt/format.hpp>
#include <devrt/memory_stats.hpp>
#include <devrt/plugin.hpp>
#include <devrt/remote.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "support/json.hpp"

namespace {

// ---- Drivers' own stderr ------------------------------------------------------------------------
//
// Drivers print on stderr while devrt opens them (Mesa's EGL without a display session, Dawn
// probing adapters it then refuses). Printed as they come, those lines land inside devrt-info's
// listing and read as its errors. So devrt-info holds stderr while each backend is discovered and
// queried, prints its listing, then says once what the drivers printed, in devrt's words. Lines of
// devrt's own log ("devrt warning: ...") are passed on as they were.

struct DriverNoise {
  std::string backend;
  std::vector<std::string> lines;
};
std::vector<DriverNoise> g_noise;

// Runs `work` with file descriptor 2 sent to a temporary file; what arrived there is kept for
// `backend`. Without a temporary file, stderr is left alone.
template <class Work>
void holding_stderr(std::string_view backend, Work&& work) {
  std::fflush(stderr);
  std::FILE* held = std::tmpfile();
  const int saved = held != nullptr ? ::dup(2) : -1;
  if (saved < 0 || ::dup2(::fileno(held), 2) < 0) {
    if (saved >= 0) ::close(saved);
    if (held != nullptr) std::fclose(held);
    std::forward<Work>(work)();
    return;
  }
  std::forward<Work>(work)();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(held);
  DriverNoise noise{std::string(backend), {}};
  char line[4096];
  while (std::fgets(line, sizeof line, held) != nullptr) {
    std::string_view text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (text.starts_with("devrt ")) {
      fmt::print(stderr, "{}\n", text); // devrt's own log
    } else if (!text.empty()) {
      noise.lines.emplace_back(text);
    }
  }
  std::fclose(held);
  if (!noise.lines.empty()) g_noise.push_back(std::move(noise));
}

// What a known driver line means, or null.
const char* explain(std::string_view line) {
  if (line.find("XDG_RUNTIME_DIR") != std::string_view::npos)
    return "Mesa's EGL found no session directory (XDG_RUNTIME_DIR): no display here, harmless for compute";
  if (line.find("ArrayDynamicIndexing") != std::string_view::npos ||
      line.find("While initializing adapter (backend=BackendType::Vulkan)") != std::string_view::npos ||
      line.find("InitializeImpl") != std::string_view::npos)
    return "Dawn refused this Vulkan driver as a WebGPU adapter (it lacks dynamic indexing of descriptor arrays); "
           "devrt uses another adapter (OpenGL ES) instead";
  return nullptr;
}

// Once, after the listing: what the drivers printed, by backend, on stderr.
void report_driver_noise() {
  if (g_noise.empty()) return;
  std::fflush(stdout); // after the listing, also where both go to one pipe
  fmt::print(stderr, "devrt-info: drivers printed on stderr while devrt opened them (their messages, not errors "
                     "of devrt's):\n");
  for (const DriverNoise& noise : g_noise) {
    fmt::print(stderr, "  {}: {} line{}\n", noise.backend, noise.lines.size(), noise.lines.size() == 1 ? "" : "s");
    std::vector<const char*> said;
    for (const std::string& line : noise.lines) {
      const char* meaning = explain(line);
      if (meaning == nullptr) {
        fmt::print(stderr, "    | {}\n", line);
      } else if (std::find(said.begin(), said.end(), meaning) == said.end()) {
        said.push_back(meaning);
        fmt::print(stderr, "    {}\n", meaning);
      }
    }
  }
}

// A device kind's name, or its number for a kind devrt does not name (a new backend's own).
std::string kind_label(devrt::DeviceKind kind) {
  std::string_view name = devrt::device_kind_name(kind);
  return name.empty() ? std::to_string(static_cast<int>(kind)) : std::string(name);
}

using devrt::Attribute;
using devrt::AttributeValue;
using devrt::BackendRef;
using devrt::Device;
using devrt::Status;

constexpr int kJsonSchemaVersion = 3;

using devrt::detail::json_string;

std::string attribute_text(const AttributeValue& value, bool json) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const std::string* s = std::get_if<std::string>(&value)) return json ? json_string(*s) : *s;
  if (const devrt::Dim3* d = std::get_if<devrt::Dim3>(&value)) {
    return json ? fmt::format("[{}, {}, {}]", d->x, d->y, d->z) : fmt::format("({}, {}, {})", d->x, d->y, d->z);
  }
  return json ? "null" : "(not reported)";
}

// A device's api_version as its API writes it, beside the integer devrt reports (TVM's kApiVersion):
// Vulkan's packed VK_API_VERSION, OpenCL's 100 * major + 10 * minor, the CUDA driver's 1000 * major
// + 10 * minor, HIP's 10000000 * major + 100000 * minor + patch.
std::string api_version_text(devrt::DeviceKind kind, std::int64_t v) {
  switch (kind) {
  case devrt::DeviceKind::vulkan:
    return fmt::format("Vulkan {}.{}.{} ({})", (v >> 22) & 0x7F, (v >> 12) & 0x3FF, v & 0xFFF, v);
  case devrt::DeviceKind::opencl: return fmt::format("OpenCL {}.{} ({})", v / 100, v % 100 / 10, v);
  case devrt::DeviceKind::cuda:
  case devrt::DeviceKind::cuda_host: return fmt::format("CUDA driver {}.{} ({})", v / 1000, v % 1000 / 10, v);
  case devrt::DeviceKind::rocm:
    return fmt::format("HIP {}.{}.{} ({})", v / 10000000, v % 10000000 / 100000, v % 100000, v);
  default: return std::to_string(v);
  }
}

std::vector<std::string> capability_names(BackendRef backend) {
  std::vector<std::string> names;
  if (backend.has_capability(DEVRT_CAP_EVENTS)) names.emplace_back("events");
  if (backend.has_event_timing()) names.emplace_back("timed_events");
  if (backend.has_capability(DEVRT_CAP_HOST_ACCESSIBLE)) names.emplace_back("host_accessible");
  if (backend.has_capability(DEVRT_CAP_ADDRESSABLE)) names.emplace_back("addressable");
  if (backend.has_modules()) {
    for (std::int32_t format = 1; format < DEVRT_MODULE_FORMAT_COUNT; ++format) {
      if (backend.loads_module_format(format)) {
        names.push_back("modules:" + std::string(devrt::module_format_name(static_cast<devrt::ModuleFormat>(format))));
      }
    }
    if (backend.module_formats() == 0) names.emplace_back("modules");
  }
  if (backend.has_capability(DEVRT_CAP_CHECKED_LAUNCH_ARGUMENTS)) names.emplace_back("checked_launch_arguments");
  if (backend.has_capability(DEVRT_CAP_TEXTURE_ARGUMENTS)) names.emplace_back("texture_arguments");
  if (backend.has_capability(DEVRT_CAP_SYNCHRONOUS)) names.emplace_back("synchronous");
  if (backend.has_device_synchronize()) names.emplace_back("device_synchronize");
  return names;
}

// The memory scopes `device` has, each with its limits.
std::vector<devrt::ScopeLimits> scopes_of(Device device) {
  std::vector<devrt::ScopeLimits> scopes;
  for (std::int32_t i = 0; i < devrt::kMemoryScopeCount; ++i) {
    devrt::Result<devrt::ScopeLimits> limits = devrt::scope_limits(device, static_cast<devrt::MemoryScope>(i));
    if (limits.ok()) scopes.push_back(*limits);
  }
  return scopes;
}

// Them as text ("global, global.texture 16384x16384x2048 layers (float16)") or a JSON array.
std::string scopes_text(Device device) {
  std::string out;
  for (const devrt::ScopeLimits& limits : scopes_of(device)) {
    out += fmt::format("{}{}", out.empty() ? "" : ", ", devrt::to_string(limits.scope));
    if (devrt::is_texture_scope(limits.scope)) {
      out += fmt::format(" {}x{}", limits.max_width, limits.max_height);
      if (limits.max_layers > 0) out += fmt::format("x{} layers", limits.max_layers);
      if (limits.half_texels) out += " (float16)";
    } else if (limits.max_bytes > 0) {
      out += fmt::format(" {} bytes", limits.max_bytes);
    }
  }
  return out;
}

std::string scopes_json(Device device) {
  std::string out;
  for (const devrt::ScopeLimits& limits : scopes_of(device)) {
    out += fmt::format("{}{{\"scope\": {}, \"max_width\": {}, \"max_height\": {}, \"max_layers\": {}, "
                       "\"max_bytes\": {}, \"half_texels\": {}}}",
                       out.empty() ? "" : ", ", json_string(devrt::to_string(limits.scope)), limits.max_width,
                       limits.max_height, limits.max_layers, limits.max_bytes, limits.half_texels ? "true" : "false");
  }
  return "[" + out + "]";
}

// The device's Buffer cache in one line: its figures, or why it has none.
std::string buffer_cache_text(BackendRef backend, Device device) {
  if (!devrt::buffer_cache_enabled()) return "off (DEVRT_BUFFER_CACHE=0 or set_buffer_cache_enabled(false))";
  if (!backend.can_synchronize_device()) {
    return fmt::format("none: the {} backend cannot tell when freed memory is idle", backend.name());
  }
  devrt::Result<devrt::PoolStats> stats = devrt::buffer_cache_stats(device);
  if (!stats.ok()) return fmt::format("error: {}", stats.status());
  return fmt::format("on: {} B reserved, {} B cached, {} hits, {} backend allocations, {} frees", stats->reserved_bytes,
                     stats->cached_bytes, stats->hits, stats->backend_allocations, stats->backend_frees);
}

// The same as a JSON object, or null for a device without a cache.
std::string buffer_cache_json(BackendRef backend, Device device) {
  if (!devrt::buffer_cache_enabled()) return "null";
  if (!backend.can_synchronize_device()) return "null";
  devrt::Result<devrt::PoolStats> stats = devrt::buffer_cache_stats(device);
  if (!stats.ok()) return "null";
  return fmt::format("{{\"reserved_bytes\": {}, \"cached_bytes\": {}, \"limit_bytes\": {}, \"hits\": {}, "
                     "\"backend_allocations\": {}, \"backend_frees\": {}}}",
                     stats->reserved_bytes, stats->cached_bytes, stats->cache_limit_bytes, stats->hits,
                     stats->backend_allocations, stats->backend_frees);
}

// The device's memory figures (devrt::memory_stats) in one line.
std::string memory_text(Device device) {
  devrt::Result<devrt::MemoryStats> stats = devrt::memory_stats(device);
  if (!stats.ok()) return fmt::format("error: {}", stats.status());
  return fmt::format("{} B allocated ({} allocations, peak {} B), {} B reserved (peak {} B), {} B cached, "
                     "{} cache hits, {} misses",
                     stats->total.allocated_bytes, stats->total.allocations, stats->total.allocated_bytes_peak,
                     stats->total.reserved_bytes, stats->total.reserved_bytes_peak, stats->cached_bytes,
                     stats->cache_hits, stats->cache_misses);
}

// The same as a JSON object (the totals, and each scope that has held memory), or null.
std::string memory_json(Device device) {
  devrt::Result<devrt::MemoryStats> stats = devrt::memory_stats(device);
  if (!stats.ok()) return "null";
  auto figures = [](const devrt::ScopeMemoryStats& s) {
    return fmt::format("{{\"allocated_bytes\": {}, \"allocated_bytes_peak\": {}, \"allocations\": {}, "
                       "\"reserved_bytes\": {}, \"reserved_bytes_peak\": {}}}",
                       s.allocated_bytes, s.allocated_bytes_peak, s.allocations, s.reserved_bytes,
                       s.reserved_bytes_peak);
  };
  std::string scopes;
  for (std::int32_t scope = 0; scope < devrt::kMemoryScopeCount; ++scope) {
    const devrt::ScopeMemoryStats& s = stats->scopes[scope];
    if (scope != 0 && s.reserved_bytes_peak == 0) continue;
    scopes += fmt::format("{}{}: {}", scopes.empty() ? "" : ", ",
                          json_string(devrt::to_string(static_cast<devrt::MemoryScope>(scope))), figures(s));
  }
  return fmt::format("{{\"total\": {}, \"scopes\": {{{}}}, \"cached_bytes\": {}, \"cache_hits\": {}, "
                     "\"cache_misses\": {}}}",
                     figures(stats->total), scopes, stats->cached_bytes, stats->cache_hits, stats->cache_misses);
}

// Availability and device count, folded into one answer.
struct BackendState {
  Status status;
  std::int32_t devices = 0;
};

// An implementation that stands by (another serves its device kind) reads as unavailable, with
// the reason.
BackendState probe(BackendRef backend) {
  BackendState state;
  state.status = backend.availability();
  if (state.status.ok()) state.status = devrt::Registry::global().standing_by(backend);
  if (!state.status.ok()) return state;
  devrt::Result<std::int32_t> count = backend.device_count();
  if (count.ok()) {
    state.devices = *count;
  } else {
    state.status = count.status();
  }
  return state;
}

void print_backend(BackendRef backend);

int list_text() {
  devrt::Registry& registry = devrt::Registry::global();
  fmt::print("devrt {} - {} backend{} compiled in\n", DEVRT_VERSION_STRING, registry.size(),
             registry.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < registry.size(); ++i) {
    BackendRef backend = registry.at(i);
    holding_stderr(backend.name(), [&] { print_backend(backend); });
  }
  report_driver_noise();
  return 0;
}

// One backend of the listing: its availability, each device with its attributes and figures.
void print_backend(BackendRef backend) {
  BackendState state = probe(backend);
  fmt::print("\nbackend {} (device kind {}):", backend.name(), kind_label(backend.kind()));
  if (!state.status.ok()) {
    fmt::print(" unavailable: {}\n", state.status.message());
    return;
  }
  fmt::print(" available, {} device{}\n", state.devices, state.devices == 1 ? "" : "s");
  for (std::int32_t id = 0; id < state.devices; ++id) {
    fmt::print("  {}\n", Device{backend.kind(), id});
    if (devrt::Result<devrt::remote::DeviceInfo> remote = devrt::remote::describe(Device{backend.kind(), id});
        remote.ok()) {
      fmt::print("    {:<30} {} on devrt-server {}{}\n", "served_by", Device{remote->kind, remote->index},
                 remote->server, remote->lost ? fmt::format(" (lost: {})", remote->lost_reason) : "");
    }
    for (std::int32_t a = 0; a < devrt::kAttributeCount; ++a) {
      auto attribute = static_cast<Attribute>(a);
      devrt::Result<AttributeValue> value = devrt::get_attribute(Device{backend.kind(), id}, attribute);
      std::string text = value.ok() ? attribute_text(*value, false) : fmt::format("error: {}", value.status());
      const std::int64_t* number = value.ok() ? std::get_if<std::int64_t>(&*value) : nullptr;
      if (attribute == Attribute::api_version && number != nullptr) text = api_version_text(backend.kind(), *number);
      fmt::print("    {:<30} {}\n", devrt::attribute_name(attribute), text);
    }
    devrt::Result<devrt::Target> target = devrt::detect_target(Device{backend.kind(), id});
    fmt::print("    {:<30} {}\n", "target",
               target.ok() ? target->to_string() : fmt::format("(not detected: {})", target.status().message()));
    fmt::print("    {:<30} {}\n", "buffer_cache", buffer_cache_text(backend, Device{backend.kind(), id}));
    fmt::print("    {:<30} {}\n", "memory_scopes", scopes_text(Device{backend.kind(), id}));
    fmt::print("    {:<30} {}\n", "memory", memory_text(Device{backend.kind(), id}));
  }
}

std::string backend_json(BackendRef backend, bool first);

int list_json() {
  devrt::Registry& registry = devrt::Registry::global();
  std::string out =
      fmt::format("{{\n  \"schema_version\": {},\n  \"devrt_version\": {},\n  \"build\": {},\n  \"backends\": [",
                  kJsonSchemaVersion, json_string(DEVRT_VERSION_STRING), devrt::build_info_json());
  for (std::size_t i = 0; i < registry.size(); ++i) {
    BackendRef backend = registry.at(i);
    holding_stderr(backend.name(), [&] { out += backend_json(backend, i == 0); });
  }
  out += "\n  ]\n}\n";
  fmt::print("{}", out);
  report_driver_noise();
  return 0;
}

// One backend of the JSON listing (`first`: no comma before it).
std::string backend_json(BackendRef backend, bool first) {
  std::string out;
  BackendState state = probe(backend);
  std::string capabilities;
  for (const std::string& name : capability_names(backend)) {
    capabilities += (capabilities.empty() ? "" : ", ") + json_string(name);
  }
  out += fmt::format("{}\n    {{\n      \"name\": {},\n      \"device_kind\": {},\n      \"device_kind_id\": {},\n"
                     "      \"capabilities\": [{}],\n      \"available\": {},\n      \"reason\": {},\n"
                     "      \"devices\": [",
                     first ? "" : ",", json_string(backend.name()), json_string(kind_label(backend.kind())),
                     static_cast<int>(backend.kind()), capabilities, state.status.ok() ? "true" : "false",
                     state.status.ok() ? "null" : json_string(state.status.message()));
  for (std::int32_t id = 0; id < state.devices; ++id) {
    Device device{backend.kind(), id};
    out += fmt::format("{}\n        {{\n          \"device\": {},\n          \"id\": {},\n          \"attributes\": {{",
                       id == 0 ? "" : ",", json_string(devrt::to_string(device)), id);
    for (std::int32_t a = 0; a < devrt::kAttributeCount; ++a) {
      auto attribute = static_cast<Attribute>(a);
      devrt::Result<AttributeValue> value = devrt::get_attribute(device, attribute);
      out += fmt::format("{}\n            {}: {}", a == 0 ? "" : ",", json_string(devrt::attribute_name(attribute)),
                         value.ok() ? attribute_text(*value, true) : "null");
    }
    devrt::Result<devrt::Target> target = devrt::detect_target(device);
    out += fmt::format("\n          }},\n          \"target\": {},\n          \"target_error\": {},\n"
                       "          \"buffer_cache\": {},\n          \"memory_scopes\": {},\n"
                       "          \"memory\": {}\n        }}",
                       target.ok() ? target->to_json() : "null",
                       target.ok() ? "null" : json_string(target.status().message()),
                       buffer_cache_json(backend, device), scopes_json(device), memory_json(device));
  }
  out += state.devices > 0 ? "\n      ]\n    }" : "]\n    }";
  return out;
}

// host tensor -> device tensor -> DLPack export -> import -> host tensor -> verify.
Status selftest_tensor(Device device) {
  constexpr std::int64_t kRows = 129;
  constexpr std::int64_t kCols = 67;
  std::vector<float> values(kRows * kCols), back(kRows * kCols, 0.0f);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 7.0f;
  DEVRT_ASSIGN_OR_RETURN(devrt::Tensor on_device,
                         devrt::Tensor::empty({kRows, kCols}, devrt::DataType::float32(), device));
  DEVRT_RETURN_IF_ERROR(on_device.copy_from_host(values.data(), values.size() * sizeof(float)));
  devrt::Tensor imported;
  if (device.kind == devrt::DeviceKind::remote) { // the server's memory: DLPack export is refused
    devrt::Result<DLManagedTensor*> refused = on_device.to_dlpack();
    if (refused.ok() || refused.status().code() != devrt::ErrorCode::unsupported) {
      if (refused.ok()) (*refused)->deleter(*refused);
      return devrt::make_error(devrt::ErrorCode::internal, "selftest ", device, ": DLPack export was not refused");
    }
    imported = std::move(on_device);
  } else {
    DEVRT_ASSIGN_OR_RETURN(DLManagedTensor * exported, on_device.to_dlpack());
    DEVRT_ASSIGN_OR_RETURN(imported, devrt::Tensor::from_dlpack(exported));
  }
  DEVRT_ASSIGN_OR_RETURN(devrt::Tensor on_host, imported.to(devrt::kHostDevice));
  DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
  DEVRT_RETURN_IF_ERROR(on_host.copy_to_host(back.data(), back.size() * sizeof(float)));
  if (std::memcmp(values.data(), back.data(), values.size() * sizeof(float)) != 0) {
    return devrt::make_error(devrt::ErrorCode::internal, "selftest ", device, ": tensor round trip mismatch");
  }
  return Status();
}

// allocate -> host-to-device -> device-to-device -> device-to-host -> verify, on one device.
Status selftest_device(Device device) {
  constexpr std::size_t kBytes = (1u << 20) + 13; // odd on purpose
  std::vector<unsigned char> source(kBytes), result(kBytes, 0);
  for (std::size_t i = 0; i < kBytes; ++i) source[i] = static_cast<unsigned char>((i * 131u + 7u) >> 3);

  DEVRT_ASSIGN_OR_RETURN(devrt::Buffer first, devrt::Buffer::allocate(device, kBytes));
  DEVRT_ASSIGN_OR_RETURN(devrt::Buffer second, devrt::Buffer::allocate(device, kBytes + 64));
  DEVRT_ASSIGN_OR_RETURN(devrt::Stream stream, devrt::Stream::create(device));
  DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(source.data(), kBytes), first, stream));
  DEVRT_RETURN_IF_ERROR(devrt::copy(first, 0, second, 64, kBytes, stream));
  DEVRT_RETURN_IF_ERROR(devrt::copy(second, 64, devrt::host_span(result.data(), kBytes), 0, kBytes, stream));
  DEVRT_RETURN_IF_ERROR(stream.synchronize());
  if (std::memcmp(source.data(), result.data(), kBytes) != 0) {
    std::size_t at = 0;
    while (source[at] == result[at]) ++at;
    return devrt::make_error(devrt::ErrorCode::internal, "selftest ", device, ": data mismatch at byte ", at);
  }
  DEVRT_ASSIGN_OR_RETURN(devrt::Workspace workspace, devrt::allocate_workspace(device, 4096));
  if (workspace.data() == nullptr) {
    return devrt::make_error(devrt::ErrorCode::internal, "selftest ", device, ": empty workspace");
  }
  return selftest_tensor(device);
}

int selftest() {
  devrt::Registry& registry = devrt::Registry::global();
  int passed = 0, failed = 0, skipped = 0;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    BackendRef backend = registry.at(i);
    BackendState state;
    holding_stderr(backend.name(), [&] { state = probe(backend); });
    if (!state.status.ok()) {
      fmt::print("SKIP {}: {}\n", backend.name(), state.status.message());
      ++skipped;
      continue;
    }
    if (state.devices == 0) {
      fmt::print("SKIP {}: available but no devices\n", backend.name());
      ++skipped;
      continue;
    }
    for (std::int32_t id = 0; id < state.devices; ++id) {
      Device device{backend.kind(), id};
      Status status;
      holding_stderr(backend.name(), [&] { status = selftest_device(device); });
      if (status.ok()) {
        fmt::print("PASS {}: allocate, host->device, device->device, device->host, verify, workspace, tensor+DLPack\n",
                   device);
        fmt::print("  buffer cache {}: {}\n", device, buffer_cache_text(backend, device));
        fmt::print("  memory {}: {}\n", device, memory_text(device));
        ++passed;
      } else {
        fmt::print("FAIL {}: {}\n", device, status);
        ++failed;
      }
    }
  }
  // Every device closed, in reverse order of opening: what a program does before it exits.
  if (Status closed = devrt::shutdown(); !closed.ok()) {
    fmt::print("FAIL shutdown: {}\n", closed);
    ++failed;
  }
  fmt::print("selftest: {} passed, {} failed, {} skipped\n", passed, failed, skipped);
  report_driver_noise();
  return failed == 0 && passed > 0 ? 0 : 1;
}

void usage(std::FILE* out) {
  fmt::print(out, "usage: devrt-info [--json | --selftest | --build | --version | --help]\n"
                  "  (none)      list backends, devices and attributes\n"
                  "  --json      the same as JSON (see docs/devrt-info.md)\n"
                  "  --selftest  allocate, copy and verify on every available device\n"
                  "  --build     how devrt was built, and which backends are available now\n");
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 1) return list_text();
  if (argc == 2) {
    std::string_view arg = argv[1];
    if (arg == "--json") return list_json();
    if (arg == "--selftest") return selftest();
    if (arg == "--build") {
      std::string text;
      holding_stderr("backends", [&] { text = devrt::describe(); });
      fmt::print("{}", text);
      report_driver_noise();
      return 0;
    }
    if (arg == "--version") {
      fmt::print("devrt-info {}\n", DEVRT_VERSION_STRING);
      return 0;
    }
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    }
  }
  usage(stderr);
  return 2;
}
