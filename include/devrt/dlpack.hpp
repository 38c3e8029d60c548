// SPDX-License-Identifier: Apache-2.0
// DLPack's versioned exchange structs (DLPack >= 1.0), whichever DLPack headers devrt is built with.
//
// With DLPack 1.x headers these are the header's own types. With older headers (Debian 12 ships
// 0.6) devrt declares the same layout itself, so devrt speaks both protocols everywhere:
// DLManagedTensor (unversioned) and DLManagedTensorVersioned (versioned, with flags).
#ifndef DEVRT_DLPACK_HPP
#define DEVRT_DLPACK_HPP

#include <cstddef>
#include <cstdint>

#include <dlpack/dlpack.h>

namespace devrt::dlpack {

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
using PackVersion = ::DLPackVersion;
using ManagedTensorVersioned = ::DLManagedTensorVersioned;
inline constexpr std::uint64_t kFlagReadOnly = DLPACK_FLAG_BITMASK_READ_ONLY;
inline constexpr std::uint64_t kFlagIsCopied = DLPACK_FLAG_BITMASK_IS_COPIED;
inline constexpr bool kHeaderHasVersionedStructs = true;
#else
struct PackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};
// Layout of DLPack 1.0's DLManagedTensorVersioned.
struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;
  DLTensor dl_tensor;
};
inline constexpr std::uint64_t kFlagReadOnly = std::uint64_t{1} << 0;
inline constexpr std::uint64_t kFlagIsCopied = std::uint64_t{1} << 1;
inline constexpr bool kHeaderHasVersionedStructs = false;
#endif

// The versioned protocol devrt produces and the newest major version it accepts.
inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 0;

// Names of the capsules Python's DLPack protocol passes around.
inline constexpr const char* kCapsuleName = "dltensor";
inline constexpr const char* kVersionedCapsuleName = "dltensor_versioned";
inline constexpr const char* kUsedCapsuleName = "used_dltensor";
inline constexpr const char* kUsedVersionedCapsuleName = "used_dltensor_versioned";

// DLPack 1.2's C exchange table, which a tensor type offers as the capsule
// `type(t).__dlpack_c_exchange_api__` (named "dlpack_exchange_api") so that another library
// exchanges tensors without Python calls (tvm-ffi, PyTorch >= 2.11). Declared here in DLPack
// 1.2's layout for headers older than 1.2.
#if defined(DLPACK_MAJOR_VERSION) &&                                                                                   \
    (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 2))
using ExchangeAPIHeader = ::DLPackExchangeAPIHeader;
using ExchangeAPI = ::DLPackExchangeAPI;
#else
struct ExchangeAPIHeader {
  PackVersion version;
  ExchangeAPIHeader* prev_api;
};
struct ExchangeAPI {
  ExchangeAPIHeader header;
  // A new tensor of the prototype's dtype, ndim, shape and device; set_error is called exactly
  // when it returns non-zero.
  int (*managed_tensor_allocator)(DLTensor* prototype, ManagedTensorVersioned** out, void* error_ctx,
                                  void (*set_error)(void* error_ctx, const char* kind, const char* message));
  // The Python object (of the type the table came from) as an owning tensor; -1 with a Python
  // error set on failure.
  int (*managed_tensor_from_py_object_no_sync)(void* py_object, ManagedTensorVersioned** out);
  // Steals `tensor` into a new Python object of the producer's type.
  int (*managed_tensor_to_py_object_no_sync)(ManagedTensorVersioned* tensor, void** out_py_object);
  // A borrowed view of the object's tensor, valid until control returns (may be null).
  int (*dltensor_from_py_object_no_sync)(void* py_object, DLTensor* out);
  // The producer's current stream on a device (null on the CPU).
  int (*current_work_stream)(DLDeviceType device_type, std::int32_t device_id, void** out_current_stream);
};
#endif
inline constexpr const char* kExchangeApiCapsuleName = "dlpack_exchange_api";
inline constexpr std::uint32_t kExchangeApiMinorVersion = 2;

// 32 bytes on 64-bit hosts, 24 on 32-bit ones (firmware).
static_assert(offsetof(ManagedTensorVersioned, dl_tensor) == 16 + 2 * sizeof(void*),
              "DLManagedTensorVersioned layout (DLPack 1.0)");

} // namespace devrt::dlpack

#endif // DEVRT_DLPACK_HPP
