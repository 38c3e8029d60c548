// SPDX-License-Identifier: Apache-2.0
// The C API's Relax VM (devrt/devrt.h, devrt/tvm_vm.hpp): VMs over loaded libraries, and the
// values their functions take and return; unsupported in builds without -Dtvm.
#include <algorithm>

#include <devrt/config.hpp>

#include "capi_internal.hpp"

using namespace devrt;       // NOLINT(google-build-using-namespace)
using namespace devrt::capi; // NOLINT(google-build-using-namespace)

namespace {

#if DEVRT_WITH_TVM
using tvm::Value;

devrt_status give_value(devrt_tvm_value* out, const char* call, Value value) {
  if (out == nullptr) return null_argument(call, "out");
  return give_handle(out, call, std::move(value));
}

// A boxed value made of C input: null means the host was out of memory.
devrt_status give_boxed(devrt_tvm_value* out, const char* call, Value value) {
  if (value.is_null()) return fail(make_error(ErrorCode::out_of_memory, call, ": no memory"));
  return give_value(out, call, std::move(value));
}

// The values behind `count` handles at `args` into `out`; false with the error recorded for a
// null or unknown handle.
bool arguments(const devrt_tvm_value* args, std::size_t count, const char* call, std::vector<Value>& out) {
  if (args == nullptr && count != 0) {
    null_argument(call, "args");
    return false;
  }
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    devrt_tvm_value arg = resolve(args[i], call);
    if (arg == nullptr) return false;
    out.push_back(arg->value);
  }
  return true;
}

// The value behind `handle` when it is of `kind`; nullptr with the error recorded otherwise.
const Value* value_of(devrt_tvm_value handle, Value::Kind kind, const char* call, const void* out) {
  devrt_tvm_value resolved = resolve(handle, call);
  if (resolved == nullptr) return nullptr;
  if (out == nullptr) {
    null_argument(call, "out");
    return nullptr;
  }
  if (resolved->value.kind() != kind) {
    fail(make_error(ErrorCode::invalid_argument, call, ": the value is a ", Value::kind_name(resolved->value.kind()),
                    ", not a ", Value::kind_name(kind)));
    return nullptr;
  }
  return &resolved->value;
}
#endif

} // namespace

extern "C" {

#if DEVRT_WITH_TVM

devrt_status devrt_tvm_vm_create(devrt_tvm_library library, devrt_tvm_vm* out) {
  if ((library = resolve(library, "devrt_tvm_vm_create")) == nullptr) return devrt_last_error_code();
  if (out == nullptr) return null_argument("devrt_tvm_vm_create", "out");
  Result<tvm::VirtualMachine> vm = tvm::VirtualMachine::create(library->library);
  if (!vm.ok()) return fail(vm.status());
  std::vector<std::string> functions = vm->functions();
  return give_handle(out, "devrt_tvm_vm_create", std::move(*vm), std::move(functions));
}

void devrt_tvm_vm_release(devrt_tvm_vm vm) { delete retire(vm, "devrt_tvm_vm_release"); }

devrt_status devrt_tvm_vm_function(devrt_tvm_vm vm, size_t index, const char** name, size_t* count) {
  if ((vm = resolve(vm, "devrt_tvm_vm_function")) == nullptr) return devrt_last_error_code();
  if (count != nullptr) *count = vm->functions.size();
  if (index >= vm->functions.size()) {
    return fail(
        make_error(ErrorCode::out_of_range, "devrt_tvm_vm_function: index ", index, " of ", vm->functions.size()));
  }
  if (name != nullptr) *name = vm->functions[index].c_str();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_vm_call(devrt_tvm_vm vm, const char* name, const devrt_tvm_value* args, size_t num_args,
                               devrt_tvm_value* result) {
  if ((vm = resolve(vm, "devrt_tvm_vm_call")) == nullptr) return devrt_last_error_code();
  if (name == nullptr) return null_argument("devrt_tvm_vm_call", "name");
  if (result == nullptr) return null_argument("devrt_tvm_vm_call", "result");
  std::vector<Value> converted;
  if (!arguments(args, num_args, "devrt_tvm_vm_call", converted)) return devrt_last_error_code();
  Result<Value> value = vm->vm.call(name, converted);
  if (!value.ok()) return fail(value.status());
  return give_value(result, "devrt_tvm_vm_call", std::move(*value));
}

devrt_status devrt_tvm_vm_time_function(devrt_tvm_vm vm, devrt_time_evaluator_handle evaluator, const char* name,
                                        const devrt_tvm_value* args, size_t num_args, double* results,
                                        size_t capacity) {
  if ((vm = resolve(vm, "devrt_tvm_vm_time_function")) == nullptr) return devrt_last_error_code();
  if ((evaluator = resolve(evaluator, "devrt_tvm_vm_time_function")) == nullptr) return devrt_last_error_code();
  if (name == nullptr) return null_argument("devrt_tvm_vm_time_function", "name");
  if (results == nullptr) return null_argument("devrt_tvm_vm_time_function", "results");
  const int repeat = evaluator->evaluator.options().repeat;
  if (capacity < static_cast<std::size_t>(repeat)) {
    return fail(make_error(ErrorCode::out_of_range, "devrt_tvm_vm_time_function: room for ", capacity,
                           " results, and repeat = ", repeat));
  }
  std::vector<Value> converted;
  if (!arguments(args, num_args, "devrt_tvm_vm_time_function", converted)) return devrt_last_error_code();
  Result<std::vector<double>> measured = tvm::time_function(vm->vm, evaluator->evaluator, name, converted);
  if (!measured.ok()) return fail(measured.status());
  std::copy(measured->begin(), measured->end(), results);
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_load_params(const char* directory, devrt_device device, devrt_tvm_value* out) {
  if (directory == nullptr) return null_argument("devrt_tvm_load_params", "directory");
  if (out == nullptr) return null_argument("devrt_tvm_load_params", "out");
  Result<std::vector<tvm::Parameter>> params = tvm::load_params(directory, to_cpp(device));
  if (!params.ok()) return fail(params.status());
  std::vector<Value> pairs;
  pairs.reserve(params->size());
  for (const tvm::Parameter& p : *params) pairs.push_back(Value::tuple({Value::string(p.name), Value(p.tensor)}));
  return give_boxed(out, "devrt_tvm_load_params", Value::tuple(pairs));
}

devrt_status devrt_tvm_vm_model_params(devrt_tvm_vm vm, devrt_tvm_value params, devrt_tvm_value* out) {
  if ((vm = resolve(vm, "devrt_tvm_vm_model_params")) == nullptr) return devrt_last_error_code();
  const Value* pairs = value_of(params, Value::Kind::tuple, "devrt_tvm_vm_model_params", out);
  if (pairs == nullptr) return devrt_last_error_code();
  std::vector<tvm::Parameter> named;
  for (const Value& pair : pairs->tuple()) {
    const std::span<const Value> items = pair.tuple();
    if (items.size() != 2 || items[0].kind() != Value::Kind::string || items[1].kind() != Value::Kind::tensor) {
      return fail(make_error(ErrorCode::invalid_argument,
                             "devrt_tvm_vm_model_params: the parameters are no (name, tensor) tuples"));
    }
    named.push_back({std::string(items[0].string()), items[1].tensor()});
  }
  Result<Value> ordered = tvm::model_params(vm->vm, named);
  if (!ordered.ok()) return fail(ordered.status());
  return give_value(out, "devrt_tvm_vm_model_params", std::move(*ordered));
}

devrt_status devrt_tvm_value_from_int(int64_t value, devrt_tvm_value* out) {
  return give_value(out, "devrt_tvm_value_from_int", Value(value));
}

devrt_status devrt_tvm_value_from_float(double value, devrt_tvm_value* out) {
  return give_value(out, "devrt_tvm_value_from_float", Value(value));
}

devrt_status devrt_tvm_value_from_string(const char* text, size_t length, devrt_tvm_value* out) {
  if (text == nullptr && length != 0) return null_argument("devrt_tvm_value_from_string", "text");
  return give_boxed(out, "devrt_tvm_value_from_string", Value::string(std::string_view(text, length)));
}

devrt_status devrt_tvm_value_from_shape(const int64_t* dims, size_t ndim, devrt_tvm_value* out) {
  if (dims == nullptr && ndim != 0) return null_argument("devrt_tvm_value_from_shape", "dims");
  return give_boxed(out, "devrt_tvm_value_from_shape", Value::shape(std::span<const std::int64_t>(dims, ndim)));
}

devrt_status devrt_tvm_value_from_tensor(devrt_tensor tensor, devrt_tvm_value* out) {
  if ((tensor = resolve(tensor, "devrt_tvm_value_from_tensor")) == nullptr) return devrt_last_error_code();
  return give_boxed(out, "devrt_tvm_value_from_tensor", Value(tensor->tensor));
}

devrt_status devrt_tvm_value_from_tuple(const devrt_tvm_value* items, size_t count, devrt_tvm_value* out) {
  if (items == nullptr && count != 0) return null_argument("devrt_tvm_value_from_tuple", "items");
  std::vector<Value> values;
  values.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    devrt_tvm_value item = resolve(items[i], "devrt_tvm_value_from_tuple");
    if (item == nullptr) return devrt_last_error_code();
    values.push_back(item->value);
  }
  return give_boxed(out, "devrt_tvm_value_from_tuple", Value::tuple(values));
}

void devrt_tvm_value_release(devrt_tvm_value value) { delete retire(value, "devrt_tvm_value_release"); }

devrt_status devrt_tvm_value_kind(devrt_tvm_value value, int32_t* kind, const char** type_key) {
  if ((value = resolve(value, "devrt_tvm_value_kind")) == nullptr) return devrt_last_error_code();
  if (kind != nullptr) *kind = static_cast<int32_t>(value->value.kind());
  if (type_key != nullptr) *type_key = value->value.type_key().empty() ? "" : value->value.type_key().data();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_value_int(devrt_tvm_value value, int64_t* out) {
  const Value* v = value_of(value, Value::Kind::integer, "devrt_tvm_value_int", out);
  if (v == nullptr) return devrt_last_error_code();
  *out = v->integer();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_value_float(devrt_tvm_value value, double* out) {
  const Value* v = value_of(value, Value::Kind::real, "devrt_tvm_value_float", out);
  if (v == nullptr) return devrt_last_error_code();
  *out = v->real();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_value_dtype(devrt_tvm_value value, DLDataType* out) {
  const Value* v = value_of(value, Value::Kind::dtype, "devrt_tvm_value_dtype", out);
  if (v == nullptr) return devrt_last_error_code();
  *out = to_c(v->dtype());
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_value_string(devrt_tvm_value value, const char** text, size_t* length) {
  const Value* v = value_of(value, Value::Kind::string, "devrt_tvm_value_string", text);
  if (v == nullptr) return devrt_last_error_code();
  *text = v->string().data(); // a std::string's: NUL-terminated
  if (length != nullptr) *length = v->string().size();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_value_shape(devrt_tvm_value value, const int64_t** dims, size_t* ndim) {
  const Value* v = value_of(value, Value::Kind::shape, "devrt_tvm_value_shape", dims);
  if (v == nullptr) return devrt_last_error_code();
  *dims = v->shape().data();
  if (ndim != nullptr) *ndim = v->shape().size();
  return DEVRT_STATUS_OK;
}

devrt_status devrt_tvm_value_tensor(devrt_tvm_value value, devrt_tensor* out) {
  const Value* v = value_of(value, Value::Kind::tensor, "devrt_tvm_value_tensor", out);
  if (v == nullptr) return devrt_last_error_code();
  return give_handle(out, "devrt_tvm_value_tensor", v->tensor());
}

devrt_status devrt_tvm_value_tuple_item(devrt_tvm_value value, size_t index, devrt_tvm_value* out, size_t* count) {
  const Value* v = value_of(value, Value::Kind::tuple, "devrt_tvm_value_tuple_item", &index);
  if (v == nullptr) return devrt_last_error_code();
  const std::span<const Value> items = v->tuple();
  if (count != nullptr) *count = items.size();
  if (out == nullptr) return DEVRT_STATUS_OK;
  if (index >= items.size()) {
    return fail(make_error(ErrorCode::out_of_range, "devrt_tvm_value_tuple_item: index ", index, " of ", items.size()));
  }
  return give_value(out, "devrt_tvm_value_tuple_item", items[index]);
}

#else

devrt_status devrt_tvm_vm_create(devrt_tvm_library, devrt_tvm_vm*) { return without_tvm("devrt_tvm_vm_create"); }
void devrt_tvm_vm_release(devrt_tvm_vm) {}
devrt_status devrt_tvm_vm_function(devrt_tvm_vm, size_t, const char**, size_t*) {
  return without_tvm("devrt_tvm_vm_function");
}
devrt_status devrt_tvm_vm_call(devrt_tvm_vm, const char*, const devrt_tvm_value*, size_t, devrt_tvm_value*) {
  return without_tvm("devrt_tvm_vm_call");
}
devrt_status devrt_tvm_load_params(const char*, devrt_device, devrt_tvm_value*) {
  return without_tvm("devrt_tvm_load_params");
}
devrt_status devrt_tvm_vm_model_params(devrt_tvm_vm, devrt_tvm_value, devrt_tvm_value*) {
  return without_tvm("devrt_tvm_vm_model_params");
}
devrt_status devrt_tvm_vm_time_function(devrt_tvm_vm, devrt_time_evaluator_handle, const char*, const devrt_tvm_value*,
                                        size_t, double*, size_t) {
  return without_tvm("devrt_tvm_vm_time_function");
}
devrt_status devrt_tvm_value_from_int(int64_t, devrt_tvm_value*) { return without_tvm("devrt_tvm_value_from_int"); }
devrt_status devrt_tvm_value_from_float(double, devrt_tvm_value*) { return without_tvm("devrt_tvm_value_from_float"); }
devrt_status devrt_tvm_value_from_string(const char*, size_t, devrt_tvm_value*) {
  return without_tvm("devrt_tvm_value_from_string");
}
devrt_status devrt_tvm_value_from_shape(const int64_t*, size_t, devrt_tvm_value*) {
  return without_tvm("devrt_tvm_value_from_shape");
}
devrt_status devrt_tvm_value_from_tensor(devrt_tensor, devrt_tvm_value*) {
  return without_tvm("devrt_tvm_value_from_tensor");
}
devrt_status devrt_tvm_value_from_tuple(const devrt_tvm_value*, size_t, devrt_tvm_value*) {
  return without_tvm("devrt_tvm_value_from_tuple");
}
void devrt_tvm_value_release(devrt_tvm_value) {}
devrt_status devrt_tvm_value_kind(devrt_tvm_value, int32_t*, const char**) {
  return without_tvm("devrt_tvm_value_kind");
}
devrt_status devrt_tvm_value_int(devrt_tvm_value, int64_t*) { return without_tvm("devrt_tvm_value_int"); }
devrt_status devrt_tvm_value_float(devrt_tvm_value, double*) { return without_tvm("devrt_tvm_value_float"); }
devrt_status devrt_tvm_value_dtype(devrt_tvm_value, DLDataType*) { return without_tvm("devrt_tvm_value_dtype"); }
devrt_status devrt_tvm_value_string(devrt_tvm_value, const char**, size_t*) {
  return without_tvm("devrt_tvm_value_string");
}
devrt_status devrt_tvm_value_shape(devrt_tvm_value, const int64_t**, size_t*) {
  return without_tvm("devrt_tvm_value_shape");
}
devrt_status devrt_tvm_value_tensor(devrt_tvm_value, devrt_tensor*) { return without_tvm("devrt_tvm_value_tensor"); }
devrt_status devrt_tvm_value_tuple_item(devrt_tvm_value, size_t, devrt_tvm_value*, size_t*) {
  return without_tvm("devrt_tvm_value_tuple_item");
}

#endif

} // extern "C"
