// SPDX-License-Identifier: Apache-2.0
// The CUDA/HIP shared operations (backend_support/gpu_driver.hpp) as a template: what they hand each entry
// point and what they make of its answers, over a table of plain functions standing in for one
// API's shape. The backends themselves run against real drivers in the conformance suite.
#include "backend_support/gpu_driver.hpp"
#include "support/over_aligned.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

enum ShapeError { kOk = 0, kNotReadyCode = 600, kOutOfMemory = 2 };
struct ShapeStream;
struct ShapeEvent;

std::vector<std::string> g_calls;
ShapeError g_next_error = kOk;
int g_current = -1;

// A device's state as a driver keeps it (CUDA: the retained primary context): its number, which
// activate makes current, and how often it is retained.
struct ShapeDevice {
  int number;
  int retains = 0;
};
ShapeDevice g_devices[4] = {{100}, {101}, {102}, {103}};

ShapeError take_error() {
  ShapeError e = g_next_error;
  g_next_error = kOk;
  return e;
}
ShapeError shape_malloc(std::uintptr_t* out, std::size_t n) {
  g_calls.push_back("malloc " + std::to_string(n));
  if (g_next_error != kOk) return take_error();
  *out = reinterpret_cast<std::uintptr_t>(std::malloc(n));
  return kOk;
}
ShapeError shape_free(std::uintptr_t p) {
  g_calls.push_back("free");
  std::free(reinterpret_cast<void*>(p));
  return kOk;
}
ShapeError shape_stream_create(ShapeStream** out, unsigned flags) {
  g_calls.push_back("stream_create " + std::to_string(flags));
  *out = reinterpret_cast<ShapeStream*>(std::uintptr_t{0x1000});
  return take_error();
}
ShapeError shape_stream_op(ShapeStream*) { return take_error(); }
ShapeError shape_sync() { return take_error(); }
ShapeError shape_event_create(ShapeEvent** out, unsigned) {
  *out = reinterpret_cast<ShapeEvent*>(std::uintptr_t{0x2000});
  return take_error();
}
ShapeError shape_event_op(ShapeEvent*) { return take_error(); }
ShapeError shape_event_record(ShapeEvent*, ShapeStream*) { return take_error(); }
ShapeError shape_wait(ShapeStream*, ShapeEvent*, unsigned) { return take_error(); }

// Copies and modules: each call records itself with the device current at the time.
std::string current() { return " on " + std::to_string(g_current); }
ShapeError shape_htod(std::uintptr_t, void*, std::size_t n, ShapeStream*) {
  g_calls.push_back("htod " + std::to_string(n) + current());
  return take_error();
}
ShapeError shape_dtoh(void*, std::uintptr_t, std::size_t n, ShapeStream*) {
  g_calls.push_back("dtoh " + std::to_string(n) + current());
  return take_error();
}
ShapeError shape_dtod(std::uintptr_t, std::uintptr_t, std::size_t n, ShapeStream*) {
  g_calls.push_back("dtod " + std::to_string(n) + current());
  return take_error();
}
struct ShapeModule {
  int unloads = 0;
};
ShapeModule g_module;
ShapeError shape_module_unload(ShapeModule* module) {
  ++module->unloads;
  g_calls.push_back("unload" + current());
  return take_error();
}
struct ShapeFunction {
  std::string name;
};

struct ShapeApi {
  decltype(&shape_htod) htod = shape_htod;
  decltype(&shape_dtoh) dtoh = shape_dtoh;
  decltype(&shape_dtod) dtod = shape_dtod;
  decltype(&shape_module_unload) unload = shape_module_unload;
  decltype(&shape_malloc) malloc = shape_malloc;
  decltype(&shape_free) free = shape_free;
  decltype(&shape_stream_create) stream_create = shape_stream_create;
  decltype(&shape_stream_op) stream_op = shape_stream_op;
  decltype(&shape_sync) sync = shape_sync;
  decltype(&shape_event_create) event_create = shape_event_create;
  decltype(&shape_event_op) event_op = shape_event_op;
  decltype(&shape_event_record) event_record = shape_event_record;
  decltype(&shape_wait) wait = shape_wait;
};

struct ShapeDriver {
  using Api = ShapeApi;
  using Error = ShapeError;
  using Stream = ShapeStream*;
  using Event = ShapeEvent*;
  using DevicePointer = std::uintptr_t;
  static constexpr Error kSuccess = kOk;
  static constexpr Error kNotReady = kNotReadyCode;
  static constexpr unsigned kStreamFlags = 7;
  static constexpr unsigned kEventFlags = 2;
  static constexpr std::size_t kAllocationAlignment = 16;
  static const Api& api() noexcept {
    static const ShapeApi table;
    return table;
  }
  static devrt::detail::OverAlignedMap& over_aligned() noexcept {
    static devrt::detail::OverAlignedMap map;
    return map;
  }
  static devrt::Status activate(const devrt::BackendDevice& device) noexcept {
    g_current = devrt::backend_state<ShapeDevice>(device).number;
    return devrt::Status();
  }
  static devrt::Result<void*> open(std::int32_t index) noexcept {
    g_calls.push_back("retain " + std::to_string(index));
    if (g_next_error != kOk) return error("shapeRetain", take_error());
    ++g_devices[index].retains;
    return static_cast<void*>(&g_devices[index]);
  }
  static devrt::Status close(void* state) noexcept {
    auto* device = static_cast<ShapeDevice*>(state);
    g_calls.push_back("release " + std::to_string(device->number));
    --device->retains;
    return devrt::Status();
  }
  static devrt::Status error(const char* call, Error code) noexcept {
    return devrt::make_error(code == kOutOfMemory ? devrt::ErrorCode::out_of_memory : devrt::ErrorCode::driver_error,
                             call, " failed: ", static_cast<int>(code));
  }
  static constexpr devrt::detail::DriverCall malloc{"shapeMalloc", &Api::malloc};
  static constexpr devrt::detail::DriverCall release{"shapeFree", &Api::free};
  static constexpr devrt::detail::DriverCall stream_create{"shapeStreamCreate", &Api::stream_create};
  static constexpr devrt::detail::DriverCall stream_destroy{"shapeStreamDestroy", &Api::stream_op};
  static constexpr devrt::detail::DriverCall stream_synchronize{"shapeStreamSynchronize", &Api::stream_op};
  static constexpr devrt::detail::DriverCall device_synchronize{"shapeDeviceSynchronize", &Api::sync};
  static constexpr devrt::detail::DriverCall event_create{"shapeEventCreate", &Api::event_create};
  static constexpr devrt::detail::DriverCall event_destroy{"shapeEventDestroy", &Api::event_op};
  static constexpr devrt::detail::DriverCall event_record{"shapeEventRecord", &Api::event_record};
  static constexpr devrt::detail::DriverCall event_synchronize{"shapeEventSynchronize", &Api::event_op};
  static constexpr devrt::detail::DriverCall event_query{"shapeEventQuery", &Api::event_op};
  static constexpr devrt::detail::DriverCall stream_wait_event{"shapeStreamWaitEvent", &Api::wait};
  static constexpr devrt::detail::DriverCall memcpy_htod{"shapeMemcpyHtoD", &Api::htod};
  static constexpr devrt::detail::DriverCall memcpy_dtoh{"shapeMemcpyDtoH", &Api::dtoh};
  static constexpr devrt::detail::DriverCall memcpy_dtod{"shapeMemcpyDtoD", &Api::dtod};
  static constexpr devrt::detail::DriverCall module_unload{"shapeModuleUnload", &Api::unload};

  static constexpr devrt::DeviceKind kind = static_cast<devrt::DeviceKind>(2);
  static constexpr std::string_view kName = "shape";
  static constexpr std::string_view kLoadOptionsAdvice = "; compile with the shape compiler";
  using ModuleHandle = ShapeModule*;
  using Function = ShapeFunction;
  static devrt::Status peer_copy(const devrt::CopyDesc& desc, std::uintptr_t, std::uintptr_t, Stream) noexcept {
    g_calls.push_back("peer " + std::to_string(desc.nbytes) + " from " +
                      std::to_string(devrt::backend_state<ShapeDevice>(*desc.src_device).number) + " to " +
                      std::to_string(devrt::backend_state<ShapeDevice>(*desc.dst_device).number));
    return devrt::Status();
  }
  static devrt::Status check_image(const devrt::BackendDevice& device, const devrt::ModuleImageInfo& image) noexcept {
    g_calls.push_back("check " + image.architectures.front() + " for " + std::to_string(device.index));
    return devrt::Status();
  }
  static devrt::Result<ShapeModule*> load_image(devrt::ModuleFormat, std::span<const std::byte>,
                                                devrt::BuildLog& log) noexcept {
    g_calls.push_back("load" + current());
    log.append("loaded by shape");
    if (g_next_error != kOk) return error("shapeModuleLoad", take_error());
    return &g_module;
  }
  static devrt::Result<std::unique_ptr<ShapeFunction>> make_function(const devrt::BackendDevice&, ShapeModule*,
                                                                     const char* name) noexcept {
    g_calls.push_back(std::string("function ") + name + current());
    if (std::string_view(name) == "missing") return devrt::make_error(devrt::ErrorCode::not_found, "no ", name);
    return std::make_unique<ShapeFunction>(ShapeFunction{name});
  }
};

using Operations = devrt::detail::GpuDriverOperations<ShapeDriver>;

} // namespace

// Device `index` as the core passes it once opened: with the driver's state.
devrt::BackendDevice on(std::int32_t index) { return devrt::BackendDevice{index, 0, &g_devices[index], nullptr}; }

TEST_CASE("shared GPU driver operations open a device's state and close it after its work", "[gpu_driver]") {
  Operations ops;
  g_calls.clear();
  devrt::BackendDevice device{2, 0, nullptr, nullptr};
  REQUIRE(ops.open_device(device).ok());
  CHECK(device.state == &g_devices[2]);
  CHECK(g_devices[2].retains == 1);
  REQUIRE(ops.stream_create(device).ok());
  CHECK(g_current == 102); // the operations make the open state's device current
  // Closing waits for the device, then releases it; a failed wait is reported, and it is released still.
  g_next_error = static_cast<ShapeError>(999);
  devrt::Status closed = ops.close_device(device);
  CHECK(closed.message().find("shapeDeviceSynchronize failed: 999") != std::string::npos);
  CHECK(g_calls.back() == "release 102");
  CHECK(g_devices[2].retains == 0);
  CHECK(device.state == nullptr);
  CHECK(ops.close_device(device).ok()); // closing a closed device does nothing
  CHECK(g_calls.back() == "release 102");
  // A failed open leaves no state and retains nothing.
  g_next_error = kOutOfMemory;
  devrt::BackendDevice refused{1, 0, nullptr, nullptr};
  devrt::Status opened = ops.open_device(refused);
  CHECK(opened.code() == devrt::ErrorCode::out_of_memory);
  CHECK(opened.message().find("shapeRetain failed") != std::string::npos);
  CHECK(refused.state == nullptr);
  CHECK(g_devices[1].retains == 0);
}

TEST_CASE("shared GPU driver operations over-align, name failed calls and map not-ready", "[gpu_driver]") {
  Operations ops;
  g_calls.clear();
  devrt::Result<void*> plain = ops.allocate(on(3), 100, 16);
  REQUIRE(plain.ok());
  CHECK(g_current == 103);
  CHECK(g_calls.back() == "malloc 100"); // the allocator's own alignment: no padding
  devrt::Result<void*> aligned = ops.allocate(on(1), 100, 4096);
  REQUIRE(aligned.ok());
  CHECK(g_calls.back() == "malloc 4195");
  CHECK(reinterpret_cast<std::uintptr_t>(*aligned) % 4096 == 0);
  CHECK(ops.free(on(1), *aligned).ok());
  CHECK(ops.free(on(3), *plain).ok());

  g_next_error = kOutOfMemory;
  devrt::Result<void*> refused = ops.allocate(on(0), 64, 16);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == devrt::ErrorCode::out_of_memory);
  CHECK(refused.status().message().find("shapeMalloc failed") != std::string::npos);
  devrt::Result<void*> overflow = ops.allocate(on(0), SIZE_MAX - 10, 4096);
  REQUIRE_FALSE(overflow.ok());
  CHECK(overflow.status().message().find("shapeMalloc: size overflows") != std::string::npos);

  devrt::Result<void*> stream = ops.stream_create(on(2));
  REQUIRE(stream.ok());
  CHECK(g_calls.back() == "stream_create 7");
  devrt::Result<void*> event = ops.event_create(on(2));
  REQUIRE(event.ok());
  CHECK(ops.event_record(on(2), *event, *stream).ok());
  g_next_error = kNotReadyCode;
  devrt::Result<bool> pending = ops.event_query(on(2), *event);
  REQUIRE(pending.ok());
  CHECK_FALSE(*pending);
  CHECK(*ops.event_query(on(2), *event));
  g_next_error = static_cast<ShapeError>(700);
  devrt::Status lost = ops.stream_synchronize(on(2), *stream);
  CHECK(lost.code() == devrt::ErrorCode::driver_error);
  CHECK(lost.message().find("shapeStreamSynchronize failed: 700") != std::string::npos);
  CHECK(ops.stream_wait_event(on(2), *stream, *event).ok());
  CHECK(ops.device_synchronize(on(2)).ok());
  CHECK(ops.event_destroy(on(2), *event).ok());
  CHECK(ops.stream_destroy(on(2), *stream).ok());
}

TEST_CASE("shared GPU driver operations route each copy to its call, on the right device", "[gpu_driver]") {
  Operations ops;
  devrt::BackendDevice first = on(1), second = on(3);
  char host[64] = {};
  char device_bytes[64] = {};
  auto desc = [&](std::int32_t src_kind, const devrt::BackendDevice* src, std::int32_t dst_kind,
                  const devrt::BackendDevice* dst) {
    devrt::CopyDesc copy{};
    copy.src = src_kind == 2 ? static_cast<void*>(device_bytes) : host;
    copy.dst = dst_kind == 2 ? static_cast<void*>(device_bytes) : host;
    copy.nbytes = 16;
    copy.src_kind = src_kind;
    copy.dst_kind = dst_kind;
    copy.src_device = src;
    copy.dst_device = dst;
    return copy;
  };
  g_calls.clear();
  CHECK(ops.copy(desc(1, nullptr, 2, &first)).ok());  // host -> device: on the destination
  CHECK(ops.copy(desc(2, &second, 1, nullptr)).ok()); // device -> host: on the source
  CHECK(ops.copy(desc(2, &first, 2, &first)).ok());   // within one device
  CHECK(ops.copy(desc(2, &first, 2, &second)).ok());  // across two: the driver's peer copy
  CHECK(g_calls ==
        std::vector<std::string>{"htod 16 on 101", "dtoh 16 on 103", "dtod 16 on 101", "peer 16 from 101 to 103"});
  g_next_error = kOutOfMemory;
  devrt::Status failed = ops.copy(desc(1, nullptr, 2, &first));
  CHECK(failed.code() == devrt::ErrorCode::out_of_memory);
  CHECK(failed.message().find("shapeMemcpyHtoD") != std::string_view::npos);
}

TEST_CASE("shared GPU driver operations check, load, look up once and unload modules", "[gpu_driver]") {
  Operations ops;
  devrt::BackendDevice device = on(2);
  const std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
  const auto bytes = std::as_bytes(std::span(ptx.data(), ptx.size()));
  char log_text[64] = {};
  devrt::BuildLog log(log_text, sizeof log_text);
  devrt::Result<void*> refused = ops.module_load(device, devrt::ModuleFormat::ptx, bytes, "-O3", log);
  CHECK(refused.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(refused.status().message() ==
        "the shape backend takes no load options (got '-O3'); compile with the shape compiler");
  devrt::Result<void*> mislabelled = ops.module_load(device, devrt::ModuleFormat::cubin, bytes, "", log);
  CHECK(mislabelled.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(mislabelled.status().message().find("not a") != std::string_view::npos);

  g_calls.clear();
  devrt::Result<void*> module = ops.module_load(device, devrt::ModuleFormat::ptx, bytes, "", log);
  REQUIRE(module.ok());
  CHECK(g_calls == std::vector<std::string>{"check compute_90 for 2", "load on 102"});
  CHECK(std::string(log_text) == "loaded by shape");
  devrt::Result<void*> kernel = ops.module_function(device, *module, "scale");
  devrt::Result<void*> again = ops.module_function(device, *module, "scale");
  REQUIRE(kernel.ok());
  CHECK(*again == *kernel);
  CHECK(static_cast<ShapeFunction*>(*kernel)->name == "scale");
  CHECK(ops.module_function(device, *module, "missing").status().code() == devrt::ErrorCode::not_found);
  const int unloads = g_module.unloads;
  g_next_error = kOutOfMemory; // the driver's answer is returned; the module and its kernels go anyway
  CHECK(ops.module_unload(device, *module).code() == devrt::ErrorCode::out_of_memory);
  CHECK(g_module.unloads == unloads + 1);
  CHECK(g_calls == std::vector<std::string>{"check compute_90 for 2", "load on 102", "function scale on 102",
                                            "function missing on 102", "unload on 102"});
}
