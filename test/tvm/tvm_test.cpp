// SPDX-License-Identifier: Apache-2.0
// devrt::tvm (devrt/tvm.hpp) on TVM-layout libraries built by this test build (test/tvm/): the
// blob parser on what TVM's writer writes and on every truncation and corruption of it; the
// libraries' functions on cpu, opencl, vulkan (push constants and a uniform buffer), webgpu and
// cuda, in TVM <= 0.20's ABI and in tvm-ffi's (TVM >= 0.21), against the expected values;
// refusals, coexistence with TVM's own runtime symbols (libtvm_runtime's and libtvm_ffi's), one
// file loaded twice, calls from several threads.
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/discovery.hpp>
#include <devrt/remote.hpp>
#include <devrt/tvm.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

using devrt::Device;
using devrt::DeviceKind;
using devrt::ErrorCode;
using devrt::Tensor;
using devrt::tvm::Library;

// TVM's own runtime functions, as a process that also holds libtvm_runtime has them: exported
// from this executable (export_dynamic). devrt must never bind a library's calls to them.
namespace {
std::atomic<int> g_tvm_runtime_calls{0};
}
extern "C" {
[[gnu::visibility("default")]] void* TVMBackendAllocWorkspace(int, int, std::uint64_t, int, int) {
  ++g_tvm_runtime_calls;
  return nullptr;
}
[[gnu::visibility("default")]] int TVMBackendFreeWorkspace(int, int, void*) {
  ++g_tvm_runtime_calls;
  return -1;
}
[[gnu::visibility("default")]] int TVMBackendParallelLaunch(void*, void*, int) {
  ++g_tvm_runtime_calls;
  return -1;
}
[[gnu::visibility("default")]] int TVMFuncCall(void*, void*, int*, int, void*, int*) {
  ++g_tvm_runtime_calls;
  return -1;
}
[[gnu::visibility("default")]] void TVMAPISetLastError(const char*) { ++g_tvm_runtime_calls; }
// And libtvm_ffi's, as a process that imported tvm_ffi has them.
[[gnu::visibility("default")]] void TVMFFIErrorSetRaisedFromCStr(const char*, const char*) { ++g_tvm_runtime_calls; }
[[gnu::visibility("default")]] void TVMFFIErrorSetRaisedFromCStrParts(const char*, const char**, std::int32_t) {
  ++g_tvm_runtime_calls;
}
[[gnu::visibility("default")]] int TVMFFIFunctionCall(void*, void*, std::int32_t, void*) {
  ++g_tvm_runtime_calls;
  return -1;
}
}

namespace {

constexpr std::int64_t kCount = 1000;

std::vector<std::byte> read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  std::vector<std::byte> out(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) out[i] = static_cast<std::byte>(bytes[i]);
  return out;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The path of a library this process has mapped whose file name is `name` (from /proc/self/maps).
std::string mapped_library(std::string_view name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const std::size_t slash = line.find('/');
    if (slash != std::string::npos && line.ends_with("/" + std::string(name))) return line.substr(slash);
  }
  return {};
}

Tensor floats(Device device, const std::vector<float>& values) {
  devrt::Result<Tensor> t =
      Tensor::empty({static_cast<std::int64_t>(values.size())}, devrt::DataType::float32(), device);
  REQUIRE(t.ok());
  REQUIRE(t->copy_from_host(values.data(), values.size() * sizeof(float)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  return std::move(t).value();
}

template <class T>
std::vector<T> host_values(const Tensor& t) {
  std::vector<T> out(static_cast<std::size_t>(t.numel()));
  REQUIRE(devrt::synchronize(devrt::current_stream(t.device())).ok());
  REQUIRE(t.copy_to_host(out.data(), out.size() * sizeof(T)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(t.device())).ok());
  return out;
}

std::vector<float> iota(float start, float step) {
  std::vector<float> v(kCount);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

struct Fixture {
  const char* name;
  DeviceKind kind;
  const char* path;
  bool ffi = false;      // built as TVM >= 0.22 builds (tvm-ffi), importing libtvm_ffi
  bool ffi_0_21 = false; // built as TVM 0.21 builds (tvm-ffi's calling convention, TVM's names)
};

std::vector<Fixture> device_fixtures() {
  std::vector<Fixture> out;
#ifdef DEVRT_TEST_TVM_OPENCL
  out.push_back({"opencl", DeviceKind::opencl, DEVRT_TEST_TVM_OPENCL});
  out.push_back({"opencl", DeviceKind::opencl, DEVRT_TEST_TVM_OPENCL_FFI, true});
  out.push_back({"opencl", DeviceKind::opencl, DEVRT_TEST_TVM_OPENCL_FFI_0_21, false, true});
#endif
#ifdef DEVRT_TEST_TVM_VULKAN
  out.push_back({"vulkan", DeviceKind::vulkan, DEVRT_TEST_TVM_VULKAN});
  out.push_back({"vulkan", DeviceKind::vulkan, DEVRT_TEST_TVM_VULKAN_FFI, true});
  out.push_back({"vulkan", DeviceKind::vulkan, DEVRT_TEST_TVM_VULKAN_FFI_0_21, false, true});
#endif
#ifdef DEVRT_TEST_TVM_WEBGPU
  out.push_back({"webgpu", DeviceKind::webgpu, DEVRT_TEST_TVM_WEBGPU});
  out.push_back({"webgpu", DeviceKind::webgpu, DEVRT_TEST_TVM_WEBGPU_FFI, true});
  out.push_back({"webgpu", DeviceKind::webgpu, DEVRT_TEST_TVM_WEBGPU_FFI_0_21, false, true});
#endif
#ifdef DEVRT_TEST_TVM_CUDA
  out.push_back({"cuda", DeviceKind::cuda, DEVRT_TEST_TVM_CUDA});
  out.push_back({"cuda", DeviceKind::cuda, DEVRT_TEST_TVM_CUDA_FFI, true});
  out.push_back({"cuda", DeviceKind::cuda, DEVRT_TEST_TVM_CUDA_FFI_0_21, false, true});
#endif
  return out;
}

bool present(Device device, std::string& reason) {
  devrt::Result<devrt::BackendRef> backend = devrt::Registry::global().get(device.kind);
  if (!backend.ok()) {
    reason = std::string(backend.status().message());
    return false;
  }
  devrt::Status available = backend->availability();
  if (!available.ok()) {
    reason = std::string(available.message());
    return false;
  }
  devrt::Result<std::int32_t> count = backend->device_count();
  if (!count.ok() || *count <= device.id) {
    reason = "no device " + devrt::to_string(device);
    return false;
  }
  return true;
}

} // namespace

TEST_CASE("a blob as TVM writes it parses: modules, kernels, launch tags, shader flags", "[tvm]") {
#ifdef DEVRT_TEST_TVM_VULKAN_BLOB
  const std::vector<std::byte> vulkan = read_file(DEVRT_TEST_TVM_VULKAN_BLOB);
  devrt::Result<devrt::tvm::DeviceBlob> blob = devrt::tvm::parse_device_blob(vulkan);
  INFO(blob.status().message());
  REQUIRE(blob.ok());
  CHECK(blob->has_host_module);
  CHECK(blob->skipped.empty());
  REQUIRE(blob->modules.size() == 1);
  const devrt::tvm::DeviceModule& module = blob->modules[0];
  CHECK(module.type_key == "vulkan");
  CHECK(module.format == "vulkan");
  REQUIRE(module.kernels.size() == 4); // vadd, scale, sum_scalars, power
  REQUIRE(module.kernel_code.size() == 4);
  for (const devrt::tvm::KernelCode& code : module.kernel_code) {
    CHECK(code.flags == (code.name == "sum_scalars_kernel" ? 1u : 0u)); // kUseUBO past 128 bytes
  }
  for (const devrt::tvm::KernelInfo& kernel : module.kernels) {
    CHECK(kernel.launch_tags == std::vector<std::string>{"blockIdx.x", "threadIdx.x"});
    CHECK(kernel.arg_types[0] == devrt::DataType{devrt::DataTypeCode::opaque_handle, 64, 1});
    if (kernel.name == "sum_scalars_kernel") CHECK(kernel.arg_types.size() == 19);
  }
#else
  SUCCEED("no Vulkan fixture in this build");
#endif
  const std::vector<std::byte> relax = read_file(DEVRT_TEST_TVM_BLOB_RELAX);
  devrt::Result<devrt::tvm::DeviceBlob> skipped = devrt::tvm::parse_device_blob(relax);
  INFO(skipped.status().message());
  REQUIRE(skipped.ok());
  REQUIRE(skipped->skipped.size() == 1);
  CHECK(contains(skipped->skipped[0], "relax.Executable"));
  REQUIRE(skipped->modules.size() == 1);
  CHECK(skipped->modules[0].type_key == "webgpu");
  CHECK(skipped->modules[0].kernel_code.size() == 2);

  devrt::Result<devrt::tvm::DeviceBlob> relay = devrt::tvm::parse_device_blob(read_file(DEVRT_TEST_TVM_BLOB_METADATA));
  INFO(relay.status().message());
  REQUIRE(relay.ok());
  REQUIRE(relay->skipped.size() == 2);
  CHECK(contains(relay->skipped[0], "metadata: constants"));
  CHECK(contains(relay->skipped[1], "metadata_module"));
  REQUIRE(relay->modules.size() == 1);
  CHECK(relay->modules[0].kernels.size() == 2);
}

TEST_CASE("blobs of TVM >= 0.21 parse: arg_extra_tags, the framed layout, CUDA and ROCm modules", "[tvm]") {
  using devrt::tvm::BlobAbi;
  // TVM 0.21: the inline layout, FunctionInfo with arg_extra_tags.
  const std::vector<std::byte> v021 = read_file(DEVRT_TEST_TVM_BLOB_FFI_0_21);
  devrt::Result<devrt::tvm::DeviceBlob> inline_ffi = devrt::tvm::parse_device_blob(v021, BlobAbi::ffi);
  INFO(inline_ffi.status().message());
  REQUIRE(inline_ffi.ok());
  REQUIRE(inline_ffi->modules.size() == 1);
  CHECK(inline_ffi->modules[0].kernels.size() == 2);
  CHECK_FALSE(devrt::tvm::parse_device_blob(v021, BlobAbi::packed).ok()); // the tags are bytes it cannot place
  // TVM >= 0.22: framed; a module kind devrt does not run is skipped by its length.
  const std::vector<std::byte> framed = read_file(DEVRT_TEST_TVM_BLOB_FFI_FRAMED_RELAX);
  devrt::Result<devrt::tvm::DeviceBlob> skipped = devrt::tvm::parse_device_blob(framed, BlobAbi::ffi);
  INFO(skipped.status().message());
  REQUIRE(skipped.ok());
  CHECK(skipped->has_host_module);
  REQUIRE(skipped->skipped.size() == 1);
  CHECK(contains(skipped->skipped[0], "relax.VMExecutable: the Relax VM's program"));
  CHECK(skipped->vm_key == "relax.VMExecutable"); // kept, framed: the module's bytes are its own
  CHECK(skipped->vm_executable.size() == std::string_view("the VM's program").size());
  REQUIRE(skipped->modules.size() == 1);
  CHECK(skipped->modules[0].kernel_code.size() == 2);
  for (std::size_t n = 0; n < framed.size(); ++n) {
    std::vector<std::byte> cut(framed.begin(), framed.begin() + static_cast<std::ptrdiff_t>(n));
    REQUIRE(devrt::tvm::parse_device_blob(cut, BlobAbi::ffi).status().code() == ErrorCode::invalid_argument);
  }
  for (std::size_t i = 8; i < framed.size(); ++i) {
    std::vector<std::byte> flipped = framed;
    flipped[i] ^= std::byte{0xff};
    static_cast<void>(devrt::tvm::parse_device_blob(flipped, BlobAbi::ffi));
  }
#ifdef DEVRT_TEST_TVM_CUDA_BLOB
  for (const auto& [path, abi] :
       {std::pair{DEVRT_TEST_TVM_CUDA_BLOB, BlobAbi::packed}, std::pair{DEVRT_TEST_TVM_CUDA_FFI_BLOB, BlobAbi::ffi}}) {
    devrt::Result<devrt::tvm::DeviceBlob> cuda = devrt::tvm::parse_device_blob(read_file(path), abi);
    INFO(cuda.status().message());
    REQUIRE(cuda.ok());
    REQUIRE(cuda->modules.size() == 1);
    const devrt::tvm::DeviceModule& module = cuda->modules[0];
    CHECK(module.type_key == "cuda");
    CHECK(module.format == "ptx");
    CHECK(contains(std::string(reinterpret_cast<const char*>(module.source.data()), module.source.size()),
                   ".entry vadd_kernel("));
    bool dynamic_shared = false;
    for (const devrt::tvm::KernelInfo& kernel : module.kernels) {
      if (kernel.name == "reduce_kernel") dynamic_shared = kernel.launch_tags.back() == "tir.use_dyn_shared_memory";
    }
    CHECK(dynamic_shared);
  }
#else
  WARN("SKIP the CUDA blobs: no nvcc or no cuda backend in this build");
#endif
#ifdef DEVRT_TEST_TVM_BLOB_ROCM
  devrt::Result<devrt::tvm::DeviceBlob> rocm =
      devrt::tvm::parse_device_blob(read_file(DEVRT_TEST_TVM_BLOB_ROCM), BlobAbi::ffi);
  INFO(rocm.status().message());
  REQUIRE(rocm.ok());
  REQUIRE(rocm->modules.size() == 1);
  CHECK(rocm->modules[0].type_key == "hip");
  CHECK(rocm->modules[0].format == "hsaco");
#else
  WARN("SKIP the ROCm blob: no hipcc or no rocm backend in this build");
#endif
}

TEST_CASE("every truncation and corruption of a blob is refused with its reason, never read past", "[tvm]") {
  const std::vector<std::byte> good = read_file(DEVRT_TEST_TVM_BLOB_RELAX);
  REQUIRE(devrt::tvm::parse_device_blob(good).ok());
  // Every prefix: the header's count or a field runs past the end.
  for (std::size_t n = 0; n < good.size(); ++n) {
    std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)); // a buffer of exactly n
    devrt::Result<devrt::tvm::DeviceBlob> parsed = devrt::tvm::parse_device_blob(cut);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == ErrorCode::invalid_argument);
  }
  // The header's count shortened: the stream ends inside a module.
  std::vector<std::byte> short_header = good;
  short_header[0] = static_cast<std::byte>(std::to_integer<unsigned>(short_header[0]) - 9);
  CHECK(contains(devrt::tvm::parse_device_blob(short_header).status().message(), "truncated"));
  // Every single byte flipped: refused or parsed, never a crash or a huge allocation.
  for (std::size_t i = 8; i < good.size(); ++i) {
    std::vector<std::byte> flipped = good;
    flipped[i] ^= std::byte{0xff};
    static_cast<void>(devrt::tvm::parse_device_blob(flipped));
  }
  // A module count no blob can hold.
  std::vector<std::byte> huge = good;
  for (int i = 8; i < 16; ++i) huge[static_cast<std::size_t>(i)] = std::byte{0xff};
  devrt::Result<devrt::tvm::DeviceBlob> counted = devrt::tvm::parse_device_blob(huge);
  CHECK(counted.status().code() == ErrorCode::invalid_argument);
  CHECK(contains(counted.status().message(), "module count"));

  devrt::Result<devrt::tvm::DeviceBlob> missing =
      devrt::tvm::parse_device_blob(read_file(DEVRT_TEST_TVM_BLOB_MISSING_CODE));
  CHECK(missing.status().code() == ErrorCode::invalid_argument);
  CHECK(contains(missing.status().message(), "describes kernel 'scale_kernel' but holds no code for it"));
  devrt::Result<devrt::tvm::DeviceBlob> metal = devrt::tvm::parse_device_blob(read_file(DEVRT_TEST_TVM_BLOB_METAL));
  CHECK(metal.status().code() == ErrorCode::unsupported);
  CHECK(contains(metal.status().message(), "no Metal backend"));
}

TEST_CASE("a CPU library's operators run with devrt's workspace and parallel launch, not TVM's", "[tvm]") {
  const Device cpu = devrt::kHostDevice;
  const int generation = GENERATE(0, 1, 2); // TVM <= 0.20, tvm-ffi (>= 0.22), TVM 0.21
  const bool ffi = generation == 1;
  INFO((generation == 0 ? "TVM <= 0.20" : ffi ? "tvm-ffi" : "TVM 0.21") << " library");
  devrt::Result<Library> lib = Library::load(generation == 0 ? DEVRT_TEST_TVM_CPU
                                             : ffi           ? DEVRT_TEST_TVM_CPU_FFI
                                                             : DEVRT_TEST_TVM_CPU_FFI_0_21,
                                             cpu);
  INFO(lib.status().message());
  REQUIRE(lib.ok());
  CHECK(lib->functions() ==
        (ffi ? std::vector<std::string>{"cpu_vadd", "stable_add_one"} : std::vector<std::string>{"cpu_vadd"}));
  CHECK(lib->kernels().empty());
  Tensor a = floats(cpu, iota(1.0f, 1.0f)), b = floats(cpu, iota(0.5f, 0.0f)), c = floats(cpu, iota(0.0f, 0.0f));
  devrt::Status called = lib->call("cpu_vadd", {a, b, c});
  INFO(called.message());
  REQUIRE(called.ok());
  CHECK(host_values<float>(c) == iota(1.5f, 1.0f));
  CHECK(g_tvm_runtime_calls.load() == 0);
  // TVM's own assertion comes back naming library and function.
  Tensor shorter = floats(cpu, std::vector<float>(10, 1.0f));
  devrt::Status refused = lib->call("cpu_vadd", {a, shorter, c});
  CHECK(refused.code() == ErrorCode::invalid_argument);
  CHECK(contains(refused.message(), "cpu_vadd"));
  CHECK(contains(refused.message(), "unsatisfied constraint"));
  CHECK(contains(refused.message(), generation == 0 ? "libtvm-fixture-cpu.so"
                                    : ffi           ? "libtvm-fixture-cpu-ffi.so"
                                                    : "libtvm-fixture-cpu-ffi-0.21.so"));
  if (generation != 0) CHECK(contains(refused.message(), "RuntimeError: ")); // tvm-ffi's error kind
  CHECK(lib->call("cpu_vadd", {a, b}).code() == ErrorCode::invalid_argument);
  CHECK(lib->call("no_such_function", {a}).code() == ErrorCode::not_found);
  if (ffi) {
    // tvm-ffi's own stable C ABI example, which imports TVMFFIErrorSetRaisedFromCStr by name.
    REQUIRE(lib->call("stable_add_one", {a, c}).ok());
    CHECK(host_values<float>(c) == iota(2.0f, 1.0f));
    devrt::Status wrong = lib->call("stable_add_one", {std::int64_t{3}, c});
    CHECK(wrong.code() == ErrorCode::invalid_argument);
    CHECK(contains(wrong.message(), "ValueError: Expects a Tensor input"));
  }
  CHECK(g_tvm_runtime_calls.load() == 0);
}

TEST_CASE("a tvm-ffi library importing what devrt does not provide is refused, naming the import", "[tvm]") {
  devrt::Result<Library> lib = Library::load(DEVRT_TEST_TVM_UNPROVIDED, devrt::kHostDevice);
  CHECK(lib.status().code() == ErrorCode::unsupported);
  CHECK(contains(lib.status().message(), "it imports TVMFFIObjectDecRef from TVM's runtime"));
}

namespace {

// The fixture's operators on `device` (the fixture's kind, local or on a server): kernels, scalars
// in push constants and a uniform buffer, and the refusals.
void run_device_fixture(const Fixture& fixture, Device device) {
  devrt::Result<Library> lib = Library::load(fixture.path, device);
  INFO(lib.status().message());
  REQUIRE(lib.ok());
  std::vector<std::string> functions{"missing", "scale", "sum_scalars", "vadd"};
  if (fixture.ffi) functions.insert(functions.begin() + 2, "stable_add_one");
  CHECK(lib->functions() == functions);
  const bool gpu = fixture.kind == DeviceKind::cuda;
  // Vulkan: vadd, scale, sum_scalars and the conformance suite's power; CUDA: vadd, scale, reduce and
  // power of the conformance suite's kernels.
  const bool has_power = fixture.kind == DeviceKind::vulkan || fixture.kind == DeviceKind::cuda;
  CHECK(lib->kernels().size() == (has_power ? 4u : 3u));
  // power's one GLSL.std.450 Pow, rewritten at load (on a remote device, by its server).
  CHECK(lib->rewritten_instructions() == (fixture.kind == DeviceKind::vulkan ? 1u : 0u));

  Tensor a = floats(device, iota(1.0f, 1.0f)), b = floats(device, iota(0.5f, 0.0f)),
         c = floats(device, iota(0.0f, 0.0f));
  devrt::Status called = lib->call("vadd", {a, b, c});
  INFO(called.message());
  REQUIRE(called.ok());
  CHECK(host_values<float>(c) == iota(1.5f, 1.0f));

  REQUIRE(lib->call("scale", {c, 2.0}).ok());
  CHECK(host_values<float>(c) == iota(3.0f, 2.0f));

  devrt::Result<Tensor> sums = Tensor::empty({kCount}, devrt::DataType::int32(), device);
  REQUIRE(sums.ok());
  if (gpu) return; // no sum_scalars kernel in the CUDA conformance kernels
  std::vector<devrt::tvm::Argument> args{*sums};
  std::int64_t expected = 0;
  for (int i = 0; i < 17; ++i) {
    args.emplace_back(std::int64_t{i * 3 - 7});
    expected += i * 3 - 7;
  }
  devrt::Status summed = lib->call("sum_scalars", args);
  INFO(summed.message());
  REQUIRE(summed.ok());
  CHECK(host_values<std::int32_t>(*sums) == std::vector<std::int32_t>(kCount, static_cast<std::int32_t>(expected)));

  // Refusals: devrt's own before the call (a tensor on another device), the host code's in
  // devrt's words with TVM's text after them, and devrt's when the host code asks for a kernel
  // the blob lacks.
  Tensor shorter = floats(device, std::vector<float>(10, 1.0f));
  devrt::Status shape = lib->call("vadd", {a, shorter, c});
  INFO(shape.message());
  CHECK(shape.code() == ErrorCode::invalid_argument);
  CHECK(contains(shape.message(), "argument 'B': its shape[0] disagrees with the other arguments'; "
                                  "the call gave argument 0 [1000], argument 1 [10], argument 2 [1000] (TVM: "));
  CHECK(contains(shape.message(), "vadd.B.shape[0] has an unsatisfied constraint"));
  devrt::Result<Tensor> ints = Tensor::empty({kCount}, devrt::DataType::int32(), device);
  REQUIRE(ints.ok());
  devrt::Status dtype = lib->call("vadd", {a, *ints, c});
  INFO(dtype.message());
  CHECK(contains(dtype.message(), "argument 'B' must be float32; the call gave argument 0 float32, "
                                  "argument 1 int32, argument 2 float32 (TVM: "));
  // Host memory reaches the host code (a shape function reads its heap there); this operator's
  // assertion refuses it, in devrt's words.
  Tensor on_host = floats(devrt::kHostDevice, iota(0.0f, 1.0f));
  devrt::Status on_cpu = lib->call("vadd", {a, on_host, c});
  INFO(on_cpu.message());
  CHECK(on_cpu.code() == ErrorCode::invalid_argument);
  const std::string named = devrt::to_string(device);
  CHECK(contains(on_cpu.message(), "argument 'B' must be on a " + std::string(fixture.name) +
                                       " device; the call gave argument 0 " + named +
                                       ", argument 1 cpu:0, argument 2 " + named + " (TVM: "));
  // Another device's memory is refused before the call.
  if (device.kind == DeviceKind::remote) {
    std::string reason;
    const Device local{fixture.kind, 0};
    if (present(local, reason)) {
      Tensor here = floats(local, iota(0.0f, 1.0f));
      devrt::Status elsewhere = lib->call("vadd", {a, here, c});
      INFO(elsewhere.message());
      CHECK(elsewhere.code() == ErrorCode::invalid_argument);
      CHECK(contains(elsewhere.message(), "argument 1 is on " + devrt::to_string(local) + "; the library runs on " +
                                              named + " (and reads host memory)"));
    }
  }
  devrt::Status pointer = lib->call("vadd", {a, std::int64_t{3}, c});
  CHECK(contains(pointer.message(), "argument B must be a tensor (TVM: "));
  devrt::Status missing = lib->call("missing", {});
  CHECK(missing.code() == ErrorCode::not_found);
  CHECK(contains(missing.message(), "missing_kernel"));
  CHECK(lib->call("scale", {c, std::int64_t{2}}).code() ==
        ErrorCode::invalid_argument); // an int where TVM wants a float
}

} // namespace

TEST_CASE("a device library's operators run its kernels on the device in TVM's convention", "[tvm]") {
  for (const Fixture& fixture : device_fixtures()) {
    const Device device{fixture.kind, 0};
    const char* abi = fixture.ffi ? " (tvm-ffi)" : fixture.ffi_0_21 ? " (TVM 0.21)" : "";
    INFO("fixture " << fixture.name << abi);
    std::string reason;
    if (!present(device, reason)) {
      WARN("SKIP " << fixture.name << abi << ": " << reason);
      continue;
    }
    run_device_fixture(fixture, device);
  }
}

// Run under test/remote/with_server.sh (meson test tvm-remote): the server's devices of each
// fixture's kind, the host code here and the kernels there.
TEST_CASE("a device library runs on a remote device of its kind; a CPU library is refused there", "[remote]") {
  std::vector<Device> remotes;
  for (const Device& device : devrt::devices()) {
    if (device.kind == DeviceKind::remote) remotes.push_back(device);
  }
  if (remotes.empty()) {
    WARN("SKIP: no remote devices (run under test/remote/with_server.sh, which sets DEVRT_REMOTE)");
    return;
  }
  int ran = 0;
  for (const Device& device : remotes) {
    devrt::Result<devrt::remote::DeviceInfo> info = devrt::remote::describe(device);
    REQUIRE(info.ok());
    INFO(devrt::to_string(device) << ", " << devrt::device_kind_name(info->kind) << " on its server");
    for (const Fixture& fixture : device_fixtures()) {
      const char* abi = fixture.ffi ? " (tvm-ffi)" : fixture.ffi_0_21 ? " (TVM 0.21)" : "";
      INFO("fixture " << fixture.name << abi);
      if (fixture.kind != info->kind) {
        devrt::Result<Library> other = Library::load(fixture.path, device);
        CHECK(other.status().code() == ErrorCode::invalid_argument);
        CHECK(contains(other.status().message(), std::string("its kernels are ") + fixture.name + " code"));
        continue;
      }
      run_device_fixture(fixture, device);
      ++ran;
    }
    for (const char* cpu_library : {DEVRT_TEST_TVM_CPU, DEVRT_TEST_TVM_CPU_FFI, DEVRT_TEST_TVM_CPU_FFI_0_21}) {
      devrt::Result<Library> refused = Library::load(cpu_library, device);
      INFO(refused.status().message());
      CHECK(refused.status().code() == ErrorCode::invalid_argument);
      CHECK(contains(refused.status().message(), "compute in its host code, in this process"));
    }
  }
  CHECK(ran > 0);
}

TEST_CASE("a library is refused with the reason: no file, not ELF, truncated, another device's kernels", "[tvm]") {
  const Device cpu = devrt::kHostDevice;
  CHECK(Library::load("/nonexistent/libmodel.so", cpu).status().code() == ErrorCode::not_found);
  CHECK(Library::load(nullptr, cpu).status().code() == ErrorCode::invalid_argument);
  const std::string text = "/tmp/devrt-tvm-test-not-elf.so";
  { std::ofstream(text) << "this is not a shared object\n"; }
  devrt::Result<Library> not_elf = Library::load(text.c_str(), cpu);
  CHECK(not_elf.status().code() == ErrorCode::invalid_argument);
  CHECK(contains(not_elf.status().message(), "refused before dlopen"));
  std::remove(text.c_str());
  const std::vector<std::byte> whole = read_file(DEVRT_TEST_TVM_CPU);
  const std::string cut = "/tmp/devrt-tvm-test-truncated.so";
  {
    std::ofstream out(cut, std::ios::binary);
    out.write(reinterpret_cast<const char*>(whole.data()), static_cast<std::streamsize>(whole.size() / 2));
  }
  devrt::Result<Library> truncated = Library::load(cut.c_str(), cpu);
  CHECK(truncated.status().code() == ErrorCode::invalid_argument);
  CHECK(contains(truncated.status().message(), "refused before dlopen"));
  std::remove(cut.c_str());
  // A library built for another architecture (e_machine: AArch64).
  std::vector<std::byte> foreign = whole;
  foreign[18] = std::byte{183};
  foreign[19] = std::byte{0};
  const std::string arm = "/tmp/devrt-tvm-test-aarch64.so";
  {
    std::ofstream out(arm, std::ios::binary);
    out.write(reinterpret_cast<const char*>(foreign.data()), static_cast<std::streamsize>(foreign.size()));
  }
  devrt::Result<Library> other_machine = Library::load(arm.c_str(), cpu);
  CHECK(other_machine.status().code() == ErrorCode::invalid_argument);
  CHECK(contains(other_machine.status().message(), "refused before dlopen"));
  CHECK(contains(other_machine.status().message(), "it is built for"));
  std::remove(arm.c_str());
  for (const Fixture& fixture : device_fixtures()) {
    devrt::Result<Library> wrong = Library::load(fixture.path, cpu);
    CHECK(wrong.status().code() == ErrorCode::invalid_argument);
    CHECK(contains(wrong.status().message(), std::string("its kernels are ") + fixture.name + " code"));
  }
  CHECK(Library::load(DEVRT_TEST_TVM_CPU, Device{DeviceKind::cpu, 7}).status().code() == ErrorCode::invalid_argument);
  // A shared object TVM did not build: the C library's maths, whose functions would otherwise be
  // called in TVM's convention.
  devrt::Result<Library> libm = Library::load("libm.so.6", cpu);
  CHECK(libm.status().code() == ErrorCode::not_found); // a file name, not a search: no such file here
  const std::string libm_path = mapped_library("libm.so.6");
  REQUIRE(!libm_path.empty());
  devrt::Result<Library> not_tvm = Library::load(libm_path.c_str(), cpu);
  INFO(not_tvm.status().message());
  CHECK(not_tvm.status().code() == ErrorCode::invalid_argument);
  CHECK(
      contains(not_tvm.status().message(), "not a library TVM built; it carries none of TVM's marks: no device blob"));
}

TEST_CASE("libraries side by side, one file loaded twice, calls from several threads", "[tvm][concurrency]") {
  const Device cpu = devrt::kHostDevice;
  devrt::Result<Library> first = Library::load(DEVRT_TEST_TVM_CPU, cpu);
  devrt::Result<Library> again = Library::load(DEVRT_TEST_TVM_CPU, cpu);
  REQUIRE(first.ok());
  REQUIRE(again.ok());
  CHECK(first->path() == again->path());
  std::vector<Library> others;
  for (const Fixture& fixture : device_fixtures()) {
    std::string reason;
    if (!present(Device{fixture.kind, 0}, reason)) continue;
    devrt::Result<Library> other = Library::load(fixture.path, Device{fixture.kind, 0});
    REQUIRE(other.ok());
    others.push_back(std::move(other).value());
  }
  *first = Library(); // one of the two goes; the file and the other stay usable
  Tensor a = floats(cpu, iota(1.0f, 1.0f)), b = floats(cpu, iota(1.0f, 0.0f));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      Tensor c = floats(cpu, std::vector<float>(kCount, 0.0f));
      for (int i = 0; i < 20; ++i) {
        if (!again->call("cpu_vadd", {a, b, c}).ok() || host_values<float>(c) != iota(2.0f, 1.0f)) failures++;
      }
    });
  }
  for (Library& other : others) {
    const Device device = other.device();
    Tensor x = floats(device, iota(1.0f, 1.0f)), y = floats(device, iota(1.0f, 0.0f)),
           z = floats(device, iota(0.0f, 0.0f));
    REQUIRE(other.call("vadd", {x, y, z}).ok());
    CHECK(host_values<float>(z) == iota(2.0f, 1.0f));
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures.load() == 0);
  CHECK(g_tvm_runtime_calls.load() == 0);
}
