// SPDX-License-Identifier: Apache-2.0
// The C API's libraries TVM built (devrt/devrt.h, devrt/tvm.hpp); unsupported in builds without
// -Dtvm.
#include <devrt/config.hpp>

#include "capi_internal.hpp"

using namespace devrt;       // NOLINT(google-build-using-namespace)
using namespace devrt::capi; // NOLINT(google-build-using-namespace)

namespace {

#if DEVRT_WITH_TVM
// An index into `items`, or out_of_range naming the call; *count is set either way.
template <class Items>
bool in_range(const Items& items, std::size_t index, std::size_t* count, const char* call) {
  if (count != nullptr) *count = items.size();
  if (index < items.size()) return true;
  fail(make_error(ErrorCode::out_of_range, call, ": index ", index, " of ", items.size()));
  return false;
}
#endif

} // namespace

extern "C" {

#if DEVRT_WITH_TVM

devrt_status devrt_tvm_library_load(const char* path, devrt_device device, devrt_tvm_library* out) {
  if (path == nullptr) return null_argument("devrt_tvm_library_load", "path");
  if (out == nullptr) return null_argument("devrt_tvm_library_load", "out");
  Result<tvm::Library> library = tvm::Library::load(path, to_cpp(device));
  if (!library.ok()) return fail(library.status());
  return give_handle(out, "devrt_tvm_library_load", std::move(*library));
}

void devrt_tvm_library_release(devrt_tvm_library library) { delete retire(library, "devrt_tvm_library_release"); }

devrt_status devrt_tvm_library_function(devrt_tvm_library library, size_t index, const char** name, size_t* count) {
  if ((library = resolve(library, "devrt_tvm_library_function")) == nullptr) return devrt_last_error_code();
  const std::vector<std::string>& functions = library->library.functions();
  if (!in_range(functions, index, count, "devrt_tvm_library_function")) return devrt_last_error_code();
  if (name != nullptr) *name = functions[index].c_str();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_library_kernel(devrt_tvm_library library, size_t index, const char** name, char** launch_tags,
                                      size_t* count) {
  if ((library = resolve(library, "devrt_tvm_library_kernel")) == nullptr) return devrt_last_error_code();
  const std::vector<tvm::KernelInfo>& kernels = library->library.kernels();
  if (!in_range(kernels, index, count, "devrt_tvm_library_kernel")) return devrt_last_error_code();
  if (name != nullptr) *name = kernels[index].name.c_str();
  if (launch_tags != nullptr) {
    std::string joined;
    for (const std::string& tag : kernels[index].launch_tags) joined += (joined.empty() ? "" : ",") + tag;
    *launch_tags = duplicate(joined);
    if (*launch_tags == nullptr)
      return fail(make_error(ErrorCode::out_of_memory, "devrt_tvm_library_kernel: no memory"));
  }
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_library_skipped(devrt_tvm_library library, size_t index, const char** reason, size_t* count) {
  if ((library = resolve(library, "devrt_tvm_library_skipped")) == nullptr) return devrt_last_error_code();
  const std::vector<std::string>& skipped = library->library.skipped();
  if (!in_range(skipped, index, count, "devrt_tvm_library_skipped")) return devrt_last_error_code();
  if (reason != nullptr) *reason = skipped[index].c_str();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_library_rewritten_instructions(devrt_tvm_library library, uint32_t* count) {
  if ((library = resolve(library, "devrt_tvm_library_rewritten_instructions")) == nullptr) {
    return devrt_last_error_code();
  }
  if (count == nullptr) return null_argument("devrt_tvm_library_rewritten_instructions", "count");
  *count = library->library.rewritten_instructions();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_library_call(devrt_tvm_library library, const char* name, const devrt_tvm_arg* args,
                                    size_t num_args) {
  if ((library = resolve(library, "devrt_tvm_library_call")) == nullptr) return devrt_last_error_code();
  if (name == nullptr) return null_argument("devrt_tvm_library_call", "name");
  if (args == nullptr && num_args != 0) return null_argument("devrt_tvm_library_call", "args");
  std::vector<tvm::Argument> converted;
  converted.reserve(num_args);
  for (std::size_t i = 0; i < num_args; ++i) {
    const devrt_tvm_arg& a = args[i];
    switch (a.kind) {
    case DEVRT_TVM_ARG_TENSOR: {
      devrt_tensor tensor = resolve(a.value.tensor, "devrt_tvm_library_call");
      if (tensor == nullptr) return devrt_last_error_code();
      converted.emplace_back(tensor->tensor);
      break;
    }
    case DEVRT_TVM_ARG_DLTENSOR:
      if (a.value.dl_tensor == nullptr) return null_argument("devrt_tvm_library_call", "a DLTensor argument");
      converted.emplace_back(a.value.dl_tensor);
      break;
    case DEVRT_TVM_ARG_INT: converted.emplace_back(a.value.i64); break;
    case DEVRT_TVM_ARG_FLOAT: converted.emplace_back(a.value.f64); break;
    default:
      return fail(make_error(ErrorCode::invalid_argument, "devrt_tvm_library_call: argument ", i, " has kind ", a.kind,
                             " (DEVRT_TVM_ARG_TENSOR, _DLTENSOR, _INT or _FLOAT)"));
    }
  }
  return to_status(library->library.call(name, converted));
}

devrt_status devrt_tvm_library_synchronize(devrt_tvm_library library) {
  if ((library = resolve(library, "devrt_tvm_library_synchronize")) == nullptr) return devrt_last_error_code();
  return to_status(library->library.synchronize());
}

#else

devrt_status devrt_tvm_library_load(const char*, devrt_device, devrt_tvm_library*) {
  return without_tvm("devrt_tvm_library_load");
}
void devrt_tvm_library_release(devrt_tvm_library) {}
devrt_status devrt_tvm_library_function(devrt_tvm_library, size_t, const char**, size_t*) {
  return without_tvm("devrt_tvm_library_function");
}
devrt_status devrt_tvm_library_kernel(devrt_tvm_library, size_t, const char**, char**, size_t*) {
  return without_tvm("devrt_tvm_library_kernel");
}
devrt_status devrt_tvm_library_skipped(devrt_tvm_library, size_t, const char**, size_t*) {
  return without_tvm("devrt_tvm_library_skipped");
}
devrt_status devrt_tvm_library_rewritten_instructions(devrt_tvm_library, uint32_t*) {
  return without_tvm("devrt_tvm_library_rewritten_instructions");
}
devrt_status devrt_tvm_library_call(devrt_tvm_library, const char*, const devrt_tvm_arg*, size_t) {
  return without_tvm("devrt_tvm_library_call");
}
devrt_status devrt_tvm_library_synchronize(devrt_tvm_library) { return without_tvm("devrt_tvm_library_synchronize"); }

#endif

} // extern "C"
