// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: Tensor::from_dlpack over arbitrary DLTensor descriptors.
//
// The input describes one DLTensor over a real heap buffer of a size the input chooses. Import
// must refuse what is malformed, never read outside the buffer when its size is known (ASan
// watches the element-wise read of every accepted tensor), and call the producer's deleter
// exactly once whatever happens.
#include <devrt/devrt.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

class Reader {
public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  template <class T>
  T take() {
    T value{};
    std::size_t n = size_ - pos_ < sizeof(T) ? size_ - pos_ : sizeof(T);
    std::memcpy(&value, data_ + pos_, n);
    pos_ += n;
    return value;
  }

private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

int g_deleted = 0;
void count_deleter(DLManagedTensor*) { ++g_deleted; }
void count_versioned_deleter(devrt::dlpack::ManagedTensorVersioned*) { ++g_deleted; }

enum Flags : std::uint16_t {
  kDataMask = 3,            // 0: null, 1: buffer, 2: buffer + 1, 3: buffer + chosen offset
  kNullStrides = 1u << 2,   // strides == nullptr
  kVersioned = 1u << 3,     // DLManagedTensorVersioned
  kReadOnly = 1u << 4,      // versioned READ_ONLY flag
  kKnownSize = 1u << 5,     // ImportOptions::allocation_bytes = buffer size
  kRawValues = 1u << 6,     // shapes and strides as raw 64-bit values instead of small ones
  kRawByteOffset = 1u << 7, // byte_offset as a raw 64-bit value
  kRawDevice = 1u << 8,     // device type as a raw 32-bit value
};

void exercise(const devrt::Tensor& tensor, bool known_size) {
  // Only a known buffer size makes reading safe: an unknown one is the producer's promise. The
  // bytes are host memory, so only a tensor that says it lives on the CPU may be read (a claim of
  // opencl:0 or vulkan:0 would hand a host address to a GPU backend as its buffer handle).
  if (known_size && tensor.device().kind == devrt::DeviceKind::cpu && tensor.nbytes() <= (1u << 20)) {
    devrt::Result<devrt::Tensor> compact = tensor.to(devrt::kHostDevice);
    if (!compact.ok()) __builtin_trap();
    volatile std::uint8_t sink = 0;
    const auto* bytes = compact->host_data<const std::uint8_t>();
    for (std::size_t i = 0; i < compact->nbytes(); ++i) sink = static_cast<std::uint8_t>(sink + bytes[i]);
  }
  devrt::Result<DLManagedTensor*> again = tensor.to_dlpack();
  if (again.ok()) {
    devrt::Result<devrt::Tensor> back = devrt::Tensor::from_dlpack(*again);
    if (!back.ok() || back->ndim() != tensor.ndim() || back->numel() != tensor.numel()) __builtin_trap();
  } else if (!tensor.read_only()) {
    __builtin_trap();
  }
  devrt::Result<devrt::dlpack::ManagedTensorVersioned*> versioned = tensor.to_dlpack_versioned();
  if (!versioned.ok()) __builtin_trap();
  (*versioned)->deleter(*versioned);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* input, std::size_t size) {
  Reader in(input, size);
  const auto flags = in.take<std::uint16_t>();
  const auto ndim = static_cast<std::int32_t>(in.take<std::int8_t>());
  DLDataType dtype{in.take<std::uint8_t>(), in.take<std::uint8_t>(), in.take<std::uint16_t>()};
  if ((flags & kRawValues) == 0) { // mostly plausible dtypes
    dtype.code %= 8;
    dtype.lanes = static_cast<std::uint16_t>(dtype.lanes % 5);
  }
  std::int32_t device_type = (flags & kRawDevice) != 0 ? in.take<std::int32_t>() : in.take<std::uint8_t>() % 18;
  const auto device_id = static_cast<std::int32_t>(in.take<std::int8_t>());
  const std::size_t buffer_bytes = in.take<std::uint16_t>() % 4096;
  const std::uint64_t byte_offset =
      (flags & kRawByteOffset) != 0 ? in.take<std::uint64_t>() : in.take<std::uint8_t>() * std::uint64_t{4};
  const std::size_t data_offset = in.take<std::uint16_t>() % (buffer_bytes + 1);

  // ndim beyond the limit gets no arrays at all: import must refuse it before reading any.
  const std::size_t dims = ndim >= 0 && ndim <= devrt::Tensor::kMaxDims ? static_cast<std::size_t>(ndim) : 0;
  std::vector<std::int64_t> shape(dims);
  std::vector<std::int64_t> strides(dims);
  for (std::size_t i = 0; i < dims; ++i) {
    shape[i] = (flags & kRawValues) != 0 ? in.take<std::int64_t>() : in.take<std::int8_t>() % 9;
    strides[i] = (flags & kRawValues) != 0 ? in.take<std::int64_t>() : in.take<std::int8_t>() % 33;
  }

  auto* buffer = static_cast<std::uint8_t*>(std::malloc(buffer_bytes == 0 ? 1 : buffer_bytes));
  std::memset(buffer, 0x5a, buffer_bytes);
  void* data = nullptr;
  switch (flags & kDataMask) {
  case 1: data = buffer; break;
  case 2: data = buffer + 1; break;
  case 3: data = buffer + data_offset; break;
  default: break;
  }
  DLTensor dl{};
  dl.data = data;
  std::memcpy(&dl.device.device_type, &device_type, sizeof device_type);
  dl.device.device_id = device_id;
  dl.ndim = ndim;
  dl.dtype = dtype;
  dl.shape = dims > 0 ? shape.data() : nullptr;
  dl.strides = (flags & kNullStrides) != 0 || dims == 0 ? nullptr : strides.data();
  dl.byte_offset = byte_offset;

  // A known size counts from `data`, as a producer would report it.
  const std::size_t data_at = data != nullptr ? static_cast<std::size_t>(static_cast<std::uint8_t*>(data) - buffer) : 0;
  const std::size_t known =
      (flags & kKnownSize) != 0 && data != nullptr && data_at < buffer_bytes ? buffer_bytes - data_at : 0;
  devrt::ImportOptions options{known};
  g_deleted = 0;
  {
    devrt::Result<devrt::Tensor> tensor = [&] {
      if ((flags & kVersioned) != 0) {
        static devrt::dlpack::ManagedTensorVersioned managed;
        managed = {};
        managed.version = {1, 0};
        managed.deleter = &count_versioned_deleter;
        managed.flags = (flags & kReadOnly) != 0 ? devrt::dlpack::kFlagReadOnly : 0;
        managed.dl_tensor = dl;
        return devrt::Tensor::from_dlpack(&managed, options);
      }
      static DLManagedTensor managed;
      managed = {};
      managed.deleter = &count_deleter;
      managed.dl_tensor = dl;
      return devrt::Tensor::from_dlpack(&managed, options);
    }();
    if (tensor.ok()) {
      exercise(*tensor, known != 0);
    } else if (tensor.status().message().find("from_dlpack") == std::string_view::npos) {
      __builtin_trap(); // every refusal names the call
    }
  }
  if (g_deleted != 1) __builtin_trap(); // exactly once, on success and on failure
  std::free(buffer);
  return 0;
}
