// SPDX-License-Identifier: Apache-2.0
// The C API's per-call cost with handles as pointers and in the validation mode (DEVRT_VALIDATE=1,
// read once per process: the benchmark runs twice, see bench/meson.build), beside the same
// operation through the C++ API in the same run. The context's "validating" says which run.
#include <benchmark/benchmark.h>

#include <devrt/devrt.h>
#include <devrt/devrt.hpp>

#include <cstdlib>

namespace {

DLDataType float32() {
  DLDataType dtype{};
  devrt_dtype_parse("float32", &dtype);
  return dtype;
}

// A handle argument's cost: one accessor call on a live tensor.
void capi_tensor_nbytes(benchmark::State& state) {
  const std::int64_t shape[2] = {16, 16};
  devrt_tensor tensor = nullptr;
  if (devrt_tensor_empty(shape, 2, float32(), devrt_device{1, 0}, nullptr, &tensor) != DEVRT_STATUS_OK) {
    state.SkipWithError(devrt_last_error());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(devrt_tensor_nbytes(tensor));
  devrt_tensor_release(tensor);
}
BENCHMARK(capi_tensor_nbytes);

void cpp_tensor_nbytes(benchmark::State& state) {
  devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({16, 16}, devrt::DataType::float32());
  for (auto _ : state) benchmark::DoNotOptimize(tensor->nbytes());
}
BENCHMARK(cpp_tensor_nbytes);

// A handle's whole life: made (registered in the table) and released (retired from it).
void capi_tensor_share_release(benchmark::State& state) {
  const std::int64_t shape[1] = {64};
  devrt_tensor tensor = nullptr;
  if (devrt_tensor_empty(shape, 1, float32(), devrt_device{1, 0}, nullptr, &tensor) != DEVRT_STATUS_OK) {
    state.SkipWithError(devrt_last_error());
    return;
  }
  for (auto _ : state) {
    devrt_tensor shared = nullptr;
    devrt_tensor_share(tensor, &shared);
    devrt_tensor_release(shared);
  }
  devrt_tensor_release(tensor);
}
BENCHMARK(capi_tensor_share_release);

void cpp_tensor_share_release(benchmark::State& state) {
  devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({64}, devrt::DataType::float32());
  for (auto _ : state) {
    devrt::Tensor shared(*tensor);
    benchmark::DoNotOptimize(shared);
  }
}
BENCHMARK(cpp_tensor_share_release);

// A 64-byte host copy through a buffer handle.
void capi_buffer_copy_64(benchmark::State& state) {
  devrt_buffer buffer = nullptr;
  if (devrt_buffer_allocate(devrt_device{1, 0}, 64, 0, &buffer) != DEVRT_STATUS_OK) {
    state.SkipWithError(devrt_last_error());
    return;
  }
  alignas(64) unsigned char bytes[64] = {};
  for (auto _ : state) {
    devrt_span span = devrt_buffer_span(buffer);
    devrt_span host = devrt_host_span(bytes, sizeof bytes);
    benchmark::DoNotOptimize(devrt_copy(&host, 0, &span, 0, sizeof bytes, nullptr));
  }
  devrt_buffer_release(buffer);
}
BENCHMARK(capi_buffer_copy_64);

} // namespace

int main(int argc, char** argv) {
  const char* validating = std::getenv("DEVRT_VALIDATE");
  benchmark::AddCustomContext("validating", validating != nullptr && validating[0] == '1' ? "yes" : "no");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
