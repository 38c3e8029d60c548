// SPDX-License-Identifier: Apache-2.0
#include <devrt/backend/hexagon.hpp>

#include <devrt/backend/detail/memory_checks.hpp>
#include <devrt/backend/detail/mutex.hpp>

#include <cstdint>
#include <string_view>

#include "backend_support/clock_events.hpp"

// The architecture this image was compiled for (clang defines __HEXAGON_ARCH__, 66 for v66).
#if defined(__HEXAGON_ARCH__)
#define DEVRT_HEXAGON_ARCH __HEXAGON_ARCH__
#else
#define DEVRT_HEXAGON_ARCH 66
#endif

namespace devrt::hexagon {
namespace {

constexpr std::size_t kGranules = kVtcmBytes / kVtcmGranule;
// Hardware threads of a v66 cDSP.
constexpr std::int64_t kHardwareThreads = 4;
#if defined(__HVX__)
constexpr std::int64_t kHvxVectorBytes = 128;
#else
constexpr std::int64_t kHvxVectorBytes = 0;
#endif

#define DEVRT_STRINGIFY_INNER(x) #x
#define DEVRT_STRINGIFY(x) DEVRT_STRINGIFY_INNER(x)
#define DEVRT_HEXAGON_ARCH_TEXT DEVRT_STRINGIFY(DEVRT_HEXAGON_ARCH)
#if defined(__HVX__)
#define DEVRT_HEXAGON_MATTR                                                                                            \
  ",\"mattr\":[\"+hvxv" DEVRT_HEXAGON_ARCH_TEXT "\",\"+hvx-length" DEVRT_STRINGIFY(__HVX_LENGTH__) "b\"]"
static_assert(__HVX_LENGTH__ == kHvxVectorBytes);
#else
#define DEVRT_HEXAGON_MATTR ""
#endif
// The facts below as text, fixed when the image is compiled: no std::string, no Target.
static_assert(kVtcmBytes == 262144 && kHardwareThreads == 4, "update the texts below with the constants");
constexpr std::string_view kDeviceName =
    "Hexagon v" DEVRT_HEXAGON_ARCH_TEXT " DSP (VTCM: a 256 KiB stand-in arena, no SDK)";
constexpr std::string_view kComputeVersion = "v" DEVRT_HEXAGON_ARCH_TEXT;
constexpr std::string_view kTargetJson =
    "{\"kind\":\"hexagon\",\"keys\":[\"hexagon\"],\"mtriple\":\"hexagon\","
    "\"mcpu\":\"hexagonv" DEVRT_HEXAGON_ARCH_TEXT "\"" DEVRT_HEXAGON_MATTR ",\"num-cores\":4,\"vtcm-capacity\":262144}";

// The stand-in for the VTCM the SDK's compute-resource API would hand out, and its granule map:
// run_length[g] is the length of the allocated run starting at granule g (0: not a run's start),
// used[g] whether granule g is taken. Guarded by g_vtcm_mutex.
alignas(kVtcmGranule) unsigned char g_vtcm[kVtcmBytes];
std::uint16_t g_run_length[kGranules];
bool g_used[kGranules];
detail::Mutex g_vtcm_mutex;

bool in_vtcm(const void* ptr) noexcept {
  auto address = reinterpret_cast<std::uintptr_t>(ptr);
  auto base = reinterpret_cast<std::uintptr_t>(g_vtcm);
  return address >= base && address < base + kVtcmBytes;
}

} // namespace

Result<AttributeValue> HexagonBackend::get_attribute(const BackendDevice&, Attribute attribute) noexcept {
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_shared_memory_per_block: return AttributeValue(static_cast<std::int64_t>(kVtcmBytes));
  case Attribute::multi_processor_count: return AttributeValue(kHardwareThreads);
  case Attribute::warp_size: return AttributeValue(kHvxVectorBytes);
  case Attribute::max_threads_per_block: return AttributeValue(cpu::kMaxThreadsPerBlock);
  case Attribute::max_thread_dimensions: return AttributeValue(cpu::kMaxBlockDim);
  case Attribute::buffer_offset_alignment: return AttributeValue(std::int64_t{1});
  default: return AttributeValue();
  }
}

std::string_view HexagonBackend::attribute_text(Attribute attribute) noexcept {
  switch (attribute) {
  case Attribute::device_name: return kDeviceName;
  case Attribute::compute_version: return kComputeVersion;
  default: return {};
  }
}

std::string_view HexagonBackend::target_json() noexcept { return kTargetJson; }

Result<void*> HexagonBackend::allocate_vtcm(std::int32_t, std::size_t nbytes, std::size_t alignment) noexcept {
  if (nbytes == 0 || nbytes > kVtcmBytes) {
    return make_error(ErrorCode::out_of_memory, "VTCM holds ", kVtcmBytes, " bytes; ", nbytes, " requested");
  }
  std::size_t count = (nbytes + kVtcmGranule - 1) / kVtcmGranule;
  // Runs start at granules whose address is aligned (alignment is a power of two).
  std::size_t step = 1;
  std::size_t first = 0;
  if (alignment > kVtcmGranule) {
    auto base = reinterpret_cast<std::uintptr_t>(g_vtcm);
    first = (((base + alignment - 1) & ~(alignment - 1)) - base) / kVtcmGranule;
    step = alignment / kVtcmGranule;
  }
  detail::LockGuard lock(g_vtcm_mutex);
  for (std::size_t start = first; start + count <= kGranules; start += step) {
    std::size_t free_run = 0;
    while (free_run < count && !g_used[start + free_run]) ++free_run;
    if (free_run < count) continue;
    for (std::size_t g = start; g < start + count; ++g) g_used[g] = true;
    g_run_length[start] = static_cast<std::uint16_t>(count);
    return static_cast<void*>(g_vtcm + start * kVtcmGranule);
  }
  return make_error(ErrorCode::out_of_memory, "VTCM has no free run of ", count * kVtcmGranule, " bytes aligned to ",
                    step * kVtcmGranule);
}

Status HexagonBackend::free(const BackendDevice& device, void* ptr) noexcept {
  if (!in_vtcm(ptr)) return host_.free(device, ptr);
  std::size_t offset = static_cast<std::size_t>(static_cast<unsigned char*>(ptr) - g_vtcm);
  detail::LockGuard lock(g_vtcm_mutex);
  std::size_t start = offset / kVtcmGranule;
  if (offset % kVtcmGranule != 0 || g_run_length[start] == 0) {
    return make_error(ErrorCode::invalid_argument, "free: ", ptr, " is not the start of a VTCM allocation");
  }
  for (std::size_t g = start; g < start + g_run_length[start]; ++g) g_used[g] = false;
  g_run_length[start] = 0;
  return Status();
}

MemoryScope HexagonBackend::scope_of(const void* ptr) noexcept {
  return in_vtcm(ptr) ? MemoryScope::vtcm : MemoryScope::global;
}

Result<ScopeLimits> HexagonBackend::scope_limits(const BackendDevice&, MemoryScope scope) noexcept {
  if (scope != MemoryScope::vtcm) {
    return make_error(ErrorCode::unsupported, "no memory scope '", to_string(scope), "' on the DSP");
  }
  return ScopeLimits{MemoryScope::vtcm, 0, 0, kVtcmBytes, false};
}

Result<void*> HexagonBackend::scope_allocate(const BackendDevice& device, MemoryScope scope, std::size_t nbytes,
                                             std::size_t alignment) noexcept {
  if (scope != MemoryScope::vtcm) {
    return make_error(ErrorCode::unsupported, "no flat memory scope '", to_string(scope), "' on the DSP");
  }
  return allocate_vtcm(device.index, nbytes, alignment);
}

VtcmStats HexagonBackend::vtcm_stats() noexcept {
  VtcmStats stats;
  stats.capacity_bytes = kVtcmBytes;
  detail::LockGuard lock(g_vtcm_mutex);
  std::size_t run = 0;
  for (std::size_t g = 0; g < kGranules; ++g) {
    if (g_used[g]) {
      stats.used_bytes += kVtcmGranule;
      run = 0;
    } else if (++run * kVtcmGranule > stats.largest_free_bytes) {
      stats.largest_free_bytes = run * kVtcmGranule;
    }
  }
  return stats;
}

Result<direct::Buffer<HexagonBackend>> allocate(Device device, std::size_t nbytes, MemoryScope scope,
                                                std::size_t alignment) noexcept {
  using Buffer = direct::Buffer<HexagonBackend>;
  if (scope == MemoryScope::global || nbytes == 0) return Buffer::allocate(device, nbytes, alignment);
  if (scope != MemoryScope::vtcm) {
    return make_error(ErrorCode::unsupported, device, " has no memory scope '", to_string(scope), "'");
  }
  if (!devrt::detail::alignment_ok(alignment)) [[unlikely]]
    return devrt::detail::allocation_alignment_error(device, nbytes, alignment);
  DEVRT_RETURN_IF_ERROR(direct::check_device<HexagonBackend>(device));
  Result<void*> data = direct::backend<HexagonBackend>().allocate_vtcm(device.id, nbytes, alignment);
  if (!data.ok()) return direct::detail::allocation_error(device, nbytes, alignment, data.status());
  return Buffer::adopt(device, *data, nbytes);
}

// ---- Timed events ----------------------------------------------------------------------------

namespace {

// The QTimer's rate: 19.2 MHz on every Hexagon DSP (the SDK's HAP_perf.h).
constexpr std::uint64_t kQtimerHz = 19'200'000;

// The QTimer in nanoseconds, without overflow for its first 292 years.
std::int64_t qtimer_ns() noexcept {
  const std::uint64_t count = HAP_perf_get_qtimer_count();
  return static_cast<std::int64_t>(count / kQtimerHz * 1'000'000'000 + count % kQtimerHz * 1'000'000'000 / kQtimerHz);
}

} // namespace

Result<void*> HexagonBackend::event_create_timed(const BackendDevice&) noexcept { return detail::create_clock_event(); }

Status HexagonBackend::event_destroy(const BackendDevice&, void* event) noexcept {
  detail::destroy_clock_event(event);
  return Status();
}

Status HexagonBackend::event_record(const BackendDevice&, void* event, void*) noexcept {
  detail::record_clock_event(event, qtimer_ns);
  return Status();
}

Result<std::int64_t> HexagonBackend::event_elapsed(const BackendDevice&, void* start, void* end) noexcept {
  return detail::clock_events_elapsed(start, end);
}

} // namespace devrt::hexagon

DEVRT_REGISTER_BACKEND(hexagon, devrt::hexagon::HexagonBackend)
