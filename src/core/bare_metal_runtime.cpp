// SPDX-License-Identifier: Apache-2.0
// Bare-metal builds only: the C++ runtime pieces that would otherwise pull the exception-handling
// runtime into firmware. devrt is compiled with -fno-exceptions, but the prebuilt libstdc++
// reports a failed `new` or an oversized string by throwing, and linking that code brings the
// unwinder, the personality routine and RTTI (about 7 KB on Cortex-M4). Here those reports end
// the program with a message instead, which is what -fno-exceptions promises anyway.
//
// Every definition is weak: an application's own operator new or __throw_* takes precedence.
#include <devrt/status.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <bits/functexcept.h> // libstdc++ declares these noreturn here

namespace {
[[noreturn]] void fail(const char* what) noexcept {
  static_cast<void>(std::fputs("devrt: fatal: ", stderr));
  static_cast<void>(std::fputs(what, stderr));
  static_cast<void>(std::fputs(" (no exceptions in this build)\n", stderr));
  std::abort();
}
} // namespace

[[gnu::weak]] void* operator new(std::size_t size) {
  void* p = std::malloc(size != 0 ? size : 1);
  if (p == nullptr) fail("operator new: out of memory");
  return p;
}
[[gnu::weak]] void* operator new[](std::size_t size) { return ::operator new(size); }
[[gnu::weak]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size != 0 ? size : 1);
}
[[gnu::weak]] void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size != 0 ? size : 1);
}
[[gnu::weak]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::weak]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::weak]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::weak]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

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
