// SPDX-License-Identifier: Apache-2.0
// The fault sweep (-Dfault_injection=true): runs the conformance operations of one backend once
// cleanly, then once per driver entry point and per occurrence with that one call failing
// (src/support/fault_injection.hpp), and checks what docs/reliability.md promises:
//   - the operation returns an error naming the backend, the device, the devrt call, the driver
//     call and its error (or, for a call devrt may do without, succeeds with correct data);
//   - no crash or sanitizer finding (the suite runs under ASan+UBSan+LSan), no hang (a watchdog);
//   - every driver object created is released (creates and releases counted through the seam);
//   - the device still works afterwards and a buffer written before the fault reads back intact.
// With --discovery the same is done for the calls discovery makes, one child process per fault
// (DEVRT_FAULT): the failure names the call and code, and discovery succeeds when tried again.
// With --releases, the calls that release driver objects (a refused release leaks its object, so
// LeakSanitizer is off there). With --device-lost (Vulkan): a lost device fails every later call, and the process
// survives.
//
// Usage: test-fault-sweep <backend> [--releases | --discovery | --device-lost]; exit 77 skips with
// the reason.
#include <devrt/backend.hpp>
#include <devrt/devrt.hpp>
#include <devrt/dlpack.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/fault_injection.hpp"

namespace fault = devrt::detail::fault;
using devrt::Buffer;
using devrt::Device;
using devrt::ErrorCode;
using devrt::Status;

namespace {

std::string g_backend;
std::string g_error_name; // the error injected, by name
std::int64_t g_error_code = 0;
int g_failures = 0;

void fail(const std::string& what) {
  ++g_failures;
  std::printf("FAIL: %s\n", what.c_str());
  std::fflush(stdout);
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string read_text(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

Status mismatch(const char* what) {
  return devrt::make_error(ErrorCode::internal, "wrong data after ", what, " (reported as success)");
}

std::vector<float> floats(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i);
  return v;
}

devrt::Result<devrt::Module> load_vadd(Device device) {
  if (g_backend == "opencl") {
    return devrt::Module::load(device, devrt::ModuleFormat::opencl_c, read_text(DEVRT_TEST_OPENCL_SOURCE));
  }
  std::string path = std::string(DEVRT_TEST_SPIRV_DIR) + "/vadd.spv";
  return devrt::Module::load_file(device, devrt::ModuleFormat::spirv, path.c_str());
}

Status read_back(const Buffer& buffer, std::vector<float>& out) {
  out.assign(buffer.size() / sizeof(float), 0.0f);
  DEVRT_RETURN_IF_ERROR(devrt::copy(buffer, devrt::host_span(out.data(), buffer.size())));
  return devrt::synchronize(devrt::current_stream(buffer.device()));
}

// The conformance operations, each checked: allocation, copies in every direction, a stream, an
// event, a module and a launch, a workspace pool, the buffer cache, a tensor and DLPack.
Status scenario(Device device) {
  constexpr std::size_t n = 1000;
  const std::size_t bytes = n * sizeof(float);
  // Host sources outlive the run: a copy enqueued before a failure may still read them.
  static const std::vector<float> one = floats(n, 1.0f), two = floats(n, 2.0f);
  std::vector<float> back;

  DEVRT_ASSIGN_OR_RETURN(Buffer a, Buffer::allocate(device, bytes));
  DEVRT_ASSIGN_OR_RETURN(Buffer b, Buffer::allocate(device, bytes));
  DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(one.data(), bytes), a));
  DEVRT_RETURN_IF_ERROR(devrt::copy(a, b));
  DEVRT_RETURN_IF_ERROR(read_back(b, back));
  if (back != one) return mismatch("host to device to device to host");

  {
    DEVRT_ASSIGN_OR_RETURN(devrt::Stream stream, devrt::Stream::create(device));
    DEVRT_ASSIGN_OR_RETURN(devrt::Event event, devrt::Event::create(device));
    DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(two.data(), bytes), b, stream));
    DEVRT_RETURN_IF_ERROR(event.record(stream));
    DEVRT_RETURN_IF_ERROR(event.wait_on(devrt::current_stream(device)));
    DEVRT_RETURN_IF_ERROR(event.synchronize());
    DEVRT_ASSIGN_OR_RETURN(bool done, event.query());
    if (!done) return mismatch("an event synchronized but not complete");
    DEVRT_RETURN_IF_ERROR(stream.synchronize());
  }

  {
    DEVRT_ASSIGN_OR_RETURN(devrt::Module module, load_vadd(device));
    DEVRT_ASSIGN_OR_RETURN(devrt::Function vadd, module.function(g_backend == "vulkan" ? "main" : "vadd"));
    DEVRT_ASSIGN_OR_RETURN(Buffer c, Buffer::allocate(device, bytes));
    DEVRT_RETURN_IF_ERROR(
        vadd.launch({.grid = {(n + 63) / 64}, .block = {64}}, {a, b, c, static_cast<std::int32_t>(n)}));
    DEVRT_RETURN_IF_ERROR(read_back(c, back));
    if (back != floats(n, 3.0f)) return mismatch("a launch");
  }

  {
    devrt::WorkspacePool pool(devrt::Registry::global().find(g_backend), device, 1 << 20);
    DEVRT_ASSIGN_OR_RETURN(devrt::Workspace small, pool.allocate(256));
    DEVRT_ASSIGN_OR_RETURN(devrt::Workspace large, pool.allocate(1 << 16));
    DEVRT_RETURN_IF_ERROR(pool.release());
  }

  // Freed buffers go to the device's cache and come back from it.
  for (int round = 0; round < 2; ++round) {
    DEVRT_ASSIGN_OR_RETURN(Buffer cached, Buffer::allocate(device, 3 * bytes));
    DEVRT_RETURN_IF_ERROR(devrt::copy(devrt::host_span(one.data(), bytes), 0, cached, bytes, bytes));
    std::vector<float> part(n);
    DEVRT_RETURN_IF_ERROR(devrt::copy(cached, bytes, devrt::host_span(part.data(), bytes), 0, bytes));
    DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
    if (part != one) return mismatch("a copy into a cached buffer");
  }

  {
    DEVRT_ASSIGN_OR_RETURN(devrt::Tensor tensor, devrt::Tensor::empty({10, 100}, devrt::DataType::float32(), device));
    DEVRT_RETURN_IF_ERROR(tensor.copy_from_host(two.data(), bytes));
    DEVRT_ASSIGN_OR_RETURN(devrt::dlpack::ManagedTensorVersioned * exported, tensor.to_dlpack_versioned());
    DEVRT_ASSIGN_OR_RETURN(devrt::Tensor imported, devrt::Tensor::from_dlpack(exported));
    DEVRT_ASSIGN_OR_RETURN(devrt::Tensor on_host, imported.to(devrt::kHostDevice));
    DEVRT_RETURN_IF_ERROR(devrt::synchronize(devrt::current_stream(device)));
    if (std::memcmp(on_host.data(), two.data(), bytes) != 0) return mismatch("a tensor's DLPack round trip");
  }
  return Status();
}

// Fails the process if `work` does not finish within `seconds` (a hang is a finding).
template <class Work>
Status bounded(const char* what, int seconds, Work work) {
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    for (int tenth = 0; tenth < seconds * 10 && !finished.load(); ++tenth) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!finished.load()) {
      std::printf("FAIL: %s did not finish within %d s (a hang)\n", what, seconds);
      std::fflush(stdout);
      std::_Exit(1);
    }
  });
  Status status = work();
  finished.store(true);
  watchdog.join();
  return status;
}

// Driver objects by kind: the entry points that create one and those that release one.
struct Pairing {
  const char* kind;
  std::vector<std::string> creates, releases;
};

std::vector<Pairing> pairings() {
  if (g_backend == "opencl") {
    return {
        {"cl_mem", {"clCreateBuffer", "clCreateSubBuffer"}, {"clReleaseMemObject"}},
        {"cl_command_queue", {"clCreateCommandQueue"}, {"clReleaseCommandQueue"}},
        {"cl_context", {"clCreateContext"}, {"clReleaseContext"}},
        {"cl_program", {"clCreateProgramWithSource", "clCreateProgramWithBinary"}, {"clReleaseProgram"}},
        {"cl_kernel", {"clCreateKernel"}, {"clReleaseKernel"}},
        {"cl_event", {"clEnqueueMarkerWithWaitList", "clRetainEvent"}, {"clReleaseEvent"}},
    };
  }
  return {
      {"VkBuffer", {"vkCreateBuffer"}, {"vkDestroyBuffer"}},
      {"VkDeviceMemory", {"vkAllocateMemory"}, {"vkFreeMemory"}},
      {"VkCommandPool", {"vkCreateCommandPool"}, {"vkDestroyCommandPool"}},
      {"VkShaderModule", {"vkCreateShaderModule"}, {"vkDestroyShaderModule"}},
      {"VkDescriptorSetLayout", {"vkCreateDescriptorSetLayout"}, {"vkDestroyDescriptorSetLayout"}},
      {"VkPipelineLayout", {"vkCreatePipelineLayout"}, {"vkDestroyPipelineLayout"}},
      {"VkPipeline", {"vkCreateComputePipelines"}, {"vkDestroyPipeline"}},
      {"VkDescriptorPool", {"vkCreateDescriptorPool"}, {"vkDestroyDescriptorPool"}},
      {"VkSemaphore", {"vkCreateSemaphore"}, {"vkDestroySemaphore"}},
      {"VkDevice", {"vkCreateDevice"}, {"vkDestroyDevice"}},
  };
}

std::map<std::string, fault::SiteCounts> counts() {
  std::map<std::string, fault::SiteCounts> out;
  for (fault::SiteCounts& site : fault::sites()) {
    if (site.backend == g_backend) out[site.symbol] = site;
  }
  return out;
}

// "" when every object created since the counters were reset was released, else which were not.
// A release that was itself the injected fault leaves its object to the driver.
std::string unreleased(const std::string& injected) {
  std::map<std::string, fault::SiteCounts> now = counts();
  std::string out;
  for (const Pairing& pair : pairings()) {
    std::int64_t balance = 0;
    bool injected_release = false;
    for (const std::string& name : pair.creates) balance += static_cast<std::int64_t>(now[name].successes);
    for (const std::string& name : pair.releases) {
      balance -= static_cast<std::int64_t>(now[name].successes);
      injected_release = injected_release || name == injected;
    }
    if (balance == 0 || (injected_release && balance == 1)) continue;
    out += std::string(out.empty() ? "" : ", ") + std::to_string(balance) + " " + pair.kind;
  }
  return out;
}

// The occurrences to fail of a call made `calls` times: each of the first 8, then a spread.
std::vector<std::uint64_t> occurrences(std::uint64_t calls) {
  std::set<std::uint64_t> picked;
  for (std::uint64_t i = 1; i <= std::min<std::uint64_t>(calls, 8); ++i) picked.insert(i);
  for (std::uint64_t i = 1; i <= 4 && calls > 8; ++i) picked.insert(std::max<std::uint64_t>(1, calls * i / 4));
  return {picked.begin(), picked.end()};
}

struct Tally {
  std::size_t sites = 0, injected = 0, reported = 0, absorbed = 0;
};

// Checks the error of a failed call: backend, device, devrt call, driver call, driver error.
void check_message(const Status& status, const std::string& symbol, const std::string& label) {
  std::string_view message = status.message();
  std::string device = g_backend + ":0";
  bool names_error = contains(message, g_error_name) || contains(message, std::to_string(g_error_code));
  if (!contains(message, device) || !contains(message, symbol) || !names_error) {
    fail(label + ": the error does not name the device (" + device +
         "), the driver call and its error: " + std::string(message));
  }
}

// Entry points that release a driver object: failing one leaks that object by construction, so
// they are swept apart (--releases), with LeakSanitizer off.
bool is_release(const std::string& symbol) {
  for (const Pairing& pair : pairings()) {
    for (const std::string& name : pair.releases) {
      if (name == symbol) return true;
    }
  }
  return false;
}

int sweep(Device device, bool releases) {
  const std::vector<float> sentinel_values = floats(4096, 0.5f);
  devrt::Result<Buffer> sentinel = Buffer::allocate(device, sentinel_values.size() * sizeof(float));
  if (!sentinel.ok() || !devrt::copy(devrt::host_span(sentinel_values.data(), sentinel->size()), *sentinel).ok()) {
    fail("could not write the sentinel buffer");
    return 1;
  }
  // Twice cleanly: the first run builds what persists (staging rings, the cache's first blocks).
  for (int i = 0; i < 2; ++i) {
    Status clean = bounded("the clean run", 120, [&] { return scenario(device); });
    if (!clean.ok()) {
      fail("the clean run failed: " + std::string(clean.message()));
      return 1;
    }
  }
  static_cast<void>(devrt::empty_cache(device));
  fault::reset_counts();
  Status clean = scenario(device);
  static_cast<void>(devrt::empty_cache(device));
  std::map<std::string, fault::SiteCounts> reached = counts();
  if (std::string left = unreleased(""); !clean.ok() || !left.empty()) {
    fail("the clean run: " + std::string(clean.message()) + " unreleased: " + left);
    return 1;
  }

  Tally tally;
  std::vector<std::string> absorbed;
  for (const auto& [symbol, site] : reached) {
    if (site.calls == 0 || is_release(symbol) != releases) continue;
    if (!site.injectable) {
      std::printf("  %-36s %4llu calls, returns nothing (not injectable)\n", symbol.c_str(),
                  static_cast<unsigned long long>(site.calls));
      continue;
    }
    ++tally.sites;
    std::vector<std::uint64_t> picked = occurrences(site.calls);
    std::printf("  %-36s %4llu calls, failing %zu of them\n", symbol.c_str(),
                static_cast<unsigned long long>(site.calls), picked.size());
    std::fflush(stdout);
    for (std::uint64_t nth : picked) {
      std::string label = g_backend + ":" + symbol + ":" + std::to_string(nth) + ":" + g_error_name;
      // From the same state as the clean count: nothing cached (empty_cache also returns what
      // persists between runs, such as staging buffers, which the run then makes again).
      static_cast<void>(devrt::empty_cache(device));
      fault::reset_counts();
      if (Status armed = fault::arm(g_backend, symbol, nth, g_error_code); !armed.ok()) {
        fail(label + ": " + std::string(armed.message()));
        continue;
      }
      Status status = bounded(label.c_str(), 120, [&] { return scenario(device); });
      bool fired = fault::disarm();
      static_cast<void>(devrt::empty_cache(device));
      if (!fired) continue; // the run took another path and made fewer calls
      ++tally.injected;
      if (status.ok()) {
        ++tally.absorbed;
        absorbed.push_back(symbol + "#" + std::to_string(nth));
      } else if (status.code() == ErrorCode::internal && contains(status.message(), "reported as success")) {
        fail(label + ": " + std::string(status.message()));
      } else {
        ++tally.reported;
        check_message(status, symbol, label);
        std::printf("    %s: %.*s\n", label.c_str(), static_cast<int>(status.message().size()),
                    status.message().data());
      }
      if (std::string left = unreleased(symbol); !left.empty()) fail(label + ": left unreleased: " + left);
      std::vector<float> back;
      Status read = read_back(*sentinel, back);
      if (!read.ok() || back != sentinel_values) {
        fail(label + ": the buffer written before the fault did not read back intact: " + std::string(read.message()));
      }
      Status again = bounded("the run after a fault", 120, [&] { return scenario(device); });
      if (!again.ok()) fail(label + ": the device did not recover: " + std::string(again.message()));
    }
  }
  std::printf("%s: %zu entry points reached, %zu injectable; %zu faults injected: %zu reported as errors, %zu "
              "absorbed by devrt with correct results\n",
              g_backend.c_str(), reached.size(), tally.sites, tally.injected, tally.reported, tally.absorbed);
  if (!absorbed.empty()) {
    std::printf("absorbed:");
    for (const std::string& name : absorbed) std::printf(" %s", name.c_str());
    std::printf("\n");
  }
  return g_failures == 0 ? 0 : 1;
}

// ---- Discovery ------------------------------------------------------------------------------

// In a child with DEVRT_FAULT set: discovery (and the device's opening) with that call failing.
int discovery_child(const char* spec) {
  devrt::BackendRef backend = devrt::Registry::global().find(g_backend);
  Device device{backend.kind(), 0};
  Status first = backend.availability();
  if (first.ok()) first = bounded("the first run", 120, [&] { return scenario(device); });
  bool fired = fault::disarm();
  if (!fired) return 0;
  if (first.ok()) {
    std::printf("absorbed %s\n", spec);
    return 0;
  }
  std::string_view message = first.message();
  bool names_error = contains(message, g_error_name) || contains(message, std::to_string(g_error_code));
  if (!names_error)
    fail(std::string(spec) + ": the error does not name the driver call's error: " + std::string(message));
  if (first.code() == ErrorCode::unavailable) {
    fail(std::string(spec) + ": a failed call made the backend unavailable for good: " + std::string(message));
  }
  // Not poisoned: discovery (or the device's opening) is tried again and succeeds.
  Status again = backend.availability();
  if (again.ok()) again = bounded("the run after a fault", 120, [&] { return scenario(device); });
  if (!again.ok()) fail(std::string(spec) + ": discovery did not recover: " + std::string(again.message()));
  std::printf("reported %s: %.*s\n", spec, static_cast<int>(message.size()), message.data());
  return g_failures == 0 ? 0 : 1;
}

int discovery_sweep(const char* self, Device device) {
  // The calls discovery and the first use of the device make, counted in this process.
  Status first = scenario(device);
  if (!first.ok()) {
    fail("the clean run failed: " + std::string(first.message()));
    return 1;
  }
  std::map<std::string, fault::SiteCounts> reached = counts();
  std::size_t children = 0, failed = 0;
  // Discovery's calls are those made before the first scenario finished; a second scenario
  // without discovery tells them apart.
  fault::reset_counts();
  Status second = scenario(device);
  std::map<std::string, fault::SiteCounts> steady = counts();
  for (const auto& [symbol, site] : reached) {
    std::uint64_t discovery_calls = site.calls - std::min(site.calls, steady[symbol].calls);
    if (!site.injectable || discovery_calls == 0 || !second.ok()) continue;
    for (std::uint64_t nth : occurrences(discovery_calls)) {
      std::string spec = g_backend + ":" + symbol + ":" + std::to_string(nth) + ":" + g_error_name;
      pid_t child = fork();
      if (child == 0) {
        setenv("DEVRT_FAULT", spec.c_str(), 1);
        execl(self, self, g_backend.c_str(), "--discovery-child", spec.c_str(), static_cast<char*>(nullptr));
        std::_Exit(127);
      }
      int wstatus = 0;
      waitpid(child, &wstatus, 0);
      ++children;
      if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        ++failed;
        fail(spec + ": the child failed (status " + std::to_string(wstatus) + ")");
      }
    }
  }
  std::printf("%s discovery: %zu faults injected in child processes, %zu failed\n", g_backend.c_str(), children,
              failed);
  return g_failures == 0 ? 0 : 1;
}

// ---- Device loss ----------------------------------------------------------------------------

int device_lost_child(Device device) {
  Status lost = scenario(device);
  bool fired = fault::disarm();
  if (!fired || lost.ok() || !contains(lost.message(), "VK_ERROR_DEVICE_LOST")) {
    fail("the injected loss was not reported: " + std::string(lost.message()));
    return 1;
  }
  for (int i = 0; i < 3; ++i) {
    devrt::Result<Buffer> later = Buffer::allocate(device, 256);
    if (later.ok() || !contains(later.status().message(), "was lost")) {
      fail("a call after the loss did not report it: " + std::string(later.status().message()));
    }
  }
  std::printf("device lost: %.*s\n", static_cast<int>(lost.message().size()), lost.message().data());
  return g_failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <backend> [--discovery | --device-lost]\n", argv[0]);
    return 2;
  }
  g_backend = argv[1];
  std::string mode = argc > 2 ? argv[2] : "";
  g_error_name = g_backend == "opencl" ? "CL_OUT_OF_RESOURCES" : "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  if (mode == "--device-lost" || (mode == "--discovery-child" && argc > 3 && contains(argv[3], "DEVICE_LOST"))) {
    g_error_name = "VK_ERROR_DEVICE_LOST";
  }
  fault::code_of(g_error_name, g_error_code);
  devrt::BackendRef backend = devrt::Registry::global().find(g_backend);
  if (mode == "--discovery-child") return discovery_child(argc > 3 ? argv[3] : "");
  if (!backend) {
    std::printf("skip: the %s backend is not built\n", g_backend.c_str());
    return 77;
  }
  Status available = backend.availability();
  if (!available.ok()) {
    std::printf("skip: %.*s\n", static_cast<int>(available.message().size()), available.message().data());
    return 77;
  }
  if (g_backend == "vulkan" && std::string(DEVRT_TEST_SPIRV_DIR).empty()) {
    std::printf("skip: glslc was not found at build time, so there are no SPIR-V test shaders\n");
    return 77;
  }
  Device device{backend.kind(), 0};
  if (mode == "--discovery") return discovery_sweep(argv[0], device);
  if (mode == "--device-lost") {
    pid_t child = fork();
    if (child == 0) {
      setenv("DEVRT_FAULT", "vulkan:vkQueueSubmit:1:VK_ERROR_DEVICE_LOST", 1);
      execl(argv[0], argv[0], "vulkan", "--device-lost-child", static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 1;
  }
  if (mode == "--device-lost-child") return device_lost_child(device);
  return sweep(device, mode == "--releases");
}
