// SPDX-License-Identifier: Apache-2.0
// The memory room's functions over the device records' memory slots (device_memory.hpp): pools
// made for a device, the ledger's and history's entry points per device, and the release of a
// slot when its record closes. Defined in this room (memory_records.cpp, workspace_pool.cpp,
// stream_pool.cpp). Not public API.
#ifndef DEVRT_SRC_CORE_MEMORY_MEMORY_RECORDS_HPP
#define DEVRT_SRC_CORE_MEMORY_MEMORY_RECORDS_HPP

#include <cstddef>
#include <cstdint>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

#include "core/devices/device_record.hpp"

namespace devrt::detail {

// A pool of the record's device that reports to its ledger (workspace_pool.cpp). Null: no host
// memory.
WorkspacePool* make_device_pool(DeviceRecord& record, std::size_t cache_limit_bytes) noexcept;
// Closes a record's pool (WorkspacePool::close) and deletes it when none of its blocks is in use;
// *kept is then false. Else the pool stays (*kept true) until delete_unused_pool finds it unused.
Status close_device_pool(WorkspacePool* pool, bool* kept) noexcept;
// Deletes a closed pool whose blocks have all come back; false (nothing done) while some are out.
bool delete_unused_pool(WorkspacePool* pool) noexcept;

// Closes the record's stream-ordered pool (stream_pool.cpp): its free blocks go back to the backend
// and the record lets go of it; blocks still held go back when freed, the pool with the last one.
void close_stream_pool(DeviceRecord& record) noexcept;

// Gives back what the memory room holds on a closing record's device: its stream-ordered pool, the
// Buffer cache and the workspace pool (a pool whose blocks are still in use is kept until
// sweep_kept_pools finds it unused). Passed to close_device_records by shutdown(). Returns the
// first failure. Under g_records_mutex.
Status release_device_memory(DeviceRecord& record) noexcept;
// Deletes the pools release_device_memory kept whose blocks have all come back. Not while another
// thread uses devrt (shutdown).
void sweep_kept_pools() noexcept;

// An allocation outside the pools (not from a custom registry): counted in its device's ledger,
// and remembered while the history is on. Returns the tag to pass to ledger_freed (0: not counted,
// the device has no record). Thread-safe. Firmware keeps no figures (its size budgets).
#if !DEVRT_BARE_METAL
std::uint32_t ledger_allocated(Device device, MemoryScope scope, void* address, std::size_t bytes) noexcept;
void ledger_freed(Device device, std::uint32_t tag, void* address, std::size_t bytes) noexcept;
#else
inline std::uint32_t ledger_allocated(Device, MemoryScope, void*, std::size_t) noexcept { return 0; }
inline void ledger_freed(Device, std::uint32_t, void*, std::size_t) noexcept {}
#endif
// A pooled allocation, for the history only (called while g_memory_history is set). Thread-safe.
void history_remember(Device device, MemoryScope scope, void* address, std::size_t bytes) noexcept;
void history_forget(Device device, void* address) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_MEMORY_MEMORY_RECORDS_HPP
