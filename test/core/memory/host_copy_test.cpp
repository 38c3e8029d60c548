// SPDX-License-Identifier: Apache-2.0
// detail::copy_host: the inline small copies (every size to 64 at every alignment) and the
// non-temporal path past the threshold (sizes and misalignments that leave heads and tails).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <devrt/backend/detail/host_copy.hpp>

namespace {

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
  std::vector<unsigned char> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>((i * 2654435761u + seed) >> 9);
  return bytes;
}

} // namespace

TEST_CASE("small host copies write exactly n bytes at any alignment", "[unit][host_copy]") {
  const std::vector<unsigned char> source = pattern(256, 1);
  for (std::size_t n = 0; n <= 130; ++n) {
    for (std::size_t src_offset = 0; src_offset < 8; ++src_offset) {
      for (std::size_t dst_offset = 0; dst_offset < 8; ++dst_offset) {
        std::vector<unsigned char> dst(256, 0xEE);
        devrt::detail::copy_host(dst.data() + dst_offset, source.data() + src_offset, n);
        for (std::size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= dst_offset && i < dst_offset + n;
          const unsigned char expected = inside ? source[i - dst_offset + src_offset] : 0xEE;
          if (dst[i] != expected) {
            FAIL("n " << n << " src+" << src_offset << " dst+" << dst_offset << ": byte " << i << " is " << int(dst[i])
                      << ", expected " << int(expected));
          }
        }
      }
    }
  }
}

TEST_CASE("copies past the non-temporal threshold are exact", "[unit][host_copy]") {
  const std::size_t threshold = devrt::detail::large_copy_threshold();
  INFO("threshold " << threshold);
  CHECK(threshold >= devrt::detail::kMinStreamingCopy);
  if (threshold == SIZE_MAX) {
    SUCCEED("no non-temporal copies on this machine: memcpy serves every size");
  }
  const std::size_t base = threshold == SIZE_MAX ? devrt::detail::kMinStreamingCopy : threshold;
  for (std::size_t extra : {std::size_t{0}, std::size_t{1}, std::size_t{127}, std::size_t{4097}}) {
    for (std::size_t misalign : {std::size_t{0}, std::size_t{3}, std::size_t{61}}) {
      const std::size_t n = base + extra;
      std::vector<unsigned char> source = pattern(n + 64, static_cast<unsigned>(extra + misalign));
      std::vector<unsigned char> dst(n + 128, 0xEE);
      devrt::detail::copy_host(dst.data() + misalign, source.data() + 64 - misalign, n);
      INFO("n " << n << " misalign " << misalign);
      CHECK(std::equal(dst.begin() + static_cast<std::ptrdiff_t>(misalign),
                       dst.begin() + static_cast<std::ptrdiff_t>(misalign + n),
                       source.begin() + 64 - static_cast<std::ptrdiff_t>(misalign)));
      CHECK(std::all_of(dst.begin(), dst.begin() + static_cast<std::ptrdiff_t>(misalign),
                        [](unsigned char b) { return b == 0xEE; }));
      CHECK(std::all_of(dst.begin() + static_cast<std::ptrdiff_t>(misalign + n), dst.end(),
                        [](unsigned char b) { return b == 0xEE; }));
    }
  }
}
