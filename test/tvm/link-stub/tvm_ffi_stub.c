/* SPDX-License-Identifier: Apache-2.0 */
/* A link-time stand-in for libtvm_ffi.so: what TVM's generated code and tvm-ffi's C examples
 * import from it by name, so that the test libraries link as they do against the real one (and
 * record DT_NEEDED libtvm_ffi.so). It is never loaded: nothing at run time finds it (no RUNPATH
 * names this folder), which is the point: devrt must run these libraries where no libtvm_ffi is. */
#include <stdint.h>
#include <stdlib.h>

__attribute__((visibility("default"))) void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  (void)kind, (void)message;
  abort();
}

__attribute__((visibility("default"))) void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts,
                                                                              int32_t count) {
  (void)kind, (void)parts, (void)count;
  abort();
}

__attribute__((visibility("default"))) int TVMFFIObjectDecRef(void* object) {
  (void)object;
  abort();
}
