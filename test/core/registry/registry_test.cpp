// SPDX-License-Identifier: Apache-2.0
#include <devrt/devrt.hpp>
#include <devrt/memory_stats.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/null/null_backend.hpp"

using devrt::BackendRef;
using devrt::DeviceKind;
using devrt::ErrorCode;
using devrt::Registry;

namespace {

// The smallest backend: the required operations only, answering "unsupported" (the null template
// implements every optional one too). Named "null" on ext_dev for the registry's tests.
class MinimalBackend {
public:
  static constexpr std::string_view name = "null";
  static constexpr DeviceKind kind = DeviceKind::ext_dev;
  devrt::Status availability() noexcept { return unsupported("availability"); }
  devrt::Result<std::int32_t> device_count() noexcept { return 0; }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice&, devrt::Attribute) noexcept {
    return unsupported("get_attribute");
  }
  devrt::Result<void*> allocate(const devrt::BackendDevice&, std::size_t, std::size_t) noexcept {
    return unsupported("allocate");
  }
  devrt::Status free(const devrt::BackendDevice&, void*) noexcept { return unsupported("free"); }
  devrt::Status copy(const devrt::CopyDesc&) noexcept { return unsupported("copy"); }
  devrt::Result<void*> stream_create(const devrt::BackendDevice&) noexcept { return unsupported("stream_create"); }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void*) noexcept { return unsupported("stream_destroy"); }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) noexcept {
    return unsupported("stream_synchronize");
  }

private:
  static devrt::Status unsupported(const char* call) noexcept {
    return devrt::make_error(ErrorCode::unsupported, "the null backend implements no ", call);
  }
};

constexpr devrt_backend_table kNullTable = devrt::make_backend_table<MinimalBackend>();
constexpr devrt_backend_table kCpuTable = devrt::make_backend_table<devrt::cpu::CpuBackend>();

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A backend missing `free`: not a devrt::Backend (the compile-fail test checks the diagnostic).
struct MissingFree {
  static constexpr std::string_view name = "broken";
  static constexpr DeviceKind kind = DeviceKind::vpi;
  devrt::Status availability() { return {}; }
  devrt::Result<std::int32_t> device_count() { return 0; }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice&, devrt::Attribute) {
    return devrt::AttributeValue();
  }
  devrt::Result<void*> allocate(const devrt::BackendDevice&, std::size_t, std::size_t) {
    return static_cast<void*>(nullptr);
  }
  devrt::Status copy(const devrt::CopyDesc&) { return {}; }
  devrt::Result<void*> stream_create(const devrt::BackendDevice&) { return static_cast<void*>(nullptr); }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void*) { return {}; }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) { return {}; }
};

} // namespace

TEST_CASE("the concept accepts complete backends and rejects incomplete ones", "[registry][concept]") {
  STATIC_REQUIRE(devrt::Backend<devrt::cpu::CpuBackend>);
  STATIC_REQUIRE(devrt::Backend<devrt::null::NullBackend>);
  STATIC_REQUIRE(devrt::BackendEvents<devrt::cpu::CpuBackend>);
  STATIC_REQUIRE_FALSE(devrt::BackendEvents<MinimalBackend>);
  // The template implements every optional operation (answering "unsupported").
  STATIC_REQUIRE(devrt::BackendEvents<devrt::null::NullBackend> && devrt::BackendModules<devrt::null::NullBackend> &&
                 devrt::BackendTargetDetection<devrt::null::NullBackend>);
  STATIC_REQUIRE_FALSE(devrt::Backend<MissingFree>);
  STATIC_REQUIRE_FALSE(devrt::Backend<int>);
  STATIC_REQUIRE(kCpuTable.abi_version == DEVRT_BACKEND_ABI_VERSION);
  STATIC_REQUIRE(kCpuTable.struct_size == sizeof(devrt_backend_table));
  STATIC_REQUIRE((kCpuTable.capabilities & DEVRT_CAP_EVENTS) != 0);
  STATIC_REQUIRE((kCpuTable.capabilities & DEVRT_CAP_HOST_ACCESSIBLE) != 0);
  STATIC_REQUIRE(kNullTable.capabilities == 0);
  STATIC_REQUIRE(kNullTable.event_create == nullptr);
}

TEST_CASE("an instantiated registry starts empty and finds what it is given", "[registry]") {
  Registry registry;
  CHECK(registry.size() == 0);
  CHECK_FALSE(registry.find(DeviceKind::ext_dev));
  CHECK_FALSE(registry.find("null"));

  REQUIRE(registry.add(&kNullTable).ok());
  CHECK(registry.size() == 1);
  BackendRef by_kind = registry.find(DeviceKind::ext_dev);
  REQUIRE(by_kind);
  CHECK(by_kind.name() == "null");
  CHECK(registry.find("null") == by_kind);
  CHECK(registry.at(0) == by_kind);
  CHECK_FALSE(registry.find(static_cast<DeviceKind>(-1)));
  CHECK_FALSE(registry.find(static_cast<DeviceKind>(1000)));

  SECTION("adding the same table again is a no-op") {
    CHECK(registry.add(&kNullTable).ok());
    CHECK(registry.size() == 1);
  }
  SECTION("a second table with a taken name is refused") {
    devrt_backend_table copy = kNullTable;
    copy.device_kind = static_cast<int32_t>(DeviceKind::vpi);
    devrt::Status s = registry.add(&copy);
    CHECK(s.code() == ErrorCode::already_exists);
    CHECK(contains(s.message(), "'null'"));
    CHECK(registry.size() == 1);
  }
  SECTION("two implementations of one kind: the first available serves, DEVRT_PREFER chooses") {
    // "null" (registered first) is unavailable; "other" is the CPU backend on the same kind.
    devrt_backend_table other = kCpuTable;
    other.name = "other";
    other.device_kind = static_cast<int32_t>(DeviceKind::ext_dev);
    REQUIRE(registry.add(&other).ok());
    CHECK(registry.size() == 2);
    CHECK(registry.find(DeviceKind::ext_dev).name() == "other");
    CHECK(registry.find("null")); // listed still, standing by with the reason
    devrt::Status standing = registry.standing_by(registry.find("null"));
    CHECK(standing.code() == ErrorCode::unavailable);
    CHECK(contains(standing.message(), "stands by: device kind ext_dev is served by 'other'"));
    CHECK(registry.standing_by(registry.find("other")).ok());

    ::setenv("DEVRT_PREFER", "vulkan,null", 1);
    devrt::Registry preferring;
    REQUIRE(preferring.add(&kNullTable).ok());
    REQUIRE(preferring.add(&other).ok());
    CHECK(preferring.find(DeviceKind::ext_dev).name() == "null");
    CHECK(contains(preferring.standing_by(preferring.find("other")).message(), "(named in DEVRT_PREFER)"));
    ::unsetenv("DEVRT_PREFER");

    devrt::Registry unavailable_only; // none available: the first registered serves
    devrt_backend_table second = kNullTable;
    second.name = "second";
    REQUIRE(unavailable_only.add(&kNullTable).ok());
    REQUIRE(unavailable_only.add(&second).ok());
    CHECK(unavailable_only.find(DeviceKind::ext_dev).name() == "null");
  }
  SECTION("a missing kind is reported with what is built in") {
    devrt::Result<BackendRef> r = registry.get(DeviceKind::cuda);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::unavailable);
    CHECK(contains(r.status().message(), "'cuda'"));
    CHECK(contains(r.status().message(), "null"));
  }
}

TEST_CASE("malformed tables are refused with the reason and leave the registry unchanged", "[registry]") {
  Registry registry;
  devrt_backend_table table = kCpuTable;
  table.name = "fake";
  table.device_kind = static_cast<int32_t>(DeviceKind::vpi);

  struct Case {
    const char* what;
    void (*mutate)(devrt_backend_table&);
    ErrorCode code;
    const char* mentions;
  };
  const Case cases[] = {
      {"abi version 2", [](devrt_backend_table& t) { t.abi_version = 2; }, ErrorCode::abi_mismatch,
       "backend table has ABI version 2, this devrt speaks 4"},
      {"no open_device", [](devrt_backend_table& t) { t.open_device = nullptr; }, ErrorCode::invalid_argument,
       "lacks function open_device"},
      {"no close_device", [](devrt_backend_table& t) { t.close_device = nullptr; }, ErrorCode::invalid_argument,
       "lacks function close_device"},
      {"struct size", [](devrt_backend_table& t) { t.struct_size = 16; }, ErrorCode::abi_mismatch, "16 bytes"},
      {"null name", [](devrt_backend_table& t) { t.name = nullptr; }, ErrorCode::invalid_argument, "name"},
      {"empty name", [](devrt_backend_table& t) { t.name = ""; }, ErrorCode::invalid_argument, "name"},
      {"bad name", [](devrt_backend_table& t) { t.name = "Has Space"; }, ErrorCode::invalid_argument, "name"},
      {"long name", [](devrt_backend_table& t) { t.name = "abcdefghijabcdefghijabcdefghijabc"; },
       ErrorCode::invalid_argument, "name"},
      {"kind zero", [](devrt_backend_table& t) { t.device_kind = 0; }, ErrorCode::invalid_argument, "device kind 0"},
      {"kind high", [](devrt_backend_table& t) { t.device_kind = 32; }, ErrorCode::invalid_argument, "device kind 32"},
      {"no free", [](devrt_backend_table& t) { t.free = nullptr; }, ErrorCode::invalid_argument, "lacks function free"},
      {"no copy", [](devrt_backend_table& t) { t.copy = nullptr; }, ErrorCode::invalid_argument, "lacks function copy"},
      {"events cap without functions", [](devrt_backend_table& t) { t.event_query = nullptr; },
       ErrorCode::invalid_argument, "event_query"},
      {"modules without formats", [](devrt_backend_table& t) { t.module_formats = 0; }, ErrorCode::invalid_argument,
       "declares module formats 0x0"},
      {"an unknown module format", [](devrt_backend_table& t) { t.module_formats |= 1u << 20; },
       ErrorCode::invalid_argument, "declares module formats 0x100006"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    devrt_backend_table broken = table;
    c.mutate(broken);
    devrt::Status s = registry.add(&broken);
    CHECK(s.code() == c.code);
    CHECK(contains(s.message(), c.mentions));
    CHECK(registry.size() == 0);
  }
  CHECK(registry.add(nullptr).code() == ErrorCode::invalid_argument);
}

TEST_CASE("a registry holds at most kCapacity backends", "[registry]") {
  Registry registry;
  std::vector<devrt_backend_table> tables(Registry::kCapacity + 1, kNullTable);
  std::vector<std::string> names;
  names.reserve(tables.size());
  for (std::size_t i = 0; i < tables.size(); ++i) names.push_back("b" + std::to_string(i));
  std::size_t added = 0;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    tables[i].name = names[i].c_str();
    tables[i].device_kind = static_cast<int32_t>(i % 31) + 1;
    if (i >= 31) tables[i].device_kind = 1; // kinds run out first; the capacity check must still hold
    devrt::Status s = registry.add(&tables[i]);
    if (s.ok()) ++added;
  }
  CHECK(added == 31);
  CHECK(registry.size() == 31);
}

TEST_CASE("the null backend answers unsupported everywhere", "[registry][null]") {
  Registry registry;
  REQUIRE(registry.add(&kNullTable).ok());
  BackendRef null = registry.find("null");
  devrt::Status availability = null.availability();
  CHECK(availability.code() == ErrorCode::unsupported);
  CHECK(contains(availability.message(), "null availability"));
  CHECK(*null.device_count() == 0);
  // A backend with no devices because it is not available says why, not just "no device".
  CHECK(null.check_device(0).code() == ErrorCode::unsupported);
  CHECK(contains(null.check_device(0).message(), "null (ext_dev:0) availability"));
  CHECK(null.allocate(0, 64, 64).status().code() == ErrorCode::unsupported);
  CHECK(null.event_create(0).status().code() == ErrorCode::unsupported);
  devrt_copy_desc desc{};
  devrt::Status copy = null.copy(0, 0, 0, desc);
  CHECK(copy.code() == ErrorCode::unsupported);
  CHECK(contains(copy.message(), "null (ext_dev:0) copy"));
  CHECK(devrt::Buffer::allocate(registry, devrt::Device{DeviceKind::ext_dev, 0}, 64).status().code() ==
        ErrorCode::unsupported);
  CHECK(devrt::Buffer::allocate(registry, devrt::Device{DeviceKind::cpu, 0}, 64).status().code() ==
        ErrorCode::unavailable);
}

TEST_CASE("the global registry holds every backend this build enabled", "[registry]") {
  Registry& global = Registry::global();
  CHECK(&global == &Registry::global());
  std::vector<std::string> expected{"cpu"};
#if DEVRT_WITH_NULL
  expected.emplace_back("null");
#endif
#if DEVRT_WITH_OPENCL
  expected.emplace_back("opencl");
#endif
#if DEVRT_WITH_VULKAN
  expected.emplace_back("vulkan");
#endif
#if DEVRT_WITH_CUDA
  expected.emplace_back("cuda");
  expected.emplace_back("cuda_host");
#endif
#if DEVRT_WITH_ROCM
  expected.emplace_back("rocm");
#endif
#if DEVRT_WITH_WEBGPU
  expected.emplace_back("webgpu");
#endif
#if DEVRT_WITH_REMOTE
  expected.emplace_back("remote");
#endif
  CHECK(global.size() == expected.size());
  for (const std::string& name : expected) {
    INFO(name);
    BackendRef backend = global.find(name);
    REQUIRE(backend);
    CHECK(global.find(backend.kind()) == backend);
  }
  // Registering a built-in table again through the registrar path is idempotent.
  CHECK(global.add(global.find("cpu").table()).ok());
  CHECK(global.size() == expected.size());
}

namespace {
// A table whose copy returns the code in desc->nbytes, with a reason, so every DEVRT_STATUS_* can
// cross the C ABI.
std::int32_t copy_returning(void*, const devrt_copy_desc* desc, devrt_error* err) {
  std::snprintf(err->message, DEVRT_ERROR_MESSAGE_CAPACITY, "the reason for %zu", desc->nbytes);
  return static_cast<std::int32_t>(desc->nbytes);
}
} // namespace

TEST_CASE("every DEVRT_STATUS_* a backend returns keeps its code and reason", "[registry][abi]") {
  STATIC_REQUIRE(devrt::kLastErrorCode == ErrorCode::permission_denied);
  devrt_backend_table table = kCpuTable;
  table.copy = &copy_returning;
  BackendRef backend(&table);
  for (std::int32_t code = DEVRT_STATUS_INVALID_ARGUMENT; code <= DEVRT_STATUS_LAST + 1; ++code) {
    devrt_copy_desc desc{};
    desc.nbytes = static_cast<std::size_t>(code);
    devrt::Status status = backend.copy(0, 0, 0, desc);
    INFO("code " << code << ": " << status.message());
    if (code <= DEVRT_STATUS_LAST) {
      CHECK(status.code() == static_cast<ErrorCode>(code));
      CHECK(contains(status.message(), "cpu:0 copy: the reason for " + std::to_string(code)));
    } else {
      CHECK(status.code() == ErrorCode::internal);
      CHECK(contains(status.message(), "unknown status " + std::to_string(code)));
    }
  }
}

namespace {
// Fails availability with a reason longer than the C ABI's text buffer.
struct LongReasonBackend : MinimalBackend {
  static constexpr std::string_view name = "long_reason";
  static constexpr DeviceKind kind = DeviceKind::vpi;
  devrt::Status availability() noexcept {
    return devrt::Status(ErrorCode::unavailable, std::string(1000, 'r') + " (the end)");
  }
};
constexpr devrt_backend_table kLongReasonTable = devrt::make_backend_table<LongReasonBackend>();
} // namespace

TEST_CASE("a built-in backend's error reaches the caller whole, without the text buffer", "[registry]") {
  devrt::Status status = BackendRef(&kLongReasonTable).availability();
  CHECK(status.code() == ErrorCode::unavailable);
  CHECK(status.message().size() > 1000);
  CHECK(contains(status.message(), "long_reason availability: rrrr"));
  CHECK(contains(status.message(), "r (the end)"));
}

TEST_CASE("a caller that does not accept a handed-over message gets text, truncated to the buffer", "[registry]") {
  devrt_error err{};
  CHECK(kLongReasonTable.availability(nullptr, &err) == DEVRT_STATUS_UNAVAILABLE);
  std::string_view text(err.message);
  CHECK(text.size() == DEVRT_ERROR_MESSAGE_CAPACITY - 1);
  CHECK(text.find_first_not_of('r') == std::string_view::npos);
}

TEST_CASE("a caller that accepts a handed-over message owns it", "[registry]") {
  devrt_error err{};
  err.message[1] = DEVRT_ERROR_ACCEPTS_HANDOVER;
  CHECK(kLongReasonTable.availability(nullptr, &err) == DEVRT_STATUS_UNAVAILABLE);
  REQUIRE(err.message[0] == '\0');
  REQUIRE(err.message[1] == DEVRT_ERROR_HANDED_OVER);
  char* message = nullptr;
  std::memcpy(&message, err.message + DEVRT_ERROR_HANDOVER_OFFSET, sizeof message);
  REQUIRE(message != nullptr);
  CHECK(std::string_view(message).size() == 1010);
  std::free(message);
}

// ---- Devices as objects (backend ABI 2) ---------------------------------------------------------

namespace {

// Keeps an object per device: open_device makes it, close_device frees it, and every per-device
// call reads it through the device the core passes. Two devices; opening device 2 of 3 fails.
struct LifecycleDevice {
  std::int32_t index;
};
std::vector<std::string> g_lifecycle_log;

class LifecycleBackend {
public:
  static constexpr std::string_view name = "lifecycle";
  static constexpr DeviceKind kind = DeviceKind::vpi;
  devrt::Status availability() noexcept { return {}; }
  devrt::Result<std::int32_t> device_count() noexcept { return 3; }
  devrt::Status open_device(devrt::BackendDevice& device) noexcept {
    g_lifecycle_log.push_back("open " + std::to_string(device.index));
    if (device.index == 2) return devrt::Status(ErrorCode::driver_error, "the device is wedged");
    device.state = new LifecycleDevice{device.index};
    return {};
  }
  devrt::Status close_device(devrt::BackendDevice& device) noexcept {
    g_lifecycle_log.push_back("close " + std::to_string(device.index));
    delete &devrt::backend_state<LifecycleDevice>(device);
    device.state = nullptr;
    return {};
  }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice& device, devrt::Attribute) noexcept {
    return devrt::AttributeValue(std::int64_t{100} * devrt::backend_state<LifecycleDevice>(device).index);
  }
  devrt::Result<void*> allocate(const devrt::BackendDevice&, std::size_t nbytes, std::size_t) noexcept {
    return std::malloc(nbytes);
  }
  devrt::Status free(const devrt::BackendDevice&, void* ptr) noexcept {
    std::free(ptr);
    return {};
  }
  devrt::Status copy(const devrt::CopyDesc&) noexcept { return {}; }
  devrt::Result<void*> stream_create(const devrt::BackendDevice& device) noexcept {
    return static_cast<void*>(&devrt::backend_state<LifecycleDevice>(device));
  }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void*) noexcept { return {}; }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) noexcept { return {}; }
};
static_assert(devrt::BackendDeviceLifecycle<LifecycleBackend>);

constexpr devrt_backend_table kLifecycleTable = devrt::make_backend_table<LifecycleBackend>();

} // namespace

TEST_CASE("devices are opened once, passed to every call, and closed at shutdown", "[registry][lifecycle]") {
  Registry registry;
  REQUIRE(registry.add(&kLifecycleTable).ok());
  BackendRef backend = registry.find("lifecycle");
  g_lifecycle_log.clear();

  // Each device is opened on its first use, once; every call gets the state open_device made.
  devrt::Result<devrt::AttributeValue> one = backend.attribute(1, devrt::Attribute::max_clock_rate);
  REQUIRE(one.ok());
  CHECK(std::get<std::int64_t>(*one) == 100);
  CHECK(std::get<std::int64_t>(*backend.attribute(0, devrt::Attribute::max_clock_rate)) == 0);
  CHECK(std::get<std::int64_t>(*backend.attribute(1, devrt::Attribute::max_clock_rate)) == 100);
  devrt::Result<void*> stream = backend.stream_create(1);
  REQUIRE(stream.ok());
  CHECK(static_cast<LifecycleDevice*>(*stream)->index == 1);
  CHECK(backend.stream_destroy(1, *stream).ok());
  CHECK(g_lifecycle_log == std::vector<std::string>{"open 1", "open 0"});

  // A device that does not exist is not opened; one whose opening fails says why, every time.
  CHECK(backend.attribute(3, devrt::Attribute::max_clock_rate).status().code() == ErrorCode::invalid_argument);
  for (int attempt = 0; attempt < 2; ++attempt) {
    devrt::Status wedged = backend.attribute(2, devrt::Attribute::max_clock_rate).status();
    CHECK(wedged.code() == ErrorCode::driver_error);
    CHECK_THAT(std::string(wedged.message()), Catch::Contains("lifecycle:2 open_device: the device is wedged"));
  }
  CHECK(g_lifecycle_log == std::vector<std::string>{"open 1", "open 0", "open 2", "open 2"});

  // Shutdown closes each open device once, the most recently opened first; a later call opens
  // the device again.
  g_lifecycle_log.clear();
  CHECK(devrt::shutdown().ok());
  CHECK(g_lifecycle_log == std::vector<std::string>{"close 0", "close 1"});
  CHECK(devrt::shutdown().ok());
  CHECK(g_lifecycle_log.size() == 2);
  CHECK(std::get<std::int64_t>(*backend.attribute(1, devrt::Attribute::max_clock_rate)) == 100);
  CHECK(g_lifecycle_log.back() == "open 1");
  CHECK(devrt::shutdown().ok());
  CHECK(g_lifecycle_log.back() == "close 1");
}
