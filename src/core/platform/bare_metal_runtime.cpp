// SPDX-License-Identifier: Apache-2.0
// Bare-metal builds only: the C++ runtime pieces that would otherwise pull the exception-handling
// runtime into firmware. devrt is compiled with -fno-exceptions, but the prebuilt libstdc++
// reports a failed `new` or an oversized string by throwing, and linking that code brings the
// unwinder, the personality routine and RTTI (about 7 KB on Cortex-M4). Here those reports end
// the program with a message instead, which is what -fno-exceptions promises anyway.
//
// Every definition is weak: an application's own operator new or __throw_* takes precedence.
// The heap behind operator new is the firmware heap (devrt/firmware_heap.h), as for all of devrt.
#include <devrt/firmware_heap.h>
#include <devrt/status.hpp>

#include <cstddef>
#include <cstdlib>
#include <new>

#include <bits/functexcept.h> // libstdc++ declares these noreturn here

namespace {
// One fatal printer for all of devrt (status.cpp).
[[noreturn]] void fail(const char* what) noexcept {
  devrt::detail::fatal_status(what, devrt::Status(devrt::ErrorCode::internal, "no exceptions in this build"));
}
} // namespace

// devrt's own objects use nothrow new, which answers nullptr (out_of_memory) when the firmware heap
// (devrt/firmware_heap.h) is full; the throwing forms are here for code of the application's.
[[gnu::weak]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return devrt_firmware_allocate(size != 0 ? size : 1, alignof(std::max_align_t));
}
[[gnu::weak]] void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return ::operator new(size, std::nothrow);
}
[[gnu::weak]] void* operator new(std::size_t size) {
  void* p = ::operator new(size, std::nothrow);
  if (p == nullptr) fail("operator new: out of memory");
  return p;
}
[[gnu::weak]] void* operator new[](std::size_t size) { return ::operator new(size); }
[[gnu::weak]] void operator delete(void* p) noexcept { devrt_firmware_free(p); }
[[gnu::weak]] void operator delete[](void* p) noexcept { devrt_firmware_free(p); }
[[gnu::weak]] void operator delete(void* p, std::size_t) noexcept { devrt_firmware_free(p); }
[[gnu::weak]] void operator delete[](void* p, std::size_t) noexcept { devrt_firmware_free(p); }

// libstdc++'s reporting hooks, declared noreturn in bits/functexcept.h.
namespace std {
[[gnu::weak]] void __throw_bad_alloc() { fail("std::bad_alloc"); }
[[gnu::weak]] void __throw_bad_array_new_length() { fail("std::bad_array_new_length"); }
[[gnu::weak]] void __throw_length_error(const char* what) { fail(what); }
[[gnu::weak]] void __throw_logic_error(const char* what) { fail(what); }
[[gnu::weak]] void __throw_out_of_range(const char* what) { fail(what); }
[[gnu::weak]] void __throw_out_of_range_fmt(const char* what, ...) { fail(what); }
[[gnu::weak]] void __throw_invalid_argument(const char* what) { fail(what); }
} // namespace std
