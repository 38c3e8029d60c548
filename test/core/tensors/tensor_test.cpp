// SPDX-License-Identifier: Apache-2.0
// Tensor construction, views and copies on the host (the conformance suite covers devices).
#include <devrt/devrt.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

using devrt::DataType;
using devrt::DataTypeCode;
using devrt::ErrorCode;
using devrt::Tensor;

namespace {
bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

Tensor iota(std::initializer_list<std::int64_t> shape) {
  devrt::Result<Tensor> t = Tensor::empty(shape, DataType::int32());
  REQUIRE(t.ok());
  std::int32_t* v = t->host_data<std::int32_t>();
  for (std::int64_t i = 0; i < t->numel(); ++i) v[i] = static_cast<std::int32_t>(i);
  return std::move(t).value();
}

std::vector<std::int32_t> values(const Tensor& t) {
  devrt::Result<Tensor> compact = t.to(devrt::kHostDevice);
  REQUIRE(compact.ok());
  const std::int32_t* v = compact->host_data<std::int32_t>();
  return std::vector<std::int32_t>(v, v + compact->numel());
}
} // namespace

TEST_CASE("data types print, parse and size themselves", "[tensor][dtype]") {
  CHECK(devrt::to_string(DataType::float32()) == "float32");
  CHECK(devrt::to_string(DataType{DataTypeCode::signed_int, 8, 4}) == "int8x4");
  CHECK(devrt::to_string(DataType::boolean()) == "bool");
  CHECK(devrt::to_string(DataType::bfloat16()) == "bfloat16");
  for (const char* text : {"float32",
                           "uint8",
                           "int64",
                           "bfloat16",
                           "bool",
                           "float16x8",
                           "complex64",
                           "complex128",
                           "handle",
                           "handle32",
                           "void",
                           "int4",
                           "uint1",
                           "float8_e4m3fn",
                           "float8_e4m3fnuz",
                           "float8_e4m3",
                           "float8_e4m3b11fnuz",
                           "float8_e5m2x4",
                           "float8_e8m0fnu",
                           "float6_e3m2fn",
                           "float4_e2m1fn",
                           "boolx2"}) {
    INFO(text);
    devrt::Result<DataType> parsed = devrt::parse_data_type(text);
    REQUIRE(parsed.ok());
    CHECK(devrt::to_string(*parsed) == text);
  }
  // TVM's short forms and the DLPack codes of its names.
  CHECK(*devrt::parse_data_type("float") == DataType::float32());
  CHECK(*devrt::parse_data_type("int") == DataType::int32());
  CHECK(*devrt::parse_data_type("uint") == DataType::uint32());
  CHECK(*devrt::parse_data_type("bfloat") == DataType::bfloat16());
  CHECK(*devrt::parse_data_type("handle") == DataType{DataTypeCode::opaque_handle, 64, 1});
  CHECK(*devrt::parse_data_type("void") == DataType{DataTypeCode::opaque_handle, 0, 0});
  CHECK(*devrt::parse_data_type("float8_e4m3fn") == DataType{DataTypeCode::float8_e4m3fn, 8, 1});
  CHECK(static_cast<int>(devrt::parse_data_type("float4_e2m1fn")->code) == 17);
  CHECK(devrt::parse_data_type("float4_e2m1fn")->bits == 4);
  for (const char* text : {"",         "int0",           "uint8x0",     "float32x",      "quux16",      "int256",
                           "float33",  "float8",         "bfloat32",    "complex32",     "complex",     "int3",
                           "bool8",    "float8_e4m3fn8", "float8_e9m9", "float32x65536", "float32x4x4", "Float32",
                           " float32", "float32 ",       "int-8",       "int+8",         "handle0",     "voidx2"}) {
    INFO(text);
    CHECK(devrt::parse_data_type(text).status().code() == ErrorCode::invalid_argument);
  }
  CHECK(devrt::data_type_of<float>() == DataType::float32());
  CHECK(devrt::data_type_of<std::uint16_t>() == DataType::uint16());
  CHECK(devrt::data_type_of<bool>() == DataType::boolean());
  CHECK(DataType{DataTypeCode::floating, 32, 4}.size_bytes() == 16);
  CHECK(DataType{DataTypeCode::floating, 32, 4}.alignment() == 4);
}

TEST_CASE("Tensor::empty checks its arguments", "[tensor]") {
  CHECK(Tensor::empty({2, -1}, DataType::float32()).status().code() == ErrorCode::invalid_argument);
  CHECK(Tensor::empty({std::int64_t{1} << 62, 4}, DataType::float32()).status().code() == ErrorCode::out_of_range);
  CHECK(Tensor::empty({1}, DataType{DataTypeCode::floating, 0, 1}).status().code() == ErrorCode::invalid_argument);
  CHECK(Tensor::empty({1}, DataType::float32(), {devrt::DeviceKind::cpu, 3}).status().code() ==
        ErrorCode::invalid_argument);
  CHECK(Tensor::empty({1}, DataType::float32(), {devrt::DeviceKind::cuda, 0}).status().code() ==
        ErrorCode::unavailable);
  std::vector<std::int64_t> too_many(Tensor::kMaxDims + 1, 1);
  CHECK(Tensor::empty(too_many, DataType::float32()).status().code() == ErrorCode::invalid_argument);
  devrt::Result<Tensor> huge = Tensor::empty({std::int64_t{1} << 45}, DataType::float64());
  CHECK(huge.status().code() == ErrorCode::out_of_memory);
}

TEST_CASE("tensors: scalar, empty, workspace-backed", "[tensor]") {
  devrt::Result<Tensor> scalar = Tensor::empty({}, DataType::float64());
  REQUIRE(scalar.ok());
  CHECK(scalar->ndim() == 0);
  CHECK(scalar->numel() == 1);
  CHECK(scalar->nbytes() == 8);
  devrt::Result<Tensor> empty = Tensor::empty({3, 0}, DataType::float32());
  REQUIRE(empty.ok());
  CHECK(empty->numel() == 0);
  CHECK(empty->copy_from(*empty).ok());
  devrt::Result<Tensor> pooled = Tensor::empty({256}, DataType::uint8(), devrt::kHostDevice, {.from_workspace = true});
  REQUIRE(pooled.ok());
  CHECK(pooled->host_data() != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(pooled->data()) % devrt::kDefaultAlignment == 0);
}

TEST_CASE("views, slices and reshapes stay inside the storage", "[tensor]") {
  Tensor t = iota({4, 6});
  devrt::Result<Tensor> rows = t.slice(0, 1, 3);
  REQUIRE(rows.ok());
  CHECK(values(*rows) == std::vector<std::int32_t>{6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17});
  devrt::Result<Tensor> cols = t.slice(1, 4, 6);
  REQUIRE(cols.ok());
  CHECK_FALSE(cols->is_contiguous());
  CHECK(values(*cols) == std::vector<std::int32_t>{4, 5, 10, 11, 16, 17, 22, 23});
  CHECK(t.slice(2, 0, 1).status().code() == ErrorCode::out_of_range);
  CHECK(t.slice(0, 3, 5).status().code() == ErrorCode::out_of_range);

  const std::int64_t transposed_shape[] = {6, 4};
  const std::int64_t transposed_strides[] = {1, 6};
  devrt::Result<Tensor> transposed = t.view(transposed_shape, transposed_strides, 0);
  REQUIRE(transposed.ok());
  CHECK(values(*transposed)[1] == 6);

  const std::int64_t too_far[] = {25};
  devrt::Result<Tensor> beyond = t.view(too_far, {}, 0);
  CHECK(beyond.status().code() == ErrorCode::out_of_range);
  const std::int64_t one[] = {1};
  CHECK(t.view(one, {}, 2).status().code() == ErrorCode::invalid_argument); // misaligned for int32

  devrt::Result<Tensor> flat = t.reshape({24});
  REQUIRE(flat.ok());
  CHECK(flat->data() == t.data());
  CHECK(t.reshape({5, 5}).status().code() == ErrorCode::invalid_argument);
  CHECK(cols->reshape({8}).status().code() == ErrorCode::unsupported);
}

TEST_CASE("copies: contiguous, strided, mismatched, overlapping", "[tensor]") {
  Tensor src = iota({3, 4});
  devrt::Result<Tensor> dst = Tensor::empty({3, 4}, DataType::int32());
  REQUIRE(dst.ok());
  REQUIRE(dst->copy_from(src).ok());
  CHECK(values(*dst) == values(src));

  // A transposed (strided) source into a compact destination, element-wise on the host.
  const std::int64_t shape[] = {4, 3};
  const std::int64_t strides[] = {1, 4};
  devrt::Result<Tensor> transposed = src.view(shape, strides, 0);
  REQUIRE(transposed.ok());
  devrt::Result<Tensor> out = Tensor::empty({4, 3}, DataType::int32());
  REQUIRE(out.ok());
  REQUIRE(out->copy_from(*transposed).ok());
  CHECK(values(*out) == std::vector<std::int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});

  devrt::Result<Tensor> wrong_shape = Tensor::empty({4, 3}, DataType::int32());
  REQUIRE(wrong_shape.ok());
  CHECK(wrong_shape->copy_from(src).code() == ErrorCode::invalid_argument);
  devrt::Result<Tensor> wrong_type = Tensor::empty({3, 4}, DataType::float32());
  REQUIRE(wrong_type.ok());
  devrt::Status mismatch = wrong_type->copy_from(src);
  CHECK(mismatch.code() == ErrorCode::invalid_argument);
  CHECK(contains(mismatch.message(), "dtype int32"));

  // Overlapping views of one storage are refused, strided or not.
  devrt::Result<Tensor> head = src.slice(1, 0, 2);
  devrt::Result<Tensor> middle = src.slice(1, 1, 3);
  REQUIRE(head.ok());
  REQUIRE(middle.ok());
  CHECK(head->copy_from(*middle).code() == ErrorCode::invalid_argument);
  devrt::Result<Tensor> first_rows = src.slice(0, 0, 2);
  devrt::Result<Tensor> last_rows = src.slice(0, 1, 3);
  REQUIRE(first_rows.ok());
  REQUIRE(last_rows.ok());
  CHECK(first_rows->copy_from(*last_rows).code() == ErrorCode::invalid_argument);

  std::vector<std::int32_t> host(12);
  CHECK(src.copy_to_host(host.data(), host.size() * sizeof(std::int32_t)).ok());
  CHECK(host[11] == 11);
  CHECK(src.copy_to_host(host.data(), 4).code() == ErrorCode::invalid_argument);
  CHECK(Tensor().copy_from(src).code() == ErrorCode::invalid_argument);
}
