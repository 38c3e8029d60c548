// SPDX-License-Identifier: Apache-2.0
// Tensor, DLPack and target benchmarks. Names: <what>/<devrt|raw variant>/<size>; bench/report.py
// prints the ratios.
#include <devrt/devrt.hpp>

#include <benchmark/benchmark.h>

#include <cstring>

#include "backends/cpu/cpu_backend.hpp"

namespace {

// ---- DLPack: export + import + release, the whole exchange -----------------------------------

void dlpack_roundtrip(benchmark::State& state) {
  devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({32, 64}, devrt::DataType::float32());
  for (auto _ : state) {
    devrt::Result<DLManagedTensor*> exported = tensor->to_dlpack();
    devrt::Result<devrt::Tensor> imported = devrt::Tensor::from_dlpack(*exported);
    benchmark::DoNotOptimize(imported->data());
  }
}

void dlpack_roundtrip_versioned(benchmark::State& state) {
  devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({32, 64}, devrt::DataType::float32());
  for (auto _ : state) {
    devrt::Result<devrt::dlpack::ManagedTensorVersioned*> exported = tensor->to_dlpack_versioned();
    devrt::Result<devrt::Tensor> imported = devrt::Tensor::from_dlpack(*exported);
    benchmark::DoNotOptimize(imported->data());
  }
}

// A foreign producer (deleter not devrt's): import builds its own storage record.
void foreign_deleter(DLManagedTensor*) {}

void dlpack_import_foreign(benchmark::State& state) {
  alignas(64) static float values[32 * 64];
  static std::int64_t shape[2] = {32, 64};
  static std::int64_t strides[2] = {64, 1};
  for (auto _ : state) {
    DLManagedTensor managed{};
    managed.dl_tensor.data = values;
    managed.dl_tensor.device = devrt::kHostDevice.to_dlpack();
    managed.dl_tensor.ndim = 2;
    managed.dl_tensor.dtype = devrt::DataType::float32().to_dlpack();
    managed.dl_tensor.shape = shape;
    managed.dl_tensor.strides = strides;
    managed.deleter = &foreign_deleter;
    devrt::Result<devrt::Tensor> imported = devrt::Tensor::from_dlpack(&managed);
    benchmark::DoNotOptimize(imported->data());
  }
}

BENCHMARK(dlpack_roundtrip)->Name("dlpack/roundtrip");
BENCHMARK(dlpack_roundtrip_versioned)->Name("dlpack/roundtrip_versioned");
BENCHMARK(dlpack_import_foreign)->Name("dlpack/import_foreign");

// ---- tensor copy vs the backend's raw copy of the same bytes ---------------------------------

void tensor_copy_raw(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  devrt::Result<devrt::Tensor> src = devrt::Tensor::empty({static_cast<std::int64_t>(n)}, devrt::DataType::uint8());
  devrt::Result<devrt::Tensor> dst = devrt::Tensor::empty({static_cast<std::int64_t>(n)}, devrt::DataType::uint8());
  // Both touched first: the first write to fresh pages is a page fault (~10 us each here), which
  // would otherwise dominate whichever side runs first.
  std::memset(src->data(), 1, n);
  std::memset(dst->data(), 0, n);
  const devrt_backend_table* table = devrt::Registry::global().find(devrt::DeviceKind::cpu).table();
  devrt_copy_desc desc{};
  desc.src = src->data();
  desc.src_kind = 1;
  desc.dst = dst->data();
  desc.dst_kind = 1;
  desc.nbytes = n;
  devrt_error err;
  for (auto _ : state) {
    benchmark::DoNotOptimize(table->copy(table->context, &desc, &err));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
}

void tensor_copy_devrt(benchmark::State& state) {
  const auto n = static_cast<std::int64_t>(state.range(0));
  devrt::Result<devrt::Tensor> src = devrt::Tensor::empty({n}, devrt::DataType::uint8());
  devrt::Result<devrt::Tensor> dst = devrt::Tensor::empty({n}, devrt::DataType::uint8());
  std::memset(src->data(), 1, static_cast<std::size_t>(n));
  std::memset(dst->data(), 0, static_cast<std::size_t>(n));
  for (auto _ : state) {
    devrt::Status s = dst->copy_from(*src);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

#define TENSOR_COPY_SIZES ->Arg(64)->Arg(4 << 10)->Arg(1 << 20)->Arg(64 << 20)
BENCHMARK(tensor_copy_raw)->Name("tensor_copy/raw_backend") TENSOR_COPY_SIZES;
BENCHMARK(tensor_copy_devrt)->Name("tensor_copy/devrt") TENSOR_COPY_SIZES;

// ---- CPU target detection: the detector itself, and the cached answer --------------------------

void target_detect_uncached(benchmark::State& state) {
  devrt::cpu::CpuBackend backend;
  for (auto _ : state) {
    devrt::Result<devrt::Target> target = backend.detect_target(devrt::BackendDevice{0, 0, nullptr, nullptr});
    benchmark::DoNotOptimize(target->kind().data());
  }
  state.SetLabel("cpuid + attributes, no cache");
}

void target_detect_cached(benchmark::State& state) {
  devrt::Result<devrt::Target> first = devrt::detect_target(devrt::kHostDevice);
  for (auto _ : state) {
    devrt::Result<devrt::Target> target = devrt::detect_target(devrt::kHostDevice);
    benchmark::DoNotOptimize(target->kind().data());
  }
}

BENCHMARK(target_detect_uncached)->Name("target/detect_cpu_uncached")->Unit(benchmark::kMicrosecond);
BENCHMARK(target_detect_cached)->Name("target/detect_cpu_cached");

} // namespace
