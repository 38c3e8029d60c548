// SPDX-License-Identifier: Apache-2.0
// The core conformance cases, written once over a path (paths.hpp) and instantiated for the
// run-time path and the compile-time path: allocations, copies and their checks, streams, events,
// kernel launches and their checks. They use no Catch2, no iostream and no exceptions, so the same
// cases run on hosts, on the emulated Cortex-M4 and on the emulated Hexagon DSP (core_main.cpp).
#ifndef DEVRT_TEST_CONFORMANCE_CORE_CASES_HPP
#define DEVRT_TEST_CONFORMANCE_CORE_CASES_HPP

#include "paths.hpp"

#include <devrt/backend/cpu_kernel.h>
#include <devrt/config.hpp>
#include <devrt/device.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

namespace conformance {

// Counts checks and prints each failure with the path, device and source line. Not thread-safe.
class Report {
public:
  void begin(const char* path, const char* test, devrt::Device device) noexcept {
    path_ = path;
    test_ = test;
    device_ = device;
  }
  bool check(bool ok, const char* expr, int line) noexcept {
    ++checks_;
    if (!ok) {
      ++failures_;
      char text[320];
      std::snprintf(text, sizeof text, "FAIL [%s %.*s:%d] %s (line %d): %s\n", path_,
                    static_cast<int>(devrt::device_kind_name(device_.kind).size()),
                    devrt::device_kind_name(device_.kind).data(), static_cast<int>(device_.id), test_, line, expr);
      std::fputs(text, stdout);
    }
    return ok;
  }
  int checks() const noexcept { return checks_; }
  int failures() const noexcept { return failures_; }

private:
  const char* path_ = "";
  const char* test_ = "";
  devrt::Device device_;
  int checks_ = 0;
  int failures_ = 0;
};

#define CORE_CHECK(report, expr) (report).check(static_cast<bool>(expr), #expr, __LINE__)
#define CORE_REQUIRE(report, expr)                                                                                     \
  do {                                                                                                                 \
    if (!CORE_CHECK(report, expr)) return;                                                                             \
  } while (false)

// What a target can afford: the largest buffer a case allocates.
struct Limits {
  std::size_t large_bytes = (std::size_t{17} << 20) + 3;
};

// Whether a message names `part`; always true in builds without messages (-Dlogging=false),
// whose errors keep only their codes.
inline bool has(std::string_view text, std::string_view part) noexcept {
  return !DEVRT_ERROR_MESSAGES || text.find(part) != std::string_view::npos;
}
inline bool error_is(const devrt::Status& status, devrt::ErrorCode code, std::string_view part = {}) noexcept {
  return !status.ok() && status.code() == code && has(status.message(), part);
}
inline unsigned char pattern_byte(std::size_t i, unsigned seed) noexcept {
  return static_cast<unsigned char>((i * 2654435761u + seed * 97u) >> 7);
}

// ---- Kernels, from the table core_main.cpp registers as "core-cases" -------------------------

// fill_index(out, base, n): out[i] = base + i for every global index i < n.
inline std::int32_t fill_index_kernel(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* out = static_cast<std::int32_t*>(devrt_cpu_arg_pointer(c, 0));
  std::int32_t base = devrt_cpu_arg_i32(c, 1);
  std::int32_t n = devrt_cpu_arg_i32(c, 2);
  for (std::uint32_t t = 0; t < c->block[0]; ++t) {
    std::int64_t i = std::int64_t{c->block_index[0]} * c->block[0] + t;
    if (i < n) out[i] = base + static_cast<std::int32_t>(i);
  }
  return 0;
}
// saxpy(y, x, a, n): y[i] += a * x[i].
inline std::int32_t saxpy_kernel(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* y = static_cast<float*>(devrt_cpu_arg_pointer(c, 0));
  const auto* x = static_cast<const float*>(devrt_cpu_arg_pointer(c, 1));
  float a = devrt_cpu_arg_f32(c, 2);
  std::int32_t n = devrt_cpu_arg_i32(c, 3);
  for (std::uint32_t t = 0; t < c->block[0]; ++t) {
    std::int64_t i = std::int64_t{c->block_index[0]} * c->block[0] + t;
    if (i < n) y[i] += a * x[i];
  }
  return 0;
}
inline constexpr devrt_cpu_kernel_entry kCoreKernels[] = {
    {"fill_index", &fill_index_kernel, "buffer,int32,int32"},
    {"saxpy", &saxpy_kernel, "buffer,buffer,float32,int32"},
};
inline constexpr const char* kCoreKernelTable = "core-cases";

// I + 1 scalar arguments.
template <std::size_t... I>
std::array<devrt::KernelArg, sizeof...(I)> scalar_args(std::index_sequence<I...>) noexcept {
  return {{(static_cast<void>(I), devrt::KernelArg(std::int32_t{1}))...}};
}

// ---- Cases -----------------------------------------------------------------------------------

template <class P>
void allocation_sizes(Report& r, devrt::Device device, const Limits& limits) {
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4097}, limits.large_bytes}) {
    auto buffer = P::Buffer::allocate(device, size);
    CORE_REQUIRE(r, buffer.ok());
    CORE_CHECK(r, buffer->size() == size);
    CORE_CHECK(r, buffer->device() == device);
    CORE_CHECK(r, buffer->empty() == (size == 0));
    CORE_CHECK(r, (buffer->data() == nullptr) == (size == 0));
  }
}

template <class P>
void allocation_alignments(Report& r, devrt::Device device, bool addressable) {
  for (std::size_t alignment = 1; alignment <= 4096; alignment *= 2) {
    auto buffer = P::Buffer::allocate(device, 100, alignment);
    CORE_REQUIRE(r, buffer.ok());
    if (addressable) CORE_CHECK(r, reinterpret_cast<std::uintptr_t>(buffer->data()) % alignment == 0);
  }
  for (std::size_t alignment : {std::size_t{0}, std::size_t{3}, std::size_t{48}, devrt::kMaxAlignment * 2}) {
    auto buffer = P::Buffer::allocate(device, 64, alignment);
    CORE_CHECK(r, error_is(buffer.status(), devrt::ErrorCode::invalid_argument, "alignment"));
  }
}

template <class P>
void huge_allocations(Report& r, devrt::Device device) {
  const std::size_t max = ~std::size_t{0};
  for (std::size_t size : {max, max / 4 * 3, max / 2 + 1}) {
    auto buffer = P::Buffer::allocate(device, size);
    CORE_CHECK(r, error_is(buffer.status(), devrt::ErrorCode::out_of_memory, "allocate"));
    CORE_CHECK(r, has(buffer.status().message(), devrt::device_kind_name(device.kind)));
  }
  CORE_CHECK(r, P::Buffer::allocate(device, 4096).ok()); // the device still works
}

template <class P>
void missing_devices(Report& r, devrt::Device device, std::int32_t count) {
  for (std::int32_t id : {std::int32_t{-1}, count, count + 100}) {
    auto buffer = P::Buffer::allocate(devrt::Device{device.kind, id}, 64);
    CORE_CHECK(r, error_is(buffer.status(), devrt::ErrorCode::invalid_argument, devrt::device_kind_name(device.kind)));
    CORE_CHECK(r, !P::Stream::create(devrt::Device{device.kind, id}).ok());
  }
}

template <class P>
void buffer_moves(Report& r, devrt::Device device) {
  auto a = P::Buffer::allocate(device, 256);
  CORE_REQUIRE(r, a.ok());
  void* data = a->data();
  typename P::Buffer b = std::move(*a);
  CORE_CHECK(r, a->data() == nullptr); // NOLINT(bugprone-use-after-move)
  CORE_CHECK(r, a->size() == 0);       // NOLINT(bugprone-use-after-move)
  CORE_CHECK(r, b.data() == data);
  auto c = P::Buffer::allocate(device, 64);
  CORE_REQUIRE(r, c.ok());
  *c = std::move(b);
  CORE_CHECK(r, c->data() == data);
  CORE_CHECK(r, c->reset().ok());
  CORE_CHECK(r, c->data() == nullptr);
  CORE_CHECK(r, c->reset().ok());
}

// host -> device at an offset, device -> device, device -> host: every byte arrives, none around.
template <class P>
void copies_round_trip(Report& r, devrt::Device device, const Limits& limits) {
  for (std::size_t size : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, limits.large_bytes / 2}) {
    auto* source = static_cast<unsigned char*>(std::malloc(size + 11));
    auto* result = static_cast<unsigned char*>(std::malloc(size + 2));
    const bool allocated = source != nullptr && result != nullptr;
    CORE_CHECK(r, allocated);
    if (!allocated) {
      std::free(source);
      std::free(result);
      return;
    }
    for (std::size_t i = 0; i < size + 11; ++i) source[i] = pattern_byte(i, 1);
    std::memset(result, 0xEE, size + 2);
    auto a = P::Buffer::allocate(device, size + 5);
    auto b = P::Buffer::allocate(device, size + 9);
    bool ok = a.ok() && b.ok() && P::copy(devrt::host_span(source, size + 11), 11, *a, 5, size).ok() &&
              P::copy(*a, 5, *b, 9, size).ok() && P::copy(*b, 9, devrt::host_span(result, size + 2), 1, size).ok() &&
              P::synchronize(P::default_stream(device)).ok();
    CORE_CHECK(r, ok);
    CORE_CHECK(r, result[0] == 0xEE && result[size + 1] == 0xEE);
    CORE_CHECK(r, std::memcmp(result + 1, source + 11, size) == 0);
    std::free(source);
    std::free(result);
  }
}

template <class P>
void copy_errors(Report& r, devrt::Device device) {
  unsigned char host[64];
  for (std::size_t i = 0; i < sizeof host; ++i) host[i] = pattern_byte(i, 2);
  auto buffer = P::Buffer::allocate(device, 64);
  CORE_REQUIRE(r, buffer.ok());
  CORE_REQUIRE(r, P::copy(devrt::host_span(host, 64), *buffer).ok());
  CORE_REQUIRE(r, P::synchronize(P::default_stream(device)).ok());
  using devrt::ErrorCode;
  // Ranges outside either span, an offset past the end, a size that wraps.
  CORE_CHECK(r,
             error_is(P::copy(devrt::host_span(host, 64), 0, *buffer, 1, 64), ErrorCode::out_of_range, "destination"));
  CORE_CHECK(r, error_is(P::copy(*buffer, 60, devrt::host_span(host, 64), 0, 8), ErrorCode::out_of_range, "source"));
  CORE_CHECK(r, error_is(P::copy(*buffer, 65, devrt::host_span(host, 64), 0, 0), ErrorCode::out_of_range));
  CORE_CHECK(r, error_is(P::copy(*buffer, 8, devrt::host_span(host, 64), 0, ~std::size_t{0}), ErrorCode::out_of_range));
  // Whole-span copies need equal sizes.
  CORE_CHECK(r, error_is(P::copy(devrt::host_span(host, 32), *buffer), ErrorCode::invalid_argument));
  // Null data with a size; zero bytes are a no-op, even at the end and from null.
  CORE_CHECK(r, error_is(P::copy(devrt::MemorySpan{devrt::kHostDevice, nullptr, 16}, 0, *buffer, 0, 16),
                         ErrorCode::invalid_argument, "null"));
  CORE_CHECK(r, P::copy(devrt::MemorySpan{devrt::kHostDevice, nullptr, 0}, 0, *buffer, 64, 0).ok());
  CORE_CHECK(r, P::copy(*buffer, 64, devrt::host_span(host, 64), 64, 0).ok());
  // Overlap within one allocation is refused; disjoint ranges of it are fine.
  CORE_CHECK(r, error_is(P::copy(*buffer, 0, *buffer, 8, 16), ErrorCode::invalid_argument, "overlap"));
  CORE_CHECK(r, P::copy(*buffer, 0, *buffer, 32, 16).ok());
  // A stream of a device that does not run the copy.
  devrt::StreamRef foreign{devrt::Device{device.kind, device.id + 1}, nullptr};
  CORE_CHECK(r, error_is(P::copy(devrt::host_span(host, 64), 0, *buffer, 0, 8, foreign), ErrorCode::invalid_argument,
                         "stream"));
  // Nothing refused changed a byte.
  unsigned char back[64];
  CORE_REQUIRE(r, P::copy(*buffer, devrt::host_span(back, 64)).ok());
  CORE_REQUIRE(r, P::synchronize(P::default_stream(device)).ok());
  CORE_CHECK(r, std::memcmp(back, host, 32) == 0);
  CORE_CHECK(r, std::memcmp(back + 32, host, 16) == 0);
  CORE_CHECK(r, std::memcmp(back + 48, host + 48, 16) == 0);
}

template <class P>
void streams_and_events(Report& r, devrt::Device device) {
  auto stream = P::Stream::create(device);
  CORE_REQUIRE(r, stream.ok());
  CORE_CHECK(r, stream->device() == device);
  unsigned char in[256];
  unsigned char out[256] = {};
  for (std::size_t i = 0; i < sizeof in; ++i) in[i] = pattern_byte(i, 3);
  auto buffer = P::Buffer::allocate(device, sizeof in);
  CORE_REQUIRE(r, buffer.ok());
  auto event = P::Event::create(device);
  CORE_REQUIRE(r, event.ok());
  CORE_CHECK(r, P::copy(devrt::host_span(in, sizeof in), 0, *buffer, 0, sizeof in, *stream).ok());
  CORE_CHECK(r, event->record(*stream).ok());
  CORE_CHECK(r, event->synchronize().ok());
  auto done = event->query();
  CORE_CHECK(r, done.ok() && *done);
  // A second stream waits for the event, then reads back.
  auto second = P::Stream::create(device);
  CORE_REQUIRE(r, second.ok());
  CORE_CHECK(r, event->wait_on(*second).ok());
  CORE_CHECK(r, P::copy(*buffer, 0, devrt::host_span(out, sizeof out), 0, sizeof out, *second).ok());
  CORE_CHECK(r, second->synchronize().ok());
  CORE_CHECK(r, std::memcmp(in, out, sizeof in) == 0);
  // An event refuses streams of other devices.
  devrt::StreamRef foreign{devrt::Device{device.kind, device.id + 1}, nullptr};
  CORE_CHECK(r, error_is(event->record(foreign), devrt::ErrorCode::invalid_argument));
  // Many streams come and go.
  for (int i = 0; i < 16; ++i) CORE_CHECK(r, P::Stream::create(device).ok());
}

template <class P>
void kernel_launches(Report& r, devrt::Device device) {
  auto module = P::Module::load(device, devrt::ModuleFormat::host_table, kCoreKernelTable);
  CORE_REQUIRE(r, module.ok());
  auto fill = module->function("fill_index");
  auto saxpy = module->function("saxpy");
  CORE_REQUIRE(r, fill.ok() && saxpy.ok());
  constexpr std::int32_t n = 1000; // a partial last block
  auto y = P::Buffer::allocate(device, n * sizeof(float));
  auto x = P::Buffer::allocate(device, n * sizeof(float));
  auto ints = P::Buffer::allocate(device, n * sizeof(std::int32_t));
  CORE_REQUIRE(r, y.ok() && x.ok() && ints.ok());
  static float ys[n];
  static float xs[n];
  static std::int32_t got[n];
  for (std::int32_t i = 0; i < n; ++i) {
    ys[i] = static_cast<float>(i);
    xs[i] = 0.5f * static_cast<float>(i % 7);
  }
  CORE_REQUIRE(r, P::copy(devrt::host_span(ys, sizeof ys), *y).ok());
  CORE_REQUIRE(r, P::copy(devrt::host_span(xs, sizeof xs), *x).ok());
  devrt::LaunchConfig config;
  config.grid.x = (n + 63) / 64;
  config.block.x = 64;
  CORE_CHECK(r, saxpy->launch(config, {*y, *x, 2.0f, n}).ok());
  CORE_CHECK(r, fill->launch(config, {*ints, std::int32_t{-5}, n}).ok());
  CORE_REQUIRE(r, P::copy(*y, devrt::host_span(ys, sizeof ys)).ok());
  CORE_REQUIRE(r, P::copy(*ints, devrt::host_span(got, sizeof got)).ok());
  CORE_REQUIRE(r, P::synchronize(P::default_stream(device)).ok());
  bool all = true;
  for (std::int32_t i = 0; i < n; ++i) {
    all = all && ys[i] == static_cast<float>(i) + 2.0f * (0.5f * static_cast<float>(i % 7)) && got[i] == i - 5;
  }
  CORE_CHECK(r, all);

  using devrt::ErrorCode;
  // Checked before the kernel runs: extents, argument count and types, buffer offsets, streams.
  devrt::LaunchConfig empty = config;
  empty.grid.x = 0;
  CORE_CHECK(r, error_is(fill->launch(empty, {*ints, std::int32_t{0}, n}), ErrorCode::invalid_argument, "grid"));
  CORE_CHECK(r, error_is(fill->launch(config, {*ints, n}), ErrorCode::invalid_argument));
  CORE_CHECK(r, error_is(fill->launch(config, {*ints, 1.0f, n}), ErrorCode::invalid_argument));
  CORE_CHECK(r,
             error_is(fill->launch(config, {devrt::KernelArg(*ints, n * sizeof(std::int32_t) + 4), std::int32_t{0}, n}),
                      ErrorCode::invalid_argument, "offset"));
  const auto many = scalar_args(std::make_index_sequence<devrt::kMaxKernelArgs + 1>());
  CORE_CHECK(r, error_is(fill->launch(config, std::span<const devrt::KernelArg>(many)), ErrorCode::invalid_argument,
                         "arguments"));
  devrt::StreamRef foreign{devrt::Device{device.kind, device.id + 1}, nullptr};
  CORE_CHECK(r, error_is(fill->launch(config, std::span<const devrt::KernelArg>(many.data(), 3), foreign),
                         ErrorCode::invalid_argument, "stream"));
  CORE_CHECK(r, error_is(module->function("no_such_kernel").status(), ErrorCode::not_found));
  CORE_CHECK(r, error_is(P::Module::load(device, devrt::ModuleFormat::host_table, "no-such-table").status(),
                         ErrorCode::not_found, "no-such-table"));
}

// Every case above for path P on `device` of a backend with `count` devices.
template <class P>
void run_core_cases(Report& r, devrt::Device device, std::int32_t count, bool addressable, const Limits& limits) {
  r.begin(P::name, "allocation_sizes", device);
  allocation_sizes<P>(r, device, limits);
  r.begin(P::name, "allocation_alignments", device);
  allocation_alignments<P>(r, device, addressable);
  r.begin(P::name, "huge_allocations", device);
  huge_allocations<P>(r, device);
  r.begin(P::name, "missing_devices", device);
  missing_devices<P>(r, device, count);
  r.begin(P::name, "buffer_moves", device);
  buffer_moves<P>(r, device);
  r.begin(P::name, "copies_round_trip", device);
  copies_round_trip<P>(r, device, limits);
  r.begin(P::name, "copy_errors", device);
  copy_errors<P>(r, device);
  r.begin(P::name, "streams_and_events", device);
  streams_and_events<P>(r, device);
  r.begin(P::name, "kernel_launches", device);
  kernel_launches<P>(r, device);
}

} // namespace conformance

#endif // DEVRT_TEST_CONFORMANCE_CORE_CASES_HPP
