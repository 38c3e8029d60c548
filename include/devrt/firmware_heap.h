/* SPDX-License-Identifier: Apache-2.0 */
/* The heap of a bare-metal devrt (DEVRT_BARE_METAL builds: firmware, a Hexagon DSP image).
 *
 * Every allocation devrt makes there goes through these two functions, and nothing else of it
 * calls malloc or operator new: buffers of the cpu backend (and the hexagon backend's DDR), the
 * block-shared memory of a kernel launch, error messages (builds with messages), tensors' shapes
 * and workspace pools. When they answer NULL, devrt's call returns out_of_memory.
 *
 * devrt's own definitions manage a fixed arena of DEVRT_FIRMWARE_HEAP_BYTES in .bss (the Meson
 * option firmware_heap_bytes, 64 KiB by default): first fit, freed blocks merged, no sbrk. To use
 * an allocator of the application's instead (an RTOS pool, a region of external RAM), define both
 * functions in the application: devrt's are weak and in an archive member of their own, so the
 * arena is then not linked at all. Hosted builds never call them.
 */
#ifndef DEVRT_FIRMWARE_HEAP_H
#define DEVRT_FIRMWARE_HEAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* nbytes (at least 1) of memory aligned to `alignment` (a power of two, at least 8), or NULL
 * when there is none. devrt's calls are single-threaded, as a bare-metal devrt is. */
void* devrt_firmware_allocate(size_t nbytes, size_t alignment);
/* Gives back memory from devrt_firmware_allocate; NULL is ignored. */
void devrt_firmware_free(void* pointer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVRT_FIRMWARE_HEAP_H */
