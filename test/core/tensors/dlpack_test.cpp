// SPDX-License-Identifier: Apache-2.0
// DLPack import validation (one broken input per rule, with its error code), the deleter
// contract, export/import round trips and the versioned protocol.
#include <devrt/devrt.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using devrt::DataType;
using devrt::ErrorCode;
using devrt::Tensor;
using ManagedVersioned = devrt::dlpack::ManagedTensorVersioned;

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A producer of one 2x3 float32 CPU tensor that counts how often its deleter runs.
struct Producer {
  alignas(64) float values[6] = {0, 1, 2, 3, 4, 5};
  std::int64_t shape[2] = {2, 3};
  std::int64_t strides[2] = {3, 1};
  int deleted = 0;
  DLManagedTensor managed{};
  ManagedVersioned versioned{};

  static void deleter(DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; }
  static void versioned_deleter(ManagedVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; }

  DLTensor tensor() {
    DLTensor t{};
    t.data = values;
    t.device = devrt::kHostDevice.to_dlpack();
    t.ndim = 2;
    t.dtype = DataType::float32().to_dlpack();
    t.shape = shape;
    t.strides = strides;
    t.byte_offset = 0;
    return t;
  }
  DLManagedTensor* unversioned() {
    managed.dl_tensor = tensor();
    managed.manager_ctx = this;
    managed.deleter = &deleter;
    return &managed;
  }
  ManagedVersioned* make_versioned(std::uint64_t flags = 0) {
    versioned.version = {1, 0};
    versioned.manager_ctx = this;
    versioned.deleter = &versioned_deleter;
    versioned.flags = flags;
    versioned.dl_tensor = tensor();
    return &versioned;
  }
};

struct Rule {
  const char* name;
  std::function<void(DLTensor&)> breaks;
  ErrorCode expected;
  const char* message_part;
  std::size_t allocation_bytes = 0;
};

std::int64_t g_huge_shape[2] = {std::int64_t{1} << 40, std::int64_t{1} << 40};
std::int64_t g_itemsize_overflow_shape[2] = {std::int64_t{1} << 61, 1};
std::int64_t g_negative_shape[2] = {2, -3};
std::int64_t g_max_strides[2] = {std::numeric_limits<std::int64_t>::max(), 1};
std::int64_t g_backwards_strides[2] = {-3, 1};
std::int64_t g_wide_strides[2] = {4, 1};
std::int64_t g_many_dims[devrt::Tensor::kMaxDims + 1] = {};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> all = {
      {"ndim < 0", [](DLTensor& t) { t.ndim = -1; }, ErrorCode::invalid_argument, "ndim -1"},
      {"ndim absurd", [](DLTensor& t) { t.ndim = 1 << 20; }, ErrorCode::invalid_argument, "ndim 1048576"},
      {"ndim just over the limit",
       [](DLTensor& t) {
         t.ndim = devrt::Tensor::kMaxDims + 1;
         t.shape = g_many_dims;
         t.strides = nullptr;
       },
       ErrorCode::invalid_argument, "ndim 65"},
      {"null shape", [](DLTensor& t) { t.shape = nullptr; }, ErrorCode::invalid_argument, "shape is null"},
      {"negative dimension", [](DLTensor& t) { t.shape = g_negative_shape; }, ErrorCode::invalid_argument, "negative"},
      {"shape product overflows", [](DLTensor& t) { t.shape = g_huge_shape; }, ErrorCode::out_of_range, "overflows"},
      {"product times itemsize overflows",
       [](DLTensor& t) {
         t.shape = g_itemsize_overflow_shape;
         t.strides = nullptr;
       },
       ErrorCode::out_of_range, "overflows"},
      {"stride overflows", [](DLTensor& t) { t.strides = g_max_strides; }, ErrorCode::out_of_range, "overflows"},
      {"strides reach before a known allocation", [](DLTensor& t) { t.strides = g_backwards_strides; },
       ErrorCode::out_of_range, "before the start", 24},
      {"strides reach below address 0",
       [](DLTensor& t) {
         t.strides = g_backwards_strides;
         t.data = reinterpret_cast<void*>(std::uintptr_t{4});
       },
       ErrorCode::out_of_range, "wraps around"},
      {"strides reach past the allocation", [](DLTensor& t) { t.strides = g_wide_strides; }, ErrorCode::out_of_range,
       "24-byte allocation", 24},
      {"byte_offset beyond int64", [](DLTensor& t) { t.byte_offset = std::uint64_t{1} << 63; }, ErrorCode::out_of_range,
       "byte_offset"},
      {"dtype with 0 bits", [](DLTensor& t) { t.dtype.bits = 0; }, ErrorCode::invalid_argument, "0 bits"},
      {"dtype with 0 lanes", [](DLTensor& t) { t.dtype.lanes = 0; }, ErrorCode::invalid_argument, "0 lanes"},
      {"unknown dtype code", [](DLTensor& t) { t.dtype.code = 99; }, ErrorCode::invalid_argument, "type code 99"},
      {"sub-byte dtype", [](DLTensor& t) { t.dtype.bits = 4; }, ErrorCode::unsupported, "sub-byte"},
      {"unknown device kind",
       [](DLTensor& t) {
         std::int32_t kind = 99;
         std::memcpy(&t.device.device_type, &kind, sizeof kind);
       },
       ErrorCode::invalid_argument, "unknown device kind 99"},
      {"unregistered device kind",
       [](DLTensor& t) {
         std::int32_t kind = 9; // vpi: a DLPack kind no devrt backend serves
         std::memcpy(&t.device.device_type, &kind, sizeof kind);
       },
       ErrorCode::unavailable, "no vpi backend"},
      {"device index out of range", [](DLTensor& t) { t.device.device_id = 5; }, ErrorCode::invalid_argument,
       "no device cpu:5"},
      {"null data with elements", [](DLTensor& t) { t.data = nullptr; }, ErrorCode::invalid_argument, "data is null"},
      {"data misaligned for the dtype", [](DLTensor& t) { t.data = static_cast<char*>(t.data) + 1; },
       ErrorCode::invalid_argument, "not aligned to 4 bytes"},
      {"byte_offset misaligned for the dtype", [](DLTensor& t) { t.byte_offset = 2; }, ErrorCode::invalid_argument,
       "not aligned"},
      {"extent wraps around the address space",
       [](DLTensor& t) {
         t.data = reinterpret_cast<void*>(std::numeric_limits<std::uintptr_t>::max() & ~std::uintptr_t{63});
         t.byte_offset = 64;
       },
       ErrorCode::out_of_range, "wraps around"},
  };
  return all;
}

} // namespace

TEST_CASE("import refuses each malformed input with its code and calls the deleter once", "[dlpack][validation]") {
  for (const Rule& rule : rules()) {
    for (bool versioned : {false, true}) {
      INFO(rule.name << (versioned ? " (versioned)" : ""));
      Producer producer;
      devrt::ImportOptions options{rule.allocation_bytes};
      devrt::Result<Tensor> tensor = [&]() -> devrt::Result<Tensor> {
        if (versioned) {
          ManagedVersioned* m = producer.make_versioned();
          rule.breaks(m->dl_tensor);
          return Tensor::from_dlpack(m, options);
        }
        DLManagedTensor* m = producer.unversioned();
        rule.breaks(m->dl_tensor);
        return Tensor::from_dlpack(m, options);
      }();
      REQUIRE_FALSE(tensor.ok());
      CHECK(tensor.status().code() == rule.expected);
      CHECK(contains(tensor.status().message(), rule.message_part));
      CHECK(contains(tensor.status().message(), "from_dlpack"));
      CHECK(producer.deleted == 1);
    }
  }
}

TEST_CASE("a null managed tensor is invalid_argument", "[dlpack][validation]") {
  devrt::Result<Tensor> a = Tensor::from_dlpack(static_cast<DLManagedTensor*>(nullptr));
  devrt::Result<Tensor> b = Tensor::from_dlpack(static_cast<ManagedVersioned*>(nullptr));
  CHECK(a.status().code() == ErrorCode::invalid_argument);
  CHECK(b.status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("an unknown DLPack major version is unsupported and still deleted", "[dlpack][validation]") {
  Producer producer;
  ManagedVersioned* m = producer.make_versioned();
  m->version.major = 2;
  devrt::Result<Tensor> tensor = Tensor::from_dlpack(m);
  CHECK(tensor.status().code() == ErrorCode::unsupported);
  CHECK(contains(tensor.status().message(), "major version 2"));
  CHECK(producer.deleted == 1);
}

TEST_CASE("valid imports: compact, strided, negative strides, broadcast, empty", "[dlpack]") {
  SECTION("compact with explicit strides, deleter runs when the last tensor dies") {
    Producer producer;
    devrt::Result<Tensor> tensor = Tensor::from_dlpack(producer.unversioned());
    REQUIRE(tensor.ok());
    CHECK(tensor->ndim() == 2);
    CHECK(tensor->shape()[1] == 3);
    CHECK(tensor->is_contiguous());
    CHECK(tensor->host_data<float>()[4] == 4.0f);
    Tensor copy = *tensor;
    tensor = devrt::make_error(ErrorCode::internal, "drop");
    CHECK(producer.deleted == 0);
    copy = Tensor();
    CHECK(producer.deleted == 1);
  }
  SECTION("null strides mean compact") {
    Producer producer;
    DLManagedTensor* m = producer.unversioned();
    m->dl_tensor.strides = nullptr;
    devrt::Result<Tensor> tensor = Tensor::from_dlpack(m);
    REQUIRE(tensor.ok());
    CHECK(tensor->strides()[0] == 3);
    CHECK(tensor->strides()[1] == 1);
  }
  SECTION("negative strides with a byte offset that keeps them inside") {
    Producer producer;
    static std::int64_t reversed[2] = {-3, 1};
    DLManagedTensor* m = producer.unversioned();
    m->dl_tensor.strides = reversed;
    m->dl_tensor.byte_offset = 3 * sizeof(float);
    devrt::Result<Tensor> tensor = Tensor::from_dlpack(m, {sizeof producer.values});
    REQUIRE(tensor.ok());
    CHECK_FALSE(tensor->is_contiguous());
    devrt::Result<Tensor> compact = tensor->to(devrt::kHostDevice);
    REQUIRE(compact.ok());
    const float* v = compact->host_data<float>();
    CHECK(std::vector<float>(v, v + 6) == std::vector<float>{3, 4, 5, 0, 1, 2});
  }
  SECTION("negative strides from data at the first element (NumPy's a[::-1])") {
    Producer producer;
    static std::int64_t reversed[2] = {-3, 1};
    DLManagedTensor* m = producer.unversioned();
    m->dl_tensor.strides = reversed;
    m->dl_tensor.data = producer.values + 3;
    devrt::Result<Tensor> tensor = Tensor::from_dlpack(m);
    REQUIRE(tensor.ok());
    CHECK(tensor->byte_offset() == 3 * sizeof(float)); // rebased onto the lowest byte it reaches
    CHECK(tensor->data() == producer.values);
    devrt::Result<Tensor> compact = tensor->to(devrt::kHostDevice);
    REQUIRE(compact.ok());
    const float* v = compact->host_data<float>();
    CHECK(std::vector<float>(v, v + 6) == std::vector<float>{3, 4, 5, 0, 1, 2});
    devrt::Result<Tensor> row = tensor->slice(0, 1, 2);
    REQUIRE(row.ok());
    CHECK(row->host_data<float>()[0] == 0.0f);
  }
  SECTION("zero strides (broadcast) are accepted") {
    Producer producer;
    static std::int64_t broadcast[2] = {0, 1};
    DLManagedTensor* m = producer.unversioned();
    m->dl_tensor.strides = broadcast;
    devrt::Result<Tensor> tensor = Tensor::from_dlpack(m);
    REQUIRE(tensor.ok());
    devrt::Result<Tensor> compact = tensor->to(devrt::kHostDevice);
    REQUIRE(compact.ok());
    CHECK(compact->host_data<float>()[3] == 0.0f);
  }
  SECTION("an empty tensor may have null data") {
    Producer producer;
    static std::int64_t empty_shape[2] = {0, 3};
    DLManagedTensor* m = producer.unversioned();
    m->dl_tensor.shape = empty_shape;
    m->dl_tensor.data = nullptr;
    devrt::Result<Tensor> tensor = Tensor::from_dlpack(m);
    REQUIRE(tensor.ok());
    CHECK(tensor->numel() == 0);
    CHECK(tensor->nbytes() == 0);
  }
  SECTION("a null deleter is allowed") {
    Producer producer;
    DLManagedTensor* m = producer.unversioned();
    m->deleter = nullptr;
    CHECK(Tensor::from_dlpack(m).ok());
  }
}

TEST_CASE("export keeps the storage alive until the consumer deletes it", "[dlpack]") {
  devrt::Result<Tensor> tensor = Tensor::empty({4, 5}, DataType::int32());
  REQUIRE(tensor.ok());
  for (int i = 0; i < 20; ++i) tensor->host_data<std::int32_t>()[i] = i * 3;
  devrt::Result<DLManagedTensor*> exported = tensor->to_dlpack();
  REQUIRE(exported.ok());
  tensor = devrt::make_error(ErrorCode::internal, "dropped");
  DLManagedTensor* m = *exported;
  CHECK(m->dl_tensor.ndim == 2);
  CHECK(m->dl_tensor.shape[0] == 4);
  CHECK(m->dl_tensor.strides == nullptr);                         // compact, unversioned: DLPack < 1.2's way to say so
  CHECK(static_cast<std::int32_t*>(m->dl_tensor.data)[19] == 57); // still alive
  m->deleter(m); // frees the storage (leak checkers would see it otherwise)
}

TEST_CASE("strided exports carry strides; versioned exports always do", "[dlpack]") {
  devrt::Result<Tensor> tensor = Tensor::empty({4, 6}, DataType::int32());
  REQUIRE(tensor.ok());
  devrt::Result<Tensor> columns = tensor->slice(1, 1, 3);
  REQUIRE(columns.ok());
  devrt::Result<DLManagedTensor*> strided = columns->to_dlpack();
  REQUIRE(strided.ok());
  REQUIRE((*strided)->dl_tensor.strides != nullptr);
  CHECK((*strided)->dl_tensor.strides[0] == 6);
  CHECK((*strided)->dl_tensor.strides[1] == 1);
  (*strided)->deleter(*strided);
  devrt::Result<ManagedVersioned*> versioned = tensor->to_dlpack_versioned();
  REQUIRE(versioned.ok());
  REQUIRE((*versioned)->dl_tensor.strides != nullptr);
  CHECK((*versioned)->dl_tensor.strides[0] == 6);
  (*versioned)->deleter(*versioned);
}

TEST_CASE("export then import shares storage and releases the export", "[dlpack]") {
  for (int ndim : {0, 1, 6, 7, 12}) {
    INFO("ndim " << ndim);
    std::vector<std::int64_t> shape(static_cast<std::size_t>(ndim), 2);
    devrt::Result<Tensor> tensor = Tensor::empty(shape, DataType::float64());
    REQUIRE(tensor.ok());
    devrt::Result<DLManagedTensor*> exported = tensor->to_dlpack();
    REQUIRE(exported.ok());
    devrt::Result<Tensor> imported = Tensor::from_dlpack(*exported);
    REQUIRE(imported.ok());
    CHECK(imported->data() == tensor->data());
    CHECK(imported->ndim() == ndim);
    CHECK(std::vector<std::int64_t>(imported->shape().begin(), imported->shape().end()) == shape);
    CHECK(std::equal(imported->strides().begin(), imported->strides().end(), tensor->strides().begin()));
  }
}

TEST_CASE("re-exporting an imported tensor defers the producer's deleter", "[dlpack]") {
  Producer producer;
  devrt::Result<Tensor> tensor = Tensor::from_dlpack(producer.unversioned());
  REQUIRE(tensor.ok());
  devrt::Result<ManagedVersioned*> again = tensor->to_dlpack_versioned();
  REQUIRE(again.ok());
  tensor = devrt::make_error(ErrorCode::internal, "dropped");
  CHECK(producer.deleted == 0);
  (*again)->deleter(*again);
  CHECK(producer.deleted == 1);
}

TEST_CASE("versioned flags: read-only and is-copied", "[dlpack][versioned]") {
  Producer producer;
  devrt::Result<Tensor> tensor =
      Tensor::from_dlpack(producer.make_versioned(devrt::dlpack::kFlagReadOnly | devrt::dlpack::kFlagIsCopied));
  REQUIRE(tensor.ok());
  CHECK(tensor->read_only());
  CHECK(tensor->is_copied());

  devrt::Result<Tensor> other = Tensor::empty({2, 3}, DataType::float32());
  REQUIRE(other.ok());
  devrt::Status write = tensor->copy_from(*other);
  CHECK(write.code() == ErrorCode::invalid_argument);
  CHECK(contains(write.message(), "read-only"));
  CHECK(tensor->copy_from_host(producer.values, sizeof producer.values).code() == ErrorCode::invalid_argument);
  CHECK(other->copy_from(*tensor).ok()); // reading is fine

  devrt::Result<DLManagedTensor*> unversioned = tensor->to_dlpack();
  CHECK(unversioned.status().code() == ErrorCode::invalid_argument);
  devrt::Result<ManagedVersioned*> versioned = tensor->to_dlpack_versioned();
  REQUIRE(versioned.ok());
  CHECK((*versioned)->version.major == 1);
  CHECK(((*versioned)->flags & devrt::dlpack::kFlagReadOnly) != 0);
  CHECK(((*versioned)->flags & devrt::dlpack::kFlagIsCopied) != 0);
  devrt::Result<Tensor> back = Tensor::from_dlpack(*versioned);
  REQUIRE(back.ok());
  CHECK(back->read_only());
  tensor = devrt::make_error(ErrorCode::internal, "dropped");
  back = devrt::make_error(ErrorCode::internal, "dropped");
  CHECK(producer.deleted == 1);
}

TEST_CASE("an altered export is validated against its own storage", "[dlpack][validation]") {
  devrt::Result<Tensor> tensor = Tensor::empty({8}, DataType::uint8());
  REQUIRE(tensor.ok());
  devrt::Result<DLManagedTensor*> exported = tensor->to_dlpack();
  REQUIRE(exported.ok());
  (*exported)->dl_tensor.shape[0] = 9; // one byte past the storage
  devrt::Result<Tensor> imported = Tensor::from_dlpack(*exported);
  CHECK(imported.status().code() == ErrorCode::out_of_range);
}

TEST_CASE("undefined tensors cannot be exported", "[dlpack]") {
  Tensor undefined;
  CHECK(undefined.to_dlpack().status().code() == ErrorCode::invalid_argument);
  CHECK(undefined.to_dlpack_versioned().status().code() == ErrorCode::invalid_argument);
}
