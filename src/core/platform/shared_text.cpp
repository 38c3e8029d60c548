// SPDX-License-Identifier: Apache-2.0
// detail::SharedText (devrt/module.hpp): a shared, immutable copy of a name.
#include <devrt/module.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "support/heap.hpp"

namespace devrt::detail {

struct SharedText::Block {
  std::atomic<std::size_t> references;
  std::size_t size;
  char* text() noexcept { return reinterpret_cast<char*>(this + 1); }
};

SharedText SharedText::make(std::string_view text) noexcept {
  SharedText made;
  if (text.size() > SIZE_MAX - sizeof(Block) - 1) return made;
  void* memory = heap_allocate(sizeof(Block) + text.size() + 1, alignof(Block));
  if (memory == nullptr) return made;
  made.block_ = new (memory) Block{{1}, text.size()};
  if (!text.empty()) std::memcpy(made.block_->text(), text.data(), text.size());
  made.block_->text()[text.size()] = '\0';
  return made;
}

std::string_view SharedText::view() const noexcept {
  return block_ != nullptr ? std::string_view(block_->text(), block_->size) : std::string_view();
}

const char* SharedText::c_str() const noexcept { return block_ != nullptr ? block_->text() : ""; }

void SharedText::retain() const noexcept {
  if (block_ != nullptr) block_->references.fetch_add(1, std::memory_order_relaxed);
}

void SharedText::release() noexcept {
  Block* block = std::exchange(block_, nullptr);
  if (block == nullptr || block->references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  block->~Block();
  heap_free(block);
}

} // namespace devrt::detail
