// SPDX-License-Identifier: Apache-2.0
// Bare-metal builds only: devrt's default firmware heap (devrt/firmware_heap.h), a fixed arena of
// DEVRT_FIRMWARE_HEAP_BYTES in .bss. Blocks tile the arena, each a Header and its payload; an
// allocation takes the first free block that holds the payload at its alignment, splitting off
// what it does not need before and after it; a free marks the block, and the next allocation's
// walk merges free neighbours. No sbrk, no malloc, nothing run at start-up or exit.
//
// Both functions are weak and alone in this file: an application that defines its own pair
// links neither them nor the arena.
#include <devrt/config.hpp>
#include <devrt/firmware_heap.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace {

struct Header {
  std::size_t size; // the block's bytes, this header included; a multiple of kGranule
  std::size_t used; // 1 while allocated
};

constexpr std::size_t kGranule = 8;
constexpr std::size_t kMinBlock = sizeof(Header) + kGranule;
constexpr std::size_t kArenaBytes = DEVRT_FIRMWARE_HEAP_BYTES / kGranule * kGranule;
static_assert(kArenaBytes >= kMinBlock, "firmware_heap_bytes is too small for one allocation");

alignas(16) unsigned char g_arena[kArenaBytes];
bool g_arena_ready = false;

std::uintptr_t arena_begin() noexcept { return reinterpret_cast<std::uintptr_t>(g_arena); }
std::uintptr_t arena_end() noexcept { return arena_begin() + kArenaBytes; }
Header* header_at(std::uintptr_t address) noexcept { return reinterpret_cast<Header*>(address); }
Header* make_block(std::uintptr_t address, std::size_t size) noexcept {
  return new (reinterpret_cast<void*>(address)) Header{size, 0};
}

// Where a payload of `need` bytes aligned to `alignment` fits in the free block at `block`, or 0.
// A gap before it must be empty or hold a free block of its own.
std::uintptr_t fit(std::uintptr_t block, std::size_t size, std::size_t need, std::size_t alignment) noexcept {
  std::uintptr_t payload = (block + sizeof(Header) + alignment - 1) & ~(alignment - 1);
  while (payload - sizeof(Header) != block && payload - sizeof(Header) - block < kMinBlock) payload += alignment;
  return payload + need <= block + size ? payload : 0;
}

} // namespace

extern "C" [[gnu::weak]] void* devrt_firmware_allocate(std::size_t nbytes, std::size_t alignment) {
  if (nbytes > kArenaBytes || alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < kGranule) alignment = kGranule;
  if (!g_arena_ready) {
    make_block(arena_begin(), kArenaBytes);
    g_arena_ready = true;
  }
  std::size_t need = (nbytes + kGranule - 1) / kGranule * kGranule;
  if (need == 0) need = kGranule;
  for (std::uintptr_t block = arena_begin(); block < arena_end(); block += header_at(block)->size) {
    Header* header = header_at(block);
    if (header->used != 0) continue;
    while (block + header->size < arena_end() && header_at(block + header->size)->used == 0) {
      header->size += header_at(block + header->size)->size;
    }
    std::uintptr_t payload = fit(block, header->size, need, alignment);
    if (payload == 0) continue;
    std::uintptr_t start = payload - sizeof(Header);
    std::size_t size = header->size;
    if (start != block) { // the gap before stays a free block
      header->size = start - block;
      size -= start - block;
    }
    std::size_t taken = sizeof(Header) + need;
    if (size - taken >= kMinBlock) {
      make_block(start + taken, size - taken);
      size = taken;
    }
    Header* allocated = make_block(start, size);
    allocated->used = 1;
    return reinterpret_cast<void*>(payload);
  }
  return nullptr;
}

extern "C" [[gnu::weak]] void devrt_firmware_free(void* pointer) {
  auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (address < arena_begin() + sizeof(Header) || address >= arena_end()) return;
  header_at(address - sizeof(Header))->used = 0;
}
