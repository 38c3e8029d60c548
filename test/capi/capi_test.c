/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 200809L /* setenv */
/* The C API from C99: every group of functions, with real devices (cpu, and opencl/vulkan where
 * present), bad input, ownership of DLPack tensors, and the thread-local last error. */
#include <devrt/devrt.h>
#include <devrt/devrt_toolchain.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const devrt_device kCpu = {1, 0};

static void test_version_and_errors(void) {
  devrt_device parsed;
  CHECK(devrt_api_version() == DEVRT_C_API_VERSION);
  CHECK(strcmp(devrt_version(), "") != 0);
  CHECK(strcmp(devrt_status_name(DEVRT_STATUS_OUT_OF_RANGE), "out_of_range") == 0);
  CHECK(strcmp(devrt_status_name(99), "") == 0);
  CHECK(devrt_device_parse("not a device", &parsed) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_last_error_code() == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "not a device") != NULL);
  CHECK(devrt_device_parse(NULL, &parsed) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "text is NULL") != NULL);
  /* Success does not clear the last error. */
  CHECK_OK(devrt_device_parse("cuda:1", &parsed));
  CHECK(parsed.kind == 2 && parsed.id == 1);
  CHECK(devrt_last_error_code() == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strcmp(devrt_device_kind_name(4), "opencl") == 0);
  /* The header promises "" for a kind without a name, never NULL. */
  CHECK(devrt_device_kind_name(99) != NULL && strcmp(devrt_device_kind_name(99), "") == 0);
  CHECK(devrt_device_kind_name(0) != NULL && strcmp(devrt_device_kind_name(0), "") == 0);
}

static void test_devices_and_backends(void) {
  int64_t value = 0;
  int64_t xyz[3] = {0, 0, 0};
  char name[8];
  size_t length = 0;
  size_t i;
  int saw_cpu = 0;
  char* json = NULL;
  devrt_device missing = {1, 7};
  CHECK(devrt_device_count(1) == 1);
  CHECK(devrt_device_exists(kCpu) == 1);
  CHECK(devrt_device_exists(missing) == 0);
  CHECK_OK(devrt_device_attribute_int(kCpu, DEVRT_ATTR_EXIST, &value));
  CHECK(value == 1);
  CHECK_OK(devrt_device_attribute_int(kCpu, DEVRT_ATTR_MAX_THREADS_PER_BLOCK, &value));
  CHECK(value > 0);
  CHECK(devrt_device_attribute_int(kCpu, DEVRT_ATTR_WARP_SIZE, &value) == DEVRT_ATTR_NOT_REPORTED);
  CHECK(devrt_device_attribute_int(kCpu, DEVRT_ATTR_DEVICE_NAME, &value) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_device_attribute_int(missing, DEVRT_ATTR_MAX_THREADS_PER_BLOCK, &value) != DEVRT_STATUS_OK);
  CHECK(strstr(devrt_last_error(), "cpu:7") != NULL);
  /* Truncated into a small buffer, full length reported. */
  CHECK_OK(devrt_device_attribute_string(kCpu, DEVRT_ATTR_DEVICE_NAME, name, sizeof name, &length));
  CHECK(length > 0 && strlen(name) == (length < sizeof name ? length : sizeof name - 1));
  CHECK_OK(devrt_device_attribute_dim3(kCpu, DEVRT_ATTR_MAX_THREAD_DIMENSIONS, xyz));
  CHECK(xyz[0] > 0 && xyz[1] > 0 && xyz[2] > 0);
  CHECK(strcmp(devrt_attribute_name(DEVRT_ATTR_COMPUTE_VERSION), "compute_version") == 0);
  CHECK(devrt_attribute_type(DEVRT_ATTR_MAX_THREAD_DIMENSIONS) == DEVRT_ATTR_TYPE_DIM3);
  CHECK(devrt_attribute_type(DEVRT_ATTR_COUNT) == -1);
  CHECK_OK(devrt_detect_target(kCpu, &json));
  CHECK(json != NULL && strstr(json, "\"kind\"") != NULL);
  devrt_string_free(json);
  for (i = 0; i < devrt_backend_count(); ++i) {
    if (strcmp(devrt_backend_name(i), "cpu") == 0) saw_cpu = devrt_backend_kind(i) == 1;
  }
  CHECK(saw_cpu);
  CHECK(devrt_backend_name(devrt_backend_count()) == NULL);
  CHECK_OK(devrt_backend_availability("cpu"));
  CHECK(devrt_backend_availability("no_such_backend") == DEVRT_STATUS_NOT_FOUND);
  CHECK_OK(devrt_build_info_json(&json));
  CHECK(strstr(json, "\"backends\"") != NULL);
  devrt_string_free(json);
  CHECK_OK(devrt_plugin_search_path(&json));
  devrt_string_free(json);
  {
    /* Boolean variables: the rule of the C++ library (and, through this call, of Python). */
    static const char* const kTrue[] = {"1", "true", "on", "yes"};
    static const char* const kFalse[] = {"0", "false", "off", "no"};
    int flag = -1;
    for (int i = 0; i < 4; ++i) {
      CHECK(setenv("DEVRT_CAPI_TEST_FLAG", kTrue[i], 1) == 0);
      CHECK_OK(devrt_environment_flag("DEVRT_CAPI_TEST_FLAG", 0, &flag));
      CHECK(flag == 1);
      CHECK(setenv("DEVRT_CAPI_TEST_FLAG", kFalse[i], 1) == 0);
      CHECK_OK(devrt_environment_flag("DEVRT_CAPI_TEST_FLAG", 1, &flag));
      CHECK(flag == 0);
    }
    CHECK(setenv("DEVRT_CAPI_TEST_FLAG", "maybe", 1) == 0); /* not a boolean: the fallback, warned */
    CHECK_OK(devrt_environment_flag("DEVRT_CAPI_TEST_FLAG", 1, &flag));
    CHECK(flag == 1);
    CHECK(unsetenv("DEVRT_CAPI_TEST_FLAG") == 0);
    CHECK_OK(devrt_environment_flag("DEVRT_CAPI_TEST_FLAG", 0, &flag));
    CHECK(flag == 0);
    CHECK(devrt_environment_flag(NULL, 0, &flag) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(devrt_environment_flag("DEVRT_CAPI_TEST_FLAG", 0, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(devrt_environment_flag("DEVRT_CAPI_TEST_FLAG", 2, &flag) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(devrt_last_error(), "fallback is 2") != NULL);
  }
  CHECK(devrt_plugin_failure(devrt_plugin_failure_count(), NULL, 0, NULL, 0) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_backend_load("no_such_backend", NULL) != DEVRT_STATUS_OK);
}

/* Buffers, copies (with their range checks) and events on one device. */
static void test_memory(devrt_device device) {
  unsigned char in[256];
  unsigned char out[256];
  devrt_buffer buffer = NULL;
  devrt_span device_span;
  devrt_span host_in;
  devrt_span host_out;
  devrt_stream stream = NULL;
  devrt_stream_ref ref;
  devrt_event event = NULL;
  int done = 0;
  int i;
  for (i = 0; i < 256; ++i) in[i] = (unsigned char)i;
  memset(out, 0, sizeof out);
  host_in = devrt_host_span(in, sizeof in);
  host_out = devrt_host_span(out, sizeof out);
  /* The header promises nbytes > 0: zero, huge sizes and a NULL out parameter are refused, and
   * the out parameter is not written. */
  CHECK(devrt_buffer_allocate(device, 0, 0, &buffer) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(buffer == NULL);
  CHECK(devrt_buffer_allocate(device, (size_t)-1, 0, &buffer) != DEVRT_STATUS_OK);
  CHECK(devrt_buffer_allocate(device, 256, 0, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_buffer_allocate(device, 256, 0, &buffer));
  if (buffer == NULL) return;
  device_span = devrt_buffer_span(buffer);
  CHECK(device_span.size == 256 && device_span.device.kind == device.kind);
  CHECK_OK(devrt_stream_create(device, &stream));
  ref = devrt_stream_get_ref(stream);
  CHECK_OK(devrt_copy(&host_in, 0, &device_span, 0, 256, &ref));
  CHECK(devrt_copy(&host_in, 0, &device_span, 200, 100, &ref) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_copy(NULL, 0, &device_span, 0, 1, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_copy(&device_span, 16, &host_out, 0, 64, &ref));
  CHECK_OK(devrt_event_create(device, &event));
  CHECK_OK(devrt_event_record(event, &ref));
  CHECK_OK(devrt_event_synchronize(event));
  CHECK_OK(devrt_event_query(event, &done));
  CHECK(done == 1);
  CHECK_OK(devrt_stream_synchronize(ref));
  CHECK(memcmp(out, in + 16, 64) == 0);
  devrt_event_release(event);
  devrt_stream_release(stream);
  devrt_buffer_release(buffer);
  /* The span of a NULL (or, under DEVRT_VALIDATE, a released) handle is empty: a copy says so. */
  device_span = devrt_buffer_span(NULL);
  CHECK(devrt_copy(&host_in, 0, &device_span, 0, 1, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "dst is an empty span (device type 0, no memory)") != NULL);
}

/* A timed call that counts its calls and fails the `fail_at`-th. */
typedef struct counted_call {
  int calls;
  int fail_at;
} counted_call;

static devrt_status count_call(void* data, devrt_stream_ref stream) {
  counted_call* call = (counted_call*)data;
  (void)stream;
  return ++call->calls == call->fail_at ? DEVRT_STATUS_OUT_OF_MEMORY : DEVRT_STATUS_OK;
}

static void test_timing(devrt_device device) {
  devrt_event start = NULL, end = NULL, untimed = NULL;
  devrt_time_evaluator_options options;
  devrt_time_evaluator_handle evaluator = NULL;
  counted_call call = {0, 0}, preprocess = {0, 0};
  double results[4] = {0, 0, 0, 0};
  int64_t ns = -1;
  int32_t number = 0, repeat = 0;
  int device_side = -1;

  CHECK_OK(devrt_event_create_timed(device, &start));
  CHECK_OK(devrt_event_create_timed(device, &end));
  CHECK_OK(devrt_event_create(device, &untimed));
  CHECK(devrt_event_elapsed_ns(start, end, &ns) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "never recorded") != NULL);
  CHECK_OK(devrt_event_record(start, NULL));
  CHECK_OK(devrt_event_record(end, NULL));
  CHECK_OK(devrt_event_record(untimed, NULL));
  CHECK_OK(devrt_event_synchronize(end));
  CHECK_OK(devrt_event_elapsed_ns(start, end, &ns));
  CHECK(ns >= 0);
  CHECK(devrt_event_elapsed_ns(start, untimed, &ns) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_event_elapsed_ns(start, end, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  devrt_event_release(start);
  devrt_event_release(end);
  devrt_event_release(untimed);

  devrt_time_evaluator_default_options(&options);
  CHECK(options.number == 10 && options.repeat == 1 && options.min_repeat_ms == 0 &&
        options.limit_zero_time_iterations == 100 && options.cooldown_interval_ms == 0 &&
        options.repeats_to_cooldown == 1 && options.cache_flush_bytes == 0);
  options.number = 0;
  CHECK(devrt_time_evaluator_create(device, &options, NULL, &evaluator) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "number = 0") != NULL);
  options.number = 3;
  options.repeat = 4;
  CHECK_OK(devrt_time_evaluator_create(device, &options, NULL, &evaluator));
  CHECK(devrt_time_evaluator_run(evaluator, count_call, &call, NULL, NULL, results, 3) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(call.calls == 0); /* refused before anything ran */
  CHECK_OK(devrt_time_evaluator_run(evaluator, count_call, &call, count_call, &preprocess, results, 4));
  CHECK(call.calls == 1 + 3 * 4);
  CHECK(preprocess.calls == 4);
  CHECK(results[0] >= 0 && results[3] >= 0);
  CHECK_OK(devrt_time_evaluator_state(evaluator, &number, &repeat, &device_side));
  CHECK(number == 3 && repeat == 4 && device_side == 1);
  devrt_time_evaluator_release(evaluator);

  /* The one-shot form; the callback's error ends the run and is returned, named. */
  call.calls = 0;
  call.fail_at = 2;
  CHECK(devrt_time_evaluator(device, NULL, NULL, count_call, &call, NULL, NULL, results, 1) ==
        DEVRT_STATUS_OUT_OF_MEMORY);
  CHECK(strstr(devrt_last_error(), "the timed call returned") != NULL);
  CHECK(devrt_time_evaluator(device, NULL, NULL, NULL, NULL, NULL, NULL, results, 1) == DEVRT_STATUS_INVALID_ARGUMENT);
}

static void test_workspace(void) {
  devrt_workspace block = NULL;
  devrt_pool_stats stats;
  CHECK_OK(devrt_workspace_allocate(kCpu, 4096, &block));
  CHECK(devrt_workspace_span(block).size >= 4096);
  devrt_workspace_release(block);
  CHECK_OK(devrt_workspace_allocate(kCpu, 4096, &block));
  devrt_workspace_release(block);
  CHECK_OK(devrt_workspace_stats(kCpu, &stats));
  CHECK(stats.hits >= 1);
}

static void test_memory_stats_and_shutdown(void) {
  devrt_device_memory_stats before, held, after;
  devrt_workspace block = NULL;
  char* json = NULL;
  const devrt_device missing = {1, 5};
  CHECK_OK(devrt_reset_peak_memory_stats(kCpu));
  CHECK_OK(devrt_memory_stats(kCpu, &before));
  CHECK_OK(devrt_set_memory_history(1));
  CHECK_OK(devrt_workspace_allocate(kCpu, 1 << 20, &block));
  CHECK_OK(devrt_memory_stats(kCpu, &held));
  CHECK(held.total.allocated_bytes == before.total.allocated_bytes + (1 << 20));
  CHECK(held.scopes[0].allocated_bytes == held.total.allocated_bytes);
  CHECK(held.total.allocated_bytes_peak >= held.total.allocated_bytes);
  CHECK(held.history == 1);
  CHECK_OK(devrt_memory_snapshot(kCpu, &json));
  CHECK(json != NULL && strstr(json, "\"device\":\"cpu:0\",\"history\":true") != NULL);
  devrt_string_free(json);
  devrt_workspace_release(block);
  CHECK_OK(devrt_memory_stats(kCpu, &after));
  CHECK(after.total.allocated_bytes == before.total.allocated_bytes);
  CHECK(after.total.allocated_bytes_peak >= before.total.allocated_bytes + (1 << 20));
  CHECK_OK(devrt_set_memory_history(0));
  CHECK(devrt_set_memory_history(2) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "0 or 1, not 2") != NULL);
  CHECK(devrt_memory_stats(kCpu, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_memory_stats(missing, &after) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "cpu") != NULL);
  CHECK(devrt_memory_snapshot(kCpu, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_shutdown());
  CHECK_OK(devrt_shutdown());
  CHECK_OK(devrt_memory_stats(kCpu, &after));
  CHECK(after.total.allocated_bytes == 0 && after.total.reserved_bytes == 0 && after.cache_hits == 0);
}

static int deleted = 0;
static void count_delete(DLManagedTensor* self) {
  ++deleted;
  free(self->dl_tensor.data);
  free(self);
}

static void test_tensors(void) {
  int64_t shape[2] = {2, 3};
  float values[6] = {0, 1, 2, 3, 4, 5};
  float back[6];
  DLDataType f32;
  char text[16];
  devrt_tensor tensor = NULL;
  devrt_tensor imported = NULL;
  devrt_tensor copy = NULL;
  DLManagedTensor* exported = NULL;
  DLManagedTensor* managed = calloc(1, sizeof *managed);
  CHECK_OK(devrt_dtype_parse("float32", &f32));
  CHECK(f32.code == kDLFloat && f32.bits == 32 && f32.lanes == 1);
  CHECK_OK(devrt_dtype_to_string(f32, text, sizeof text));
  CHECK(strcmp(text, "float32") == 0);
  CHECK(devrt_tensor_empty(shape, -1, f32, kCpu, NULL, &tensor) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_tensor_empty(shape, 2, f32, kCpu, NULL, &tensor));
  {
    /* Texture layouts by name: unknown names and layouts for non-texture scopes are refused before
     * the device is asked; the CPU has no textures in either layout. */
    devrt_tensor texture = NULL;
    CHECK(devrt_tensor_empty_texture(shape, 2, f32, kCpu, "global.texture", "image3d", &texture) ==
          DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(devrt_last_error(), "unknown texture layout 'image3d'") != NULL);
    CHECK(devrt_tensor_empty_texture(shape, 2, f32, kCpu, "global", "image2d", &texture) ==
          DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(devrt_tensor_empty_texture(shape, 2, f32, kCpu, "global.texture", "image2d", &texture) ==
          DEVRT_STATUS_UNSUPPORTED);
    CHECK(devrt_tensor_empty_texture(shape, 2, f32, kCpu, "global.texture", NULL, &texture) ==
          DEVRT_STATUS_UNSUPPORTED);
    CHECK(texture == NULL);
    /* A texture over a CPU tensor: the CPU has no textures. */
    CHECK(devrt_tensor_as_texture(tensor, shape, 2, f32, NULL, NULL, &texture) == DEVRT_STATUS_UNSUPPORTED);
    CHECK(devrt_tensor_as_texture(tensor, shape, 2, f32, "global", NULL, &texture) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(devrt_tensor_as_texture(tensor, shape, 2, f32, NULL, NULL, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
    {
      size_t row = 1, layer = 1;
      CHECK_OK(devrt_tensor_texture_pitch(tensor, &row, &layer));
      CHECK(row == 0 && layer == 0);
      CHECK(devrt_tensor_texture_pitch(tensor, NULL, &layer) == DEVRT_STATUS_INVALID_ARGUMENT);
    }
  }
  CHECK(devrt_tensor_ndim(tensor) == 2 && devrt_tensor_shape(tensor)[1] == 3 && devrt_tensor_strides(tensor)[0] == 3);
  CHECK(devrt_tensor_nbytes(tensor) == sizeof values && devrt_tensor_is_contiguous(tensor));
  CHECK_OK(devrt_tensor_copy_from_host(tensor, values, sizeof values));
  CHECK(devrt_tensor_copy_from_host(tensor, values, 4) != DEVRT_STATUS_OK);
  /* TVM's CreateView: the last four floats as 2x2, and nothing past the end. */
  {
    int64_t view_shape[2] = {2, 2};
    int64_t too_long[1] = {7};
    devrt_tensor view = NULL;
    float tail[4];
    CHECK_OK(devrt_tensor_create_view(tensor, view_shape, 2, f32, 2 * sizeof(float), &view));
    CHECK_OK(devrt_tensor_copy_to_host(view, tail, sizeof tail));
    CHECK(memcmp(tail, values + 2, sizeof tail) == 0);
    devrt_tensor_release(view);
    CHECK(devrt_tensor_create_view(tensor, too_long, 1, f32, 0, &view) == DEVRT_STATUS_OUT_OF_RANGE);
    CHECK(devrt_tensor_create_view(tensor, view_shape, 2, f32, 12, &view) == DEVRT_STATUS_OUT_OF_RANGE);
    CHECK(devrt_tensor_create_view(NULL, view_shape, 2, f32, 0, &view) == DEVRT_STATUS_INVALID_ARGUMENT);
    /* Copies between shapes of one rank: the error names both shapes, not the ranks. */
    {
      int64_t five[1] = {5}, four[1] = {4};
      devrt_tensor a = NULL, b = NULL;
      CHECK_OK(devrt_tensor_empty(five, 1, f32, kCpu, NULL, &a));
      CHECK_OK(devrt_tensor_empty(four, 1, f32, kCpu, NULL, &b));
      CHECK(devrt_tensor_copy(b, a, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
      CHECK(strstr(devrt_last_error(), "[5] and [4]") != NULL);
      devrt_tensor_release(a);
      devrt_tensor_release(b);
    }
  }
  /* Export, then import the export: one storage, the deleter chain runs once at the end. */
  CHECK_OK(devrt_tensor_to_dlpack(tensor, &exported));
  CHECK_OK(devrt_tensor_from_dlpack(exported, 0, &imported));
  devrt_tensor_release(tensor);
  CHECK_OK(devrt_tensor_to(imported, kCpu, NULL, &copy));
  CHECK_OK(devrt_tensor_copy_to_host(copy, back, sizeof back));
  CHECK(memcmp(back, values, sizeof values) == 0);
  devrt_tensor_release(copy);
  devrt_tensor_release(imported);
  /* A producer's tensor: its deleter runs exactly once, also when the import is refused. */
  managed->dl_tensor.data = malloc(sizeof values);
  managed->dl_tensor.device.device_type = kDLCPU;
  managed->dl_tensor.ndim = 2;
  managed->dl_tensor.dtype = f32;
  managed->dl_tensor.shape = shape;
  managed->deleter = count_delete;
  CHECK_OK(devrt_tensor_from_dlpack(managed, 0, &imported));
  CHECK(deleted == 0);
  devrt_tensor_release(imported);
  CHECK(deleted == 1);
  managed = calloc(1, sizeof *managed);
  managed->dl_tensor.data = malloc(4);
  managed->dl_tensor.ndim = -3;
  managed->deleter = count_delete;
  CHECK(devrt_tensor_from_dlpack(managed, 0, &imported) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(deleted == 2);
  CHECK(devrt_tensor_from_dlpack(NULL, 0, &imported) == DEVRT_STATUS_INVALID_ARGUMENT);
}

/* An OpenCL C kernel, built and launched through the C API on the first OpenCL device. */
/* A graph of two launches of add_one(data, delta) captured, replayed, updated; `data` holds i + 5. */
static void test_graph(devrt_device device, devrt_function add_one, devrt_span data) {
  devrt_stream stream = NULL;
  devrt_stream_ref ref;
  devrt_graph graph = NULL;
  devrt_kernel_arg args[2];
  uint32_t grid[3] = {4, 1, 1};
  uint32_t block[3] = {16, 1, 1};
  size_t nodes = 0, launches = 0;
  int32_t mode = -1, host[64] = {0};
  devrt_span host_span = devrt_host_span(host, sizeof host);
  int capturing = -1, i, good = 1;

  CHECK(devrt_graph_begin_capture(NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_stream_create(device, &stream));
  if (stream == NULL) return;
  ref = devrt_stream_get_ref(stream);
  CHECK(devrt_graph_end_capture(&ref, &graph) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "not capturing") != NULL);
  CHECK_OK(devrt_graph_begin_capture(&ref));
  CHECK_OK(devrt_graph_is_capturing(&ref, &capturing));
  CHECK(capturing == 1);
  args[0] = devrt_arg_span(data, 0);
  args[1] = devrt_arg_i32(1);
  CHECK_OK(devrt_function_launch(add_one, grid, block, 0, args, 2, &ref));
  args[1] = devrt_arg_i32(2);
  CHECK_OK(devrt_function_launch(add_one, grid, block, 0, args, 2, &ref));
  CHECK(devrt_stream_synchronize(ref) == DEVRT_STATUS_INVALID_ARGUMENT); /* refused while capturing */
  CHECK_OK(devrt_graph_end_capture(&ref, &graph));
  if (graph == NULL) return;
  CHECK_OK(devrt_graph_info(graph, &nodes, &launches, &mode));
  CHECK(nodes == 2 && launches == 2 && mode >= DEVRT_GRAPH_MODE_NATIVE && mode <= DEVRT_GRAPH_MODE_MIXED);
  CHECK_OK(devrt_graph_launch(graph, &ref)); /* + 3 */
  args[1] = devrt_arg_i32(10);
  CHECK_OK(devrt_graph_update(graph, 1, args, 2));
  CHECK(devrt_graph_update(graph, 2, args, 2) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_graph_update(graph, 0, args, 1) == DEVRT_STATUS_INVALID_ARGUMENT);
  args[1] = devrt_arg_f32(1.0f);
  CHECK(devrt_graph_update(graph, 0, args, 2) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "shape") != NULL);
  CHECK_OK(devrt_graph_launch(graph, &ref)); /* + 11 */
  CHECK_OK(devrt_copy(&data, 0, &host_span, 0, sizeof host, &ref));
  CHECK_OK(devrt_stream_synchronize(ref));
  for (i = 0; i < 64; ++i) good &= host[i] == i + 5 + 3 + 11;
  CHECK(good);
  devrt_graph_release(graph);
  devrt_graph_release(NULL);

  /* A buffer released while a graph touches it is kept by the graph until the graph goes. */
  {
    devrt_buffer scratch = NULL;
    uint64_t held = 0, held_before = 0, count = 0;
    CHECK_OK(devrt_graph_held_memory(device, &held_before, NULL));
    CHECK_OK(devrt_buffer_allocate(device, sizeof host, 0, &scratch));
    CHECK_OK(devrt_graph_begin_capture(&ref));
    args[0] = devrt_arg_span(devrt_buffer_span(scratch), 0);
    args[1] = devrt_arg_i32(1);
    CHECK_OK(devrt_function_launch(add_one, grid, block, 0, args, 2, &ref));
    CHECK_OK(devrt_graph_end_capture(&ref, &graph));
    devrt_buffer_release(scratch);
    CHECK_OK(devrt_graph_held_memory(device, &held, &count));
    CHECK(held == held_before + sizeof host && count >= 1);
    CHECK_OK(devrt_graph_launch(graph, &ref)); /* the memory is still the graph's */
    CHECK_OK(devrt_stream_synchronize(ref));
    devrt_graph_release(graph);
    CHECK_OK(devrt_graph_held_memory(device, &held, NULL));
    CHECK(held == held_before);
    CHECK(devrt_graph_held_memory((devrt_device){4, 99}, &held, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  }

  /* Stream-ordered: freed on the stream, the block serves the stream's next allocation. */
  {
    devrt_buffer first = NULL, second = NULL;
    devrt_stream_pool_figures pools;
    CHECK(devrt_buffer_allocate_on_stream(device, 0, &ref, &first) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(devrt_buffer_allocate_on_stream(device, 100, NULL, &first) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK_OK(devrt_buffer_allocate_on_stream(device, 1000, &ref, &first));
    if (first != NULL) {
      void* address = devrt_buffer_span(first).data;
      devrt_buffer_release(first);
      CHECK_OK(devrt_buffer_allocate_on_stream(device, 1000, &ref, &second));
      CHECK(second != NULL && devrt_buffer_span(second).data == address);
      CHECK_OK(devrt_stream_pool_stats(device, &pools));
      CHECK(pools.pool_bytes >= 1024 && pools.hits >= 1 && pools.misses >= 1);
      devrt_buffer_release(second);
    }
    CHECK(devrt_stream_pool_stats(device, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  }
  devrt_stream_release(stream);
}

static void test_launch(void) {
  static const char source[] = "__kernel void add_one(__global int* data, int delta) {\n"
                               "  data[get_global_id(0)] += delta;\n"
                               "}\n";
  devrt_device device = {4, 0};
  devrt_module module = NULL;
  devrt_function function = NULL;
  devrt_buffer buffer = NULL;
  devrt_span span;
  devrt_span host;
  devrt_kernel_arg args[2];
  uint32_t grid[3] = {4, 1, 1};
  uint32_t block[3] = {16, 1, 1};
  int32_t data[64];
  int i;
  int good = 1;
  if (!devrt_device_exists(device)) {
    printf("skip launch: no OpenCL device (%s)\n",
           devrt_backend_availability("opencl") == 0 ? "no device" : devrt_last_error());
    return;
  }
  CHECK(devrt_module_load(device, DEVRT_MODULE_OPENCL_C, "this is not C", 13, NULL, &module) != DEVRT_STATUS_OK);
  CHECK_OK(devrt_module_load(device, DEVRT_MODULE_OPENCL_C, source, sizeof source - 1, NULL, &module));
  CHECK(devrt_module_function(module, "missing", &function) != DEVRT_STATUS_OK);
  CHECK_OK(devrt_module_function(module, "add_one", &function));
  {
    uint32_t rewritten = 7;
    CHECK_OK(devrt_module_rewritten_instructions(module, &rewritten));
    CHECK(rewritten == 0); /* OpenCL C's pow is C's: nothing to define */
    CHECK(devrt_module_rewritten_instructions(module, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(devrt_module_rewritten_instructions(NULL, &rewritten) == DEVRT_STATUS_INVALID_ARGUMENT);
  }
  CHECK_OK(devrt_buffer_allocate(device, sizeof data, 0, &buffer));
  if (function == NULL || buffer == NULL) return;
  for (i = 0; i < 64; ++i) data[i] = i;
  span = devrt_buffer_span(buffer);
  host = devrt_host_span(data, sizeof data);
  CHECK_OK(devrt_copy(&host, 0, &span, 0, sizeof data, NULL));
  args[0] = devrt_arg_span(span, 0);
  args[1] = devrt_arg_i32(5);
  CHECK_OK(devrt_function_launch(function, grid, block, 0, args, 2, NULL));
  CHECK(devrt_function_launch(function, grid, block, 0, args, 65, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_copy(&span, 0, &host, 0, sizeof data, NULL));
  CHECK_OK(devrt_stream_synchronize(devrt_current_stream(device)));
  for (i = 0; i < 64; ++i) good &= data[i] == i + 5;
  CHECK(good);
  test_graph(device, function, span);
  devrt_buffer_release(buffer);
  devrt_function_release(function);
  devrt_module_release(module);
}

/* devrt_toolchain's functions exist only in builds with it (devrt_toolchain.h). */
#if DEVRT_TEST_TOOLCHAIN
static void test_toolchain(void) {
  devrt_tempdir dir = NULL;
  int major = 0;
  int minor = 0;
  int result = -1;
  CHECK(devrt_tc_available() == 1);
  CHECK_OK(devrt_tc_parse_compute_version("sm_86", &major, &minor));
  CHECK(major == 8 && minor == 6);
  CHECK_OK(devrt_tc_cuda_has_feature("tensorcore", "7.0", &result));
  CHECK(result == 1);
  CHECK(devrt_tc_cuda_has_feature("warp_drive", "7.0", &result) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_tc_parse_compute_version("10.0.a", &major, &minor));
  CHECK(major == 10 && minor == 0);
  CHECK_OK(devrt_tc_cuda_has_feature("fp8", "sm_90a", &result));
  CHECK(result == 1);
  {
    devrt_tc_compile_options options;
    memset(&options, 0, sizeof options);
    options.kind = 1; /* a static library is devrt_tc_create_staticlib's job */
    options.output = "never.a";
    CHECK(devrt_tc_compile(&options) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(devrt_tc_compile(NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  }
  CHECK_OK(devrt_tc_tempdir_create("capi-", &dir));
  CHECK(dir != NULL && strstr(devrt_tc_tempdir_path(dir), "capi-") != NULL);
  devrt_tc_tempdir_release(dir);
}
#endif

#ifdef DEVRT_TEST_TVM_CPU
/* Calls `function` of `library` (a vector add of TVM's layout: a, b, out) on three tensors of
 * 256 floats on `device`, and checks the sum; the tensors are released. */
static void check_tvm_vadd(devrt_tvm_library library, const char* function, devrt_device device) {
  devrt_tensor tensors[3] = {NULL, NULL, NULL};
  devrt_tvm_arg args[3];
  int64_t shape[1] = {256};
  DLDataType f32 = {kDLFloat, 32, 1};
  float a[256], b[256], c[256];
  int i, good = 1;
  for (i = 0; i < 256; ++i) a[i] = (float)i, b[i] = 0.5f;
  for (i = 0; i < 3; ++i) {
    CHECK_OK(devrt_tensor_empty(shape, 1, f32, device, NULL, &tensors[i]));
    args[i].kind = DEVRT_TVM_ARG_TENSOR;
    args[i].reserved = 0;
    args[i].value.tensor = tensors[i];
  }
  CHECK_OK(devrt_tensor_copy_from_host(tensors[0], a, sizeof a));
  CHECK_OK(devrt_tensor_copy_from_host(tensors[1], b, sizeof b));
  CHECK_OK(devrt_tvm_library_call(library, function, args, 3));
  CHECK_OK(devrt_tvm_library_synchronize(library));
  CHECK_OK(devrt_tensor_copy_to_host(tensors[2], c, sizeof c));
  for (i = 0; i < 256; ++i) good &= c[i] == (float)i + 0.5f;
  CHECK(good);
  CHECK(devrt_tvm_library_call(library, function, args, 2) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "num_args should be 3") != NULL);
  for (i = 0; i < 3; ++i) devrt_tensor_release(tensors[i]);
}
#endif

/* A CPU library TVM's layout (test/tvm/): its operator called with devrt tensors. */
static void test_tvm_library(void) {
#ifdef DEVRT_TEST_TVM_CPU
  devrt_tvm_library library = NULL;
  devrt_tensor tensors[3] = {NULL, NULL, NULL};
  devrt_tvm_arg args[3];
  const char* name = NULL;
  size_t count = 0;
  int64_t shape[1] = {256};
  DLDataType f32 = {kDLFloat, 32, 1};
  int i;
  CHECK(devrt_tvm_library_load("/nonexistent/lib.so", kCpu, &library) == DEVRT_STATUS_NOT_FOUND && library == NULL);
  CHECK_OK(devrt_tvm_library_load(DEVRT_TEST_TVM_CPU, kCpu, &library));
  if (library == NULL) return;
  CHECK_OK(devrt_tvm_library_function(library, 0, &name, &count));
  CHECK(count == 1 && name != NULL && strcmp(name, "cpu_vadd") == 0);
  CHECK(devrt_tvm_library_function(library, 1, &name, &count) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_tvm_library_kernel(library, 0, &name, NULL, &count) == DEVRT_STATUS_OUT_OF_RANGE && count == 0);
  check_tvm_vadd(library, "cpu_vadd", kCpu);
  {
    uint32_t rewritten = 7;
    CHECK_OK(devrt_tvm_library_rewritten_instructions(library, &rewritten));
    CHECK(rewritten == 0);
    CHECK(devrt_tvm_library_rewritten_instructions(library, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  }
  for (i = 0; i < 3; ++i) {
    CHECK_OK(devrt_tensor_empty(shape, 1, f32, kCpu, NULL, &tensors[i]));
    args[i].kind = DEVRT_TVM_ARG_TENSOR;
    args[i].reserved = 0;
    args[i].value.tensor = tensors[i];
  }
  args[0].kind = 9;
  CHECK(devrt_tvm_library_call(library, "cpu_vadd", args, 3) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_tvm_library_call(library, "no_such", args, 0) == DEVRT_STATUS_NOT_FOUND);
  CHECK(devrt_tvm_library_call(library, NULL, args, 0) == DEVRT_STATUS_INVALID_ARGUMENT);
  for (i = 0; i < 3; ++i) devrt_tensor_release(tensors[i]);
  devrt_tvm_library_release(library);
  devrt_tvm_library_release(NULL);
#else
  printf("skip TVM libraries: this build has no TVM-layout test library\n");
#endif
}

#ifdef DEVRT_TEST_TVM_VM_CPU
/* TVM's vm.time_evaluator: "main" timed, 2 repeats of 3 calls; too few results and NULLs refused. */
static void test_tvm_vm_timing(devrt_tvm_vm vm, const devrt_tvm_value* args) {
  devrt_time_evaluator_options options;
  devrt_time_evaluator_handle evaluator = NULL;
  double seconds[2] = {0, 0};
  devrt_time_evaluator_default_options(&options);
  options.number = 3;
  options.repeat = 2;
  CHECK_OK(devrt_time_evaluator_create(kCpu, &options, NULL, &evaluator));
  CHECK_OK(devrt_tvm_vm_time_function(vm, evaluator, "main", args, 2, seconds, 2));
  CHECK(seconds[0] > 0 && seconds[1] > 0);
  CHECK(devrt_tvm_vm_time_function(vm, evaluator, "main", args, 2, seconds, 1) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_tvm_vm_time_function(vm, evaluator, NULL, args, 2, seconds, 2) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_tvm_vm_time_function(vm, NULL, "main", args, 2, seconds, 2) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_tvm_vm_time_function(vm, evaluator, "none", args, 2, seconds, 2) == DEVRT_STATUS_NOT_FOUND);
  devrt_time_evaluator_release(evaluator);
}
#endif

/* The model library's Relax VM (test/tvm/tvm_vm_fixture.py): values made, passed, unpacked and
 * released; refusals of kinds, indices and NULLs. */
static void test_tvm_vm(void) {
#ifdef DEVRT_TEST_TVM_VM_CPU
  devrt_tvm_library library = NULL;
  devrt_tvm_vm vm = NULL;
  devrt_tensor tensors[2] = {NULL, NULL}, result_tensor = NULL;
  devrt_tvm_value args[2] = {NULL, NULL}, result = NULL, item = NULL, shape = NULL, number = NULL, unused = NULL;
  int64_t dims[1] = {256};
  const int64_t* got_dims = NULL;
  DLDataType f32 = {kDLFloat, 32, 1};
  float x[256], y[256], out[256];
  const char *name = NULL, *key = NULL;
  size_t count = 0, ndim = 0;
  int32_t kind = -1;
  int64_t integer = 0;
  double real = 0;
  int i, good = 1;
  for (i = 0; i < 256; ++i) x[i] = (float)i, y[i] = 0.25f;
  CHECK_OK(devrt_tvm_library_load(DEVRT_TEST_TVM_VM_CPU, kCpu, &library));
  CHECK_OK(devrt_tvm_vm_create(library, &vm));
  CHECK_OK(devrt_tvm_vm_function(vm, 0, &name, &count));
  CHECK(strcmp(name, "main") == 0 && count >= 7);
  CHECK(devrt_tvm_vm_function(vm, count, &name, NULL) == DEVRT_STATUS_OUT_OF_RANGE);
  for (i = 0; i < 2; ++i) {
    CHECK_OK(devrt_tensor_empty(dims, 1, f32, kCpu, NULL, &tensors[i]));
    CHECK_OK(devrt_tensor_copy_from_host(tensors[i], i == 0 ? x : y, sizeof x));
    CHECK_OK(devrt_tvm_value_from_tensor(tensors[i], &args[i]));
    devrt_tensor_release(tensors[i]); /* the value holds the tensor */
  }
  CHECK_OK(devrt_tvm_vm_call(vm, "main", args, 2, &result));
  test_tvm_vm_timing(vm, args);
  CHECK_OK(devrt_tvm_value_kind(result, &kind, &key));
  CHECK(kind == DEVRT_TVM_VALUE_TUPLE && strcmp(key, "") == 0);
  CHECK_OK(devrt_tvm_value_tuple_item(result, 0, &item, &count));
  CHECK(count == 3);
  CHECK_OK(devrt_tvm_value_tensor(item, &result_tensor));
  CHECK_OK(devrt_tensor_copy_to_host(result_tensor, out, sizeof out));
  for (i = 0; i < 256; ++i) good &= out[i] == (float)i + 0.75f;
  CHECK(good);
  CHECK(devrt_tvm_value_int(item, &integer) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "the value is a Tensor, not a int") != NULL);
  CHECK_OK(devrt_tvm_value_tuple_item(result, 1, &shape, NULL));
  CHECK_OK(devrt_tvm_value_shape(shape, &got_dims, &ndim));
  CHECK(ndim == 1 && got_dims[0] == 256);
  CHECK(devrt_tvm_value_tuple_item(result, 3, &item, NULL) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_tvm_vm_call(vm, "main", args, 1, &number) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "requires 2 inputs but only 1") != NULL);
  CHECK(devrt_tvm_vm_call(vm, "nothing", args, 0, &number) == DEVRT_STATUS_NOT_FOUND);
  CHECK(devrt_tvm_vm_call(vm, "main", NULL, 2, &number) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_tvm_vm_call(vm, NULL, args, 2, &number) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_tvm_value_from_float(2.5, &number));
  CHECK_OK(devrt_tvm_value_float(number, &real));
  CHECK(real == 2.5);
  devrt_tvm_value_release(number);
  CHECK_OK(devrt_tvm_value_from_int(-7, &number));
  CHECK_OK(devrt_tvm_value_int(number, &integer));
  CHECK(integer == -7);
  devrt_tvm_value_release(number);
  CHECK_OK(devrt_tvm_value_from_string("global", 6, &number));
  CHECK_OK(devrt_tvm_value_string(number, &name, &count));
  CHECK(count == 6 && strcmp(name, "global") == 0);
  CHECK(devrt_tvm_value_from_shape(NULL, 1, &shape) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_tvm_value_from_tuple(NULL, 2, &shape) == DEVRT_STATUS_INVALID_ARGUMENT);
  devrt_tvm_value_release(number);
  devrt_tvm_value_release(shape);
  devrt_tvm_value_release(item);
#ifdef DEVRT_TEST_TVM_PARAMS_DIR
  /* MLC's weights (test/tvm/params/: a, b, c), ordered as the model's _metadata lists them (c, a, b). */
  CHECK_OK(devrt_tvm_load_params(DEVRT_TEST_TVM_PARAMS_DIR, kCpu, &number));
  CHECK_OK(devrt_tvm_value_tuple_item(number, 0, &item, &count));
  CHECK(count == 3);
  CHECK_OK(devrt_tvm_value_tuple_item(item, 0, &shape, NULL));
  CHECK_OK(devrt_tvm_value_string(shape, &name, NULL));
  CHECK(strcmp(name, "a") == 0);
  devrt_tvm_value_release(shape);
  devrt_tvm_value_release(item);
  CHECK_OK(devrt_tvm_vm_model_params(vm, number, &item));
  CHECK_OK(devrt_tvm_value_tuple_item(item, 2, &shape, &count));
  CHECK(count == 3);
  CHECK_OK(devrt_tvm_value_kind(shape, &kind, NULL));
  CHECK(kind == DEVRT_TVM_VALUE_TENSOR);
  CHECK(devrt_tvm_vm_model_params(vm, args[0], &unused) == DEVRT_STATUS_INVALID_ARGUMENT && unused == NULL);
  devrt_tvm_value_release(shape);
  devrt_tvm_value_release(item);
  devrt_tvm_value_release(number);
  CHECK(devrt_tvm_load_params("/nonexistent", kCpu, &number) == DEVRT_STATUS_NOT_FOUND);
  CHECK(devrt_tvm_load_params(NULL, kCpu, &number) == DEVRT_STATUS_INVALID_ARGUMENT);
  number = NULL;
  shape = NULL;
  item = NULL;
#endif
  devrt_tvm_value_release(result);
  devrt_tvm_value_release(args[0]);
  devrt_tvm_value_release(args[1]);
  devrt_tvm_value_release(NULL);
  devrt_tensor_release(result_tensor);
  devrt_tvm_vm_release(vm);
  devrt_tvm_vm_release(NULL);
  CHECK(devrt_tvm_vm_create(NULL, &vm) == DEVRT_STATUS_INVALID_ARGUMENT);
  devrt_tvm_library_release(library);
#else
  printf("skip the Relax VM: this build has no TVM-layout model library\n");
#endif
}

/* The same CPU library as TVM >= 0.22 builds it (tvm-ffi; importing libtvm_ffi, which does not
 * exist here): tvm-ffi's stable C ABI example called with DLTensors the caller owns, and errors. */
static void test_tvm_ffi_library(void) {
#ifdef DEVRT_TEST_TVM_CPU_FFI
  devrt_tvm_library library = NULL;
  devrt_tvm_arg args[2];
  const char* name = NULL;
  size_t count = 0;
  int64_t shape[1] = {64};
  float x[64], y[64];
  DLTensor tx, ty;
  int i, good = 1;
  CHECK_OK(devrt_tvm_library_load(DEVRT_TEST_TVM_CPU_FFI, kCpu, &library));
  if (library == NULL) return;
  CHECK_OK(devrt_tvm_library_function(library, 1, &name, &count));
  CHECK(count == 2 && name != NULL && strcmp(name, "stable_add_one") == 0);
  for (i = 0; i < 64; ++i) x[i] = (float)i, y[i] = 0.0f;
  memset(&tx, 0, sizeof tx);
  tx.data = x;
  tx.device.device_type = kDLCPU;
  tx.ndim = 1;
  tx.dtype.code = kDLFloat;
  tx.dtype.bits = 32;
  tx.dtype.lanes = 1;
  tx.shape = shape;
  ty = tx;
  ty.data = y;
  args[0].kind = DEVRT_TVM_ARG_DLTENSOR;
  args[0].reserved = 0;
  args[0].value.dl_tensor = &tx;
  args[1] = args[0];
  args[1].value.dl_tensor = &ty;
  CHECK_OK(devrt_tvm_library_call(library, "stable_add_one", args, 2));
  for (i = 0; i < 64; ++i) good &= y[i] == (float)i + 1.0f;
  CHECK(good);
  args[0].kind = DEVRT_TVM_ARG_INT;
  args[0].value.i64 = 5;
  CHECK(devrt_tvm_library_call(library, "stable_add_one", args, 2) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "ValueError: Expects a Tensor input") != NULL);
  CHECK(devrt_tvm_library_call(library, "cpu_vadd", args, 2) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "RuntimeError: cpu_vadd: num_args should be 3") != NULL);
  devrt_tvm_library_release(library);
#else
  printf("skip tvm-ffi libraries: this build has no TVM-layout test library\n");
#endif
}

/* The device libraries of TVM's layout on a devrt-server's devices (meson test capi-remote runs
 * this program under test/remote/with_server.sh): each remote device whose kind on its server has
 * a library here runs its vadd; a CPU library is refused on it. */
static void test_tvm_remote(void) {
#if defined(DEVRT_TEST_TVM_CPU)
  const int32_t count = devrt_device_count(28);
  int32_t id;
  int ran = 0;
  for (id = 0; id < count; ++id) {
    devrt_device remote = {28, id};
    uint32_t rewritten = 0, expected_rewrites = 0;
    const char* path = NULL;
    char* json = NULL;
    devrt_tvm_library library = NULL;
    CHECK_OK(devrt_remote_describe(remote, &json));
    if (json == NULL) continue;
#ifdef DEVRT_TEST_TVM_VULKAN
    if (strstr(json, "\"kind\": \"vulkan\"") != NULL) path = DEVRT_TEST_TVM_VULKAN;
#endif
#ifdef DEVRT_TEST_TVM_OPENCL
    if (strstr(json, "\"kind\": \"opencl\"") != NULL) path = DEVRT_TEST_TVM_OPENCL;
#endif
    if (strstr(json, "\"kind\": \"vulkan\"") != NULL) expected_rewrites = 1; /* power_kernel's Pow */
    devrt_string_free(json);
    CHECK(devrt_tvm_library_load(DEVRT_TEST_TVM_CPU, remote, &library) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(devrt_last_error(), "compute in its host code, in this process") != NULL);
    if (path == NULL) continue;
    CHECK_OK(devrt_tvm_library_load(path, remote, &library));
    if (library == NULL) continue;
    check_tvm_vadd(library, "vadd", remote);
    CHECK_OK(devrt_tvm_library_rewritten_instructions(library, &rewritten));
    CHECK(rewritten == expected_rewrites);
    devrt_tvm_library_release(library);
    ++ran;
  }
  CHECK(ran > 0);
#else
  printf("skip TVM libraries on remote devices: this build has no TVM-layout test library\n");
#endif
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "remote") == 0) {
    test_tvm_remote();
    return check_report();
  }
  devrt_device vulkan = {7, 0};
  test_version_and_errors();
  test_devices_and_backends();
  test_memory(kCpu);
  if (devrt_device_exists(vulkan)) {
    test_memory(vulkan);
  } else {
    printf("skip vulkan memory: no Vulkan device\n");
  }
  test_timing(kCpu);
  test_workspace();
  test_memory_stats_and_shutdown();
  test_tensors();
  test_launch();
  test_tvm_library();
  test_tvm_ffi_library();
  test_tvm_vm();
#if DEVRT_TEST_TOOLCHAIN
  test_toolchain();
#else
  printf("skip toolchain: this devrt was built without devrt_toolchain\n");
#endif
  return check_report();
}
