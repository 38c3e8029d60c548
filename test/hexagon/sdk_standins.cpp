// SPDX-License-Identifier: Apache-2.0
// Stand-ins for what the Hexagon SDK's runtime supplies to a DSP image: the C library functions
// devrt and the test program call, newlib's reentrancy pointer behind stdin/stdout/stderr, and
// the start symbol. They exist so that the DSP-side test program links without the SDK; nothing
// here is part of devrt, and none of it runs (no Hexagon simulator is available). The list is
// the documented answer to "what does devrt need from the SDK": docs/firmware.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sys/reent.h>

extern "C" {

int main();

// String and memory functions (compiled with -ffreestanding, so loops stay loops).
void* memcpy(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::size_t i = 0; i < n; ++i) d[i] = s[i];
  return dst;
}
void* memmove(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (d < s) return memcpy(dst, src, n);
  for (std::size_t i = n; i > 0; --i) d[i - 1] = s[i - 1];
  return dst;
}
void* memset(void* dst, int value, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<unsigned char>(value);
  return dst;
}
int memcmp(const void* a, const void* b, std::size_t n) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}
void* memchr(const void* p, int c, std::size_t n) {
  const auto* s = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    if (s[i] == static_cast<unsigned char>(c)) return const_cast<unsigned char*>(s + i);
  }
  return nullptr;
}
std::size_t strlen(const char* s) {
  std::size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}
int strcmp(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return static_cast<unsigned char>(*a) - static_cast<unsigned char>(*b);
}

// The heap: a bump allocator over a static arena (the SDK's malloc manages the DSP heap).
alignas(64) static unsigned char g_arena[256 * 1024];
static std::size_t g_arena_used = 0;
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  std::size_t start = (g_arena_used + alignment - 1) & ~(alignment - 1);
  if (start > sizeof g_arena || size > sizeof g_arena - start) return nullptr;
  g_arena_used = start + size;
  return g_arena + start;
}
void* malloc(std::size_t size) { return aligned_alloc(8, size); }
void free(void*) {}
void abort() {
  for (;;) {
  }
}

// stdio: output is dropped; files do not exist on the DSP side.
static struct _reent g_reent;
struct _reent* _impure_ptr = &g_reent;
int printf(const char*, ...) { return 0; }
std::size_t fwrite(const void*, std::size_t, std::size_t count, FILE*) { return count; }
int fputs(const char*, FILE*) { return 0; }
FILE* fopen(const char*, const char*) { return nullptr; }
std::size_t fread(void*, std::size_t, std::size_t, FILE*) { return 0; }
int ferror(FILE*) { return 1; }
int fclose(FILE*) { return 0; }

// Compiler runtime (the SDK's compiler-rt builtins for Hexagon).
std::uint64_t __hexagon_udivdi3(std::uint64_t n, std::uint64_t d) {
  std::uint64_t q = 0;
  std::uint64_t r = 0;
  for (int bit = 63; bit >= 0; --bit) {
    r = (r << 1) | ((n >> bit) & 1U);
    if (r >= d) {
      r -= d;
      q |= std::uint64_t{1} << bit;
    }
  }
  return q;
}
std::uint64_t __hexagon_umoddi3(std::uint64_t n, std::uint64_t d) { return n - __hexagon_udivdi3(n, d) * d; }
void* __hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void* dst, const void* src, std::size_t n) {
  return memcpy(dst, src, n);
}

// C++ runtime (the SDK's C++ library): static destructors are never run on the DSP.
void* __dso_handle = nullptr;
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }

// The SDK's crt0 sets up the stack and calls main.
void _start() {
  static_cast<void>(main());
  abort();
}

} // extern "C"

#include <new>
namespace std {
const nothrow_t nothrow{}; // defined by the SDK's C++ library
} // namespace std
