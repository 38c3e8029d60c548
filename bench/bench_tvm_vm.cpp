// SPDX-License-Identifier: Apache-2.0
// The Relax VM's own cost (devrt::tvm::VirtualMachine), on the test build's model libraries
// (test/tvm/tvm_vm_fixture.py):
//  - Interpreter/<device>: VM function `overhead`, 60 instructions of builtins alone in GPT-2's
//    mix (make_shape, alloc_tensor, tuple_getitem, check_tensor_info, null_value, copy): counter
//    ns_per_instruction;
//  - Model/<device>: VM function `main` (three vector adds: an operator call, call_tir_dyn and a
//    closure, with the shape checks and allocations around them) against the same three operator
//    calls made with Library::call on tensors allocated beforehand, same device, same run,
//    interleaved: counters vm_us, direct_us, ratio.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/tvm.hpp>
#include <devrt/tvm_vm.hpp>

namespace {

using devrt::tvm::Value;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kElements = 256;
constexpr double kOverheadInstructions = 60;

struct VmCase {
  devrt::Device device;
  const char* path;
  const char* op;
};

bool available(devrt::Device device) {
  devrt::Result<devrt::BackendRef> backend = devrt::Registry::global().get(device.kind);
  return backend.ok() && backend->availability().ok();
}

devrt::Tensor filled(devrt::Device device, float value) {
  devrt::Tensor t = std::move(devrt::Tensor::empty({kElements}, devrt::DataType::float32(), device)).value();
  std::vector<float> host(kElements, value);
  static_cast<void>(t.copy_from_host(host.data(), host.size() * sizeof(float)));
  return t;
}

void run_interpreter(benchmark::State& state, VmCase c) {
  devrt::Result<devrt::tvm::Library> lib = devrt::tvm::Library::load(c.path, c.device);
  devrt::Result<devrt::tvm::VirtualMachine> vm =
      lib.ok() ? devrt::tvm::VirtualMachine::create(*lib) : devrt::Result<devrt::tvm::VirtualMachine>(lib.status());
  if (!vm.ok()) return state.SkipWithError(std::string(vm.status().message()).c_str());
  const devrt::Tensor x = filled(c.device, 1.0f);
  const Value tuple = Value::tuple({x, x, x, x});
  const Value args[] = {x, tuple};
  const auto start = Clock::now();
  for (auto _ : state) {
    devrt::Result<Value> out = vm->call("overhead", args);
    if (!out.ok()) return state.SkipWithError(std::string(out.status().message()).c_str());
    benchmark::DoNotOptimize(out);
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  state.counters["ns_per_instruction"] = ns / (static_cast<double>(state.iterations()) * kOverheadInstructions);
}

double waited_us(devrt::Device device, Clock::time_point start) {
  static_cast<void>(devrt::synchronize(devrt::current_stream(device)));
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

void run_model(benchmark::State& state, VmCase c) {
  devrt::Result<devrt::tvm::Library> lib = devrt::tvm::Library::load(c.path, c.device);
  devrt::Result<devrt::tvm::VirtualMachine> vm =
      lib.ok() ? devrt::tvm::VirtualMachine::create(*lib) : devrt::Result<devrt::tvm::VirtualMachine>(lib.status());
  if (!vm.ok()) return state.SkipWithError(std::string(vm.status().message()).c_str());
  const devrt::Tensor x = filled(c.device, 1.0f), y = filled(c.device, 2.0f);
  const devrt::Tensor a = filled(c.device, 0.0f), b = filled(c.device, 0.0f), d = filled(c.device, 0.0f);
  const Value args[] = {x, y};
  double vm_us = 0, direct_us = 0;
  bool vm_first = true;
  for (auto _ : state) {
    for (int turn = 0; turn < 2; ++turn) {
      const auto start = Clock::now();
      if (vm_first == (turn == 0)) {
        devrt::Result<Value> out = vm->call("main", args);
        if (!out.ok()) return state.SkipWithError(std::string(out.status().message()).c_str());
        vm_us += waited_us(c.device, start);
      } else {
        devrt::Status s = lib->call(c.op, {x, y, a});
        if (s.ok()) s = lib->call(c.op, {a, y, b});
        if (s.ok()) s = lib->call(c.op, {b, y, d});
        if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
        direct_us += waited_us(c.device, start);
      }
    }
    vm_first = !vm_first;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["vm_us"] = vm_us / n;
  state.counters["direct_us"] = direct_us / n;
  state.counters["ratio"] = direct_us > 0 ? vm_us / direct_us : 0;
}

void register_cases() {
  std::vector<VmCase> cases{{devrt::kHostDevice, DEVRT_BENCH_TVM_VM_CPU, "cpu_vadd"}};
#ifdef DEVRT_BENCH_TVM_VM_OPENCL
  cases.push_back({{devrt::DeviceKind::opencl, 0}, DEVRT_BENCH_TVM_VM_OPENCL, "vadd"});
#endif
#ifdef DEVRT_BENCH_TVM_VM_VULKAN
  cases.push_back({{devrt::DeviceKind::vulkan, 0}, DEVRT_BENCH_TVM_VM_VULKAN, "vadd"});
#endif
  for (const VmCase& c : cases) {
    if (!available(c.device)) continue;
    const std::string device = devrt::to_string(c.device);
    benchmark::RegisterBenchmark(("Interpreter/" + device).c_str(), run_interpreter, c);
    benchmark::RegisterBenchmark(("Model/" + device).c_str(), run_model, c)->UseRealTime();
  }
}

} // namespace

int main(int argc, char** argv) {
  register_cases();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
