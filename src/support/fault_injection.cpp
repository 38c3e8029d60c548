// SPDX-License-Identifier: Apache-2.0
#include "support/fault_injection.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "support/environment_variables.hpp"

namespace devrt::detail::fault {
namespace {

struct Armed {
  std::string backend, symbol;
  std::uint64_t nth = 0;
  std::int64_t code = 0;
  bool pending = false;    // waiting for its site to register
  bool persistent = false; // every later call fails too
};

std::mutex registry_mutex;
Site* first_site = nullptr;
Armed armed_spec; // guarded by registry_mutex
std::atomic<Site*> armed_site{nullptr};
std::atomic<std::uint64_t> countdown{0};
std::atomic<std::int64_t> armed_code{0};
std::atomic<bool> fired{false};
std::atomic<bool> persistent{false};
bool environment_read = false; // guarded by registry_mutex

struct NamedCode {
  std::string_view name;
  std::int64_t code;
};
constexpr NamedCode kCodes[] = {
    {"CL_DEVICE_NOT_FOUND", -1},
    {"CL_DEVICE_NOT_AVAILABLE", -2},
    {"CL_COMPILER_NOT_AVAILABLE", -3},
    {"CL_MEM_OBJECT_ALLOCATION_FAILURE", -4},
    {"CL_OUT_OF_RESOURCES", -5},
    {"CL_OUT_OF_HOST_MEMORY", -6},
    {"CL_BUILD_PROGRAM_FAILURE", -11},
    {"CL_INVALID_VALUE", -30},
    {"CL_INVALID_DEVICE", -33},
    {"CL_INVALID_CONTEXT", -34},
    {"CL_INVALID_COMMAND_QUEUE", -36},
    {"CL_INVALID_MEM_OBJECT", -38},
    {"CL_INVALID_BINARY", -42},
    {"CL_INVALID_PROGRAM", -44},
    {"CL_INVALID_KERNEL", -48},
    {"CL_INVALID_EVENT", -58},
    {"VK_TIMEOUT", 2},
    {"VK_ERROR_OUT_OF_HOST_MEMORY", -1},
    {"VK_ERROR_OUT_OF_DEVICE_MEMORY", -2},
    {"VK_ERROR_INITIALIZATION_FAILED", -3},
    {"VK_ERROR_DEVICE_LOST", -4},
    {"VK_ERROR_MEMORY_MAP_FAILED", -5},
    {"VK_ERROR_EXTENSION_NOT_PRESENT", -7},
    {"VK_ERROR_FEATURE_NOT_PRESENT", -8},
    {"VK_ERROR_INCOMPATIBLE_DRIVER", -9},
    {"VK_ERROR_TOO_MANY_OBJECTS", -10},
    {"VK_ERROR_FRAGMENTED_POOL", -12},
    {"VK_ERROR_UNKNOWN", -13},
    {"VK_ERROR_OUT_OF_POOL_MEMORY", -1000069000},
    {"CUDA_ERROR_INVALID_VALUE", 1},
    {"CUDA_ERROR_OUT_OF_MEMORY", 2},
    {"CUDA_ERROR_NOT_INITIALIZED", 3},
    {"CUDA_ERROR_NO_DEVICE", 100},
    {"CUDA_ERROR_INVALID_DEVICE", 101},
    {"CUDA_ERROR_INVALID_IMAGE", 200},
    {"CUDA_ERROR_INVALID_CONTEXT", 201},
    {"CUDA_ERROR_NO_BINARY_FOR_GPU", 209},
    {"CUDA_ERROR_INVALID_PTX", 218},
    {"CUDA_ERROR_NOT_FOUND", 500},
    {"CUDA_ERROR_ILLEGAL_ADDRESS", 700},
    {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701},
    {"CUDA_ERROR_LAUNCH_FAILED", 719},
    {"CUDA_ERROR_UNKNOWN", 999},
    {"hipErrorInvalidValue", 1},
    {"hipErrorOutOfMemory", 2},
    {"hipErrorNotInitialized", 3},
    {"hipErrorNoDevice", 100},
    {"hipErrorInvalidDevice", 101},
    {"hipErrorInvalidImage", 200},
    {"hipErrorNotFound", 500},
    {"hipErrorIllegalAddress", 700},
    {"hipErrorLaunchFailure", 719},
    {"hipErrorUnknown", 999},
    {"ncclUnhandledCudaError", 1},
    {"ncclSystemError", 2},
    {"ncclInternalError", 3},
    {"ncclInvalidArgument", 4},
    {"ncclInvalidUsage", 5},
    {"ncclRemoteError", 6},
    // webgpu.h's statuses count from Success = 1; 3 is Error in MapAsync, QueueWorkDone,
    // RequestDevice and PopErrorScope alike.
    {"WGPUStatus_Error", 2},
    {"WGPUMapAsyncStatus_Error", 3},
    {"WGPUMapAsyncStatus_Aborted", 4},
    {"WGPUQueueWorkDoneStatus_Error", 3},
    {"WGPURequestAdapterStatus_Error", 4},
    {"WGPURequestDeviceStatus_Error", 3},
    {"WGPUErrorType_Validation", 2},
    {"WGPUErrorType_OutOfMemory", 3},
    {"WGPUErrorType_Internal", 4},
};

// Points armed_site at `site` (registry_mutex held).
void arm_site(Site& site, const Armed& spec) noexcept {
  armed_site.store(nullptr, std::memory_order_release);
  countdown.store(spec.nth, std::memory_order_relaxed);
  armed_code.store(spec.code, std::memory_order_relaxed);
  fired.store(false, std::memory_order_relaxed);
  persistent.store(spec.persistent, std::memory_order_relaxed);
  armed_site.store(&site, std::memory_order_release);
}

Site* find_site(std::string_view backend, std::string_view symbol) noexcept {
  for (Site* site = first_site; site != nullptr; site = site->next) {
    if (backend == site->backend && symbol == site->symbol) return site;
  }
  return nullptr;
}

Status parse(std::string_view spec, Armed& out) {
  std::string_view parts[4];
  std::size_t count = 0;
  std::string_view rest = spec;
  while (count < 4) {
    std::size_t colon = count < 3 ? rest.find(':') : std::string_view::npos;
    parts[count++] = rest.substr(0, colon);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (count != 4 || parts[0].empty() || parts[1].empty()) {
    return make_error(
        ErrorCode::invalid_argument, "DEVRT_FAULT '", spec,
        "': expected <backend>:<symbol>:<n>:<code>, e.g. opencl:clEnqueueReadBuffer:3:CL_OUT_OF_RESOURCES");
  }
  std::uint64_t nth = 0;
  auto [end, error] = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), nth);
  if (error != std::errc() || end != parts[2].data() + parts[2].size() || nth == 0) {
    return make_error(ErrorCode::invalid_argument, "DEVRT_FAULT '", spec, "': the call number '", parts[2],
                      "' is not a positive integer");
  }
  std::int64_t code = 0;
  if (!code_of(parts[3], code)) {
    auto [code_end, code_error] = std::from_chars(parts[3].data(), parts[3].data() + parts[3].size(), code);
    if (code_error != std::errc() || code_end != parts[3].data() + parts[3].size() || code == 0) {
      return make_error(ErrorCode::invalid_argument, "DEVRT_FAULT '", spec, "': '", parts[3],
                        "' is neither a known error name nor a non-zero number");
    }
  }
  out = Armed{std::string(parts[0]), std::string(parts[1]), nth, code, false, false};
  return Status();
}

// Reads DEVRT_FAULT once (registry_mutex held); a malformed one is reported on stderr and ignored.
void read_environment() noexcept {
  if (environment_read) return;
  environment_read = true;
  const char* text = read_text_env("DEVRT_FAULT");
  if (text == nullptr) return;
  Armed spec;
  Status s = parse(text, spec);
  if (!s.ok()) {
    std::fprintf(stderr, "devrt: %.*s\n", static_cast<int>(s.message().size()), s.message().data());
    return;
  }
  spec.pending = true;
  armed_spec = spec;
}

} // namespace

bool code_of(std::string_view name, std::int64_t& code) noexcept {
  for (const NamedCode& entry : kCodes) {
    if (entry.name == name) {
      code = entry.code;
      return true;
    }
  }
  return false;
}

void register_site(Site& site) noexcept {
  std::lock_guard<std::mutex> lock(registry_mutex);
  read_environment();
  if (find_site(site.backend, site.symbol) != &site) {
    site.next = first_site;
    first_site = &site;
  }
  if (armed_spec.pending && armed_spec.backend == site.backend && armed_spec.symbol == site.symbol) {
    armed_spec.pending = false;
    arm_site(site, armed_spec);
  }
}

bool should_fail(Site& site, std::int64_t& code) noexcept {
  site.calls.fetch_add(1, std::memory_order_relaxed);
  if (armed_site.load(std::memory_order_acquire) != &site) [[likely]]
    return false;
  if (persistent.load(std::memory_order_relaxed)) {
    // Counts down to the n-th call, which fails, and so does every call after it.
    std::uint64_t left = countdown.load(std::memory_order_relaxed);
    while (left > 1 && !countdown.compare_exchange_weak(left, left - 1, std::memory_order_acq_rel)) {
    }
    if (left > 1) return false;
    code = armed_code.load(std::memory_order_relaxed);
    fired.store(true, std::memory_order_release);
    return true;
  }
  if (countdown.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
  Site* expected = &site;
  if (!armed_site.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return false;
  code = armed_code.load(std::memory_order_relaxed);
  fired.store(true, std::memory_order_release);
  return true;
}

std::vector<SiteCounts> sites() {
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::vector<SiteCounts> out;
  for (Site* site = first_site; site != nullptr; site = site->next) {
    out.push_back(SiteCounts{site->backend, site->symbol, site->injectable, site->calls.load(std::memory_order_relaxed),
                             site->successes.load(std::memory_order_relaxed)});
  }
  return out;
}

Status arm(std::string_view backend, std::string_view symbol, std::uint64_t nth, std::int64_t code, bool persistent) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  Site* site = find_site(backend, symbol);
  if (site == nullptr) {
    return make_error(ErrorCode::invalid_argument, "no driver entry point ", backend, ":", symbol,
                      " has been resolved in this process");
  }
  if (!site->injectable) {
    return make_error(ErrorCode::invalid_argument, backend, ":", symbol, " returns no status and cannot fail");
  }
  if (nth == 0) return make_error(ErrorCode::invalid_argument, "the call number counts from 1");
  armed_spec = Armed{std::string(backend), std::string(symbol), nth, code, false, persistent};
  arm_site(*site, armed_spec);
  return Status();
}

Status arm(std::string_view spec) {
  Armed parsed;
  DEVRT_RETURN_IF_ERROR(parse(spec, parsed));
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    if (find_site(parsed.backend, parsed.symbol) == nullptr) {
      parsed.pending = true;
      armed_spec = parsed;
      return Status();
    }
  }
  return arm(parsed.backend, parsed.symbol, parsed.nth, parsed.code);
}

bool disarm() noexcept {
  std::lock_guard<std::mutex> lock(registry_mutex);
  armed_site.store(nullptr, std::memory_order_release);
  armed_spec.pending = false;
  return fired.exchange(false, std::memory_order_acq_rel);
}

void reset_counts() noexcept {
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (Site* site = first_site; site != nullptr; site = site->next) {
    site->calls.store(0, std::memory_order_relaxed);
    site->successes.store(0, std::memory_order_relaxed);
  }
}

} // namespace devrt::detail::fault
