// SPDX-License-Identifier: Apache-2.0
// The Hexagon backend's own behaviour, on the DSP (under qemu-hexagon here): memory in DDR and in
// VTCM, copies between the scopes through both paths, an HVX kernel from a kernel table working
// on VTCM, the attributes and the detected target. What every backend shares is in the core
// conformance cases (test/conformance/core_cases.hpp), which also run here.
#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/backend/direct.hpp>
#include <devrt/backend/hexagon.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#if defined(__HVX__)
#include <hexagon_protos.h>
#include <hexagon_types.h>
#endif

namespace {

int g_checks = 0;
int g_failures = 0;

void check(bool ok, const char* what, int line) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL line %d: %s\n", line, what);
  }
}
#define CHECK(expr) check(static_cast<bool>(expr), #expr, __LINE__)

using Hexagon = devrt::hexagon::HexagonBackend;
constexpr devrt::Device kDsp{devrt::DeviceKind::hexagon, 0};

// vadd_i32(out, a, b, n): out = a + b over n int32 values, 32 per HVX vector (n a multiple of 32
// and every buffer 128-byte aligned); a scalar loop where the build has no HVX.
std::int32_t vadd_i32(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* out = static_cast<std::int32_t*>(devrt_cpu_arg_pointer(c, 0));
  const auto* a = static_cast<const std::int32_t*>(devrt_cpu_arg_pointer(c, 1));
  const auto* b = static_cast<const std::int32_t*>(devrt_cpu_arg_pointer(c, 2));
  std::int32_t n = devrt_cpu_arg_i32(c, 3);
#if defined(__HVX__)
  for (std::int32_t i = 0; i < n; i += 32) {
    const auto* va = reinterpret_cast<const HVX_Vector*>(a + i);
    const auto* vb = reinterpret_cast<const HVX_Vector*>(b + i);
    *reinterpret_cast<HVX_Vector*>(out + i) = Q6_Vw_vadd_VwVw(*va, *vb);
  }
#else
  for (std::int32_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
#endif
  return 0;
}
constexpr devrt_cpu_kernel_entry kKernels[] = {{"vadd_i32", &vadd_i32, "buffer,buffer,buffer,int32"}};

void test_scopes() {
  Hexagon& dsp = devrt::direct::backend<Hexagon>();
  devrt::hexagon::VtcmStats before = dsp.vtcm_stats();
  CHECK(before.capacity_bytes == devrt::hexagon::kVtcmBytes);
  CHECK(before.used_bytes == 0);
  {
    auto ddr = devrt::hexagon::allocate(kDsp, 4096, devrt::MemoryScope::global);
    auto vtcm = devrt::hexagon::allocate(kDsp, 5000, devrt::MemoryScope::vtcm, 8192);
    CHECK(ddr.ok() && vtcm.ok());
    CHECK(Hexagon::scope_of(ddr->data()) == devrt::MemoryScope::global);
    CHECK(Hexagon::scope_of(vtcm->data()) == devrt::MemoryScope::vtcm);
    CHECK(reinterpret_cast<std::uintptr_t>(vtcm->data()) % 8192 == 0);
    CHECK(dsp.vtcm_stats().used_bytes == 3 * devrt::hexagon::kVtcmGranule); // 5000 bytes: three granules
    // The whole arena cannot be had twice; what is left can.
    auto too_big = devrt::hexagon::allocate(kDsp, devrt::hexagon::kVtcmBytes, devrt::MemoryScope::vtcm);
    CHECK(!too_big.ok() && too_big.status().code() == devrt::ErrorCode::out_of_memory);
    auto rest = devrt::hexagon::allocate(kDsp, dsp.vtcm_stats().largest_free_bytes, devrt::MemoryScope::vtcm);
    CHECK(rest.ok());
    CHECK(!devrt::hexagon::allocate(kDsp, 1, devrt::MemoryScope::vtcm, 3).ok()); // bad alignment
  }
  CHECK(dsp.vtcm_stats().used_bytes == 0); // every granule back
  CHECK(dsp.vtcm_stats().largest_free_bytes == devrt::hexagon::kVtcmBytes);
  // An address inside VTCM that no allocation starts at is refused, not freed.
  auto vtcm = devrt::hexagon::allocate(kDsp, 4096, devrt::MemoryScope::vtcm);
  CHECK(vtcm.ok());
  devrt::Status bad =
      dsp.free(devrt::BackendDevice{0, 0, nullptr, nullptr}, static_cast<unsigned char*>(vtcm->data()) + 64);
  CHECK(!bad.ok() && bad.code() == devrt::ErrorCode::invalid_argument);
}

// VTCM through the API every backend shares: scope_limits, Buffer::allocate_scoped, Tensor::empty
// with TensorOptions::scope, copies in and out, and the refusals (textures, DLPack).
void test_vtcm_through_the_core_api() {
  Hexagon& dsp = devrt::direct::backend<Hexagon>();
  auto limits = devrt::scope_limits(kDsp, devrt::MemoryScope::vtcm);
  CHECK(limits.ok() && limits->max_bytes == devrt::hexagon::kVtcmBytes);
  auto texture = devrt::scope_limits(kDsp, devrt::MemoryScope::texture);
  CHECK(!texture.ok() && texture.status().code() == devrt::ErrorCode::unsupported);
  CHECK(std::string_view(texture.status().message()).find("hexagon:0") != std::string_view::npos);
  {
    auto buffer = devrt::Buffer::allocate_scoped(kDsp, devrt::MemoryScope::vtcm, 3000);
    CHECK(buffer.ok() && Hexagon::scope_of(buffer->data()) == devrt::MemoryScope::vtcm);
    CHECK(dsp.vtcm_stats().used_bytes == 2 * devrt::hexagon::kVtcmGranule);
    devrt::TensorOptions options;
    options.scope = devrt::MemoryScope::vtcm;
    auto tensor = devrt::Tensor::empty({16, 32}, devrt::DataType::int32(), kDsp, options);
    CHECK(tensor.ok() && tensor->scope() == devrt::MemoryScope::vtcm);
    CHECK(Hexagon::scope_of(tensor->data()) == devrt::MemoryScope::vtcm);
    static std::int32_t values[16 * 32];
    static std::int32_t back[16 * 32];
    for (std::int32_t i = 0; i < 16 * 32; ++i) values[i] = i * 5 - 77;
    CHECK(tensor->copy_from_host(values, sizeof values).ok());
    auto row = tensor->slice(0, 3, 4); // flat memory: views work as in global memory
    CHECK(row.ok() && row->host_data<std::int32_t>()[0] == values[3 * 32]);
    auto ddr = tensor->to(kDsp);
    CHECK(ddr.ok() && ddr->scope() == devrt::MemoryScope::global);
    CHECK(ddr->copy_to_host(back, sizeof back).ok() && std::memcmp(values, back, sizeof back) == 0);
    auto exported = tensor->to_dlpack();
    CHECK(!exported.ok() && exported.status().code() == devrt::ErrorCode::unsupported);
    options.scope = devrt::MemoryScope::texture;
    CHECK(devrt::Tensor::empty({2, 4}, devrt::DataType::float32(), kDsp, options).status().code() ==
          devrt::ErrorCode::unsupported);
    auto too_big = devrt::Buffer::allocate_scoped(kDsp, devrt::MemoryScope::vtcm, devrt::hexagon::kVtcmBytes + 1);
    CHECK(!too_big.ok() && too_big.status().code() == devrt::ErrorCode::out_of_memory);
  }
  CHECK(dsp.vtcm_stats().used_bytes == 0); // the Buffer and the Tensor gave their granules back
}

// host -> DDR -> VTCM -> DDR -> host, with the run-time path and the compile-time path.
void test_copies_between_scopes() {
  static std::uint8_t in[20000];
  static std::uint8_t out[20000];
  for (std::size_t i = 0; i < sizeof in; ++i) in[i] = static_cast<std::uint8_t>(i * 7 + 3);
  auto ddr = devrt::hexagon::allocate(kDsp, sizeof in, devrt::MemoryScope::global);
  auto vtcm = devrt::hexagon::allocate(kDsp, sizeof in, devrt::MemoryScope::vtcm);
  CHECK(ddr.ok() && vtcm.ok());
  CHECK(devrt::copy(devrt::host_span(in, sizeof in), *ddr).ok());
  CHECK(devrt::copy(*ddr, *vtcm).ok());
  std::memset(ddr->data(), 0, sizeof in);
  CHECK(devrt::direct::copy<Hexagon>(*vtcm, *ddr).ok());
  CHECK(devrt::direct::copy<Hexagon>(*ddr, devrt::host_span(out, sizeof out)).ok());
  CHECK(std::memcmp(in, out, sizeof in) == 0);
  // The checks hold across scopes: a VTCM range past its end.
  devrt::Status past = devrt::direct::copy<Hexagon>(*ddr, 0, *vtcm, 16, sizeof in);
  CHECK(!past.ok() && past.code() == devrt::ErrorCode::out_of_range);
}

void test_hvx_kernel() {
  CHECK(devrt::cpu::register_kernel_table("hexagon-test", kKernels).ok());
  constexpr std::int32_t n = 1024;
  auto a = devrt::hexagon::allocate(kDsp, n * 4, devrt::MemoryScope::vtcm);
  auto b = devrt::hexagon::allocate(kDsp, n * 4, devrt::MemoryScope::vtcm);
  auto sum = devrt::hexagon::allocate(kDsp, n * 4, devrt::MemoryScope::global, 128);
  CHECK(a.ok() && b.ok() && sum.ok());
  static std::int32_t host_a[n];
  static std::int32_t host_b[n];
  static std::int32_t host_sum[n];
  for (std::int32_t i = 0; i < n; ++i) {
    host_a[i] = i * 3 - 700;
    host_b[i] = 100000 - i * i;
  }
  CHECK(devrt::direct::copy<Hexagon>(devrt::host_span(host_a, sizeof host_a), *a).ok());
  CHECK(devrt::direct::copy<Hexagon>(devrt::host_span(host_b, sizeof host_b), *b).ok());
  auto module = devrt::direct::Module<Hexagon>::load(kDsp, devrt::ModuleFormat::host_table, "hexagon-test");
  CHECK(module.ok());
  if (!module.ok()) return;
  auto vadd = module->function("vadd_i32");
  CHECK(vadd.ok());
  if (!vadd.ok()) return;
  devrt::LaunchConfig config;
  CHECK(vadd->launch(config, {*sum, *a, *b, n}).ok());
  CHECK(devrt::direct::copy<Hexagon>(*sum, devrt::host_span(host_sum, sizeof host_sum)).ok());
  bool all = true;
  for (std::int32_t i = 0; i < n; ++i) all = all && host_sum[i] == host_a[i] + host_b[i];
  CHECK(all);
  // The same kernel through the run-time path.
  auto runtime_module = devrt::Module::load(kDsp, devrt::ModuleFormat::host_table, "hexagon-test");
  CHECK(runtime_module.ok() && runtime_module->function("vadd_i32").ok());
#if defined(__HVX__)
  std::printf("vadd_i32: HVX, %d lanes of int32 per vector\n", static_cast<int>(sizeof(HVX_Vector) / 4));
#endif
}

void test_attributes_and_target() {
  auto name = devrt::get_attribute(kDsp, devrt::Attribute::device_name);
  CHECK(name.ok() && std::holds_alternative<std::string>(*name));
  if (name.ok()) std::printf("device_name: %s\n", std::get<std::string>(*name).c_str());
  auto version = devrt::get_attribute(kDsp, devrt::Attribute::compute_version);
  CHECK(version.ok() && std::get<std::string>(*version) == "v66");
  auto vtcm = devrt::get_attribute(kDsp, devrt::Attribute::max_shared_memory_per_block);
  CHECK(vtcm.ok() && std::get<std::int64_t>(*vtcm) == static_cast<std::int64_t>(devrt::hexagon::kVtcmBytes));
  devrt::Result<devrt::Target> target = devrt::detect_target(kDsp);
  CHECK(target.ok());
  if (!target.ok()) return;
  std::string text = target->to_string();
  std::printf("target: %s\n", text.c_str());
  CHECK(target->kind() == "hexagon");
  CHECK(target->get<std::string>("mcpu") == std::string("hexagonv66"));
#if defined(__HVX__)
  CHECK(target->has("mattr", "+hvxv66"));
  CHECK(target->has("mattr", "+hvx-length128b"));
#endif
}

// Timed events read the QTimer: an interval around a busy loop is positive and in order.
void test_timed_events() {
  devrt::Result<devrt::Event> start = devrt::Event::create(kDsp, {.timing = true});
  devrt::Result<devrt::Event> end = devrt::Event::create(kDsp, {.timing = true});
  CHECK(start.ok() && end.ok());
  if (!start.ok() || !end.ok()) return;
  CHECK(devrt::Event::elapsed_ns(*start, *end).status().code() == devrt::ErrorCode::invalid_argument);
  devrt::StreamRef stream = devrt::current_stream(kDsp);
  CHECK(start->record(stream).ok());
  volatile std::uint32_t sink = 1;
  for (std::uint32_t i = 0; i < 200'000; ++i) sink = sink * 1664525u + 1013904223u;
  CHECK(end->record(stream).ok());
  devrt::Result<std::int64_t> elapsed = devrt::Event::elapsed_ns(*start, *end);
  CHECK(elapsed.ok() && *elapsed > 0);
  if (elapsed.ok()) std::printf("timed loop: %lld ns\n", static_cast<long long>(*elapsed));
  devrt::Result<std::int64_t> backwards = devrt::Event::elapsed_ns(*end, *start);
  CHECK(backwards.ok() && *backwards == -*elapsed);
  devrt::Event untimed = std::move(devrt::Event::create(kDsp)).value();
  CHECK(!untimed.timed() && untimed.record(stream).ok());
  CHECK(devrt::Event::elapsed_ns(*start, untimed).status().code() == devrt::ErrorCode::invalid_argument);
}

} // namespace

int main() {
  test_scopes();
  test_copies_between_scopes();
  test_vtcm_through_the_core_api();
  test_hvx_kernel();
  test_attributes_and_target();
  test_timed_events();
  std::printf("hexagon: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
