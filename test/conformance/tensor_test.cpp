// SPDX-License-Identifier: Apache-2.0
#include "conformance.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>

using devrt::DataType;
using devrt::Device;
using devrt::ErrorCode;
using devrt::Tensor;

namespace {

std::vector<float> sample(std::size_t n, float seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = seed + static_cast<float>(i) * 0.25f;
  return v;
}

Tensor upload_tensor(Device device, const std::vector<float>& values, std::int64_t rows, std::int64_t cols) {
  devrt::Result<Tensor> t = Tensor::empty({rows, cols}, DataType::float32(), device);
  REQUIRE(t.ok());
  REQUIRE(t->copy_from_host(values.data(), values.size() * sizeof(float)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
  return std::move(t).value();
}

std::vector<float> download(const Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  REQUIRE(t.copy_to_host(out.data(), out.size() * sizeof(float)).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(t.device())).ok());
  return out;
}

} // namespace

TEST_CASE("tensor copies round trip over every pair of present devices", "[conformance][tensor]") {
  const std::vector<Device> others = conformance::all_present_devices();
  for (const Device device : conformance::devices()) {
    for (const Device other : others) {
      INFO(devrt::to_string(device) << " <-> " << devrt::to_string(other));
      for (std::int64_t rows : {1, 37}) {
        const std::int64_t cols = 129;
        std::vector<float> values = sample(static_cast<std::size_t>(rows * cols), static_cast<float>(rows));
        Tensor here = upload_tensor(device, values, rows, cols);
        devrt::Result<Tensor> there = Tensor::empty({rows, cols}, DataType::float32(), other);
        REQUIRE(there.ok());
        REQUIRE(there->copy_from(here).ok());
        REQUIRE(devrt::synchronize(devrt::current_stream(devrt::copy_device(device, other).value())).ok());
        devrt::Result<Tensor> back = Tensor::empty({rows, cols}, DataType::float32(), device);
        REQUIRE(back.ok());
        REQUIRE(there->copy_to(*back).ok());
        REQUIRE(devrt::synchronize(devrt::current_stream(devrt::copy_device(other, device).value())).ok());
        CHECK(download(*back) == values);
        // Tensor::to: a compact copy on the other device, complete on return when the host can
        // read it, else ordered on the other device's current stream (which download() uses).
        devrt::Result<Tensor> moved = here.to(other);
        REQUIRE(moved.ok());
        if (moved->host_data<float>() != nullptr) {
          CHECK(std::vector<float>(moved->host_data<float>(), moved->host_data<float>() + values.size()) == values);
        }
        CHECK(download(*moved) == values);
      }
    }
  }
}

TEST_CASE("row slices copy between devices; strided ones work or say unsupported", "[conformance][tensor]") {
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    std::vector<float> values = sample(8 * 16, 1.0f);
    Tensor t = upload_tensor(device, values, 8, 16);
    devrt::Result<Tensor> rows = t.slice(0, 2, 5); // contiguous, at a byte offset
    REQUIRE(rows.ok());
    CHECK(rows->is_contiguous());
    std::vector<float> got = download(*rows);
    CHECK(std::vector<float>(got.begin(), got.end()) ==
          std::vector<float>(values.begin() + 2 * 16, values.begin() + 5 * 16));
    devrt::Result<Tensor> cols = t.slice(1, 3, 7);
    REQUIRE(cols.ok());
    devrt::Result<Tensor> host = Tensor::empty({8, 4}, DataType::float32());
    REQUIRE(host.ok());
    devrt::Status strided = host->copy_from(*cols);
    if (strided.ok()) {
      REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());
      for (std::int64_t r = 0; r < 8; ++r) {
        for (std::int64_t c = 0; c < 4; ++c) {
          CHECK(host->host_data<float>()[r * 4 + c] == values[static_cast<std::size_t>(r * 16 + 3 + c)]);
        }
      }
    } else {
      CHECK(strided.code() == ErrorCode::unsupported);
      CHECK(conformance::contains(strided.message(), "strided"));
    }
  }
}

// Devices in another process (remote) refuse DLPack export: no consumer here can reach their memory.
bool refuses_dlpack(Device device) {
  if (!conformance::backend().has_capability(DEVRT_CAP_OUT_OF_PROCESS)) return false;
  devrt::Result<Tensor> t = Tensor::empty({4}, DataType::float32(), device);
  REQUIRE(t.ok());
  CHECK(t->to_dlpack().status().code() == ErrorCode::unsupported);
  CHECK(t->to_dlpack_versioned().status().code() == ErrorCode::unsupported);
  CONFORMANCE_SKIP(devrt::to_string(device) << " lives in another process: DLPack export is refused (checked)");
  return true;
}

TEST_CASE("DLPack round trip on every device", "[conformance][tensor][dlpack]") {
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    if (refuses_dlpack(device)) continue;
    std::vector<float> values = sample(3 * 5, -2.0f);
    for (bool versioned : {false, true}) {
      for (bool pooled : {false, true}) {
        devrt::Result<Tensor> t = Tensor::empty({3, 5}, DataType::float32(), device, {.from_workspace = pooled});
        REQUIRE(t.ok());
        REQUIRE(t->copy_from_host(values.data(), values.size() * sizeof(float)).ok());
        devrt::Result<Tensor> back = [&]() -> devrt::Result<Tensor> {
          if (versioned) {
            devrt::Result<devrt::dlpack::ManagedTensorVersioned*> m = t->to_dlpack_versioned();
            REQUIRE(m.ok());
            CHECK(Device::from_dlpack((*m)->dl_tensor.device) == device);
            return Tensor::from_dlpack(*m);
          }
          devrt::Result<DLManagedTensor*> m = t->to_dlpack();
          REQUIRE(m.ok());
          CHECK(Device::from_dlpack((*m)->dl_tensor.device) == device);
          return Tensor::from_dlpack(*m);
        }();
        REQUIRE(back.ok());
        t = devrt::make_error(ErrorCode::internal, "dropped"); // the import keeps the storage alive
        CHECK(back->device() == device);
        CHECK(back->dtype() == DataType::float32());
        CHECK(download(*back) == values);
      }
    }
  }
}

TEST_CASE("tensor errors on a device name the device", "[conformance][tensor]") {
  for (const Device device : conformance::devices()) {
    devrt::Result<Tensor> a = Tensor::empty({4}, DataType::float32(), device);
    devrt::Result<Tensor> b = Tensor::empty({5}, DataType::float32(), device);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    devrt::Status status = a->copy_from(*b);
    CHECK(status.code() == ErrorCode::invalid_argument);
    CHECK(conformance::contains(status.message(), devrt::to_string(device)));
  }
}

namespace {
std::atomic<int> g_foreign_deleted{0};
void count_foreign_deleter(DLManagedTensor*) { g_foreign_deleted.fetch_add(1); }
} // namespace

TEST_CASE("tensor references and DLPack exchange across threads release storage once",
          "[conformance][tensor][concurrency]") {
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  for (const Device device : conformance::devices()) {
    INFO(devrt::to_string(device));
    if (refuses_dlpack(device)) continue;
    devrt::Result<Tensor> owner = Tensor::empty({16, 16}, DataType::float32(), device);
    REQUIRE(owner.ok());
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&owner, &failures] {
        for (int i = 0; i < kRounds; ++i) {
          Tensor copy = *owner; // shares the storage
          devrt::Result<DLManagedTensor*> exported = copy.to_dlpack();
          if (!exported.ok()) {
            failures.fetch_add(1);
            continue;
          }
          devrt::Result<Tensor> back = Tensor::from_dlpack(*exported);
          if (!back.ok() || back->data() != owner->data()) failures.fetch_add(1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(failures.load() == 0);
  }
  // A foreign producer's deleter runs once, on whichever thread drops the last reference.
  g_foreign_deleted = 0;
  alignas(64) static float values[64];
  static std::int64_t shape[1] = {64};
  DLManagedTensor managed{};
  managed.dl_tensor.data = values;
  managed.dl_tensor.device = devrt::kHostDevice.to_dlpack();
  managed.dl_tensor.ndim = 1;
  managed.dl_tensor.dtype = DataType::float32().to_dlpack();
  managed.dl_tensor.shape = shape;
  managed.deleter = &count_foreign_deleter;
  {
    devrt::Result<Tensor> shared = Tensor::from_dlpack(&managed);
    REQUIRE(shared.ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([copy = *shared]() mutable {
        for (int i = 0; i < kRounds; ++i) {
          Tensor again = copy;
          copy = again;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  CHECK(g_foreign_deleted.load() == 1);
}
