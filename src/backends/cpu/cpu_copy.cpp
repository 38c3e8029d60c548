#include "cpu_backend.hpp"

#include <cstring>

namespace devrt::cpu {

// glibc's memcpy (EVEX/AVX-512 here) is the fastest copy measured on the reference machine at every
// size: a plain SSE2 non-temporal loop reached 16.8 GB/s vs 14.3 at 16 MiB but lost at 64 MiB
// (10.8 vs 12.9 GB/s) and 256 MiB (9.5 vs 11.6). A faster large-copy path belongs here, behind
// a benchmark that shows it winning.
void copy_bytes(void* dst, const void* src, std::size_t n) noexcept { std::memcpy(dst, src, n); }

} // namespace devrt::cpu
