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

// 32 bytes on 64-bit hosts, 24 on 32-bit ones (firmware).
static_assert(offsetof(ManagedTensorVersioned, dl_tensor) == 16 + 2 * sizeof(void*),
              "DLManagedTensorVersioned layout (DLPack 1.0)");

} // namespace devrt::dlpack

#endif // DEVRT_DLPACK_HPP
