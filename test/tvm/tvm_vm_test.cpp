// SPDX-License-Identifier: Apache-2.0
// devrt::tvm::VirtualMachine (devrt/tvm_vm.hpp) on model libraries built by this test build: a
// Relax VM program written as TVM's serialiser writes it (test/tvm/tvm_vm_fixture.py) over the
// test libraries' operators on cpu, opencl and vulkan, covering every instruction, argument kind,
// special register and builtin; the executable parser on every truncation and on corruptions of
// each instruction field; the refusals in TVM's words, located by function and instruction.
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/discovery.hpp>
#include <devrt/memory_stats.hpp>
#include <devrt/remote.hpp>
#include <devrt/timing.hpp>
#include <devrt/tvm.hpp>
#include <devrt/tvm_vm.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <stdlib.h>
#include <string>
#include <thread>
#include <vector>

#include "tvm/tvm_vm_executable.hpp"

using devrt::Device;
using devrt::DeviceKind;
using devrt::ErrorCode;
using devrt::Tensor;
using devrt::tvm::Library;
using devrt::tvm::Value;
using devrt::tvm::VirtualMachine;
using devrt::tvm::detail::parse_vm_executable;
using devrt::tvm::detail::VmLayout;

namespace {

constexpr std::int64_t kVmCount = 256;

std::vector<std::byte> program_bytes(const char* path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

Tensor vm_tensor(Device device, const std::vector<float>& values, std::vector<std::int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<std::int64_t>(values.size())};
  devrt::Result<Tensor> t = Tensor::empty(shape, devrt::DataType::float32(), device);
  REQUIRE(t.ok());
  REQUIRE(t->copy_from_host(values.data(), values.size() * sizeof(float)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  return std::move(t).value();
}

std::vector<float> vm_values(const Value& value) {
  REQUIRE(value.kind() == Value::Kind::tensor);
  const Tensor& t = value.tensor();
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  REQUIRE(devrt::synchronize(devrt::current_stream(t.device())).ok());
  REQUIRE(t.copy_to_host(out.data(), out.size() * sizeof(float)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(t.device())).ok());
  return out;
}

std::vector<float> ramp(float start, float step, std::int64_t n = kVmCount) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

struct VmFixture {
  const char* name;
  DeviceKind kind;
  const char* path;
};

// The model as each TVM writes it: <= 0.19 (MLC's libraries), 0.20 (relax.VMExecutable), 0.21
// and 0.22 (tvm-ffi's tags, each its own), main (a memory-scope section), each in its ABI.
std::vector<VmFixture> vm_fixtures() {
  std::vector<VmFixture> out{{"cpu", DeviceKind::cpu, DEVRT_TEST_TVM_VM_CPU},
                             {"cpu (TVM 0.20)", DeviceKind::cpu, DEVRT_TEST_TVM_VM_CPU_0_20},
                             {"cpu (TVM 0.21)", DeviceKind::cpu, DEVRT_TEST_TVM_VM_CPU_FFI_0_21},
                             {"cpu (TVM 0.22)", DeviceKind::cpu, DEVRT_TEST_TVM_VM_CPU_FFI_0_22},
                             {"cpu (TVM main)", DeviceKind::cpu, DEVRT_TEST_TVM_VM_CPU_MAIN}};
#ifdef DEVRT_TEST_TVM_VM_OPENCL
  out.push_back({"opencl", DeviceKind::opencl, DEVRT_TEST_TVM_VM_OPENCL});
  out.push_back({"opencl (TVM 0.21)", DeviceKind::opencl, DEVRT_TEST_TVM_VM_OPENCL_FFI_0_21});
  out.push_back({"opencl (TVM main)", DeviceKind::opencl, DEVRT_TEST_TVM_VM_OPENCL_MAIN});
#endif
#ifdef DEVRT_TEST_TVM_VM_VULKAN
  out.push_back({"vulkan", DeviceKind::vulkan, DEVRT_TEST_TVM_VM_VULKAN});
  out.push_back({"vulkan (TVM 0.21)", DeviceKind::vulkan, DEVRT_TEST_TVM_VM_VULKAN_FFI_0_21});
  out.push_back({"vulkan (TVM main)", DeviceKind::vulkan, DEVRT_TEST_TVM_VM_VULKAN_MAIN});
#endif
  return out;
}

bool usable(Device device, std::string& reason) {
  devrt::Result<devrt::BackendRef> backend = devrt::Registry::global().get(device.kind);
  devrt::Status available = backend.ok() ? backend->availability() : backend.status();
  if (!available.ok()) reason = std::string(available.message());
  return available.ok();
}

devrt::Result<Value> run(VirtualMachine& vm, std::string_view name, std::initializer_list<Value> args) {
  return vm.call(name, args);
}

// The model's functions on `device`, against the values they must compute.
void run_model(VirtualMachine& vm, Device device) {
  const Tensor x = vm_tensor(device, ramp(1.0f, 1.0f)), y = vm_tensor(device, ramp(0.5f, 0.25f));
  devrt::Result<devrt::MemoryStats> before = devrt::memory_stats(device);
  devrt::Result<Value> out = run(vm, "main", {x, y});
  INFO(out.status().message());
  REQUIRE(out.ok());
  // Its storage is devrt's memory: the two 4 KiB storages its results live in are counted.
  devrt::Result<devrt::MemoryStats> during = devrt::memory_stats(device);
  REQUIRE((before.ok() && during.ok()));
  CHECK(during->total.allocated_bytes >= before->total.allocated_bytes + 2 * 4096);
  REQUIRE(out->kind() == Value::Kind::tuple);
  REQUIRE(out->tuple().size() == 3);
  std::vector<float> expected(kVmCount), sum(kVmCount);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const float xi = 1.0f + static_cast<float>(i), yi = 0.5f + 0.25f * static_cast<float>(i);
    expected[i] = xi + yi + yi + yi; // main: x + y, then + y by call_tir_dyn, then + y by a closure
    sum[i] = xi + yi;
  }
  CHECK(vm_values(out->tuple()[0]) == expected);
  CHECK(out->tuple()[1].shape().size() == 1);
  CHECK(out->tuple()[1].shape()[0] == kVmCount);
  CHECK(vm_values(out->tuple()[2]) == sum);
  CHECK(out->tuple()[0].tensor().device() == device);

  // If on a scalar tensor, both ways.
  for (const std::int32_t flag : {1, 0}) {
    devrt::Result<Tensor> cond = Tensor::empty({}, devrt::DataType::int32(), device);
    REQUIRE(cond.ok());
    REQUIRE(cond->copy_from_host(&flag, sizeof flag).ok());
    devrt::Result<Value> picked = run(vm, "choose", {*cond, std::int64_t{10}, std::int64_t{20}});
    INFO(picked.status().message());
    REQUIRE(picked.ok());
    CHECK(picked->integer() == (flag != 0 ? 10 : 20));
  }

  // The legacy KV cache: rows appended past its reservation of 2, viewed, popped.
  devrt::Result<Value> cache = run(vm, "kv_init", {});
  INFO(cache.status().message());
  REQUIRE(cache.ok());
  CHECK(cache->type_key() == "relax.vm.AttentionKVCache");
  std::vector<float> filled;
  Value state = *cache;
  for (int step = 1; step <= 3; ++step) {
    const std::vector<float> row = ramp(static_cast<float>(step * 10), 1.0f, 4);
    devrt::Result<Value> stepped = run(vm, "kv_step", {state, Value(vm_tensor(device, row, {1, 4}))});
    INFO(stepped.status().message());
    REQUIRE(stepped.ok());
    filled.insert(filled.end(), row.begin(), row.end());
    state = stepped->tuple()[0];
    CHECK(vm_values(stepped->tuple()[1]) == filled);
    CHECK(stepped->tuple()[1].tensor().shape()[0] == step);
    CHECK(vm_values(stepped->tuple()[2]) == ramp(10.0f, 1.0f, 4));
  }
  devrt::Result<Value> popped = run(vm, "kv_pop", {state, std::int64_t{1}});
  INFO(popped.status().message());
  REQUIRE(popped.ok());
  CHECK(vm_values(*popped) == std::vector<float>(filled.begin(), filled.begin() + 8));

  devrt::Result<Value> checked = run(vm, "shapes", {Value::shape({3, 4})});
  INFO(checked.status().message());
  REQUIRE(checked.ok());
  REQUIRE(checked->tuple().size() == 3);
  CHECK(checked->tuple()[0].integer() == 1);
  CHECK(checked->tuple()[2].real() == 2.5); // a Float constant
  const Tensor& at_32 = checked->tuple()[1].tensor();
  CHECK(at_32.byte_offset() == 32);
  CHECK(at_32.numel() == 8);
  if (device.kind != DeviceKind::cpu) {
    const Tensor z = vm_tensor(device, ramp(1.0f, 1.0f));
    devrt::Result<Value> scaled = run(vm, "scaled", {z, 2.0});
    INFO(scaled.status().message());
    REQUIRE(scaled.ok());
    CHECK(vm_values(*scaled) == ramp(2.0f, 2.0f));
  }
  CHECK(vm.instructions_run() > 40);
}

// The refusals of a running model: TVM's words, where it happened.
void refuse_in_model(VirtualMachine& vm, Device device) {
  const Tensor x = vm_tensor(device, ramp(1.0f, 1.0f)), shorter = vm_tensor(device, ramp(1.0f, 1.0f, 8));
  devrt::Result<Value> count = run(vm, "main", {x});
  CHECK(count.status().code() == ErrorCode::invalid_argument);
  CHECK(has(count.status().message(),
            "ValueError: Invoking function main requires 2 inputs but only 1 inputs are provided."));
  devrt::Result<Value> mismatch = run(vm, "main", {x, shorter});
  INFO(mismatch.status().message());
  CHECK(has(mismatch.status().message(), "Relax VM: function 'main', instruction 4 (call vm.builtin.match_shape): "
                                         "RuntimeError: ErrorContext(fn=main, loc=param[1], param=y"));
  CHECK(has(mismatch.status().message(), "match_cast error,  shape[0] mismatch to a previous populated value."));
  devrt::Result<Tensor> ints = Tensor::empty({kVmCount}, devrt::DataType::int32(), device);
  REQUIRE(ints.ok());
  devrt::Result<Value> dtype = run(vm, "main", {x, *ints});
  CHECK(has(dtype.status().message(), "expect Tensor with dtype float32 but get int32"));
  const Tensor big = vm_tensor(device, ramp(0.0f, 1.0f, 1025));
  devrt::Result<Value> storage = run(vm, "main", {big, big});
  INFO(storage.status().message());
  CHECK(storage.status().code() == ErrorCode::out_of_range);
  CHECK(has(storage.status().message(), "storage allocation failure, attempted to allocate 4100 at offset 0 "
                                        "in region that is 4096bytes"));
  CHECK(run(vm, "no_such_function", {}).status().code() == ErrorCode::not_found);
  devrt::Result<Value> cache = run(vm, "kv_init", {});
  REQUIRE(cache.ok());
  devrt::Result<Value> wide = run(vm, "kv_step", {*cache, Value(vm_tensor(device, ramp(0.0f, 1.0f, 5), {1, 5}))});
  CHECK(has(wide.status().message(), "(call vm.builtin.attention_kv_cache_append): Dimension 1 mismatch"));
  devrt::Result<Value> pop = run(vm, "kv_pop", {*cache, std::int64_t{5}});
  CHECK(pop.status().code() == ErrorCode::out_of_range);
  devrt::Result<Value> shape = run(vm, "shapes", {Value::shape({1})});
  CHECK(has(shape.status().message(), "ValueError: shapes: s expect Shape with ndim 2 but get 1"));
  devrt::Result<Value> not_a_shape = run(vm, "shapes", {x});
  CHECK(has(not_a_shape.status().message(), "TypeError: shapes: s expect a Shape but get Tensor"));
}

// The word offset in `bytes` of instr_data's first word: the last vector of the executable.
std::size_t first_code_word(const std::vector<std::byte>& bytes) {
  for (std::size_t n = 1; 8 * n + 8 <= bytes.size(); ++n) {
    std::uint64_t count = 0;
    std::memcpy(&count, bytes.data() + bytes.size() - 8 * n - 8, 8);
    if (count == n) return bytes.size() - 8 * n;
  }
  FAIL("no instr_data vector");
  return 0;
}

devrt::Status parsed_with(std::vector<std::byte> bytes, std::size_t at, std::int64_t word) {
  std::memcpy(bytes.data() + at, &word, sizeof word);
  return devrt::tvm::detail::parse_vm_executable(bytes, "relax.Executable").status();
}

} // namespace

TEST_CASE("each TVM's executable is read with its own tags; main's memory scopes are checked", "[tvm][vm]") {
  const std::vector<std::byte> v021 = program_bytes(DEVRT_TEST_TVM_VM_CPU_FFI_0_21_PROGRAM);
  const std::vector<std::byte> v022 = program_bytes(DEVRT_TEST_TVM_VM_CPU_FFI_0_22_PROGRAM);
  const std::vector<std::byte> main = program_bytes(DEVRT_TEST_TVM_VM_CPU_MAIN_PROGRAM);
  const char* key = "relax.VMExecutable";
  CHECK(parse_vm_executable(v021, key, VmLayout::ffi_0_21).ok());
  CHECK(parse_vm_executable(v022, key, VmLayout::ffi).ok());
  devrt::Result<devrt::tvm::detail::VmExecutable> scoped = parse_vm_executable(main, key, VmLayout::ffi);
  INFO(scoped.status().message());
  REQUIRE(scoped.ok());
  CHECK(std::count(scoped->constant_scopes.begin(), scoped->constant_scopes.end(), "global") == 1);
  // Another era's tags are refused by name: 0.21's NDArray (72) is no tag of 0.22's.
  const devrt::Status era = parse_vm_executable(v021, key, VmLayout::ffi).status();
  CHECK(era.code() == ErrorCode::unsupported);
  CHECK(has(era.message(), "(devrt reads TVM 0.22's 1 Int, 3 Float, 5 DataType, 65 Str, 69 Shape, 70 Tensor)"));
  CHECK(parse_vm_executable(main, key, VmLayout::ffi_0_21).status().code() == ErrorCode::invalid_argument); // magic
  // The scope entry: an int64 constant index, then the string "global".
  const std::string entry = std::string("\x06\0\0\0\0\0\0\0", 8) + "global";
  const auto* begin = reinterpret_cast<const char*>(main.data());
  const std::size_t at = std::string_view(begin, main.size()).find(entry);
  REQUIRE(at != std::string_view::npos);
  std::vector<std::byte> unknown = main;
  unknown[at + 8 + 4] = std::byte{'-'}; // "glob-l"
  const devrt::Status scope = parse_vm_executable(unknown, key, VmLayout::ffi).status();
  CHECK(scope.code() == ErrorCode::unsupported);
  CHECK(has(scope.message(), "in memory scope 'glob-l', which devrt does not know"));
  std::vector<std::byte> past = main;
  const std::int64_t index = 4096;
  std::memcpy(past.data() + at - 8, &index, sizeof index);
  CHECK(has(parse_vm_executable(past, key, VmLayout::ffi).status().message(), "of constant 4096, past the pool's"));
  for (std::size_t n = 0; n < main.size(); ++n) {
    const std::vector<std::byte> cut(main.begin(), main.begin() + static_cast<std::ptrdiff_t>(n));
    REQUIRE(parse_vm_executable(cut, key, VmLayout::ffi).status().code() == ErrorCode::invalid_argument);
  }
}

TEST_CASE("a Relax VM program parses as TVM writes it; truncations and corruptions are refused", "[tvm][vm]") {
  const std::vector<std::byte> bytes = program_bytes(DEVRT_TEST_TVM_VM_CPU_PROGRAM);
  devrt::Result<devrt::tvm::detail::VmExecutable> exe =
      devrt::tvm::detail::parse_vm_executable(bytes, "relax.Executable");
  INFO(exe.status().message());
  REQUIRE(exe.ok());
  CHECK(exe->version == "0.14");
  CHECK(exe->functions.size() > 20);
  CHECK(devrt::tvm::detail::parse_vm_executable(bytes, "relax.VMExecutable").ok()); // TVM 0.20's key
  CHECK(devrt::tvm::detail::parse_vm_executable(bytes, "relax.Executable", VmLayout::ffi).status().code() ==
        ErrorCode::unsupported);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    const devrt::Status status = devrt::tvm::detail::parse_vm_executable(cut, "relax.Executable").status();
    INFO("cut at " << n << ": " << status.message());
    REQUIRE(status.code() == ErrorCode::invalid_argument);
  }
  // main's first instruction: Call, dst 2, alloc_shape_heap, 2 arguments (%vm, i1).
  const std::size_t code = first_code_word(bytes);
  const devrt::Status opcode = parsed_with(bytes, code, 9);
  CHECK(opcode.code() == ErrorCode::unsupported);
  CHECK(has(opcode.message(), "function 'main', instruction 0: opcode 9 (TVM's are 1 Call, 2 Ret, 3 Goto, 4 If)"));
  const devrt::Status dst = parsed_with(bytes, code + 8, 99);
  CHECK(has(dst.message(), "register 99 is outside its 11 registers"));
  const devrt::Status callee = parsed_with(bytes, code + 16, 1 << 20);
  CHECK(has(callee.message(), "calls function 1048576, outside the table of"));
  const devrt::Status nargs = parsed_with(bytes, code + 24, std::int64_t{1} << 40);
  CHECK(has(nargs.message(), "arguments, past the code's end"));
  const devrt::Status kind = parsed_with(bytes, code + 32, std::int64_t{9} << 56);
  CHECK(kind.code() == ErrorCode::unsupported);
  CHECK(has(kind.message(), "argument kind 9"));
  const devrt::Status constant = parsed_with(bytes, code + 40, (std::int64_t{2} << 56) | 100000);
  CHECK(has(constant.message(), "constant 100000 is outside the pool of"));
  // An NDArray constant whose shape asks for a terabyte: refused before anything is allocated.
  const std::uint64_t ndarray_magic = 0xDD5E40F096B4A13Full;
  std::size_t magic_at = 0;
  while (magic_at + 8 <= bytes.size() && std::memcmp(bytes.data() + magic_at, &ndarray_magic, 8) != 0) ++magic_at;
  REQUIRE(magic_at + 8 < bytes.size());
  const devrt::Status huge = parsed_with(bytes, magic_at + 8 + 8 + 8 + 4 + 4, std::int64_t{1} << 40);
  INFO(huge.message());
  CHECK(huge.code() == ErrorCode::invalid_argument);
  CHECK(has(huge.message(), "holds 32 bytes, its shape and dtype 17592186044416"));
  // Every word of the code, each way it can go wrong: refused or accepted, never read past.
  for (std::size_t at = code; at < bytes.size(); at += 8) {
    for (const std::int64_t word : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{4}, std::int64_t{1} << 54,
                                    std::int64_t{3} << 56, INT64_MAX}) {
      const devrt::Status status = parsed_with(bytes, at, word);
      if (!status.ok()) {
        INFO(status.message());
        CHECK((status.code() == ErrorCode::invalid_argument || status.code() == ErrorCode::unsupported));
      }
    }
  }
}

TEST_CASE("a model runs on each device: every instruction, argument kind, builtin", "[tvm][vm]") {
  for (const VmFixture& fixture : vm_fixtures()) {
    const Device device{fixture.kind, 0};
    INFO("fixture " << fixture.name);
    std::string reason;
    if (!usable(device, reason)) {
      WARN("SKIP " << fixture.name << ": " << reason);
      continue;
    }
    devrt::Result<Library> lib = Library::load(fixture.path, device);
    INFO(lib.status().message());
    REQUIRE(lib.ok());
    devrt::Result<VirtualMachine> vm = VirtualMachine::create(*lib);
    INFO(vm.status().message());
    REQUIRE(vm.ok());
    CHECK(vm->version() == "0.14");
    CHECK(vm->devices().size() == 2);
    CHECK(vm->devices()[0] == device);
    CHECK(vm->devices()[1] == devrt::kHostDevice);
    CHECK(vm->parameters("main") == std::vector<std::string>{"x", "y"});
    run_model(*vm, device);
    refuse_in_model(*vm, device);
    run_model(*vm, device); // still whole after its refusals
  }
}

TEST_CASE("vm time_function measures one step again and again, as TVM's vm.time_evaluator", "[tvm][vm][timing]") {
  devrt::Result<Library> lib = Library::load(DEVRT_TEST_TVM_VM_CPU_LM, devrt::kHostDevice);
  REQUIRE(lib.ok());
  devrt::Result<VirtualMachine> vm = VirtualMachine::create(*lib);
  REQUIRE(vm.ok());
  std::vector<float> identity(16 * 16, 0.0f);
  for (std::size_t i = 0; i < 16; ++i) identity[i * 17] = 1.0f;
  const Value params = Value::tuple({Value(vm_tensor(devrt::kHostDevice, identity, {16, 16}))});
  devrt::Result<Value> caches = vm->call("_initialize_effect", {});
  REQUIRE(caches.ok());
  devrt::Result<Tensor> prompt = Tensor::empty({1, 3}, devrt::DataType::int32(), devrt::kHostDevice);
  devrt::Result<Tensor> next = Tensor::empty({1, 1}, devrt::DataType::int32(), devrt::kHostDevice);
  REQUIRE((prompt.ok() && next.ok()));
  const std::int32_t ids[] = {1, 2, 3, 4};
  REQUIRE((prompt->copy_from_host(ids, 12).ok() && next->copy_from_host(ids + 3, 4).ok()));
  REQUIRE(vm->call("prefill", {*prompt, Value::shape({3}), *caches, params}).ok());
  // Each decode call appends a row and checks the total length: only a call on caches of length 3
  // passes, so 2 x 5 timed calls (and the untimed first) pass only if each starts from length 3.
  const Value step[] = {*next, Value::shape({4}), *caches, params};
  devrt::Result<devrt::TimeEvaluator> evaluator =
      devrt::TimeEvaluator::create(devrt::kHostDevice, {.number = 5, .repeat = 2});
  REQUIRE(evaluator.ok());
  devrt::Result<std::vector<double>> seconds = devrt::tvm::time_function(*vm, *evaluator, "decode", step);
  INFO(seconds.status().message());
  REQUIRE(seconds.ok());
  REQUIRE(seconds->size() == 2);
  CHECK(((*seconds)[0] > 0 && (*seconds)[1] > 0));
  devrt::Result<Value> after = vm->call("decode", step); // the caches ended the run at length 3
  INFO(after.status().message());
  CHECK(after.ok());
  CHECK(!vm->call("decode", step).ok()); // and a real step moved them on
  CHECK(devrt::tvm::time_function(*vm, *evaluator, "no_such_function", step).status().code() == ErrorCode::not_found);
  devrt::Result<devrt::TimeEvaluator> elsewhere = devrt::TimeEvaluator::create(Device{DeviceKind::cpu, 1});
  if (elsewhere.ok()) {
    CHECK(devrt::tvm::time_function(*vm, *elsewhere, "decode", step).status().code() == ErrorCode::invalid_argument);
  }
}

TEST_CASE("a model runs on a remote device: the VM here, its kernels there; timing it is refused", "[remote]") {
  int ran = 0;
  for (const Device& device : devrt::devices()) {
    if (device.kind != DeviceKind::remote) continue;
    devrt::Result<devrt::remote::DeviceInfo> info = devrt::remote::describe(device);
    REQUIRE(info.ok());
    for (const VmFixture& fixture : vm_fixtures()) {
      if (fixture.kind != info->kind) continue;
      INFO(devrt::to_string(device) << ", fixture " << fixture.name);
      devrt::Result<Library> lib = Library::load(fixture.path, device);
      INFO(lib.status().message());
      REQUIRE(lib.ok());
      devrt::Result<VirtualMachine> vm = VirtualMachine::create(*lib);
      REQUIRE(vm.ok());
      run_model(*vm, device);
      refuse_in_model(*vm, device);
      devrt::Result<devrt::TimeEvaluator> evaluator = devrt::TimeEvaluator::create(device);
      REQUIRE(evaluator.ok());
      const Value x = vm_tensor(device, ramp(1.0f, 1.0f));
      devrt::Result<std::vector<double>> timed = devrt::tvm::time_function(*vm, *evaluator, "main", {{x, x}});
      CHECK(timed.status().code() == ErrorCode::unsupported);
      CHECK(has(timed.status().message(), "a capture cannot replay the VM's host work"));
      ++ran;
    }
  }
  if (ran == 0) WARN("SKIP: no remote opencl or vulkan device (test/remote/with_server.sh sets DEVRT_REMOTE)");
}

TEST_CASE("a model is refused at load, naming what it lacks", "[tvm][vm]") {
  devrt::Result<Library> plain = Library::load(DEVRT_TEST_TVM_CPU, devrt::kHostDevice);
  REQUIRE(plain.ok());
  devrt::Result<VirtualMachine> none = VirtualMachine::create(*plain);
  CHECK(none.status().code() == ErrorCode::not_found);
  CHECK(has(none.status().message(), "carries no Relax VM program"));
  devrt::Result<Library> missing = Library::load(DEVRT_TEST_TVM_VM_CPU_MISSING, devrt::kHostDevice);
  REQUIRE(missing.ok());
  devrt::Result<VirtualMachine> lacks = VirtualMachine::create(*missing);
  INFO(lacks.status().message());
  CHECK(lacks.status().code() == ErrorCode::unsupported);
  CHECK(has(lacks.status().message(), "it calls vm.builtin.not_provided_by_devrt, no_such_operator, which neither "
                                      "the library nor devrt's builtins provide"));
  devrt::Result<Library> tir = Library::load(DEVRT_TEST_TVM_VM_CPU_TIR, devrt::kHostDevice);
  REQUIRE(tir.ok());
  devrt::Result<VirtualMachine> compiled = VirtualMachine::create(*tir);
  INFO(compiled.status().message());
  CHECK(compiled.status().code() == ErrorCode::unsupported);
  CHECK(has(compiled.status().message(), "compiled_main are kVMTIRFunc functions"));
  CHECK(VirtualMachine().call("main", {}).status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("VMs of one library run on several threads at once", "[tvm][vm][concurrency]") {
  devrt::Result<Library> lib = Library::load(DEVRT_TEST_TVM_VM_CPU, devrt::kHostDevice);
  REQUIRE(lib.ok());
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      devrt::Result<VirtualMachine> vm = VirtualMachine::create(*lib);
      if (!vm.ok()) {
        ++failures;
        return;
      }
      std::vector<float> xs(kVmCount, static_cast<float>(t)), ys(kVmCount, 1.0f);
      devrt::Result<Tensor> x = Tensor::empty({kVmCount}, devrt::DataType::float32());
      devrt::Result<Tensor> y = Tensor::empty({kVmCount}, devrt::DataType::float32());
      if (!x.ok() || !y.ok()) {
        ++failures;
        return;
      }
      std::memcpy(x->host_data(), xs.data(), xs.size() * sizeof(float));
      std::memcpy(y->host_data(), ys.data(), ys.size() * sizeof(float));
      Value cache = *vm->call("kv_init", {});
      for (int i = 0; i < 50; ++i) {
        devrt::Result<Value> out = vm->call("main", {*x, *y});
        if (!out.ok() || out->tuple()[0].tensor().host_data<float>()[7] != static_cast<float>(t) + 3.0f) ++failures;
        devrt::Result<Tensor> row = Tensor::empty({1, 4}, devrt::DataType::float32());
        if (!row.ok()) {
          ++failures;
          continue;
        }
        std::memset(row->host_data(), 0, 16);
        devrt::Result<Value> stepped = vm->call("kv_step", {cache, *row});
        if (!stepped.ok() || stepped->tuple()[1].tensor().shape()[0] != i + 1) ++failures;
        if (stepped.ok()) cache = stepped->tuple()[0];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures.load() == 0);
}

namespace {

// The dump tools/tvm-gpt2-model.py --dump writes: the weights, the tokens, NumPy's logits.
struct Gpt2Dump {
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::byte> weights;
  std::vector<std::int32_t> tokens;
  std::vector<float> logits;
};

Gpt2Dump read_dump(const std::string& directory) {
  Gpt2Dump dump;
  std::ifstream listing(directory + "/params.txt");
  std::string name;
  int rank = 0;
  while (listing >> name >> rank) {
    std::vector<std::int64_t> shape(static_cast<std::size_t>(rank));
    for (std::int64_t& d : shape) listing >> d;
    dump.shapes.push_back(shape);
  }
  dump.weights = program_bytes((directory + "/params.bin").c_str());
  std::ifstream tokens(directory + "/tokens.txt");
  for (std::int32_t t = 0; tokens >> t;) dump.tokens.push_back(t);
  const std::vector<std::byte> logits = program_bytes((directory + "/logits.bin").c_str());
  dump.logits.resize(logits.size() / sizeof(float));
  std::memcpy(dump.logits.data(), logits.data(), dump.logits.size() * sizeof(float));
  return dump;
}

Tensor ids_tensor(Device device, std::span<const std::int32_t> ids) {
  devrt::Result<Tensor> t = Tensor::empty({1, static_cast<std::int64_t>(ids.size())}, devrt::DataType::int32(), device);
  REQUIRE(t.ok());
  REQUIRE(t->copy_from_host(ids.data(), ids.size_bytes()).ok());
  return std::move(t).value();
}

} // namespace

// Opt-in: DEVRT_TVM_LIBRARY=gpt2-q0f16-vulkan.so DEVRT_TVM_DEVICE=vulkan:0 DEVRT_TVM_GPT2_DUMP=DIR
// (written by tools/tvm-gpt2-model.py --dump DIR): the model from C++ on the same weights and
// tokens, each step's logits against NumPy's (5% of the range, NumPy's argmax in the top 5).
TEST_CASE("MLC's GPT-2 from C++ matches the NumPy GPT-2's dumped logits", "[tvm][vm][mlc]") {
  const char* path = std::getenv("DEVRT_TVM_LIBRARY");
  const char* dumped = std::getenv("DEVRT_TVM_GPT2_DUMP");
  if (path == nullptr || dumped == nullptr) {
    WARN("SKIP: DEVRT_TVM_LIBRARY and DEVRT_TVM_GPT2_DUMP (tools/tvm-gpt2-model.py --dump) name no model");
    return;
  }
  devrt::Result<Device> device =
      devrt::parse_device(std::getenv("DEVRT_TVM_DEVICE") ? std::getenv("DEVRT_TVM_DEVICE") : "vulkan:0");
  REQUIRE(device.ok());
  const Gpt2Dump dump = read_dump(dumped);
  REQUIRE(!dump.shapes.empty());
  devrt::Result<Library> lib = Library::load(path, *device);
  INFO(lib.status().message());
  REQUIRE(lib.ok());
  devrt::Result<VirtualMachine> vm = VirtualMachine::create(*lib);
  INFO(vm.status().message());
  REQUIRE(vm.ok());
  std::vector<Value> params;
  std::size_t at = 0;
  for (const std::vector<std::int64_t>& shape : dump.shapes) {
    devrt::Result<Tensor> w = Tensor::empty(shape, devrt::DataType{devrt::DataTypeCode::floating, 16, 1}, *device);
    REQUIRE(w.ok());
    REQUIRE(at + w->nbytes() <= dump.weights.size());
    REQUIRE(w->copy_from_host(dump.weights.data() + at, w->nbytes()).ok());
    at += w->nbytes();
    params.emplace_back(*w);
  }
  const Value packed = Value::tuple(params);
  devrt::Result<Value> caches = vm->call("_initialize_effect", {});
  REQUIRE(caches.ok());
  Value state = *caches;
  constexpr std::size_t kPrompt = 8;
  const std::size_t steps = dump.tokens.size() - kPrompt + 1;
  const std::size_t vocab = dump.logits.size() / steps;
  for (std::size_t step = 0; step < steps; ++step) {
    const std::size_t start = step == 0 ? 0 : kPrompt + step - 1, count = step == 0 ? kPrompt : 1;
    const Tensor ids = ids_tensor(*device, std::span(dump.tokens).subspan(start, count));
    devrt::Result<Value> out = vm->call(step == 0 ? "prefill" : "decode",
                                        {ids, Value::shape({static_cast<std::int64_t>(start + count)}), state, packed});
    INFO("step " << step << ": " << out.status().message());
    REQUIRE(out.ok());
    state = out->tuple()[1];
    const std::vector<float> got = vm_values(out->tuple()[0]);
    REQUIRE(got.size() == vocab);
    const float* want = dump.logits.data() + step * vocab;
    float lo = want[0], hi = want[0], diff = 0;
    std::size_t want_max = 0;
    for (std::size_t i = 0; i < vocab; ++i) {
      lo = std::min(lo, want[i]);
      hi = std::max(hi, want[i]);
      diff = std::max(diff, std::abs(got[i] - want[i]));
      if (want[i] > want[want_max]) want_max = i;
    }
    std::size_t above = 0; // devrt's logits above the one NumPy ranks first
    for (float g : got) above += g > got[want_max] ? 1 : 0;
    UNSCOPED_INFO("step " << step << ": max |diff| " << diff << " of range " << (hi - lo) << ", rank " << above);
    CHECK(diff <= 0.05f * (hi - lo));
    CHECK(above < 5);
  }
}

namespace {

// test/tvm/params/, written by hand from the format (not by a writer the reader could share a
// mistake with): params_shard_0.bin is 20 bytes, float32 a = {1.0, 2.0} at bytes 0-7
// (00 00 80 3f 00 00 00 40) and int32 b = {7, 8, 9} at bytes 8-19; params_shard_1.bin is 4 bytes,
// float32 c = {1.5, -2.0} stored "f32-to-bf16" as each float's upper 16 bits: 0x3fc0, 0xc000
// (c0 3f 00 c0).
std::string params_fixture() { return DEVRT_TEST_TVM_PARAMS_DIR; }

// A copy of the fixture in a new directory, its index replaced by `index` when not empty and
// shard 0 cut to `shard0_bytes` when not negative.
std::string edited_params(const std::string& index, long shard0_bytes = -1, bool drop_shard1 = false) {
  char dir[] = "/tmp/devrt-params-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  for (const char* name : {"ndarray-cache.json", "params_shard_0.bin", "params_shard_1.bin"}) {
    if (drop_shard1 && std::string_view(name) == "params_shard_1.bin") continue;
    std::vector<std::byte> bytes = program_bytes((params_fixture() + "/" + name).c_str());
    if (std::string_view(name) == "ndarray-cache.json" && !index.empty()) {
      bytes.assign(reinterpret_cast<const std::byte*>(index.data()),
                   reinterpret_cast<const std::byte*>(index.data() + index.size()));
    }
    if (std::string_view(name) == "params_shard_0.bin" && shard0_bytes >= 0) bytes.resize(shard0_bytes);
    std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  return dir;
}

std::string fixture_index() {
  const std::vector<std::byte> bytes = program_bytes((params_fixture() + "/ndarray-cache.json").c_str());
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

template <class T>
std::vector<T> param_values(const Tensor& t) {
  std::vector<T> out(static_cast<std::size_t>(t.numel()));
  REQUIRE(t.copy_to_host(out.data(), out.size() * sizeof(T)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(t.device())).ok());
  return out;
}

} // namespace

TEST_CASE("MLC's weights load from ndarray-cache.json and its shards, in the model's order", "[tvm][vm][params]") {
  for (const VmFixture& fixture : vm_fixtures()) {
    const Device device{fixture.kind, 0};
    INFO("fixture " << fixture.name);
    std::string reason;
    if (!usable(device, reason)) continue;
    devrt::Result<std::vector<devrt::tvm::Parameter>> params = devrt::tvm::load_params(params_fixture(), device);
    INFO(params.status().message());
    REQUIRE(params.ok());
    REQUIRE(params->size() == 3);
    CHECK((*params)[0].name == "a");
    CHECK(param_values<float>((*params)[0].tensor) == std::vector<float>{1.0f, 2.0f});
    CHECK(param_values<std::int32_t>((*params)[1].tensor) == std::vector<std::int32_t>{7, 8, 9});
    CHECK(param_values<float>((*params)[2].tensor) == std::vector<float>{1.5f, -2.0f});
    CHECK((*params)[2].tensor.device() == device);
    devrt::Result<Library> lib = Library::load(fixture.path, device);
    REQUIRE(lib.ok());
    devrt::Result<VirtualMachine> vm = VirtualMachine::create(*lib);
    REQUIRE(vm.ok());
    devrt::Result<Value> ordered = devrt::tvm::model_params(*vm, *params);
    INFO(ordered.status().message());
    REQUIRE(ordered.ok());
    REQUIRE(ordered->tuple().size() == 3); // _metadata lists c, a, b
    CHECK(param_values<float>(ordered->tuple()[0].tensor()) == std::vector<float>{1.5f, -2.0f});
    CHECK(param_values<std::int32_t>(ordered->tuple()[2].tensor()) == std::vector<std::int32_t>{7, 8, 9});
    devrt::Result<devrt::tvm::ModelMetadata> metadata = devrt::tvm::model_metadata(*vm);
    REQUIRE(metadata.ok());
    CHECK(metadata->model_type == "fixture");
    CHECK(metadata->context_window_size == 0); // not given
    REQUIRE(metadata->params.size() == 3);
    CHECK(metadata->params[1].name == "a");
    CHECK(metadata->params[1].shape == std::vector<std::int64_t>{-1}); // symbolic "n"
    CHECK(metadata->params[2].dtype == devrt::DataType::int32());
    std::vector<devrt::tvm::Parameter> wrong = *params;
    wrong[1].tensor = wrong[0].tensor;
    CHECK(has(devrt::tvm::model_params(*vm, wrong).status().message(), "'b' is float32 of rank 1"));
    wrong.pop_back();
    CHECK(devrt::tvm::model_params(*vm, wrong).status().code() == ErrorCode::not_found);
  }
}

TEST_CASE("malformed MLC weight directories are refused naming the file and the record", "[tvm][vm][params]") {
  const std::string index = fixture_index();
  auto refusal = [](const std::string& dir) { return devrt::tvm::load_params(dir, devrt::kHostDevice).status(); };
  CHECK(refusal("/nonexistent").code() == ErrorCode::not_found);
  const devrt::Status missing = refusal(edited_params("", -1, true));
  CHECK(missing.code() == ErrorCode::not_found);
  CHECK(has(missing.message(), "params_shard_1.bin: no such file"));
  const devrt::Status short_shard = refusal(edited_params("", 19));
  CHECK(has(short_shard.message(), "params_shard_0.bin: 19 bytes, ndarray-cache.json says 20"));
  const devrt::Status past = refusal(edited_params(replaced(index, "\"byteOffset\": 8", "\"byteOffset\": 9")));
  CHECK(has(past.message(), "params_shard_0.bin, record 'b': bytes [9, +12) past the shard's end (20 bytes)"));
  const devrt::Status size = refusal(edited_params(replaced(index, "\"nbytes\": 12", "\"nbytes\": 8")));
  CHECK(has(size.message(), "record 'b': 8 bytes for 3 elements of int32"));
  const devrt::Status format =
      refusal(edited_params(replaced(index, "\"raw\", \"nbytes\": 8", "\"q4f16\", \"nbytes\": 8")));
  CHECK(format.code() == ErrorCode::unsupported);
  CHECK(has(format.message(), "record 'a': format 'q4f16'"));
  const devrt::Status escape = refusal(edited_params(replaced(index, "params_shard_1.bin", "../params_shard_1.bin")));
  CHECK(has(escape.message(), "is no file name of the directory"));
  const devrt::Status twice = refusal(edited_params(replaced(index, "\"name\": \"c\"", "\"name\": \"a\"")));
  CHECK(has(twice.message(), "record 'a': a second record of it"));
  const devrt::Status json = refusal(edited_params(index.substr(0, index.size() / 2)));
  CHECK(json.code() == ErrorCode::invalid_argument);
  CHECK(has(json.message(), "MLC weights: ndarray-cache.json: "));
  const devrt::Status negative = refusal(edited_params(replaced(index, "\"shape\": [3]", "\"shape\": [-3]")));
  CHECK(has(negative.message(), "a shape of non-negative integers"));
}
