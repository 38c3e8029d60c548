/* SPDX-License-Identifier: Apache-2.0 */
/* The validation mode (run with DEVRT_VALIDATE=1): a released handle used again, released twice,
 * or passed as another handle type is DEVRT_STATUS_INVALID_ARGUMENT naming the call, not a crash;
 * a fresh handle in a reused slot still works. */
#include <devrt/devrt.h>

#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(void) {
  const devrt_device cpu = {1, 0};
  int64_t shape[1] = {4};
  DLDataType f32;
  devrt_tensor tensor = NULL;
  devrt_tensor again = NULL;
  devrt_stream stream = NULL;
  devrt_buffer buffer = NULL;
  devrt_event event = NULL;
  float values[4] = {1, 2, 3, 4};
  const char* mode = getenv("DEVRT_VALIDATE");
  if (mode == NULL || strcmp(mode, "1") != 0) {
    printf("skip: run with DEVRT_VALIDATE=1\n");
    return 77;
  }
  CHECK_OK(devrt_dtype_parse("float32", &f32));
  CHECK_OK(devrt_tensor_empty(shape, 1, f32, cpu, NULL, &tensor));
  CHECK_OK(devrt_tensor_copy_from_host(tensor, values, sizeof values));
  CHECK(devrt_tensor_ndim(tensor) == 1);
  devrt_tensor_release(tensor);
  /* Use after release. */
  CHECK(devrt_tensor_copy_from_host(tensor, values, sizeof values) == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(devrt_last_error(), "devrt_tensor_copy_from_host") != NULL);
  CHECK(strstr(devrt_last_error(), "use after release") != NULL);
  CHECK(devrt_tensor_ndim(tensor) == 0 && devrt_tensor_shape(tensor) == NULL);
  CHECK(devrt_last_error_code() == DEVRT_STATUS_INVALID_ARGUMENT);
  /* Double release: recorded, nothing freed twice. */
  devrt_tensor_release(tensor);
  CHECK(strstr(devrt_last_error(), "devrt_tensor_release") != NULL && strstr(devrt_last_error(), "double release"));
  /* The slot is reused by the next tensor; the stale handle still refuses. */
  CHECK_OK(devrt_tensor_empty(shape, 1, f32, cpu, NULL, &again));
  CHECK(again != tensor);
  CHECK(devrt_tensor_nbytes(again) == sizeof values && devrt_tensor_nbytes(tensor) == 0);
  /* A handle of another type. */
  CHECK_OK(devrt_stream_create(cpu, &stream));
  CHECK(devrt_tensor_ndim((devrt_tensor)(void*)stream) == 0);
  CHECK(strstr(devrt_last_error(), "wrong handle type") != NULL);
  CHECK(devrt_event_record((devrt_event)(void*)stream, NULL) == DEVRT_STATUS_INVALID_ARGUMENT);
  devrt_buffer_release((devrt_buffer)(void*)stream);
  CHECK(strstr(devrt_last_error(), "wrong handle type") != NULL);
  CHECK(devrt_stream_get_ref(stream).device.kind == 1); /* the stream itself was not touched */
  /* A value this library never made. */
  CHECK(devrt_tensor_ndim((devrt_tensor)(void*)0x1234567) == 0);
  CHECK(strstr(devrt_last_error(), "not a handle this library made") != NULL);
  /* The other handle types too. */
  CHECK_OK(devrt_buffer_allocate(cpu, 16, 0, &buffer));
  devrt_buffer_release(buffer);
  CHECK(devrt_buffer_span(buffer).size == 0 && devrt_last_error_code() == DEVRT_STATUS_INVALID_ARGUMENT);
  CHECK_OK(devrt_event_create(cpu, &event));
  devrt_event_release(event);
  CHECK(devrt_event_synchronize(event) == DEVRT_STATUS_INVALID_ARGUMENT);
  devrt_stream_release(stream);
  devrt_stream_release(stream);
  CHECK(strstr(devrt_last_error(), "double release") != NULL);
  devrt_tensor_release(again);
  return check_report();
}
