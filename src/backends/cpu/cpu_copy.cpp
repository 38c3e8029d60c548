#include "cpu_backend.hpp"

#include <cstring>

namespace devrt::cpu {

void copy_bytes(void* dst, const void* src, std::size_t n) noexcept { std::memcpy(dst, src, n); }

} // namespace devrt::cpu
