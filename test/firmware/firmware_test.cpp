// SPDX-License-Identifier: Apache-2.0
// The firmware test: runs on a bare-metal target (Cortex-M4 under QEMU through the cross file's
// exe_wrapper), linked against the cross-built libdevrt.a with no extra flags. It lists the
// registered backends, allocates, copies, launches a CPU kernel from a kernel table, checks the
// results and the error paths, and exits 0 only when every check held.
//
// Variants (test/firmware/meson.build):
//   DEVRT_FIRMWARE_EXPECT_FAILURE  one check is wrong on purpose: proves a failure reaches the exit code
//   DEVRT_FIRMWARE_NO_CONSTRUCTORS linked so that startup runs no static constructors, as on a
//                                  Hexagon runtime that does not walk .init_array/.ctors
#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

namespace {

int g_failures = 0;
int g_checks = 0;

void check(bool condition, const char* what, int line) {
  ++g_checks;
  if (!condition) {
    ++g_failures;
    std::printf("FAIL line %d: %s\n", line, what);
  }
}
#define CHECK(condition) check((condition), #condition, __LINE__)

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

void expect_error(const devrt::Status& status, devrt::ErrorCode code, std::string_view part, int line) {
  check(!status.ok(), "an error", line);
  check(status.code() == code, "the expected error code", line);
  // A build without error messages (-Dlogging=false) keeps only the codes.
  if (DEVRT_ERROR_MESSAGES) check(contains(status.message(), part), "the expected message part", line);
  std::printf("  expected error: %.*s\n", static_cast<int>(status.message().size()), status.message().data());
}

// Set by a static constructor: tells whether startup ran them.
struct ConstructorProbe {
  ConstructorProbe() noexcept { ran = true; }
  static inline bool ran = false;
};
const ConstructorProbe g_probe;

// out[i] = a[i] * scale + b[i] over grid.x blocks of block.x threads.
std::int32_t saxpy(const devrt_cpu_kernel_context* c, devrt_error*) {
  const auto* a = static_cast<const float*>(devrt_cpu_arg_pointer(c, 0));
  const auto* b = static_cast<const float*>(devrt_cpu_arg_pointer(c, 1));
  auto* out = static_cast<float*>(devrt_cpu_arg_pointer(c, 2));
  float scale = devrt_cpu_arg_f32(c, 3);
  std::int32_t n = devrt_cpu_arg_i32(c, 4);
  for (std::uint32_t t = 0; t < c->block[0]; ++t) {
    std::int64_t i = static_cast<std::int64_t>(c->block_index[0]) * c->block[0] + t;
    if (i < n) out[i] = a[i] * scale + b[i];
  }
  return 0;
}
constexpr devrt_cpu_kernel_entry kKernels[] = {
    {"saxpy", &saxpy, "buffer,buffer,buffer,float32,int32"},
};

void test_registry() {
  devrt::Registry& registry = devrt::Registry::global();
  std::printf("registered backends: %u\n", static_cast<unsigned>(registry.size()));
  for (std::size_t i = 0; i < registry.size(); ++i) {
    devrt::BackendRef backend = registry.at(i);
    devrt::Result<std::int32_t> count = backend.device_count();
    std::printf("  %.*s: %d device(s)\n", static_cast<int>(backend.name().size()), backend.name().data(),
                count.ok() ? static_cast<int>(*count) : -1);
  }
  CHECK(registry.size() >= 1);
  CHECK(static_cast<bool>(registry.find("cpu")));
  CHECK(!registry.find("cuda"));
  CHECK(devrt::device_count(devrt::DeviceKind::cpu) == 1);
  CHECK(devrt::device_exists(devrt::kHostDevice));
  CHECK(!devrt::device_exists(devrt::Device{devrt::DeviceKind::cpu, 1}));
}

void test_memory() {
  constexpr std::size_t kCount = 256;
  std::array<std::uint32_t, kCount> input{};
  std::array<std::uint32_t, kCount> output{};
  for (std::size_t i = 0; i < kCount; ++i) input[i] = static_cast<std::uint32_t>(i * 2654435761u);

  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, sizeof input);
  CHECK(buffer.ok());
  if (!buffer.ok()) return;
  CHECK(reinterpret_cast<std::uintptr_t>(buffer->data()) % devrt::kDefaultAlignment == 0);
  CHECK(devrt::copy(devrt::host_span(input.data(), sizeof input), *buffer).ok());
  CHECK(devrt::copy(*buffer, devrt::host_span(output.data(), sizeof output)).ok());
  CHECK(input == output);

  // Partial copies land where they are asked to.
  std::uint32_t word = 0;
  CHECK(devrt::copy(*buffer, 4 * sizeof word, devrt::host_span(&word, sizeof word), 0, sizeof word).ok());
  CHECK(word == input[4]);

  // Error paths: nothing is copied, nothing leaks.
  expect_error(devrt::copy(*buffer, sizeof input - 4, devrt::host_span(output.data(), sizeof output), 0, 8),
               devrt::ErrorCode::out_of_range, "", __LINE__);
  expect_error(devrt::copy(*buffer, 0, *buffer, 16, 64), devrt::ErrorCode::invalid_argument, "overlap", __LINE__);
  expect_error(devrt::copy(devrt::MemorySpan{devrt::kHostDevice, nullptr, 64}, 0, *buffer, 0, 64),
               devrt::ErrorCode::invalid_argument, "null", __LINE__);
  CHECK(devrt::copy(*buffer, 0, devrt::host_span(output.data(), sizeof output), 0, 0).ok()); // zero bytes: no-op
  CHECK(buffer->reset().ok());

  // A zero-size buffer is valid and holds nothing; sizes past the address space or RAM fail cleanly.
  devrt::Result<devrt::Buffer> empty = devrt::Buffer::allocate(devrt::kHostDevice, 0);
  CHECK(empty.ok() && empty->empty());
  expect_error(devrt::Buffer::allocate(devrt::kHostDevice, SIZE_MAX).status(), devrt::ErrorCode::out_of_memory, "cpu:0",
               __LINE__);
  expect_error(devrt::Buffer::allocate(devrt::kHostDevice, std::size_t{1} << 30).status(),
               devrt::ErrorCode::out_of_memory, "cpu:0", __LINE__);
  expect_error(devrt::Buffer::allocate(devrt::kHostDevice, 64, 3).status(), devrt::ErrorCode::invalid_argument, "align",
               __LINE__);

  // Devices that do not exist.
  expect_error(devrt::Buffer::allocate(devrt::Device{devrt::DeviceKind::cpu, 3}, 64).status(),
               devrt::ErrorCode::invalid_argument, "cpu:3", __LINE__);
  devrt::Status gpu = devrt::Buffer::allocate(devrt::Device{devrt::DeviceKind::cuda, 0}, 64).status();
  CHECK(!gpu.ok());
  CHECK(!DEVRT_ERROR_MESSAGES || contains(gpu.message(), "cuda"));
  std::printf("  expected error: %.*s\n", static_cast<int>(gpu.message().size()), gpu.message().data());
}

void test_kernel() {
  CHECK(devrt::cpu::register_kernel_table("firmware", kKernels).ok());
  devrt::Result<devrt::Module> module =
      devrt::Module::load(devrt::kHostDevice, devrt::ModuleFormat::host_table, "firmware");
  CHECK(module.ok());
  if (!module.ok()) return;
  devrt::Result<devrt::Function> function = module->function("saxpy");
  CHECK(function.ok());
  if (!function.ok()) return;

  constexpr std::int32_t kN = 100;
  std::array<float, kN> a{};
  std::array<float, kN> b{};
  std::array<float, kN> out{};
  for (std::int32_t i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 1.0F;
  }
  devrt::Result<devrt::Buffer> da = devrt::Buffer::allocate(devrt::kHostDevice, sizeof a);
  devrt::Result<devrt::Buffer> db = devrt::Buffer::allocate(devrt::kHostDevice, sizeof b);
  devrt::Result<devrt::Buffer> dout = devrt::Buffer::allocate(devrt::kHostDevice, sizeof out);
  CHECK(da.ok() && db.ok() && dout.ok());
  if (!da.ok() || !db.ok() || !dout.ok()) return;
  CHECK(devrt::copy(devrt::host_span(a.data(), sizeof a), *da).ok());
  CHECK(devrt::copy(devrt::host_span(b.data(), sizeof b), *db).ok());

  const devrt::KernelArg args[] = {*da, *db, *dout, 2.0F, kN};
  devrt::LaunchConfig config;
  config.grid.x = (kN + 31) / 32;
  config.block.x = 32;
  CHECK(function->launch(config, args).ok());
  CHECK(devrt::copy(*dout, devrt::host_span(out.data(), sizeof out)).ok());
  bool all = true;
  for (std::int32_t i = 0; i < kN; ++i) all = all && out[i] == 2.0F * static_cast<float>(i) + 1.0F;
  CHECK(all);

  // A wrong argument list is refused before the kernel runs; unknown names are not found.
  const devrt::KernelArg too_few[] = {*da, *db};
  expect_error(function->launch(config, too_few), devrt::ErrorCode::invalid_argument, "saxpy", __LINE__);
  expect_error(module->function("missing").status(), devrt::ErrorCode::not_found, "missing", __LINE__);
  expect_error(devrt::Module::load(devrt::kHostDevice, devrt::ModuleFormat::host_table, "no-such-table").status(),
               devrt::ErrorCode::not_found, "no-such-table", __LINE__);
}

// The firmware heap (devrt/firmware_heap.h) full: every call that needs memory answers
// out_of_memory, nothing aborts, and all of it is usable again once the buffers are gone.
void test_heap_exhaustion() {
  CHECK(devrt::cpu::register_kernel_table("firmware", kKernels).ok());
  devrt::Result<devrt::Module> module =
      devrt::Module::load(devrt::kHostDevice, devrt::ModuleFormat::host_table, "firmware");
  CHECK(module.ok());
  if (!module.ok()) return;
  devrt::Result<devrt::Function> saxpy = module->function("saxpy");
  CHECK(saxpy.ok());
  if (!saxpy.ok()) return;

  constexpr std::size_t kChunk = 1024;
  constexpr std::size_t kMaxChunks = DEVRT_FIRMWARE_HEAP_BYTES / kChunk + 1;
  devrt::Buffer chunks[kMaxChunks]; // on the stack: out of the heap being filled
  std::size_t taken = 0;
  devrt::Status last;
  while (taken < kMaxChunks) {
    devrt::Result<devrt::Buffer> chunk = devrt::Buffer::allocate(devrt::kHostDevice, kChunk);
    if (!chunk.ok()) {
      last = chunk.status();
      break;
    }
    chunks[taken++] = std::move(*chunk);
  }
  CHECK(taken > 0 && taken < kMaxChunks);
  CHECK(last.code() == devrt::ErrorCode::out_of_memory);
  // Small buffers until nothing at all is left.
  devrt::Buffer crumbs[kChunk / 4]; // what the chunks left, 16 bytes a block at most
  for (devrt::Buffer& crumb : crumbs) {
    devrt::Result<devrt::Buffer> small = devrt::Buffer::allocate(devrt::kHostDevice, 8, 8); // into any gap
    if (!small.ok()) break;
    crumb = std::move(*small);
  }
  std::printf("  the firmware heap held %u buffers of %u bytes\n", static_cast<unsigned>(taken),
              static_cast<unsigned>(kChunk));

  CHECK(devrt::Buffer::allocate(devrt::kHostDevice, 64).status().code() == devrt::ErrorCode::out_of_memory);
  CHECK(module->function("saxpy").status().code() == devrt::ErrorCode::out_of_memory); // the name's copy
  const devrt::KernelArg args[] = {chunks[0], chunks[1], chunks[2], 2.0F, std::int32_t{4}};
  devrt::LaunchConfig config;
  config.block.x = 4;
  config.dynamic_shared_bytes = 256; // block-shared memory comes from the heap too
  // With no memory left, errors keep their codes: their messages would need the heap too.
  CHECK(saxpy->launch(config, args).code() == devrt::ErrorCode::out_of_memory);

  for (devrt::Buffer& crumb : crumbs) CHECK(crumb.reset().ok());
  for (std::size_t i = 0; i < taken; ++i) CHECK(chunks[i].reset().ok());
  CHECK(saxpy->launch(config, args).ok());
  devrt::Result<devrt::Buffer> again = devrt::Buffer::allocate(devrt::kHostDevice, (taken - 1) * kChunk);
  CHECK(again.ok()); // the freed blocks merged back into one run
}

void test_streams() {
  devrt::Result<devrt::Stream> stream = devrt::Stream::create(devrt::kHostDevice);
  CHECK(stream.ok());
  if (stream.ok()) CHECK(stream->synchronize().ok());
  devrt::Result<devrt::Event> event = devrt::Event::create(devrt::kHostDevice);
  CHECK(event.ok());
  if (event.ok() && stream.ok()) {
    CHECK(event->record(*stream).ok());
    devrt::Result<bool> done = event->query();
    CHECK(done.ok() && *done);
  }
}

} // namespace

int main() {
#if defined(DEVRT_FIRMWARE_NO_CONSTRUCTORS)
  CHECK(!ConstructorProbe::ran); // this variant really started without static constructors
#else
  CHECK(ConstructorProbe::ran);
#endif
  test_registry();
  test_memory();
  test_kernel();
  test_heap_exhaustion();
  test_streams();
#if defined(DEVRT_FIRMWARE_EXPECT_FAILURE)
  CHECK(devrt::device_count(devrt::DeviceKind::cpu) == 2); // wrong on purpose
#endif
  std::printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
