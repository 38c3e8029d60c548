// SPDX-License-Identifier: Apache-2.0
/* The backend C ABI: a plain table of function pointers that every backend becomes.
 *
 * The registry stores exactly this table, whether the backend was compiled into libdevrt.a, into
 * a firmware image, or into a loadable plugin that exports it from one extern "C" entry
 * point. Only C types cross it: integers, size_t, pointers, and a caller-provided error buffer.
 *
 * Rules for every function:
 *  - returns a devrt status code (DEVRT_STATUS_OK = 0, else one of DEVRT_STATUS_* (devrt/kernel_abi.h));
 *  - on failure may write a NUL-terminated reason into `err->message` (never more than
 *    DEVRT_ERROR_MESSAGE_CAPACITY bytes); the caller prefixes backend, device and call;
 *  - a per-device function gets the device as the core opened it (devrt_backend_device, below):
 *    its index was checked to lie in [0, device_count), open_device has run on it;
 *  - must be callable from any thread unless the operation says otherwise.
 */
#ifndef DEVRT_BACKEND_BACKEND_ABI_H
#define DEVRT_BACKEND_BACKEND_ABI_H

#include <stddef.h>
#include <stdint.h>

#include <devrt/kernel_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; a table with another version is refused. Version 2: devices
 * are objects (devrt_backend_device) that the core opens and closes through the table. Version 3:
 * the table carries a context of the backend's, passed to its table-level functions and set in
 * each device object. Version 4: copy and texture-copy descriptors name a device by its object
 * alone (the index fields beside the objects are gone: device->index is the index). */
#define DEVRT_BACKEND_ABI_VERSION 4u

#define DEVRT_ERROR_MESSAGE_CAPACITY 384

typedef struct devrt_error {
  char message[DEVRT_ERROR_MESSAGE_CAPACITY];
} devrt_error;

/* Handing a message over instead of copying it. A caller may open the buffer with message[0] = 0
 * and message[1] = DEVRT_ERROR_ACCEPTS_HANDOVER. A backend that fails may then, instead of writing
 * text, store a `char*` to a NUL-terminated message allocated with malloc() at
 * message + DEVRT_ERROR_HANDOVER_OFFSET (unaligned: copy its bytes) and set message[1] =
 * DEVRT_ERROR_HANDED_OVER; the caller then owns the message and frees it with free(). Backends
 * made with make_backend_table (devrt/backend/backend.hpp) do; a backend may always write text instead. */
#define DEVRT_ERROR_ACCEPTS_HANDOVER 1
#define DEVRT_ERROR_HANDED_OVER 2
#define DEVRT_ERROR_HANDOVER_OFFSET 8

/* devrt_attribute_value.type */
#define DEVRT_VALUE_NONE 0   /* the backend does not report this attribute */
#define DEVRT_VALUE_BOOL 1   /* ints[0] is 0 or 1 */
#define DEVRT_VALUE_INT 2    /* ints[0] */
#define DEVRT_VALUE_STRING 3 /* string, NUL-terminated */
#define DEVRT_VALUE_DIM3 4   /* ints[0..2] */

#define DEVRT_ATTRIBUTE_STRING_CAPACITY 256

typedef struct devrt_attribute_value {
  int32_t type;
  int64_t ints[3];
  char string[DEVRT_ATTRIBUTE_STRING_CAPACITY];
} devrt_attribute_value;

/* One device of a backend as the core opened it: the core owns it, at one address, from
 * open_device until close_device, and passes it to every per-device function. `state` is the
 * backend's: open_device may set it (to its own object for the device), and close_device frees
 * what it points to; it stays NULL for a backend that keeps no state per device. */
typedef struct devrt_backend_device {
  int32_t index; /* the device's index among the backend's devices, in [0, device_count) */
  int32_t reserved;
  void* state;
  void* context; /* the table's context (devrt_backend_table.context), set by the core */
} devrt_backend_device;

/* One copy. Exactly one side belongs to this backend's kind or both do; the other side may be
 * host memory (kind 1, cpu). Offsets and sizes were range-checked by the caller; overlapping
 * ranges were refused. `stream` belongs to the backend's device side (NULL: default stream).
 * src_device and dst_device are the sides' devices when they are this backend's (their `index`
 * is the device's index), else NULL: the side is host memory. */
typedef struct devrt_copy_desc {
  const void* src;
  size_t src_offset;
  int32_t src_kind;
  int32_t dst_kind;
  void* dst;
  size_t dst_offset;
  size_t nbytes;
  void* stream;
  const devrt_backend_device* src_device;
  const devrt_backend_device* dst_device;
} devrt_copy_desc;

/* ---- Kernel modules ---------------------------------------------------------------------- */

/* One launch: grid blocks of block threads each (global size = grid * block per dimension). */
typedef struct devrt_launch_desc {
  uint32_t grid[3];
  uint32_t block[3];
  size_t dynamic_shared_bytes; /* per block; see each backend for where it appears */
  const devrt_kernel_arg* args;
  uint32_t num_args;
  void* stream; /* NULL: the device's default stream */
} devrt_launch_desc;

/* ---- Memory scopes (devrt/device.hpp) ---------------------------------------------- */
/* What a device offers in one scope (devrt::ScopeLimits). */
typedef struct devrt_scope_limits {
  uint64_t max_width;  /* textures: texels per row */
  uint64_t max_height; /* textures: rows */
  uint64_t max_bytes;  /* the most one allocation in the scope may take (0: no limit of its own) */
  int32_t half_texels; /* textures: 1 when texels of 4 float16 channels are available */
  int32_t reserved;
  uint64_t max_layers; /* textures: the most layers of an image array; 0 when there are none */
} devrt_scope_limits;
/* A texture: `layers` images (an image array when `image_array` is 1, even of one layer; else one
 * 2-D image) of `height` rows of `width` texels of 4 channels of one type; its bytes are layer
 * after layer of compact rows. */
typedef struct devrt_texture_desc {
  int32_t scope;       /* a texture scope: devrt::MemoryScope 1..3 */
  uint8_t type_code;   /* each channel's DLPack type: kDLInt 0, kDLUInt 1, kDLFloat 2 */
  uint8_t type_bits;   /* 8, 16 or 32 */
  uint8_t image_array; /* 1: an image array (OpenCL image2d_array_t); 0: a 2-D image (layers 1) */
  uint8_t reserved;
  uint64_t width;  /* checked against the device's scope limits by the caller */
  uint64_t height; /* likewise */
  uint64_t layers; /* likewise; at least 1 */
} devrt_texture_desc;
/* A whole texture copied to or from compact rows of linear memory (width * 4 channels per row):
 * host memory (kind 1), or an allocation of this backend on the texture's device. `stream`
 * belongs to the texture's device (NULL: its default stream). The rule of devrt::copy applies:
 * a copy into the texture may read the host rows until the stream is synchronized; a copy out of it
 * into host memory has finished on return. */
typedef struct devrt_texture_copy_desc {
  void* texture;
  int32_t to_texture; /* 1: linear -> texture; 0: texture -> linear */
  int32_t reserved0;
  const devrt_texture_desc* desc;
  void* linear;
  size_t linear_offset;
  int32_t linear_kind; /* 1 (host memory) or this backend's kind (the texture's device) */
  int32_t reserved;
  void* stream;
  const devrt_backend_device* device; /* the texture's device (device->index: its index) */
} devrt_texture_copy_desc;
/* A texture over memory of an allocation of this backend on the device (TVM's image over a pooled
 * buffer): the image uses the allocation's bytes from `offset` on, rows `row_pitch` and layers
 * `layer_pitch` bytes apart, and shares them with the allocation. The backend picks the pitches (the
 * device's image pitch alignment, or its own linear layout) and fails with DEVRT_STATUS_INVALID_ARGUMENT when the image
 * needs more than `available` bytes or `offset` is not aligned as it needs, and with
 * DEVRT_STATUS_UNSUPPORTED naming the reason where the device cannot do it. The caller keeps the
 * allocation alive until texture_free. */
typedef struct devrt_texture_view_desc {
  const devrt_texture_desc* texture;
  void* buffer;       /* the allocation, as allocate returned it */
  size_t offset;      /* bytes from the allocation's start */
  size_t available;   /* bytes from `offset` the image may cover */
  size_t row_pitch;   /* out: bytes from one row to the next */
  size_t layer_pitch; /* out: bytes from one layer to the next */
  size_t bytes;       /* out: bytes from `offset` the image covers */
} devrt_texture_view_desc;
/* ---- Graphs (devrt/graph.hpp) -------------------------------------------------------------- */
/* One operation of a run that a backend may bake into a replayable object of its own. */
#define DEVRT_GRAPH_NODE_LAUNCH 1 /* `function` launched with `launch` (its stream field unused) */
#define DEVRT_GRAPH_NODE_COPY 2   /* `copy`: both sides on this device (its stream field unused) */
typedef struct devrt_graph_node {
  int32_t type;
  int32_t reserved;
  void* function;
  devrt_launch_desc launch;
  devrt_copy_desc copy;
} devrt_graph_node;

/* devrt_backend_table.capabilities */
#define DEVRT_CAP_EVENTS (1u << 0)          /* event_* and stream_wait_event are provided */
#define DEVRT_CAP_HOST_ACCESSIBLE (1u << 1) /* allocations are plain host addresses */
#define DEVRT_CAP_ADDRESSABLE (1u << 2)     /* allocations are addresses (pointer arithmetic valid) */
#define DEVRT_CAP_SYNCHRONOUS (1u << 3)     /* every operation has finished when its call returns */
/* With modules: launch refuses arguments that do not match the kernel's parameters (count, and
 * memory against scalars of each size), naming the kernel's signature. */
#define DEVRT_CAP_CHECKED_LAUNCH_ARGUMENTS (1u << 4)
/* With modules and textures: kernels take textures as arguments (devrt::KernelArg::texture). */
#define DEVRT_CAP_TEXTURE_ARGUMENTS (1u << 5)
/* The devices live in another process (remote): their memory is never this process's, and a
 * host_table module names kernel tables registered in that process. */
#define DEVRT_CAP_OUT_OF_PROCESS (1u << 6)
/* Set by devrt itself on the stand-in for a plugin backend that is not loaded (it answers
 * "unavailable" with the reason); loading the plugin replaces it. Never set by a backend. */
#define DEVRT_CAP_PLACEHOLDER (1u << 31)

typedef struct devrt_backend_table {
  uint32_t abi_version; /* DEVRT_BACKEND_ABI_VERSION */
  uint32_t struct_size; /* sizeof(devrt_backend_table) as the backend was compiled */
  const char* name;     /* lower-case identifier, e.g. "cpu"; static storage */
  int32_t device_kind;  /* DLPack device type number */
  uint32_t capabilities;
  /* The backend's own: passed to the functions that take no device (availability, device_count,
   * copy, texture_copy) and set in every device object the core opens (device->context), so that
   * one body of code may serve several tables. NULL for a backend that needs none. */
  void* context;

  /* Cheap until first called; may load the vendor runtime. Not ok: reason in err. */
  int32_t (*availability)(void* context, devrt_error* err);
  int32_t (*device_count)(void* context, int32_t* out_count, devrt_error* err);
  /* Opens device->index (device->state is NULL): may set device->state. The core calls it once
   * per device before any per-device function, and again after close_device. */
  int32_t (*open_device)(devrt_backend_device* device, devrt_error* err);
  /* Closes the device: frees what open_device made. The core calls it last, after releasing what
   * it owned on the device, once no object made on the device through this table (allocation,
   * texture, stream, event, module, graph) is left: at devrt::shutdown() (in the reverse order of
   * opening), or after it at the destruction of the device's last object. */
  int32_t (*close_device)(devrt_backend_device* device, devrt_error* err);
  int32_t (*get_attribute)(const devrt_backend_device* device, int32_t attribute, devrt_attribute_value* out,
                           devrt_error* err);

  int32_t (*allocate)(const devrt_backend_device* device, size_t nbytes, size_t alignment, void** out,
                      devrt_error* err);
  int32_t (*free)(const devrt_backend_device* device, void* ptr, devrt_error* err);
  int32_t (*copy)(void* context, const devrt_copy_desc* desc, devrt_error* err);

  int32_t (*stream_create)(const devrt_backend_device* device, void** out_stream, devrt_error* err);
  int32_t (*stream_destroy)(const devrt_backend_device* device, void* stream, devrt_error* err);
  int32_t (*stream_synchronize)(const devrt_backend_device* device, void* stream, devrt_error* err);

  /* Present only with DEVRT_CAP_EVENTS; NULL otherwise. */
  int32_t (*event_create)(const devrt_backend_device* device, void** out_event, devrt_error* err);
  int32_t (*event_destroy)(const devrt_backend_device* device, void* event, devrt_error* err);
  int32_t (*event_record)(const devrt_backend_device* device, void* event, void* stream, devrt_error* err);
  int32_t (*event_synchronize)(const devrt_backend_device* device, void* event, devrt_error* err);
  int32_t (*event_query)(const devrt_backend_device* device, void* event, int32_t* out_complete, devrt_error* err);
  int32_t (*stream_wait_event)(const devrt_backend_device* device, void* stream, void* event, devrt_error* err);

  /* ---- Optional tail: a table whose struct_size ends before a field does not have it. ---- */

  /* Describes the device as a compiler target: writes a JSON object (devrt::Target::to_json) and
   * its NUL into json[0..capacity). When capacity is too small returns 2 (out_of_range) and sets
   * *needed to the bytes required. NULL when the backend cannot describe its devices. */
  int32_t (*detect_target)(const devrt_backend_device* device, char* json, size_t capacity, size_t* needed,
                           devrt_error* err);

  /* Kernel modules; all four present or all NULL. module_load builds or loads `size` bytes of
   * `format` (options: NUL-terminated compiler options, never NULL) and writes the backend's
   * build or validation log (NUL-terminated, truncated to log_capacity) into `log` whether it
   * succeeds or not. A function handle stays valid until its module is unloaded. launch()
   * receives arguments the core checked: buffers on this device within their allocation. */
  int32_t (*module_load)(const devrt_backend_device* device, int32_t format, const void* data, size_t size,
                         const char* options, void** out_module, char* log, size_t log_capacity, devrt_error* err);
  int32_t (*module_unload)(const devrt_backend_device* device, void* module, devrt_error* err);
  int32_t (*module_function)(const devrt_backend_device* device, void* module, const char* name, void** out_function,
                             devrt_error* err);
  int32_t (*launch)(const devrt_backend_device* device, void* function, const devrt_launch_desc* desc,
                    devrt_error* err);
  /* Optional: the loaded module as bytes that module_load accepts again (an OpenCL program
   * binary): *out_format is set; out_of_range with *needed when capacity is too small. */
  int32_t (*module_binary)(const devrt_backend_device* device, void* module, int32_t* out_format, void* out,
                           size_t capacity, size_t* needed, devrt_error* err);
  /* Optional: blocks until everything queued on every stream of the device so far has finished
   * (cuCtxSynchronize). A backend that has it gets devrt's Buffer cache: a freed Buffer's memory is
   * kept for reuse once this has returned, as safe as the backend's own free that waits. */
  int32_t (*device_synchronize)(const devrt_backend_device* device, devrt_error* err);
  /* Optional: memory scopes other than "global". scope_limits answers DEVRT_STATUS_UNSUPPORTED for
   * a scope the device lacks. The texture functions are all present or all NULL; texture_allocate
   * receives a desc the caller checked against scope_limits. */
  int32_t (*scope_limits)(const devrt_backend_device* device, int32_t scope, devrt_scope_limits* out, devrt_error* err);
  int32_t (*texture_allocate)(const devrt_backend_device* device, const devrt_texture_desc* desc, void** out,
                              devrt_error* err);
  int32_t (*texture_free)(const devrt_backend_device* device, void* texture, devrt_error* err);
  int32_t (*texture_copy)(void* context, const devrt_texture_copy_desc* desc, devrt_error* err);
  /* Optional: flat memory in a scope other than "global" and the textures (Hexagon's VTCM), freed
   * with `free`. Called with nbytes >= 1 and a power-of-two alignment, like allocate. */
  int32_t (*scope_allocate)(const devrt_backend_device* device, int32_t scope, size_t nbytes, size_t alignment,
                            void** out, devrt_error* err);
  /* With modules: the formats module_load accepts, DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_*) for each.
   * The core refuses any other format before the backend sees it. A table that ends before this
   * field (a plugin built before it) declares none: the core then leaves that check to the backend. */
  uint32_t module_formats;
  /* Optional, with DEVRT_CAP_EVENTS: timed events, both present or both NULL. event_create_timed
   * makes an event whose record also takes the time at which the stream reaches it, on the
   * device's own clock where the backend has one (destroyed, recorded, waited for and queried
   * like any event). event_elapsed writes the nanoseconds from `start`'s point to `end`'s (negative
   * when `end`'s came first): both timed events of this device, recorded, and complete; an event
   * not recorded is invalid_argument, one not complete is unavailable. */
  int32_t (*event_create_timed)(const devrt_backend_device* device, void** out_event, devrt_error* err);
  int32_t (*event_elapsed)(const devrt_backend_device* device, void* start, void* end, int64_t* out_ns,
                           devrt_error* err);
  /* Optional: graphs, all three present or all NULL. graph_create bakes `count` nodes (checked by
   * the caller: launches as launch() receives them, copies as copy() does) into one replayable
   * object, in order; it answers DEVRT_STATUS_UNSUPPORTED when it cannot (the core then issues the
   * nodes itself at each replay). `stream` is the stream that was captured (a hint; it may be
   * destroyed before the graph). graph_launch queues the whole object on `stream` after its
   * earlier work, asynchronously, any number of times, replays overlapping; graph_destroy frees it
   * once its replays have finished, without waiting for them. */
  int32_t (*graph_create)(const devrt_backend_device* device, void* stream, const devrt_graph_node* nodes, size_t count,
                          void** out_graph, devrt_error* err);
  int32_t (*graph_launch)(const devrt_backend_device* device, void* graph, void* stream, devrt_error* err);
  int32_t (*graph_destroy)(const devrt_backend_device* device, void* graph, devrt_error* err);
  /* Optional, with the texture functions: a texture over an allocation (devrt_texture_view_desc),
   * freed with texture_free. */
  int32_t (*texture_view)(const devrt_backend_device* device, devrt_texture_view_desc* desc, void** out,
                          devrt_error* err);
  /* Optional, with modules: the formats this device's module_load accepts, a subset of
   * module_formats, for a backend whose devices differ (remote: each loads what its backend on the
   * server loads). The core refuses the others, naming the device's formats. */
  int32_t (*device_module_formats)(const devrt_backend_device* device, uint32_t* out_formats, devrt_error* err);
  /* Optional, with modules: how many instructions module_load rewrote in `module` to define what
   * its format leaves undefined (Vulkan: GLSL.std.450 Pow of a negative base), 0 for none. */
  int32_t (*module_rewrites)(const devrt_backend_device* device, void* module, uint32_t* out_count, devrt_error* err);
} devrt_backend_table;

#define DEVRT_MODULE_FORMAT_BIT(format) (1u << (format))

/* The smallest struct_size a table may have: everything before the optional tail. */
#define DEVRT_BACKEND_TABLE_MIN_SIZE offsetof(devrt_backend_table, detect_target)
/* True when `table` was built with field `field` (its struct_size covers it). */
#define DEVRT_BACKEND_TABLE_HAS(table, field)                                                                          \
  ((table)->struct_size >= offsetof(devrt_backend_table, field) + sizeof((table)->field) && (table)->field != NULL)

/* ---- Plugins ------------------------------------------------------------------------------
 * A backend plugin is a shared object exporting one function, DEVRT_PLUGIN_ENTRY_SYMBOL, that
 * returns the backend tables it provides (one, or a few for a backend with companion device
 * kinds such as cuda + cuda_host). Only C types cross: the tables and this struct, in static
 * storage of the plugin, valid while it stays loaded (devrt never unloads a plugin it registered). */
#define DEVRT_PLUGIN_ENTRY_SYMBOL "devrt_plugin_entry"
#define DEVRT_PLUGIN_MAX_TABLES 8u

typedef struct devrt_plugin_info {
  uint32_t abi_version; /* DEVRT_BACKEND_ABI_VERSION */
  uint32_t struct_size; /* sizeof(devrt_plugin_info) as the plugin was compiled */
  uint32_t table_count; /* 1 .. DEVRT_PLUGIN_MAX_TABLES */
  const devrt_backend_table* const* tables;
} devrt_plugin_info;

typedef const devrt_plugin_info* (*devrt_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVRT_BACKEND_BACKEND_ABI_H */
