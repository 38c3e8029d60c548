/* SPDX-License-Identifier: Apache-2.0 */
/* devrt's C API: devices, backends and plugins, memory, copies, streams, events, workspaces,
 * modules and launches, tensors with DLPack exchange, targets and build facts, for C and for
 * other languages' foreign-function interfaces (the Python package uses it through ctypes).
 *
 * C99, no C++ inside. Link libdevrt_c.so (pkg-config devrt-c), or statically libdevrt_c.a with
 * libdevrt.a. docs/c-api.md is the guide.
 *
 * Rules for every function:
 *  - Fallible functions return devrt_status: DEVRT_STATUS_OK (0) or one of DEVRT_STATUS_*. On
 *    failure, devrt_last_error() on the same thread returns a message naming the backend, device
 *    and call; it stays until the thread's next failure (success does not clear it).
 *  - Handles (devrt_buffer, devrt_stream, ...) are opaque; whoever receives one through an out
 *    parameter owns it and gives it back with the matching *_release (NULL is accepted there).
 *  - Out parameters are written only on success.
 *  - Every function may be called from any thread. A handle may be used by several threads at
 *    once except where a function says it mutates the handle.
 *  - Using a handle after its *_release, releasing it twice, or passing a handle of another type
 *    is undefined behaviour, unless the validation mode is on: with DEVRT_VALIDATE=1 in the
 *    environment (read once, at the library's first use) every handle carries a generation and a
 *    type, and each of those mistakes is DEVRT_STATUS_INVALID_ARGUMENT naming the call (a
 *    *_release that returns void records it as the last error). It costs a table lookup under a
 *    lock per handle argument (docs/c-api.md has the figures).
 *  - No C++ exception crosses this API; devrt's core does not throw.
 */
#ifndef DEVRT_DEVRT_H
#define DEVRT_DEVRT_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include <devrt/backend/backend_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define DEVRT_C_API
#else
#define DEVRT_C_API __attribute__((visibility("default")))
#endif

/* The C API's version: bumped on an incompatible change. Compare devrt_api_version() at run time
 * with the DEVRT_C_API_VERSION a program was compiled against. */
#define DEVRT_C_API_VERSION 2

typedef int32_t devrt_status;

/* ---- Version and errors ----------------------------------------------------------------------- */

/* The API version of the loaded library (DEVRT_C_API_VERSION it was built with). Thread-safe. */
DEVRT_C_API uint32_t devrt_api_version(void);
/* devrt's release, "0.1.0". Static storage. Thread-safe. */
DEVRT_C_API const char* devrt_version(void);
/* The message of this thread's last failure, "" if none. Valid until this thread's next devrt call. */
DEVRT_C_API const char* devrt_last_error(void);
/* The code of this thread's last failure, DEVRT_STATUS_OK if none. Thread-safe (per thread). */
DEVRT_C_API devrt_status devrt_last_error_code(void);
/* "invalid_argument" for DEVRT_STATUS_INVALID_ARGUMENT, "" for an unknown code. Static storage. */
DEVRT_C_API const char* devrt_status_name(devrt_status status);
/* Frees a string this API returned through a char** out parameter. NULL is accepted. */
DEVRT_C_API void devrt_string_free(char* text);

/* ---- Devices and attributes ------------------------------------------------------------------- */

/* A device: a kind (DLPack's DLDeviceType numbers: 1 cpu, 2 cuda, 4 opencl, 7 vulkan, 10 rocm,
 * 16 hexagon, ...) and an index. A plain value. */
typedef struct devrt_device {
  int32_t kind;
  int32_t id;
} devrt_device;

/* Parses "cuda:1" or "cpu" (index 0). Thread-safe. DEVRT_STATUS_INVALID_ARGUMENT on bad text. */
DEVRT_C_API devrt_status devrt_device_parse(const char* text, devrt_device* out);
/* "cuda" for 2, "" for an unknown kind. Static storage. Thread-safe. */
DEVRT_C_API const char* devrt_device_kind_name(int32_t kind);
/* Devices of a kind; 0 when its backend is missing or unavailable. Thread-safe. */
DEVRT_C_API int32_t devrt_device_count(int32_t kind);
/* 1 when the device exists and can be used, else 0. Thread-safe. */
DEVRT_C_API int devrt_device_exists(devrt_device device);
/* Waits for all work queued on the device. DEVRT_STATUS_UNSUPPORTED on backends that cannot wait
 * for every stream of a device at once (OpenCL: queues are independent; synchronize each stream
 * with devrt_stream_synchronize instead). Thread-safe. */
DEVRT_C_API devrt_status devrt_device_synchronize(devrt_device device);

/* Attribute numbers (devrt::Attribute). */
#define DEVRT_ATTR_EXIST 0
#define DEVRT_ATTR_MAX_THREADS_PER_BLOCK 1
#define DEVRT_ATTR_WARP_SIZE 2
#define DEVRT_ATTR_MAX_SHARED_MEMORY_PER_BLOCK 3
#define DEVRT_ATTR_COMPUTE_VERSION 4
#define DEVRT_ATTR_DEVICE_NAME 5
#define DEVRT_ATTR_MAX_CLOCK_RATE 6
#define DEVRT_ATTR_MULTI_PROCESSOR_COUNT 7
#define DEVRT_ATTR_MAX_THREAD_DIMENSIONS 8
#define DEVRT_ATTR_MAX_REGISTERS_PER_BLOCK 9
#define DEVRT_ATTR_GCN_ARCH 10
#define DEVRT_ATTR_API_VERSION 11
#define DEVRT_ATTR_DRIVER_VERSION 12
#define DEVRT_ATTR_L2_CACHE_SIZE_BYTES 13
#define DEVRT_ATTR_TOTAL_GLOBAL_MEMORY 14
#define DEVRT_ATTR_AVAILABLE_GLOBAL_MEMORY 15
#define DEVRT_ATTR_IMAGE_PITCH_ALIGNMENT 16
#define DEVRT_ATTR_BUFFER_OFFSET_ALIGNMENT 17
#define DEVRT_ATTR_COUNT 18

/* An attribute's value type. */
#define DEVRT_ATTR_TYPE_BOOL 0
#define DEVRT_ATTR_TYPE_INT 1
#define DEVRT_ATTR_TYPE_STRING 2
#define DEVRT_ATTR_TYPE_DIM3 3

/* "max_threads_per_block", "" for an unknown number. Static storage. Thread-safe. */
DEVRT_C_API const char* devrt_attribute_name(int32_t attribute);
/* DEVRT_ATTR_TYPE_* of an attribute, -1 for an unknown number. Thread-safe. */
DEVRT_C_API int32_t devrt_attribute_type(int32_t attribute);
/* Returned by the attribute readers when the device does not report that attribute: an answer,
 * not a failure (nothing is recorded as the last error). */
#define DEVRT_ATTR_NOT_REPORTED (-1)

/* A bool or int attribute; DEVRT_ATTR_NOT_REPORTED when the device does not report it. Thread-safe. */
DEVRT_C_API devrt_status devrt_device_attribute_int(devrt_device device, int32_t attribute, int64_t* value);
/* A string attribute, copied into text[capacity] (NUL-terminated, truncated to fit); *length (may be
 * NULL) receives its full length. DEVRT_ATTR_NOT_REPORTED as above. Thread-safe. */
DEVRT_C_API devrt_status devrt_device_attribute_string(devrt_device device, int32_t attribute, char* text,
                                                       size_t capacity, size_t* length);
/* A Dim3 attribute (max_thread_dimensions) into xyz[3]; DEVRT_ATTR_NOT_REPORTED as above. Thread-safe. */
DEVRT_C_API devrt_status devrt_device_attribute_dim3(devrt_device device, int32_t attribute, int64_t xyz[3]);

/* The device as a compiler target, TVM's target dict as JSON; free *json with devrt_string_free.
 * DEVRT_STATUS_UNSUPPORTED for kinds with no target detection. Thread-safe. */
DEVRT_C_API devrt_status devrt_detect_target(devrt_device device, char** json);

/* ---- Remote devices (docs/remote.md) ---------------------------------------------------------- */

/* The device kind of devices that devrt-server serves from another process or machine (no DLPack
 * device type: DLPack export of their memory is refused). */
#define DEVRT_DEVICE_REMOTE 28
/* Connects to the devrt-server at `address` ("host:port") and adds its devices: kind
 * DEVRT_DEVICE_REMOTE, ids *first_id to *first_id + *count - 1. DEVRT_STATUS_INVALID_ARGUMENT for an
 * address that is not host:port, DEVRT_STATUS_UNAVAILABLE naming it when the server cannot be
 * reached or UCX is not installed, DEVRT_STATUS_UNSUPPORTED in a build without the remote backend.
 * Thread-safe. */
DEVRT_C_API devrt_status devrt_remote_connect(const char* address, int32_t* first_id, int32_t* count);
/* devrt_remote_connect proving the key in `key_file` to a keyed server (docs/remote.md, "Keys");
 * NULL: DEVRT_REMOTE_KEY_FILE, else no key (devrt_remote_connect does that). DEVRT_STATUS_PERMISSION_DENIED
 * when the server requires a key and this client has none or another, when this client has a key
 * and the server does not prove it, or when the key file may be read by others. Thread-safe. */
DEVRT_C_API devrt_status devrt_remote_connect_keyed(const char* address, const char* key_file, int32_t* first_id,
                                                    int32_t* count);
/* What a remote device is on its server, as JSON: {"server": "host:port", "kind": "opencl",
 * "index": 0, "name": "...", "lost": false, "lost_reason": ""}; free *json with devrt_string_free.
 * DEVRT_STATUS_INVALID_ARGUMENT for a device that is not remote. Thread-safe. */
DEVRT_C_API devrt_status devrt_remote_describe(devrt_device device, char** json);

/* ---- Backends and plugins --------------------------------------------------------------------- */

/* Backends registered now (built in, loaded plugins, placeholders of missing plugins). Thread-safe. */
DEVRT_C_API size_t devrt_backend_count(void);
/* The i-th registered backend's name, NULL past the end. Static storage. Thread-safe. */
DEVRT_C_API const char* devrt_backend_name(size_t index);
/* The i-th registered backend's device kind, -1 past the end. Thread-safe. */
DEVRT_C_API int32_t devrt_backend_kind(size_t index);
/* DEVRT_STATUS_OK when the named backend can be used here; else why not (last error).
 * DEVRT_STATUS_NOT_FOUND for a name that is not registered. Thread-safe. */
DEVRT_C_API devrt_status devrt_backend_availability(const char* name);

/* What a load did (devrt::PluginLoad). */
#define DEVRT_PLUGIN_LOADED 0
#define DEVRT_PLUGIN_ALREADY_LOADED 1
#define DEVRT_PLUGIN_BUILT_IN 2

/* Loads the plugin providing backend `name` from the search path; *outcome (may be NULL) says what
 * happened. Idempotent; thread-safe. */
DEVRT_C_API devrt_status devrt_backend_load(const char* name, int32_t* outcome);
/* Loads one plugin file (an out-of-tree backend). Idempotent; thread-safe. */
DEVRT_C_API devrt_status devrt_plugin_load_file(const char* path, int32_t* outcome);
/* Loads every plugin on the search path not loaded yet, whatever DEVRT_BACKEND_AUTOLOAD says;
 * *loaded (may be NULL) receives how many were loaded now. Failures are recorded (see
 * devrt_plugin_failure) and the others still load; DEVRT_STATUS_OK unless nothing could be tried.
 * Thread-safe. */
DEVRT_C_API devrt_status devrt_backend_load_all(size_t* loaded);
/* Plugins loaded so far. Thread-safe. */
DEVRT_C_API size_t devrt_plugin_count(void);
/* The i-th loaded plugin's file path and a comma-separated list of its backends, copied into the
 * caller's buffers as devrt_device_attribute_string does. DEVRT_STATUS_OUT_OF_RANGE past the end. */
DEVRT_C_API devrt_status devrt_plugin_loaded(size_t index, char* path, size_t path_capacity, char* backends,
                                             size_t backends_capacity);
/* Plugin files that failed to load (autoload, devrt_backend_load_all), in order. Thread-safe. */
DEVRT_C_API size_t devrt_plugin_failure_count(void);
/* The i-th failure's file path and reason, copied as above. DEVRT_STATUS_OUT_OF_RANGE past the end. */
DEVRT_C_API devrt_status devrt_plugin_failure(size_t index, char* path, size_t path_capacity, char* reason,
                                              size_t reason_capacity);
/* The plugin search path, ':'-separated; free *text with devrt_string_free. Thread-safe. */
DEVRT_C_API devrt_status devrt_plugin_search_path(char** text);
/* Environment variable `name` as devrt reads its boolean DEVRT_* variables, into *value: 1 for
 * 1, true, on or yes; 0 for 0, false, off or no; `fallback` (0 or 1) when unset or empty, and for
 * any other text, with a warning naming the variable. The one rule of the C++ library, the C API
 * and the Python package. DEVRT_STATUS_INVALID_ARGUMENT for a null name or value, or a fallback
 * other than 0 or 1. Thread-safe (as getenv). */
DEVRT_C_API devrt_status devrt_environment_flag(const char* name, int fallback, int* value);

/* ---- Memory and copies ------------------------------------------------------------------------ */

/* A device allocation. Owned by the caller until devrt_buffer_release. */
typedef struct devrt_buffer_t* devrt_buffer;
/* A region of memory on a device: an allocation's handle or address, and its size in bytes. */
typedef struct devrt_span {
  devrt_device device;
  void* data;
  size_t size;
} devrt_span;
/* A stream by value: the device and the backend's handle (NULL: the device's default stream). A
 * CUDA stream from another library (a CUstream) can be passed this way. */
typedef struct devrt_stream_ref {
  devrt_device device;
  void* handle;
} devrt_stream_ref;

/* Allocates nbytes (> 0; 0 is DEVRT_STATUS_INVALID_ARGUMENT) on a device; alignment 0 means 64, else a
 * power of two. Thread-safe. */
DEVRT_C_API devrt_status devrt_buffer_allocate(devrt_device device, size_t nbytes, size_t alignment, devrt_buffer* out);
/* Frees the memory (after the device has finished with it: synchronize first). NULL is a no-op. */
DEVRT_C_API void devrt_buffer_release(devrt_buffer buffer);
/* Stream-ordered (devrt::Buffer::allocate(device, n, stream)): usable by work on *stream (of
 * `device`) from now on, freed on that stream by devrt_buffer_release (its memory is reused once
 * the stream reaches the release); during a capture of *stream, from the graph's private pool.
 * nbytes > 0. Thread-safe. */
DEVRT_C_API devrt_status devrt_buffer_allocate_on_stream(devrt_device device, size_t nbytes,
                                                         const devrt_stream_ref* stream, devrt_buffer* out);
/* The buffer as a span, for copies and kernel arguments; borrowed, valid while the buffer lives. */
DEVRT_C_API devrt_span devrt_buffer_span(devrt_buffer buffer);
/* A span of host memory (device cpu:0) that the caller owns. */
DEVRT_C_API devrt_span devrt_host_span(const void* data, size_t size);
/* Copies nbytes from src at src_offset to dst at dst_offset, between any two devices, with every
 * range checked (out of range, overlap). Ordered on *stream (NULL: the current stream of the
 * device doing the copy), which must belong to that device (a staged copy between two devices
 * runs on the destination's; else DEVRT_STATUS_INVALID_ARGUMENT); complete once that stream is
 * synchronized. Thread-safe. */
DEVRT_C_API devrt_status devrt_copy(const devrt_span* src, size_t src_offset, const devrt_span* dst, size_t dst_offset,
                                    size_t nbytes, const devrt_stream_ref* stream);

/* ---- Streams and events ----------------------------------------------------------------------- */

typedef struct devrt_stream_t* devrt_stream;
typedef struct devrt_event_t* devrt_event;

/* A new stream on a device. Owned by the caller. Thread-safe. */
DEVRT_C_API devrt_status devrt_stream_create(devrt_device device, devrt_stream* out);
/* Destroys the stream (queued work still completes). NULL is a no-op. */
DEVRT_C_API void devrt_stream_release(devrt_stream stream);
/* The stream by value, for copies and launches; valid while the stream lives. */
DEVRT_C_API devrt_stream_ref devrt_stream_get_ref(devrt_stream stream);
/* Waits for everything queued on a stream (handle NULL: the default stream). Thread-safe. */
DEVRT_C_API devrt_status devrt_stream_synchronize(devrt_stream_ref stream);
/* The current stream of a device on this thread (the default stream unless set). Thread-local. */
DEVRT_C_API devrt_stream_ref devrt_current_stream(devrt_device device);
/* Sets this thread's current stream of stream.device; a device that does not exist is
 * DEVRT_STATUS_INVALID_ARGUMENT. The caller keeps the stream alive. */
DEVRT_C_API devrt_status devrt_set_current_stream(devrt_stream_ref stream);

/* A new event on a device. Owned by the caller. Thread-safe. */
DEVRT_C_API devrt_status devrt_event_create(devrt_device device, devrt_event* out);
/* Destroys the event. NULL is a no-op. */
DEVRT_C_API void devrt_event_release(devrt_event event);
/* Records the event at the current end of *stream (NULL: the current stream). Mutates the event. */
DEVRT_C_API devrt_status devrt_event_record(devrt_event event, const devrt_stream_ref* stream);
/* Waits until the recorded work completed. Thread-safe. */
DEVRT_C_API devrt_status devrt_event_synchronize(devrt_event event);
/* *done = 1 when the recorded work completed, else 0; never waits. Thread-safe. */
DEVRT_C_API devrt_status devrt_event_query(devrt_event event, int* done);
/* Makes later work on *stream (NULL: current) wait for the event, without blocking the host. */
DEVRT_C_API devrt_status devrt_event_wait(devrt_event event, const devrt_stream_ref* stream);
/* A new timed event (devrt::EventOptions::timing): recording it also takes the time the stream
 * reaches it, on the device's clock; DEVRT_STATUS_UNSUPPORTED where the backend cannot time.
 * Released with devrt_event_release. Thread-safe. */
DEVRT_C_API devrt_status devrt_event_create_timed(devrt_device device, devrt_event* out);
/* *out_ns = nanoseconds from start's recorded point to end's (devrt::Event::elapsed_ns): both
 * timed, of one device, recorded and complete (DEVRT_STATUS_UNAVAILABLE while not). Never waits. */
DEVRT_C_API devrt_status devrt_event_elapsed_ns(devrt_event start, devrt_event end, int64_t* out_ns);

/* ---- Timing: TVM's time_evaluator (devrt/timing.hpp, docs/timing.md) -------------------------- */

/* TVM's parameters; devrt_time_evaluator_default_options gives TVM's defaults. */
typedef struct devrt_time_evaluator_options {
  int32_t number;                     /* calls per timed batch (10) */
  int32_t repeat;                     /* timed batches, one result each (1) */
  int32_t min_repeat_ms;              /* batches grow until one lasts this long (0) */
  int32_t limit_zero_time_iterations; /* ... or this many read 0 (100) */
  int32_t cooldown_interval_ms;       /* sleep after repeat i when i % repeats_to_cooldown == 0 (0) */
  int32_t repeats_to_cooldown;        /* (1) */
  int64_t cache_flush_bytes;          /* a copy between two buffers this size before each batch (0) */
} devrt_time_evaluator_options;

/* One call to time: enqueues its work on `stream` and returns DEVRT_STATUS_OK, or an error,
 * which ends the measurement and is returned by the run. */
typedef devrt_status (*devrt_timed_call)(void* user_data, devrt_stream_ref stream);

/* A measurement on one device that keeps TVM's grown `number` between runs. */
typedef struct devrt_time_evaluator_t* devrt_time_evaluator_handle;

/* Writes TVM's defaults into *options. */
DEVRT_C_API void devrt_time_evaluator_default_options(devrt_time_evaluator_options* options);
/* A new evaluator on *stream (NULL: the device's current stream); NULL options: the defaults.
 * number, repeat or repeats_to_cooldown below 1, or a negative option, is
 * DEVRT_STATUS_INVALID_ARGUMENT. Owned by the caller; one thread at a time. */
DEVRT_C_API devrt_status devrt_time_evaluator_create(devrt_device device, const devrt_time_evaluator_options* options,
                                                     const devrt_stream_ref* stream, devrt_time_evaluator_handle* out);
/* Destroys the evaluator. NULL is a no-op. */
DEVRT_C_API void devrt_time_evaluator_release(devrt_time_evaluator_handle evaluator);
/* Runs TVM's measurement of `call` (preprocess, when not NULL, before each repeat) and writes the
 * seconds per call of each repeat into results[0 .. repeat); capacity below repeat is
 * DEVRT_STATUS_OUT_OF_RANGE before anything runs. */
DEVRT_C_API devrt_status devrt_time_evaluator_run(devrt_time_evaluator_handle evaluator, devrt_timed_call call,
                                                  void* call_data, devrt_timed_call preprocess, void* preprocess_data,
                                                  double* results, size_t capacity);
/* The calls a batch makes now (grown by min_repeat_ms), the repeats (results) a run gives, and
 * whether the last run timed on the device's clock (1) or the host's (0). Any pointer may be NULL. */
DEVRT_C_API devrt_status devrt_time_evaluator_state(devrt_time_evaluator_handle evaluator, int32_t* number,
                                                    int32_t* repeat, int* device_side);
/* create, run and release at once. */
DEVRT_C_API devrt_status devrt_time_evaluator(devrt_device device, const devrt_time_evaluator_options* options,
                                              const devrt_stream_ref* stream, devrt_timed_call call, void* call_data,
                                              devrt_timed_call preprocess, void* preprocess_data, double* results,
                                              size_t capacity);

/* ---- Graphs: capture and replay (devrt/graph.hpp, docs/graphs.md) ----------------------------- */

/* What a capture recorded, replayable on any stream of its device. */
typedef struct devrt_graph_t* devrt_graph;
#define DEVRT_GRAPH_MODE_NATIVE 0   /* every run baked by the backend (a command buffer) */
#define DEVRT_GRAPH_MODE_RECORDED 1 /* devrt issues the recorded calls again */
#define DEVRT_GRAPH_MODE_MIXED 2

/* Starts capturing *stream (a devrt_stream_create stream; NULL and default streams are refused):
 * its copies, launches and event records are recorded, not run, until devrt_graph_end_capture; what
 * a capture refuses is devrt::begin_capture's. Thread-safe. */
DEVRT_C_API devrt_status devrt_graph_begin_capture(const devrt_stream_ref* stream);
/* Ends the capture and gives its graph (release with devrt_graph_release), or the first error met
 * while capturing. Thread-safe. */
DEVRT_C_API devrt_status devrt_graph_end_capture(const devrt_stream_ref* stream, devrt_graph* out);
/* *out = 1 while *stream is capturing, else 0. */
DEVRT_C_API devrt_status devrt_graph_is_capturing(const devrt_stream_ref* stream, int* out);
/* Queues the graph on *stream (its device's; NULL: the current stream of its device), after the
 * stream's earlier work, asynchronously. Thread-safe. */
DEVRT_C_API devrt_status devrt_graph_launch(devrt_graph graph, const devrt_stream_ref* stream);
/* Launch number launch_index (capture order) takes `args` from the next replay on: the same count,
 * kinds and scalar types (else DEVRT_STATUS_INVALID_ARGUMENT); DEVRT_STATUS_OUT_OF_RANGE past the
 * launches. Not thread-safe against replays of the same graph. */
DEVRT_C_API devrt_status devrt_graph_update(devrt_graph graph, size_t launch_index, const devrt_kernel_arg* args,
                                            size_t num_args);
/* Captured operations, launches among them, and the mode (DEVRT_GRAPH_MODE_*). Any pointer may be
 * NULL. */
DEVRT_C_API devrt_status devrt_graph_info(devrt_graph graph, size_t* node_count, size_t* launch_count, int32_t* mode);
/* Frees the graph (its backend object once its replays have finished). NULL is a no-op. */
DEVRT_C_API void devrt_graph_release(devrt_graph graph);

/* ---- Workspace -------------------------------------------------------------------------------- */

/* A block from a device's workspace pool (cached, cheap to take and give back). */
typedef struct devrt_workspace_t* devrt_workspace;

/* Statistics of a device's workspace pool (devrt::PoolStats). */
typedef struct devrt_pool_stats {
  size_t reserved_bytes;
  size_t cached_bytes;
  size_t cache_limit_bytes;
  uint64_t hits;
  uint64_t backend_allocations;
  uint64_t backend_frees;
} devrt_pool_stats;

/* Takes nbytes from the device's pool. Owned by the caller. Thread-safe. */
DEVRT_C_API devrt_status devrt_workspace_allocate(devrt_device device, size_t nbytes, devrt_workspace* out);
/* Gives the block back to its pool. NULL is a no-op. */
DEVRT_C_API void devrt_workspace_release(devrt_workspace workspace);
/* The block as a span; borrowed, valid while the workspace lives. */
DEVRT_C_API devrt_span devrt_workspace_span(devrt_workspace workspace);
/* The device pool's statistics. Thread-safe. */
DEVRT_C_API devrt_status devrt_workspace_stats(devrt_device device, devrt_pool_stats* stats);

/* ---- Memory statistics and shutdown (devrt/memory_stats.hpp) ------------------------------- */

/* The memory scopes, in the order of devrt_memory_stats.scopes: TVM's names "global",
 * "global.texture", "global.texture-nhwc", "global.texture-weight", "global.vtcm". */
#define DEVRT_MEMORY_SCOPE_COUNT 5

/* One scope's figures (devrt::ScopeMemoryStats): allocated now and at the peak, live allocations,
 * reserved from the backend (allocated plus cached) now and at the peak. */
typedef struct devrt_scope_memory_stats {
  uint64_t allocated_bytes;
  uint64_t allocated_bytes_peak;
  uint64_t allocations;
  uint64_t reserved_bytes;
  uint64_t reserved_bytes_peak;
} devrt_scope_memory_stats;

typedef struct devrt_device_memory_stats {
  devrt_scope_memory_stats total;
  devrt_scope_memory_stats scopes[DEVRT_MEMORY_SCOPE_COUNT];
  uint64_t cached_bytes; /* free blocks the Buffer cache and workspace pool keep */
  uint64_t cache_hits;
  uint64_t cache_misses;
  int32_t history; /* 1 while the allocation history is on */
  int32_t reserved;
} devrt_device_memory_stats;

/* Stream-ordered allocation (devrt::Buffer::allocate(device, n, stream)): its pools' figures. */
typedef struct devrt_stream_pool_figures {
  uint64_t pool_bytes;       /* held from the backend by the device's stream pools, graphs' included */
  uint64_t cached_bytes;     /* free in them */
  uint64_t graph_pool_bytes; /* held by graphs' private pools */
  uint64_t hits;             /* allocations served from a free block */
  uint64_t misses;           /* allocations passed to the backend */
} devrt_stream_pool_figures;
/* The device's stream-pool figures into *stats. Thread-safe. */
DEVRT_C_API devrt_status devrt_stream_pool_stats(devrt_device device, devrt_stream_pool_figures* stats);
/* Memory of the device that its owners freed while a live graph touched it (devrt_graph_*): kept
 * by the graphs until the last one touching it is released. Either pointer may be NULL. Thread-safe. */
DEVRT_C_API devrt_status devrt_graph_held_memory(devrt_device device, uint64_t* bytes, uint64_t* allocations);

/* Gives the device's cached, unused memory back to its backend (devrt::empty_cache): the Buffer
 * cache's free blocks and the stream pools' whose frees have completed. Memory in use stays.
 * Thread-safe. */
DEVRT_C_API devrt_status devrt_empty_cache(devrt_device device);
/* The device's memory figures into *stats. Thread-safe. */
DEVRT_C_API devrt_status devrt_memory_stats(devrt_device device, devrt_device_memory_stats* stats);
/* Sets the device's peaks to their current figures. Thread-safe. */
DEVRT_C_API devrt_status devrt_reset_peak_memory_stats(devrt_device device);
/* Turns the allocation history on (1) or off (0) for every device; any other value is
 * DEVRT_STATUS_INVALID_ARGUMENT. Thread-safe. */
DEVRT_C_API devrt_status devrt_set_memory_history(int enabled);
/* The device's live allocations the history remembers, as JSON (devrt::memory_snapshot); free
 * *json with devrt_string_free. Thread-safe. */
DEVRT_C_API devrt_status devrt_memory_snapshot(devrt_device device, char** json);
/* Closes every device devrt opened (devrt::shutdown), each once the application's last object on
 * it is released: safe twice and from atexit; later calls open devices again. Not while other
 * threads use devrt. */
DEVRT_C_API devrt_status devrt_shutdown(void);

/* ---- Modules and launches --------------------------------------------------------------------- */

typedef struct devrt_module_t* devrt_module;
typedef struct devrt_function_t* devrt_function;

/* Loads code in a DEVRT_MODULE_* format (OpenCL C, SPIR-V, PTX, ...) onto a device, with the
 * backend's build options (may be NULL). A build failure's log is in the error message.
 * Owned by the caller. Thread-safe. */
DEVRT_C_API devrt_status devrt_module_load(devrt_device device, int32_t format, const void* data, size_t size,
                                           const char* options, devrt_module* out);
/* The same from a file. Thread-safe. */
DEVRT_C_API devrt_status devrt_module_load_file(devrt_device device, int32_t format, const char* path,
                                                const char* options, devrt_module* out);
/* Unloads the module; its functions must not be launched afterwards. NULL is a no-op. */
DEVRT_C_API void devrt_module_release(devrt_module module);
/* A kernel of the module by name. Owned by the caller; valid while the module lives. Thread-safe. */
DEVRT_C_API devrt_status devrt_module_function(devrt_module module, const char* name, devrt_function* out);
/* How many instructions devrt rewrote in the module at load to define what its format leaves
 * undefined (GLSL.std.450 Pow of a negative base in SPIR-V; devrt::Module::rewritten_instructions),
 * into *count. Thread-safe. */
DEVRT_C_API devrt_status devrt_module_rewritten_instructions(devrt_module module, uint32_t* count);
/* Frees the function handle. NULL is a no-op. */
DEVRT_C_API void devrt_function_release(devrt_function function);

/* A kernel argument: device memory (a span and an offset into it) or a scalar. */
DEVRT_C_API devrt_kernel_arg devrt_arg_span(devrt_span span, size_t offset);
DEVRT_C_API devrt_kernel_arg devrt_arg_i32(int32_t value);
DEVRT_C_API devrt_kernel_arg devrt_arg_i64(int64_t value);
DEVRT_C_API devrt_kernel_arg devrt_arg_u32(uint32_t value);
DEVRT_C_API devrt_kernel_arg devrt_arg_f32(float value);
DEVRT_C_API devrt_kernel_arg devrt_arg_f64(double value);

/* Launches grid[3] blocks of block[3] threads with num_args arguments (at most 64), ordered on
 * *stream (NULL: the current stream). Thread-safe. */
DEVRT_C_API devrt_status devrt_function_launch(devrt_function function, const uint32_t grid[3], const uint32_t block[3],
                                               size_t dynamic_shared_bytes, const devrt_kernel_arg* args,
                                               size_t num_args, const devrt_stream_ref* stream);

/* ---- Tensors and DLPack ----------------------------------------------------------------------- */

/* An n-d array sharing reference-counted storage (devrt::Tensor). */
typedef struct devrt_tensor_t* devrt_tensor;

/* A new compact tensor on a device, contents uninitialised, in memory scope `scope`: TVM's name
 * ("global.texture", ...; NULL or "" is "global"; devrt/device.hpp lists them). An unknown name is
 * DEVRT_STATUS_INVALID_ARGUMENT, a scope the device lacks DEVRT_STATUS_UNSUPPORTED naming both.
 * Owned by the caller. Thread-safe. (API version 2 added `scope`.) */
DEVRT_C_API devrt_status devrt_tensor_empty(const int64_t* shape, int32_t ndim, DLDataType dtype, devrt_device device,
                                            const char* scope, devrt_tensor* out);
/* The same for a texture scope, its images named by `layout`: "image_array" (NULL or ""; TVM >= 0.23:
 * an OpenCL image2d_array_t, the last axis a pack of texels) or "image2d" (TVM <= 0.22: an
 * image2d_t, the last axis 4 channels); devrt::TextureLayout. An unknown layout, or a layout with
 * a scope that is no texture, is DEVRT_STATUS_INVALID_ARGUMENT. Owned by the caller. Thread-safe. */
DEVRT_C_API devrt_status devrt_tensor_empty_texture(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                                    devrt_device device, const char* scope, const char* layout,
                                                    devrt_tensor* out);
/* A texture over a compact global tensor's memory (devrt::Tensor::as_texture): the two share their
 * bytes, the texture's rows and layers at devrt_tensor_texture_pitch; `scope` a texture scope (NULL:
 * "global.texture"), `layout` as devrt_tensor_empty_texture's. Where the device makes no such
 * images, DEVRT_STATUS_UNSUPPORTED naming why. Owned by the caller; keeps `tensor`'s memory alive.
 * Thread-safe. */
DEVRT_C_API devrt_status devrt_tensor_as_texture(devrt_tensor tensor, const int64_t* shape, int32_t ndim,
                                                 DLDataType dtype, const char* scope, const char* layout,
                                                 devrt_tensor* out);
/* A texture made by devrt_tensor_as_texture: the bytes between its rows and between its layers in
 * the memory it is over; 0 and 0 for any other tensor. Thread-safe. */
DEVRT_C_API devrt_status devrt_tensor_texture_pitch(devrt_tensor tensor, size_t* row, size_t* layer);
/* The tensor's memory scope, TVM's name ("global"). Static storage; NULL for an invalid handle. */
DEVRT_C_API const char* devrt_tensor_scope(devrt_tensor tensor);
/* Another handle to the same tensor (shares the storage). Owned by the caller. */
DEVRT_C_API devrt_status devrt_tensor_share(devrt_tensor tensor, devrt_tensor* out);
/* Drops this handle; the storage lives while other handles or exported DLPack tensors use it. */
DEVRT_C_API void devrt_tensor_release(devrt_tensor tensor);

/* The tensor's fields, borrowed, valid while the handle lives. Strides are in elements. */
DEVRT_C_API int32_t devrt_tensor_ndim(devrt_tensor tensor);
DEVRT_C_API const int64_t* devrt_tensor_shape(devrt_tensor tensor);
DEVRT_C_API const int64_t* devrt_tensor_strides(devrt_tensor tensor);
DEVRT_C_API DLDataType devrt_tensor_dtype(devrt_tensor tensor);
DEVRT_C_API devrt_device devrt_tensor_device(devrt_tensor tensor);
/* DLTensor::data (a handle on backends whose memory is not addressable) and the byte offset. */
DEVRT_C_API void* devrt_tensor_data(devrt_tensor tensor);
DEVRT_C_API uint64_t devrt_tensor_byte_offset(devrt_tensor tensor);
DEVRT_C_API size_t devrt_tensor_nbytes(devrt_tensor tensor);
/* Flags: 1 when row-major compact / read-only / marked as a copy by its DLPack producer. */
DEVRT_C_API int devrt_tensor_is_contiguous(devrt_tensor tensor);
DEVRT_C_API int devrt_tensor_read_only(devrt_tensor tensor);
DEVRT_C_API int devrt_tensor_is_copied(devrt_tensor tensor);

/* Takes ownership of a DLPack producer's tensor: every field is validated, and managed->deleter
 * runs exactly once (when the last handle dies, or before an error returns). allocation_bytes (0:
 * unknown) bounds the strides when known. Thread-safe. */
DEVRT_C_API devrt_status devrt_tensor_from_dlpack(DLManagedTensor* managed, size_t allocation_bytes, devrt_tensor* out);
/* The same for a DLManagedTensorVersioned (DLPack >= 1.0; major version 1). */
DEVRT_C_API devrt_status devrt_tensor_from_dlpack_versioned(void* managed_versioned, size_t allocation_bytes,
                                                            devrt_tensor* out);
/* Exports a new reference to the storage; the consumer owns *out and calls its deleter once. */
DEVRT_C_API devrt_status devrt_tensor_to_dlpack(devrt_tensor tensor, DLManagedTensor** out);
/* The same as a DLManagedTensorVersioned (version 1.0, read-only and is-copied flags set). */
DEVRT_C_API devrt_status devrt_tensor_to_dlpack_versioned(devrt_tensor tensor, void** out);

/* Copies src's elements into dst (same shape and dtype, any devices), ordered on *stream (NULL:
 * current stream of the copying device). Thread-safe for distinct destinations. */
DEVRT_C_API devrt_status devrt_tensor_copy(devrt_tensor dst, devrt_tensor src, const devrt_stream_ref* stream);
/* A compact copy on another device (complete on return when that device is host-accessible). */
DEVRT_C_API devrt_status devrt_tensor_to(devrt_tensor tensor, devrt_device device, const devrt_stream_ref* stream,
                                         devrt_tensor* out);
/* Contiguous tensors: copy nbytes() bytes from / to host memory the caller owns (complete on return). */
DEVRT_C_API devrt_status devrt_tensor_copy_from_host(devrt_tensor tensor, const void* data, size_t nbytes);
DEVRT_C_API devrt_status devrt_tensor_copy_to_host(devrt_tensor tensor, void* data, size_t nbytes);
/* A view of the same storage (strides NULL: compact), inside the storage. Owned by the caller. */
DEVRT_C_API devrt_status devrt_tensor_view(devrt_tensor tensor, const int64_t* shape, const int64_t* strides,
                                           int32_t ndim, uint64_t byte_offset, devrt_tensor* out);

/* TVM's CreateView: a compact view of a contiguous tensor's bytes with another shape and dtype,
 * starting relative_byte_offset bytes after its first element and inside its bytes (out_of_range
 * otherwise); a strided tensor is unsupported. Owned by the caller. */
DEVRT_C_API devrt_status devrt_tensor_create_view(devrt_tensor tensor, const int64_t* shape, int32_t ndim,
                                                  DLDataType dtype, uint64_t relative_byte_offset, devrt_tensor* out);

/* "float32" <-> {kDLFloat, 32, 1}, with TVM's and DLPack's names ("bfloat16", "bool", "handle",
 * "float8_e4m3fn", "int8x4", ...; the list is parse_data_type's in <devrt/dtype.hpp>); anything
 * else is invalid_argument. devrt_dtype_to_string writes into text[capacity]. Thread-safe. */
DEVRT_C_API devrt_status devrt_dtype_parse(const char* text, DLDataType* out);
DEVRT_C_API devrt_status devrt_dtype_to_string(DLDataType dtype, char* text, size_t capacity);

/* ---- Build facts ------------------------------------------------------------------------------ */

/* What this library was built with (revision, compiler, build type, backends and their headers,
 * plugins; devrt_version() has the version), as the JSON object of `devrt-info --json`'s "build" key. Free with
 * devrt_string_free. */
DEVRT_C_API devrt_status devrt_build_info_json(char** json);
/* devrt-info's human-readable table of build facts, backends and devices. Free with
 * devrt_string_free. Thread-safe. */
DEVRT_C_API devrt_status devrt_describe(char** text);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The libraries TVM built and their Relax VM: declared apart, part of this API. */
#include <devrt/devrt_tvm.h>

#endif /* DEVRT_DEVRT_H */
