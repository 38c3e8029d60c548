// SPDX-License-Identifier: Apache-2.0
// Generates tokens with a language model TVM compiled (an MLC model library: its Relax VM program
// and operators) on a devrt device, without TVM: examples/generate/generate.py in C++, over the
// installed package (`pkg-config --cflags --libs devrt`), printing the same tokens for the same
// arguments. Token ids in, token ids out: no tokenizer.
//
//   generate LIBRARY DEVICE (--params DIR | --random-weights) [--prompt 1,2,3] [--tokens N]
//            [--temperature T] [--seed S]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <devrt/devrt.hpp>
#include <devrt/tvm.hpp>
#include <devrt/tvm_vm.hpp>

namespace {

using devrt::tvm::Value;

struct Options {
  const char* library = nullptr;
  const char* device = nullptr;
  const char* params = nullptr; // nullptr: random weights
  std::vector<std::int32_t> prompt{1, 2, 3};
  long tokens = 16;
  double temperature = 0.0;
  std::uint64_t seed = 0;
};

constexpr std::uint64_t kSamplerStream = 0xD1B54A32D192ED03ULL;

// SplitMix64's output for state `counter`: the generator both examples share.
std::uint64_t splitmix64(std::uint64_t counter) {
  std::uint64_t z = counter * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Draw `index` + 1 of stream `seed`, as a double in [0, 1).
double uniform(std::uint64_t seed, std::uint64_t index) {
  return static_cast<double>(splitmix64(seed + index + 1) >> 11) * 0x1p-53;
}

// float32 to IEEE binary16, rounding to nearest even (NumPy's astype(float16)).
std::uint16_t to_half(float value) {
  std::uint32_t f = 0;
  std::memcpy(&f, &value, sizeof f);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  f &= 0x7fffffffu;
  if (f >= 0x47800000u) return sign | (f > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (f < 0x38800000u) { // a subnormal half: the value in units of 2^-24, rounded to even
    float magnitude = 0;
    std::memcpy(&magnitude, &f, sizeof f);
    return sign | static_cast<std::uint16_t>(std::nearbyint(magnitude * 16777216.0f));
  }
  return sign | static_cast<std::uint16_t>((f + 0xfffu + ((f >> 13) & 1u) - 0x38000000u) >> 13);
}

float from_half(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mantissa), -24);
  const std::uint32_t bits =
      sign | (exponent == 31 ? 0x7f800000u | (mantissa << 13) : ((exponent + 112) << 23) | (mantissa << 13));
  float out = 0;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "generate: %s\n", message.c_str());
  std::exit(1);
}

template <typename T>
T check(devrt::Result<T> result) {
  if (!result.ok()) fail(std::string(result.status().message()));
  return std::move(*result);
}

void check(const devrt::Status& status) {
  if (!status.ok()) fail(std::string(status.message()));
}

// Random weights for `specs` as generate.py draws them: floats uniform in [-0.05, 0.05) (drawn in
// double, rounded to float, then to the dtype), integers the generator's low bits.
std::vector<Value> random_weights(const std::vector<devrt::tvm::ParameterSpec>& specs, std::uint64_t seed,
                                  devrt::Device device) {
  std::vector<Value> out;
  std::uint64_t drawn = 0;
  for (const devrt::tvm::ParameterSpec& spec : specs) {
    if (std::find(spec.shape.begin(), spec.shape.end(), -1) != spec.shape.end()) {
      fail("--random-weights: '" + spec.name + "' has a symbolic extent; give --params");
    }
    devrt::Tensor tensor = check(devrt::Tensor::empty(spec.shape, spec.dtype, device));
    const auto count = static_cast<std::uint64_t>(tensor.numel());
    const std::size_t width = spec.dtype.size_bytes();
    std::vector<unsigned char> bytes(tensor.nbytes());
    const bool floating = spec.dtype.code == devrt::DataTypeCode::floating && (width == 2 || width == 4);
    const bool integer =
        spec.dtype.code == devrt::DataTypeCode::signed_int || spec.dtype.code == devrt::DataTypeCode::unsigned_int;
    if (!floating && !integer) fail("--random-weights: '" + spec.name + "' has a dtype this example does not draw");
    for (std::uint64_t i = 0; i < count; ++i, ++drawn) {
      unsigned char* at = bytes.data() + i * width;
      if (floating) {
        const auto value = static_cast<float>(0.05 * (2.0 * uniform(seed, drawn) - 1.0));
        const std::uint16_t half = to_half(value);
        std::memcpy(at, width == 2 ? static_cast<const void*>(&half) : static_cast<const void*>(&value), width);
      } else {
        const std::uint64_t bits = splitmix64(seed + drawn + 1);
        std::memcpy(at, &bits, width); // the low bytes (little-endian)
      }
    }
    check(tensor.copy_from_host(bytes.data(), bytes.size()));
    out.emplace_back(tensor);
  }
  return out;
}

std::vector<float> host_floats(const Value& value) {
  const devrt::Tensor& t = value.tensor();
  const bool half = t.dtype() == devrt::DataType::float16();
  if (value.kind() != Value::Kind::tensor || (!half && t.dtype() != devrt::DataType::float32())) {
    fail("the model's logits are no float32 or float16 tensor");
  }
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  std::vector<std::uint16_t> halves(half ? out.size() : 0);
  check(devrt::synchronize(devrt::current_stream(t.device())));
  check(t.copy_to_host(half ? static_cast<void*>(halves.data()) : out.data(), t.nbytes()));
  check(devrt::synchronize(devrt::current_stream(t.device())));
  for (std::size_t i = 0; i < halves.size(); ++i) out[i] = from_half(halves[i]);
  return out;
}

// The next token: the first largest logit, or a draw from softmax(logits / temperature).
std::int32_t pick(devrt::tvm::VirtualMachine& vm, const Value& logits, const Options& options, std::uint64_t step,
                  devrt::Device device) {
  if (options.temperature <= 0) {
    const std::vector<float> x = host_floats(logits);
    return static_cast<std::int32_t>(std::max_element(x.begin(), x.end()) - x.begin());
  }
  devrt::Tensor t = check(devrt::Tensor::empty({}, devrt::DataType::float32(), device));
  const auto temperature = static_cast<float>(options.temperature);
  check(t.copy_from_host(&temperature, sizeof temperature));
  const std::vector<float> probs = host_floats(check(vm.call("softmax_with_temperature", {logits, t})));
  std::vector<double> cumulative(probs.size());
  double sum = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) cumulative[i] = sum += static_cast<double>(probs[i]);
  const double target = uniform(options.seed ^ kSamplerStream, step) * sum;
  const std::size_t chosen = std::upper_bound(cumulative.begin(), cumulative.end(), target) - cumulative.begin();
  return static_cast<std::int32_t>(std::min(chosen, probs.size() - 1));
}

Value ids_tensor(std::span<const std::int32_t> ids, devrt::Device device) {
  devrt::Tensor t =
      check(devrt::Tensor::empty({1, static_cast<std::int64_t>(ids.size())}, devrt::DataType::int32(), device));
  check(t.copy_from_host(ids.data(), ids.size_bytes()));
  return t;
}

Options parse(int argc, char** argv) {
  Options o;
  const auto usage = [] {
    fail("usage: generate LIBRARY DEVICE (--params DIR | --random-weights) [--prompt 1,2,3] [--tokens N] "
         "[--temperature T] [--seed S]");
  };
  bool random = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    char* end = nullptr;
    if (arg == "--random-weights") {
      random = true;
      continue;
    }
    if (arg.starts_with("--") && value == nullptr) usage();
    if (arg == "--params") {
      o.params = value;
    } else if (arg == "--prompt") {
      o.prompt.clear();
      for (const char* p = value; *p != '\0'; p = *end == ',' ? end + 1 : end) {
        o.prompt.push_back(static_cast<std::int32_t>(std::strtol(p, &end, 10)));
        if (end == p || (*end != ',' && *end != '\0')) usage();
      }
    } else if (arg == "--tokens") {
      o.tokens = std::strtol(value, &end, 10);
    } else if (arg == "--temperature") {
      o.temperature = std::strtod(value, &end);
    } else if (arg == "--seed") {
      o.seed = std::strtoull(value, &end, 10);
    } else if (!arg.starts_with("--") && o.library == nullptr) {
      o.library = argv[i];
      continue;
    } else if (!arg.starts_with("--") && o.device == nullptr) {
      o.device = argv[i];
      continue;
    } else {
      usage();
    }
    if (end != nullptr && *end != '\0') usage();
    ++i;
  }
  if (o.library == nullptr || o.device == nullptr || random == (o.params != nullptr) || o.tokens < 1 ||
      o.prompt.empty()) {
    usage();
  }
  return o;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

} // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const devrt::Device device = check(devrt::parse_device(options.device));
  const devrt::tvm::Library library = check(devrt::tvm::Library::load(options.library, device));
  devrt::tvm::VirtualMachine vm = check(devrt::tvm::VirtualMachine::create(library));
  const devrt::tvm::ModelMetadata model = check(devrt::tvm::model_metadata(vm));
  const std::size_t length = options.prompt.size() + static_cast<std::size_t>(options.tokens);
  if (model.context_window_size > 0 && static_cast<std::int64_t>(length) > model.context_window_size) {
    fail(std::to_string(options.prompt.size()) + " prompt + " + std::to_string(options.tokens) +
         " new tokens do not fit the context window (" + std::to_string(model.context_window_size) + ")");
  }
  Value params;
  if (options.params != nullptr) {
    params = check(devrt::tvm::model_params(vm, check(devrt::tvm::load_params(options.params, device))));
  } else {
    params = Value::tuple(random_weights(model.params, options.seed, device));
  }
  std::printf("model: %s (%s), %zu parameters, on %s\n", model.model_type.empty() ? "?" : model.model_type.c_str(),
              model.quantization.empty() ? "?" : model.quantization.c_str(), model.params.size(),
              devrt::to_string(device).c_str());

  const std::span<const std::int32_t> prompt(options.prompt);
  Value caches = check(vm.call("_initialize_effect", {}));
  auto start = std::chrono::steady_clock::now();
  Value out = check(
      vm.call("prefill", {ids_tensor(prompt, device), Value::shape({std::int64_t(prompt.size())}), caches, params}));
  std::vector<std::int32_t> tokens{pick(vm, out.tuple()[0], options, 0, device)};
  const double prefill_ms = elapsed_ms(start);
  std::vector<double> step_ms;
  const bool terminal = isatty(STDERR_FILENO) != 0;
  while (static_cast<long>(tokens.size()) < options.tokens) {
    if (terminal) std::fprintf(stderr, "\rdecoding %zu/%ld: %d\033[K", tokens.size(), options.tokens, tokens.back());
    start = std::chrono::steady_clock::now();
    caches = out.tuple()[1];
    const auto total = static_cast<std::int64_t>(prompt.size() + tokens.size());
    out = check(vm.call("decode", {ids_tensor({&tokens.back(), 1}, device), Value::shape({total}), caches, params}));
    tokens.push_back(pick(vm, out.tuple()[0], options, tokens.size(), device));
    step_ms.push_back(elapsed_ms(start));
  }
  if (terminal) std::fprintf(stderr, "\r\033[K");
  std::printf("prompt:");
  for (std::int32_t t : prompt) std::printf(" %d", t);
  std::printf("\ntokens:");
  for (std::int32_t t : tokens) std::printf(" %d", t);
  std::printf("\nprefill: %zu tokens in %.2f ms (the first new token included)\n", prompt.size(), prefill_ms);
  if (!step_ms.empty()) {
    std::printf("decode: %zu tokens, %.2f ms/token median (min %.2f, max %.2f)\n", step_ms.size(), median(step_ms),
                *std::min_element(step_ms.begin(), step_ms.end()), *std::max_element(step_ms.begin(), step_ms.end()));
  }
  return 0;
}
