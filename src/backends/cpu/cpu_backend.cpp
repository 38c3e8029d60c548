// SPDX-License-Identifier: Apache-2.0
#include "cpu_backend.hpp"

#include "support/heap.hpp"

#if !DEVRT_BARE_METAL
#include "backend_support/clock_events.hpp"
#endif

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace devrt::cpu {
namespace {

#if defined(__linux__)
// Reads one small file into `buffer`; false when it cannot.
bool read_file(const char* path, char* buffer, std::size_t capacity) noexcept {
  std::FILE* file = std::fopen(path, "r");
  if (file == nullptr) return false;
  std::size_t n = std::fread(buffer, 1, capacity - 1, file);
  static_cast<void>(std::fclose(file));
  buffer[n] = '\0';
  return n > 0;
}

// The value after "key<spaces>:" on the first line starting with key, or empty.
std::string_view field(std::string_view text, std::string_view key) noexcept {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.substr(0, key.size()) == key) {
      std::size_t colon = line.find(':');
      if (colon != std::string_view::npos) {
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        return value;
      }
    }
    pos = end + 1;
  }
  return {};
}

std::int64_t parse_int(std::string_view text) noexcept {
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') break;
    value = value * 10 + (c - '0');
  }
  return value;
}

// "1024K", "32M" (sysfs cache sizes) in bytes.
std::int64_t parse_size(std::string_view text) noexcept {
  std::int64_t value = parse_int(text);
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits < text.size()) {
    if (text[digits] == 'K') value <<= 10;
    if (text[digits] == 'M') value <<= 20;
    if (text[digits] == 'G') value <<= 30;
  }
  return value;
}
#endif

// What does not change while the process runs, read once. Trivially destructible: nothing of it
// runs at exit (a firmware image registers no exit-time destructor).
struct HostInfo {
  char name[96] = "cpu";
  std::int64_t processors = 0;
  std::int64_t total_memory = 0;
  std::int64_t clock_khz = 0;
  std::int64_t l2_bytes = 0;
};

HostInfo read_host_info() {
  HostInfo info;
#if defined(__linux__)
  // /proc/cpuinfo grows with the core count; read it once into a temporary heap buffer.
  constexpr std::size_t kCpuinfoCapacity = std::size_t{1} << 18;
  char* buffer = static_cast<char*>(std::malloc(kCpuinfoCapacity));
  if (buffer != nullptr && read_file("/proc/cpuinfo", buffer, kCpuinfoCapacity)) {
    std::string_view text(buffer);
    std::string_view model = field(text, "model name");
    if (model.empty()) model = field(text, "Model");
    if (model.empty()) model = field(text, "Processor");
    std::size_t length = model.size() < sizeof info.name - 1 ? model.size() : sizeof info.name - 1;
    if (length > 0) {
      std::memcpy(info.name, model.data(), length);
      info.name[length] = '\0';
    }
    std::string_view mhz = field(text, "cpu MHz");
    if (!mhz.empty()) info.clock_khz = parse_int(mhz) * 1000;
  }
  std::free(buffer);
  char small[64];
  if (read_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", small, sizeof small)) {
    info.clock_khz = parse_int(small);
  }
  for (int index = 0; index < 8; ++index) {
    char path[96];
    static_cast<void>(std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index));
    if (!read_file(path, small, sizeof small)) break;
    if (parse_int(small) != 2) continue;
    static_cast<void>(std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index));
    if (read_file(path, small, sizeof small)) info.l2_bytes = parse_size(small);
    break;
  }
  long processors = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  if (processors > 0) info.processors = processors;
  if (pages > 0 && page_size > 0) info.total_memory = static_cast<std::int64_t>(pages) * page_size;
#endif
  return info;
}

const HostInfo& host_info() {
  static const HostInfo info = read_host_info();
  return info;
}

std::atomic<std::uintptr_t> g_next_token{1};

void* next_token() noexcept {
  // Stream and event handles are never dereferenced; odd values keep them distinct from memory.
  return reinterpret_cast<void*>( // NOLINT(performance-no-int-to-ptr): a token, never dereferenced
      g_next_token.fetch_add(2, std::memory_order_relaxed));
}

} // namespace

Result<AttributeValue> CpuBackend::get_attribute(const BackendDevice&, Attribute attribute) noexcept {
  const HostInfo& info = host_info();
  auto known = [](std::int64_t value) { return value > 0 ? AttributeValue(value) : AttributeValue(); };
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_threads_per_block: return AttributeValue(kMaxThreadsPerBlock);
  case Attribute::max_thread_dimensions: return AttributeValue(kMaxBlockDim);
  case Attribute::max_shared_memory_per_block:
    return AttributeValue(static_cast<std::int64_t>(kMaxSharedMemoryPerBlock));
#if DEVRT_BARE_METAL
  case Attribute::device_name: return AttributeValue(std::string("cpu", 3)); // fits the string's own storage
#else
  case Attribute::device_name: return AttributeValue(std::string(info.name));
#endif
  case Attribute::multi_processor_count: return known(info.processors);
  case Attribute::total_global_memory: return known(info.total_memory);
  // available_global_memory is not reported: the host's free memory is shared with every process
  // and moves with pages touched, not with devrt's allocations (TVM's CPU leaves it out too).
  case Attribute::max_clock_rate: return known(info.clock_khz);
  case Attribute::l2_cache_size_bytes: return known(info.l2_bytes);
  case Attribute::buffer_offset_alignment: return AttributeValue(std::int64_t{1});
  default: return AttributeValue();
  }
}

Result<void*> CpuBackend::allocate(const BackendDevice&, std::size_t nbytes, std::size_t alignment) noexcept {
#if !DEVRT_BARE_METAL
  std::int64_t total = host_info().total_memory;
  if (total > 0 && nbytes > static_cast<std::size_t>(total)) {
    return make_error(ErrorCode::out_of_memory, "exceeds the host's ", total, " bytes of memory");
  }
#endif
  void* ptr = detail::heap_allocate(nbytes, alignment < sizeof(void*) ? sizeof(void*) : alignment);
  if (ptr == nullptr) {
    return make_error(ErrorCode::out_of_memory,
                      DEVRT_BARE_METAL ? "the firmware heap (devrt_firmware_allocate)" : "the host", " has no ", nbytes,
                      " bytes aligned to ", alignment);
  }
  return ptr;
}

Status CpuBackend::free(const BackendDevice&, void* ptr) noexcept {
  detail::heap_free(ptr);
  return Status();
}

#if DEVRT_BARE_METAL
constinit const ModuleOps* g_module_ops = nullptr; // set by register_kernel_table (cpu_module.cpp)
#endif

// The other module operations need a module, which only module_load makes: they find
// g_module_ops set.
Result<void*> CpuBackend::module_load(const BackendDevice&, ModuleFormat format, std::span<const std::byte> data,
                                      const char*, BuildLog& log) noexcept {
  if (g_module_ops == nullptr) {
    if (format == ModuleFormat::host_table) {
      return make_error(ErrorCode::not_found, "no kernel table named '",
                        std::string_view(reinterpret_cast<const char*>(data.data()), data.size()),
                        "' is registered (devrt::cpu::register_kernel_table)");
    }
    return make_error(ErrorCode::unsupported, "this build's cpu backend loads host_table modules only, not ",
                      module_format_name(format));
  }
  return g_module_ops->load(format, data, log);
}

Result<void*> CpuBackend::stream_create(const BackendDevice&) noexcept { return next_token(); }
Result<void*> CpuBackend::event_create(const BackendDevice&) noexcept { return next_token(); }

#if !DEVRT_BARE_METAL
Result<void*> CpuBackend::event_create_timed(const BackendDevice&) noexcept { return detail::create_clock_event(); }

Status CpuBackend::event_destroy(const BackendDevice&, void* event) noexcept {
  detail::destroy_clock_event(event);
  return Status();
}

Status CpuBackend::event_record(const BackendDevice&, void* event, void*) noexcept {
  detail::record_clock_event(event, [] {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  });
  return Status();
}

Result<std::int64_t> CpuBackend::event_elapsed(const BackendDevice&, void* start, void* end) noexcept {
  return detail::clock_events_elapsed(start, end);
}
#endif

} // namespace devrt::cpu

DEVRT_REGISTER_BACKEND(cpu, devrt::cpu::CpuBackend)
