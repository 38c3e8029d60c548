/* SPDX-License-Identifier: Apache-2.0 */
/* Each promise of <devrt/devrt.h> — every "returns", "never", "NULL is", "written only on
 * success", "" for unknown — checked as written, in the header's order. Runs on the CPU and on
 * OpenCL and Vulkan where present; also under ASan+UBSan and valgrind. */
#include <devrt/devrt.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* DLPack 1.0's DLManagedTensorVersioned (Debian's dlpack.h is 0.6 and lacks it). */
typedef struct Versioned {
  uint32_t major;
  uint32_t minor;
  void* manager_ctx;
  void (*deleter)(struct Versioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} Versioned;

static const devrt_device kCpu = {1, 0};
static const devrt_device kOpenCL = {4, 0};
static const devrt_device kVulkan = {7, 0};

static void* last_error_of_a_new_thread(void* unused) {
  (void)unused;
  /* "" and OK when this thread has had no failure. */
  return (void*)(size_t)(strcmp(devrt_last_error(), "") == 0 && devrt_last_error_code() == DEVRT_STATUS_OK);
}

static void rules_and_errors(void) {
  devrt_device parsed = {77, 77};
  pthread_t thread;
  void* clean = NULL;
  /* Failure: a code, and a message naming the call; success does not clear it. */
  CHECK(devrt_device_parse("nonsense:x", &parsed) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_last_error_code() == DEVRT_STATUS_INVALID_ARGUMENT && strstr(devrt_last_error(), "nonsense") != NULL);
  /* Out parameters are written only on success. */
  CHECK(parsed.kind == 77 && parsed.id == 77);
  CHECK_OK(devrt_device_parse("opencl:3", &parsed));
  CHECK(parsed.kind == 4 && parsed.id == 3);
  CHECK(devrt_last_error_code() == DEVRT_STATUS_INVALID_ARGUMENT);
  /* The last error is per thread. */
  CHECK(pthread_create(&thread, NULL, last_error_of_a_new_thread, NULL) == 0);
  CHECK(pthread_join(thread, &clean) == 0 && clean != NULL);
  CHECK(devrt_api_version() == DEVRT_C_API_VERSION);
  CHECK(strlen(devrt_version()) > 0 && devrt_version() == devrt_version()); /* static storage */
  CHECK(strcmp(devrt_status_name(DEVRT_STATUS_OK), "ok") == 0);
  CHECK(strcmp(devrt_status_name(-7), "") == 0 && strcmp(devrt_status_name(1000), "") == 0);
  devrt_string_free(NULL); /* accepted */
}

static void devices_and_attributes(void) {
  devrt_device parsed;
  int32_t number;
  int64_t value = 12345;
  int64_t xyz[3] = {-1, -1, -1};
  char small[4];
  size_t length = 0;
  char* json = NULL;
  CHECK_OK(devrt_device_parse("cpu", &parsed));
  CHECK(parsed.kind == 1 && parsed.id == 0); /* "cpu" is index 0 */
  CHECK(devrt_device_parse(NULL, &parsed) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_device_parse("cpu:0", NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strcmp(devrt_device_kind_name(2), "cuda") == 0);
  CHECK(strcmp(devrt_device_kind_name(0), "") == 0 && strcmp(devrt_device_kind_name(99), "") == 0);
  CHECK(strcmp(devrt_device_kind_name(-1), "") == 0 && strcmp(devrt_device_kind_name(INT32_MAX), "") == 0);
  CHECK(devrt_device_count(99) == 0 && devrt_device_count(-3) == 0); /* no backend: 0 */
  CHECK(devrt_device_count(1) == 1);
  CHECK(devrt_device_exists(kCpu) == 1);
  CHECK(devrt_device_exists((devrt_device){1, 9}) == 0 && devrt_device_exists((devrt_device){99, 0}) == 0);
  CHECK_OK(devrt_device_synchronize(kCpu));
  CHECK(devrt_device_synchronize((devrt_device){1, 9}) == DEVRT_STATUS_INVALID_ARGUMENT);
  if (devrt_device_exists(kOpenCL)) {
    devrt_status status = devrt_device_synchronize(kOpenCL); /* documented: may be UNSUPPORTED */
    CHECK(status == DEVRT_STATUS_OK || status == DEVRT_STATUS_UNSUPPORTED);
  }
  for (number = 0; number < DEVRT_ATTR_COUNT; ++number) {
    CHECK(strlen(devrt_attribute_name(number)) > 0);
    CHECK(devrt_attribute_type(number) >= DEVRT_ATTR_TYPE_BOOL && devrt_attribute_type(number) <= DEVRT_ATTR_TYPE_DIM3);
  }
  CHECK(strcmp(devrt_attribute_name(DEVRT_ATTR_COUNT), "") == 0 && strcmp(devrt_attribute_name(-1), "") == 0);
  CHECK(devrt_attribute_type(DEVRT_ATTR_COUNT) == -1 && devrt_attribute_type(-1) == -1);
  /* Not reported is an answer, not a failure: no last error is recorded, the value untouched. */
  CHECK(devrt_device_parse("x", &parsed) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_device_attribute_int(kCpu, DEVRT_ATTR_WARP_SIZE, &value) == DEVRT_ATTR_NOT_REPORTED);
  CHECK(value == 12345 && devrt_last_error_code() == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_device_attribute_int(kCpu, DEVRT_ATTR_EXIST, &value));
  CHECK(value == 1);
  CHECK(devrt_device_attribute_int(kCpu, DEVRT_ATTR_EXIST, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_device_attribute_int((devrt_device){1, 9}, DEVRT_ATTR_MAX_THREADS_PER_BLOCK, &value) ==
        DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_device_attribute_int(kCpu, 99, &value) != DEVRT_STATUS_OK);
  /* A string truncated to fit, NUL-terminated, with its full length. */
  CHECK_OK(devrt_device_attribute_string(kCpu, DEVRT_ATTR_DEVICE_NAME, small, sizeof small, &length));
  CHECK(strlen(small) == sizeof small - 1 && length >= strlen(small));
  CHECK_OK(devrt_device_attribute_string(kCpu, DEVRT_ATTR_DEVICE_NAME, small, sizeof small, NULL));
  CHECK_OK(devrt_device_attribute_dim3(kCpu, DEVRT_ATTR_MAX_THREAD_DIMENSIONS, xyz));
  CHECK(xyz[0] > 0 && xyz[1] > 0 && xyz[2] > 0);
  CHECK_OK(devrt_detect_target(kCpu, &json));
  CHECK(json != NULL && strstr(json, "\"kind\"") != NULL);
  devrt_string_free(json);
  json = NULL;
  CHECK(devrt_detect_target((devrt_device){99, 0}, &json) != DEVRT_STATUS_OK && json == NULL);
}

static void backends_and_plugins(void) {
  size_t count = devrt_backend_count();
  int32_t outcome = 55;
  char path[64];
  char other[64];
  char* text = NULL;
  size_t loaded = 0;
  CHECK(count >= 1);
  CHECK(devrt_backend_name(count) == NULL && devrt_backend_kind(count) == -1); /* past the end */
  CHECK(strcmp(devrt_backend_name(0), "cpu") == 0 && devrt_backend_kind(0) == 1);
  CHECK_OK(devrt_backend_availability("cpu"));
  CHECK(devrt_backend_availability("no_such_backend") == DEVRT_STATUS_NOT_FOUND);
  CHECK(devrt_backend_availability(NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_backend_load("cpu", &outcome));
  CHECK(outcome == DEVRT_PLUGIN_BUILT_IN);
  CHECK_OK(devrt_backend_load("cpu", NULL)); /* outcome may be NULL */
  outcome = 55;
  CHECK(devrt_backend_load("no_such_backend", &outcome) == DEVRT_STATUS_NOT_FOUND && outcome == 55);
  CHECK(devrt_plugin_load_file("/nonexistent/libdevrt_x.so", &outcome) != DEVRT_STATUS_OK && outcome == 55);
  CHECK_OK(devrt_backend_load_all(&loaded));
  CHECK_OK(devrt_backend_load_all(NULL));
  CHECK(devrt_plugin_loaded(devrt_plugin_count(), path, sizeof path, other, sizeof other) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_plugin_failure(devrt_plugin_failure_count(), path, sizeof path, other, sizeof other) ==
        DEVRT_STATUS_OUT_OF_RANGE);
  CHECK_OK(devrt_plugin_search_path(&text));
  CHECK(text != NULL);
  devrt_string_free(text);
}

static void memory_and_copies(devrt_device device) {
  devrt_buffer buffer = NULL;
  devrt_span span;
  devrt_span host;
  unsigned char bytes[64];
  devrt_stream_ref wrong;
  memset(bytes, 7, sizeof bytes);
  CHECK(devrt_buffer_allocate(device, 0, 0, &buffer) == DEVRT_STATUS_INVALID_ARGUMENT && buffer == NULL);
  CHECK(devrt_buffer_allocate(device, 64, 3, &buffer) != DEVRT_STATUS_OK && buffer == NULL); /* not a power of 2 */
  CHECK(devrt_buffer_allocate((devrt_device){device.kind, 99}, 64, 0, &buffer) != DEVRT_STATUS_OK && buffer == NULL);
  CHECK_OK(devrt_buffer_allocate(device, 64, 0, &buffer));
  devrt_buffer_release(NULL); /* a no-op */
  span = devrt_buffer_span(buffer);
  CHECK(span.size == 64 && span.device.kind == device.kind);
  host = devrt_host_span(bytes, sizeof bytes);
  CHECK(host.device.kind == 1 && host.data == bytes && host.size == sizeof bytes);
  /* Every range checked before anything moves. */
  CHECK(devrt_copy(&host, 0, &span, 8, 64, NULL) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_copy(&host, 1, &span, 0, 64, NULL) == DEVRT_STATUS_OUT_OF_RANGE);
  CHECK(devrt_copy(&host, 0, &host, 8, 16, NULL) == DEVRT_STATUS_INVALID_ARGUMENT); /* overlap */
  CHECK(devrt_copy(NULL, 0, &span, 0, 1, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_copy(&host, 0, &span, 0, 64, NULL));
  /* The stream must belong to the device that runs the copy. */
  wrong.device = device.kind == 1 ? (devrt_device){1, 1} : kCpu;
  wrong.handle = NULL;
  CHECK(devrt_copy(&host, 0, &span, 0, 64, &wrong) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "stream") != NULL);
  CHECK_OK(devrt_stream_synchronize(devrt_current_stream(device)));
  devrt_buffer_release(buffer);
}

static void copy_between_two_gpu_apis(void) {
  devrt_buffer from = NULL;
  devrt_buffer to = NULL;
  devrt_span a;
  devrt_span b;
  devrt_stream_ref cpu_stream = {{1, 0}, NULL};
  devrt_stream_ref destination = {{7, 0}, NULL};
  if (!devrt_device_exists(kOpenCL) || !devrt_device_exists(kVulkan)) {
    printf("skip OpenCL -> Vulkan copy: needs both devices\n");
    return;
  }
  CHECK_OK(devrt_buffer_allocate(kOpenCL, 64, 0, &from));
  CHECK_OK(devrt_buffer_allocate(kVulkan, 64, 0, &to));
  a = devrt_buffer_span(from);
  b = devrt_buffer_span(to);
  /* A staged copy runs on the destination's stream: a CPU stream is refused, not ignored. */
  CHECK(devrt_copy(&a, 0, &b, 0, 64, &cpu_stream) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_copy(&a, 0, &b, 0, 64, &destination));
  CHECK_OK(devrt_stream_synchronize(destination));
  devrt_buffer_release(to);
  devrt_buffer_release(from);
}

static void streams_and_events(void) {
  devrt_stream stream = NULL;
  devrt_event event = NULL;
  devrt_stream_ref ref;
  devrt_stream_ref missing = {{1, 9}, (void*)0x10};
  devrt_stream_ref unknown_kind = {{99, 0}, NULL};
  int done = -1;
  CHECK(devrt_stream_create((devrt_device){1, 9}, &stream) != DEVRT_STATUS_OK && stream == NULL);
  CHECK_OK(devrt_stream_create(kCpu, &stream));
  ref = devrt_stream_get_ref(stream);
  CHECK(ref.device.kind == 1);
  CHECK(devrt_current_stream(kCpu).handle == NULL); /* the default stream unless set */
  CHECK_OK(devrt_set_current_stream(ref));
  CHECK(devrt_current_stream(kCpu).handle == ref.handle);
  CHECK_OK(devrt_set_current_stream((devrt_stream_ref){kCpu, NULL})); /* back to the default */
  CHECK(devrt_set_current_stream(missing) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_set_current_stream(unknown_kind) != DEVRT_STATUS_OK);
  CHECK_OK(devrt_event_create(kCpu, &event));
  CHECK_OK(devrt_event_record(event, NULL));
  CHECK_OK(devrt_event_synchronize(event));
  CHECK_OK(devrt_event_query(event, &done));
  CHECK(done == 1);
  CHECK(devrt_event_query(event, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_event_wait(event, &ref));
  CHECK(devrt_event_record(NULL, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  devrt_event_release(event);
  devrt_event_release(NULL);
  devrt_stream_release(stream);
  devrt_stream_release(NULL);
}

static void workspaces_modules_launches(void) {
  devrt_workspace block = NULL;
  devrt_pool_stats stats;
  devrt_module module = NULL;
  devrt_function function = NULL;
  devrt_kernel_arg args[65];
  uint32_t grid[3] = {1, 1, 1};
  size_t i;
  CHECK_OK(devrt_workspace_allocate(kCpu, 100, &block));
  CHECK(devrt_workspace_span(block).size >= 100);
  devrt_workspace_release(block);
  devrt_workspace_release(NULL);
  CHECK_OK(devrt_workspace_stats(kCpu, &stats));
  CHECK(devrt_workspace_stats(kCpu, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_module_load(kCpu, 12345, "x", 1, NULL, &module) != DEVRT_STATUS_OK && module == NULL);
  CHECK(devrt_module_load(kCpu, DEVRT_MODULE_HOST_TABLE, NULL, 4, NULL, &module) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(devrt_module_load_file(kCpu, DEVRT_MODULE_SHARED_OBJECT, "/nonexistent.so", NULL, &module) != DEVRT_STATUS_OK);
  CHECK(module == NULL);
  devrt_module_release(NULL);
  devrt_function_release(NULL);
  CHECK(devrt_module_function(NULL, "k", &function) == DEVRT_STATUS_INVALID_ARGUMENT && function == NULL);
  for (i = 0; i < 65; ++i) args[i] = devrt_arg_i32((int32_t)i);
  CHECK(devrt_function_launch(NULL, grid, grid, 0, args, 65, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
}

static void tensors_and_dlpack(void) {
  int64_t shape[2] = {2, 3};
  DLDataType f32;
  DLDataType parsed = {9, 9, 9};
  devrt_tensor tensor = NULL;
  devrt_tensor other = NULL;
  DLManagedTensor* exported = NULL;
  void* versioned = NULL;
  char text[8];
  const char* bad[] = {"float33", "bfloat32", "complex32", "int0", "float32x0", "", "Float32", "int256"};
  size_t i;
  CHECK_OK(devrt_dtype_parse("float32", &f32));
  for (i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    CHECK(devrt_dtype_parse(bad[i], &parsed) == DEVRT_STATUS_INVALID_ARGUMENT);
    CHECK(parsed.code == 9 && parsed.bits == 9); /* not written */
  }
  CHECK_OK(devrt_dtype_parse("float8_e4m3fn", &parsed));
  CHECK(parsed.code == 10 && parsed.bits == 8 && parsed.lanes == 1);
  CHECK_OK(devrt_dtype_to_string(f32, text, sizeof text));
  CHECK(strcmp(text, "float32") == 0);
  CHECK_OK(devrt_dtype_to_string(f32, text, 4)); /* truncated to fit */
  CHECK(strcmp(text, "flo") == 0);
  CHECK(devrt_tensor_empty(shape, 65, f32, kCpu, NULL, &tensor) == DEVRT_STATUS_INVALID_ARGUMENT && tensor == NULL);
  CHECK(devrt_tensor_empty(NULL, 2, f32, kCpu, NULL, &tensor) == DEVRT_STATUS_INVALID_ARGUMENT && tensor == NULL);
  CHECK_OK(devrt_tensor_empty(shape, 2, f32, kCpu, NULL, &tensor));
  CHECK_OK(devrt_tensor_share(tensor, &other));
  CHECK(devrt_tensor_data(other) == devrt_tensor_data(tensor)); /* the same storage */
  devrt_tensor_release(other);
  devrt_tensor_release(NULL);
  /* A compact tensor exported unversioned says so with NULL strides; versioned always has them. */
  CHECK_OK(devrt_tensor_to_dlpack(tensor, &exported));
  CHECK(exported->dl_tensor.strides == NULL && exported->dl_tensor.shape[1] == 3);
  exported->deleter(exported);
  CHECK_OK(devrt_tensor_to_dlpack_versioned(tensor, &versioned));
  CHECK(((Versioned*)versioned)->major == 1 && ((Versioned*)versioned)->dl_tensor.strides != NULL);
  ((Versioned*)versioned)->deleter((Versioned*)versioned);
  /* A stream of another device is refused for a copy between two CPU tensors. */
  if (devrt_device_exists(kOpenCL)) {
    devrt_stream_ref opencl_stream = {{4, 0}, NULL};
    CHECK_OK(devrt_tensor_empty(shape, 2, f32, kCpu, NULL, &other));
    CHECK(devrt_tensor_copy(other, tensor, &opencl_stream) == DEVRT_STATUS_INVALID_ARGUMENT);
    devrt_tensor_release(other);
  }
  devrt_tensor_release(tensor);
}

int main(void) {
  rules_and_errors();
  devices_and_attributes();
  backends_and_plugins();
  memory_and_copies(kCpu);
  if (devrt_device_exists(kOpenCL)) memory_and_copies(kOpenCL);
  if (devrt_device_exists(kVulkan)) memory_and_copies(kVulkan);
  copy_between_two_gpu_apis();
  streams_and_events();
  workspaces_modules_launches();
  tensors_and_dlpack();
  return check_report();
}
