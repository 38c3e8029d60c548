// SPDX-License-Identifier: Apache-2.0
// MLC's GPT-2 library run by TVM's own runtime or by devrt, the same steps either way: built once
// against libtvm_runtime (-DWITH_TVM_RUNTIME, TVM's headers; tools/tvm-runtime-build.sh) and once
// against devrt, run on the dump tools/tvm-gpt2-model.py --dump writes (the weights, the 8 prompt
// and 16 fed tokens, NumPy's logits at each step). It runs `_initialize_effect`, `prefill` on the
// prompt and 16 `decode` steps teacher-forced, each step timed from the call to its logits on the
// host, and compares each step's logits with NumPy's. tools/tvm-runtime-compare.sh runs both.
//
// usage: tvm-gpt2-side-by-side DUMP_DIR LIBRARY [ROUNDS]      (on vulkan:0; ROUNDS of the 17 steps)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

struct Dump {
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<char> weights; // float16, in _metadata's order
  std::vector<std::int32_t> tokens;
  std::vector<float> logits; // NumPy's, one row per step
};

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "no file %s\n", path.c_str());
    std::exit(1);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Dump read_dump(const std::string& directory) {
  Dump dump;
  std::ifstream listing(directory + "/params.txt");
  std::string name;
  int rank = 0;
  while (listing >> name >> rank) {
    std::vector<std::int64_t> shape(static_cast<std::size_t>(rank));
    for (std::int64_t& d : shape) listing >> d;
    dump.shapes.push_back(shape);
  }
  dump.weights = file_bytes(directory + "/params.bin");
  std::ifstream tokens(directory + "/tokens.txt");
  for (std::int32_t t = 0; tokens >> t;) dump.tokens.push_back(t);
  const std::vector<char> logits = file_bytes(directory + "/logits.bin");
  dump.logits.resize(logits.size() / sizeof(float));
  std::memcpy(dump.logits.data(), logits.data(), dump.logits.size() * sizeof(float));
  return dump;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "tvm-gpt2-side-by-side: %s\n", what.c_str());
  std::exit(1);
}

} // namespace

#ifdef WITH_TVM_RUNTIME
#include <tvm/runtime/container/array.h>
#include <tvm/runtime/container/shape_tuple.h>
#include <tvm/runtime/module.h>
#include <tvm/runtime/ndarray.h>
#include <tvm/runtime/packed_func.h>

namespace {

constexpr const char* kRuntime = "TVM runtime";
constexpr int kPooledAllocator = 2; // memory::AllocatorType::kPooled

// TVM's relax VM over the library, as MLC's chat module makes it (vm_load_executable,
// vm_initialization with the device and the CPU host, pooled allocators).
class Model {
public:
  Model(const std::string& path, const Dump& dump) : device_{kDLVulkan, 0} {
    tvm::runtime::Module lib = tvm::runtime::Module::LoadFromFile(path);
    vm_ = lib.GetFunction("vm_load_executable")();
    vm_.GetFunction("vm_initialization")(static_cast<int>(device_.device_type), device_.device_id, kPooledAllocator,
                                         static_cast<int>(kDLCPU), 0, kPooledAllocator);
    std::size_t at = 0;
    for (const std::vector<std::int64_t>& shape : dump.shapes) {
      tvm::runtime::NDArray w = tvm::runtime::NDArray::Empty(tvm::runtime::ShapeTuple(shape.begin(), shape.end()),
                                                             DLDataType{kDLFloat, 16, 1}, device_);
      const std::size_t bytes = tvm::runtime::GetDataSize(*w.operator->());
      w.CopyFromBytes(dump.weights.data() + at, bytes);
      at += bytes;
      params_.push_back(w);
    }
  }
  void reset() { caches_ = vm_.GetFunction("_initialize_effect")(); }
  // One step: `ids` fed, `total` tokens seen; its logits on the host.
  std::vector<float> step(const char* function, const std::int32_t* ids, std::int64_t count, std::int64_t total) {
    tvm::runtime::NDArray input = tvm::runtime::NDArray::Empty({1, count}, DLDataType{kDLInt, 32, 1}, device_);
    input.CopyFromBytes(ids, static_cast<std::size_t>(count) * 4);
    tvm::runtime::Array<tvm::runtime::ObjectRef> out =
        vm_.GetFunction(function)(input, tvm::runtime::ShapeTuple({total}), caches_, params_);
    caches_ = out[1];
    tvm::runtime::NDArray logits = tvm::runtime::Downcast<tvm::runtime::NDArray>(out[0]);
    std::vector<float> host(static_cast<std::size_t>(logits.Shape()[2]));
    logits.CopyToBytes(host.data(), host.size() * sizeof(float)); // synchronizes
    return host;
  }

private:
  DLDevice device_;
  tvm::runtime::Module vm_;
  tvm::runtime::Array<tvm::runtime::NDArray> params_;
  tvm::runtime::ObjectRef caches_;
};

} // namespace
#else
#include <devrt/devrt.hpp>
#include <devrt/tvm.hpp>
#include <devrt/tvm_vm.hpp>

namespace {

constexpr const char* kRuntime = "devrt";

template <typename T>
T check(devrt::Result<T> result) {
  if (!result.ok()) fail(std::string(result.status().message()));
  return std::move(*result);
}

class Model {
public:
  Model(const std::string& path, const Dump& dump)
      : device_{devrt::DeviceKind::vulkan, 0}, lib_(check(devrt::tvm::Library::load(path.c_str(), device_))),
        vm_(check(devrt::tvm::VirtualMachine::create(lib_))) {
    std::vector<devrt::tvm::Value> params;
    std::size_t at = 0;
    for (const std::vector<std::int64_t>& shape : dump.shapes) {
      devrt::Tensor w = check(devrt::Tensor::empty(shape, devrt::DataType::float16(), device_));
      if (!w.copy_from_host(dump.weights.data() + at, w.nbytes()).ok()) fail("copy");
      at += w.nbytes();
      params.emplace_back(w);
    }
    params_ = devrt::tvm::Value::tuple(params);
  }
  void reset() { caches_ = check(vm_.call("_initialize_effect", {})); }
  std::vector<float> step(const char* function, const std::int32_t* ids, std::int64_t count, std::int64_t total) {
    devrt::Tensor input = check(devrt::Tensor::empty({1, count}, devrt::DataType::int32(), device_));
    if (!input.copy_from_host(ids, static_cast<std::size_t>(count) * 4).ok()) fail("copy");
    devrt::tvm::Value out = check(vm_.call(function, {input, devrt::tvm::Value::shape({total}), caches_, params_}));
    caches_ = out.tuple()[1];
    const devrt::Tensor& logits = out.tuple()[0].tensor();
    std::vector<float> host(static_cast<std::size_t>(logits.numel()));
    if (!devrt::synchronize(devrt::current_stream(device_)).ok() ||
        !logits.copy_to_host(host.data(), host.size() * sizeof(float)).ok() ||
        !devrt::synchronize(devrt::current_stream(device_)).ok()) {
      fail("reading the logits");
    }
    return host;
  }

private:
  devrt::Device device_;
  devrt::tvm::Library lib_;
  devrt::tvm::VirtualMachine vm_;
  devrt::tvm::Value params_, caches_;
};

} // namespace
#endif

int main(int argc, char** argv) {
  if (argc < 3) fail("usage: tvm-gpt2-side-by-side DUMP_DIR LIBRARY [ROUNDS]");
  const Dump dump = read_dump(argv[1]);
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 1;
  constexpr std::int64_t kPrompt = 8;
  const std::size_t steps = dump.tokens.size() - kPrompt + 1, vocab = dump.logits.size() / steps;
  Model model(argv[2], dump);
  std::vector<double> prefill_ms, decode_ms;
  double worst = 0;
  int argmax_equal = 0;
  std::size_t non_finite = 0; // logits that are NaN or infinite (round 0)
  for (int round = 0; round < rounds; ++round) {
    model.reset();
    for (std::size_t s = 0; s < steps; ++s) {
      const std::int64_t start = s == 0 ? 0 : kPrompt + static_cast<std::int64_t>(s) - 1, count = s == 0 ? kPrompt : 1;
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<float> got =
          model.step(s == 0 ? "prefill" : "decode", dump.tokens.data() + start, count, start + count);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      (s == 0 ? prefill_ms : decode_ms).push_back(ms);
      if (got.size() != vocab) fail("logits of another size than NumPy's");
      const float* want = dump.logits.data() + s * vocab;
      const auto [lo, hi] = std::minmax_element(want, want + vocab);
      float diff = 0;
      std::size_t not_finite = 0;
      for (std::size_t i = 0; i < vocab; ++i) {
        not_finite += std::isfinite(got[i]) ? 0 : 1;
        diff = std::max(diff, std::abs(got[i] - want[i]));
      }
      worst = std::max(worst, static_cast<double>(diff / (*hi - *lo)));
      if (round == 0) non_finite += not_finite;
      const auto top = [](const float* v, std::size_t n) { return std::max_element(v, v + n) - v; };
      argmax_equal += round == 0 && top(got.data(), vocab) == top(want, vocab) ? 1 : 0;
      if (round == 0) {
        std::printf("%s step %2zu: max |diff| %.4f (finite logits), %zu not finite, %.1f ms\n", kRuntime, s, diff,
                    not_finite, ms);
      }
    }
  }
  std::sort(decode_ms.begin(), decode_ms.end());
  std::sort(prefill_ms.begin(), prefill_ms.end());
  std::printf("%s: prefill (8 tokens) median %.1f ms; decode median %.1f ms (min %.1f, max %.1f) over %zu steps; "
              "worst difference from NumPy %.2f%% of the range (finite logits); %zu logits not finite; argmax "
              "NumPy's at %d of %zu steps\n",
              kRuntime, prefill_ms[prefill_ms.size() / 2], decode_ms[decode_ms.size() / 2], decode_ms.front(),
              decode_ms.back(), decode_ms.size(), 100 * worst, non_finite, argmax_equal, steps);
  return 0;
}
