// SPDX-License-Identifier: Apache-2.0
// Stand-ins for what the Hexagon SDK's runtime supplies to a DSP image: the C library functions
// devrt and the test programs call, newlib's reentrancy pointer behind stdin/stdout/stderr, and
// the start symbol. They exist so that DSP-side programs link and run without the SDK: under
// qemu-hexagon (Linux user mode), output goes out and the exit code comes back through Linux
// system calls (trap0 #1: write = 64, exit = 93). Nothing here is part of devrt; the list is the
// documented answer to "what does devrt need from the SDK": docs/firmware.md.
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sys/reent.h>

namespace {

// A Linux system call under qemu-hexagon: number in r6, arguments in r0-r2, result in r0.
long linux_syscall(long number, long a, long b, long c) {
  register long r0 asm("r0") = a;
  register long r1 asm("r1") = b;
  register long r2 asm("r2") = c;
  register long r6 asm("r6") = number;
  asm volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}
constexpr long kSysWrite = 64;
constexpr long kSysExit = 93;
constexpr long kSysClockGettime = 113;

[[noreturn]] void exit_process(int code) {
  static_cast<void>(linux_syscall(kSysExit, code, 0, 0));
  for (;;) {
  }
}

void write_out(int fd, const void* data, std::size_t n) {
  static_cast<void>(linux_syscall(kSysWrite, fd, reinterpret_cast<long>(data), static_cast<long>(n)));
}

// What printf needs here: %s %.*s %c %d %i %u %x %p %%, with l/ll/z and a width.
struct Sink {
  char* out;
  std::size_t capacity;
  std::size_t length = 0;
  void put(char c) {
    if (length + 1 < capacity) out[length] = c;
    ++length;
  }
};

void put_number(Sink& sink, unsigned long long value, unsigned base, bool negative, int width, char pad) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value != 0);
  if (negative) digits[n++] = '-';
  for (int i = n; i < width; ++i) sink.put(pad);
  while (n > 0) sink.put(digits[--n]);
}

int format(char* out, std::size_t capacity, const char* f, va_list args) {
  Sink sink{out, capacity};
  for (; *f != '\0'; ++f) {
    if (*f != '%') {
      sink.put(*f);
      continue;
    }
    ++f;
    char pad = ' ';
    if (*f == '0') pad = *f++;
    int width = 0;
    while (*f >= '0' && *f <= '9') width = width * 10 + (*f++ - '0');
    int precision = -1;
    if (*f == '.') {
      ++f;
      if (*f == '*') {
        precision = va_arg(args, int);
        ++f;
      } else {
        precision = 0;
        while (*f >= '0' && *f <= '9') precision = precision * 10 + (*f++ - '0');
      }
    }
    int longs = 0;
    while (*f == 'l' || *f == 'z') { // size_t is unsigned long on Hexagon
      ++longs;
      ++f;
    }
    switch (*f) {
    case 's': {
      const char* text = va_arg(args, const char*);
      for (int i = 0; text[i] != '\0' && (precision < 0 || i < precision); ++i) sink.put(text[i]);
      break;
    }
    case 'c': sink.put(static_cast<char>(va_arg(args, int))); break;
    case 'd':
    case 'i': {
      long long value = longs >= 2 ? va_arg(args, long long) : longs == 1 ? va_arg(args, long) : va_arg(args, int);
      put_number(sink, value < 0 ? 0ULL - static_cast<unsigned long long>(value) : value, 10, value < 0, width, pad);
      break;
    }
    case 'u':
    case 'x': {
      unsigned long long value = longs >= 2   ? va_arg(args, unsigned long long)
                                 : longs == 1 ? va_arg(args, unsigned long)
                                              : va_arg(args, unsigned);
      put_number(sink, value, *f == 'x' ? 16 : 10, false, width, pad);
      break;
    }
    case 'p': put_number(sink, reinterpret_cast<std::uintptr_t>(va_arg(args, void*)), 16, false, 0, ' '); break;
    case '%': sink.put('%'); break;
    default: return -1;
    }
  }
  if (capacity > 0) out[sink.length < capacity ? sink.length : capacity - 1] = '\0';
  return static_cast<int>(sink.length);
}

} // namespace

extern "C" {

int main();

// The SDK's QTimer count (HAP_perf.h, 19.2 MHz), from Linux's monotonic clock under qemu-hexagon.
unsigned long long HAP_perf_get_qtimer_count(void) {
  struct {
    long seconds;
    long nanoseconds;
  } now{0, 0};
  constexpr long kClockMonotonic = 1;
  static_cast<void>(linux_syscall(kSysClockGettime, kClockMonotonic, reinterpret_cast<long>(&now), 0));
  const auto seconds = static_cast<unsigned long long>(now.seconds);
  const auto nanoseconds = static_cast<unsigned long long>(now.nanoseconds);
  return seconds * 19'200'000ull + nanoseconds * 192ull / 10'000ull;
}

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

// The heap: a bump allocator over a static arena that never reuses memory (the SDK's malloc
// manages the DSP heap). 64 MiB of bss costs nothing under QEMU until it is touched.
alignas(64) static unsigned char g_arena[64 * 1024 * 1024];
static std::size_t g_arena_used = 0;
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  // Aligns the address, not the offset: the arena itself is only 64-byte aligned.
  auto base = reinterpret_cast<std::uintptr_t>(g_arena);
  std::size_t start = ((base + g_arena_used + alignment - 1) & ~(alignment - 1)) - base;
  if (start > sizeof g_arena || size > sizeof g_arena - start) return nullptr;
  g_arena_used = start + size;
  return g_arena + start;
}
void* malloc(std::size_t size) { return aligned_alloc(8, size); }
void free(void*) {}
// A new block with the old one's bytes: the old block's size is not kept, so as many bytes as lie
// between it and the arena's end are copied, up to `size` (beyond the old size realloc leaves the
// contents unspecified).
void* realloc(void* old, std::size_t size) {
  void* grown = malloc(size);
  if (old == nullptr || grown == nullptr) return grown;
  auto offset = static_cast<std::size_t>(static_cast<unsigned char*>(old) - g_arena);
  std::size_t available = static_cast<std::size_t>(static_cast<unsigned char*>(grown) - g_arena) - offset;
  memcpy(grown, old, size < available ? size : available);
  return grown;
}
void abort() {
  static const char message[] = "abort\n";
  write_out(2, message, sizeof message - 1);
  exit_process(134);
}
void _Exit(int code) { exit_process(code); }

// stdio: stdout and stderr are file descriptors 1 and 2 of the emulator's process; files do not
// exist on the DSP side.
static FILE g_streams[3];
static struct _reent g_reent = {._stdin = &g_streams[0], ._stdout = &g_streams[1], ._stderr = &g_streams[2]};
struct _reent* _impure_ptr = &g_reent;
static int descriptor(FILE* stream) { return stream == &g_streams[2] ? 2 : 1; }
int vsnprintf(char* out, std::size_t capacity, const char* f, va_list args) { return format(out, capacity, f, args); }
int snprintf(char* out, std::size_t capacity, const char* f, ...) {
  va_list args;
  va_start(args, f);
  int n = format(out, capacity, f, args);
  va_end(args);
  return n;
}
int printf(const char* f, ...) {
  char text[1024];
  va_list args;
  va_start(args, f);
  int n = format(text, sizeof text, f, args);
  va_end(args);
  if (n > 0) write_out(1, text, static_cast<std::size_t>(n) < sizeof text ? n : sizeof text - 1);
  return n;
}
std::size_t fwrite(const void* data, std::size_t size, std::size_t count, FILE* stream) {
  write_out(descriptor(stream), data, size * count);
  return count;
}
int fputs(const char* text, FILE* stream) {
  write_out(descriptor(stream), text, strlen(text));
  return 0;
}
int puts(const char* text) {
  write_out(1, text, strlen(text));
  write_out(1, "\n", 1);
  return 0;
}
int putchar(int c) {
  char byte = static_cast<char>(c);
  write_out(1, &byte, 1);
  return c;
}
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
std::uint32_t __hexagon_udivsi3(std::uint32_t n, std::uint32_t d) {
  return static_cast<std::uint32_t>(__hexagon_udivdi3(n, d));
}
std::uint32_t __hexagon_umodsi3(std::uint32_t n, std::uint32_t d) { return n - __hexagon_udivsi3(n, d) * d; }
std::int32_t __hexagon_divsi3(std::int32_t n, std::int32_t d) {
  std::uint32_t q = __hexagon_udivsi3(n < 0 ? 0u - static_cast<std::uint32_t>(n) : static_cast<std::uint32_t>(n),
                                      d < 0 ? 0u - static_cast<std::uint32_t>(d) : static_cast<std::uint32_t>(d));
  return (n < 0) != (d < 0) ? -static_cast<std::int32_t>(q) : static_cast<std::int32_t>(q);
}
std::int32_t __hexagon_modsi3(std::int32_t n, std::int32_t d) { return n - __hexagon_divsi3(n, d) * d; }
void* __hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void* dst, const void* src, std::size_t n) {
  return memcpy(dst, src, n);
}

// C++ runtime (the SDK's C++ library): static destructors are never run on the DSP.
void* __dso_handle = nullptr;
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }

// The SDK's crt0 sets up the stack and calls main; here the emulator has set up the stack, and
// main's answer becomes the process's exit code.
void _start() { exit_process(main()); }

} // extern "C"

#include <new>
namespace std {
const nothrow_t nothrow{}; // defined by the SDK's C++ library
} // namespace std
