/* SPDX-License-Identifier: Apache-2.0 */
/* A tvm-ffi library that imports a function of libtvm_ffi devrt does not provide (its object
 * system's TVMFFIObjectDecRef, as C++ code over tvm-ffi's headers does): refused at load, naming it. */
#include <stdint.h>

int TVMFFIObjectDecRef(void* object);

__attribute__((visibility("default"))) int __tvm_ffi_release(void* self, const void* args, int32_t num_args,
                                                             void* result) {
  (void)self, (void)num_args, (void)result;
  return TVMFFIObjectDecRef((void*)args);
}
