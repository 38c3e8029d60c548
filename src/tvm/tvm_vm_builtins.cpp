// SPDX-License-Identifier: Apache-2.0
// The Relax VM's builtins (vm.builtin.*), with the semantics and the messages of TVM's
// src/runtime/relax_vm/builtin.cc of the unity era (MLC's libraries): shapes on the shape heap,
// structure checks, storage and tensor views, closures, tuples. Every index an executable gives
// is checked (TVM trusts its own compiler; devrt does not trust the file).
#include <algorithm>
#include <array>
#include <cstring>

#include <devrt/stream.hpp>

#include "tvm/tvm_vm_builtins.hpp"

namespace devrt::tvm::detail {
namespace {

// ---- Shapes --------------------------------------------------------------------------------

// MatchShapeCode and MakeShapeCode.
enum MatchCode : std::int64_t { kAssertEqualToImm = 0, kStoreToHeap = 1, kNoOp = 2, kAssertEqualToLoad = 3 };
enum MakeCode : std::int64_t { kUseImm = 0, kLoadShape = 1 };

// The heap's int64 slots (null heap: none).
Result<std::span<std::int64_t>> heap_of(const Value& heap) {
  if (heap.is_null()) return std::span<std::int64_t>();
  const Tensor& t = heap.tensor();
  if (heap.kind() != Value::Kind::tensor || t.dtype() != DataType::int64() || t.ndim() != 1 ||
      t.host_data() == nullptr) {
    return make_error(ErrorCode::invalid_argument, "the shape heap is a ", Value::kind_name(heap.kind()),
                      ", not a host int64 vector");
  }
  return std::span<std::int64_t>(t.host_data<std::int64_t>(), static_cast<std::size_t>(t.numel()));
}

Status heap_slot(std::span<std::int64_t> heap, std::int64_t slot) {
  if (slot < 0 || static_cast<std::uint64_t>(slot) >= heap.size()) {
    return make_error(ErrorCode::out_of_range, "shape heap slot ", slot, " is outside its ", heap.size());
  }
  return Status();
}

Status match_shape(VmState&, std::span<const Value> args, Value&) {
  DEVRT_RETURN_IF_ERROR(at_least(args, 3, "match_shape"));
  std::span<const std::int64_t> input;
  if (args[0].kind() == Value::Kind::tensor) {
    input = args[0].tensor().shape();
  } else {
    DEVRT_ASSIGN_OR_RETURN(input, shape_arg(args, 0, "match_shape"));
  }
  DEVRT_ASSIGN_OR_RETURN(std::span<std::int64_t> heap, heap_of(args[1]));
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t size, int_arg(args, 2, "match_shape"));
  if (size < 0 || static_cast<std::uint64_t>(size) > (args.size() - 3) / 2) {
    return make_error(ErrorCode::invalid_argument, "match_shape: ", size, " dimensions, ", args.size(), " arguments");
  }
  const std::string_view context = error_context(args, 3 + static_cast<std::size_t>(size) * 2);
  if (input.size() != static_cast<std::size_t>(size)) {
    return make_error(ErrorCode::invalid_argument, "RuntimeError: ", context, " match_cast shape size mismatch.");
  }
  for (std::size_t i = 0; i < input.size(); ++i) {
    DEVRT_ASSIGN_OR_RETURN(const std::int64_t code, int_arg(args, 3 + i * 2, "match_shape"));
    DEVRT_ASSIGN_OR_RETURN(const std::int64_t reg, int_arg(args, 4 + i * 2, "match_shape"));
    if (code == kNoOp) continue;
    if (code == kAssertEqualToImm) {
      if (input[i] != reg) {
        return make_error(ErrorCode::invalid_argument, "RuntimeError: ", context, " match_cast error,  shape[", i,
                          "] mismatch to specified constant.");
      }
      continue;
    }
    if (code != kStoreToHeap && code != kAssertEqualToLoad) {
      return make_error(ErrorCode::unsupported, "match_shape: code ", code, " (TVM's are 0 to 3)");
    }
    DEVRT_RETURN_IF_ERROR(heap_slot(heap, reg));
    std::int64_t& slot = heap[static_cast<std::size_t>(reg)];
    if (code == kStoreToHeap) {
      slot = input[i];
    } else if (input[i] != slot) {
      return make_error(ErrorCode::invalid_argument, "RuntimeError: ", context, " match_cast error,  shape[", i,
                        "] mismatch to a previous populated value.");
    }
  }
  return Status();
}

Status make_shape(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(at_least(args, 2, "make_shape"));
  DEVRT_ASSIGN_OR_RETURN(std::span<std::int64_t> heap, heap_of(args[0]));
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t size, int_arg(args, 1, "make_shape"));
  if (size < 0 || static_cast<std::uint64_t>(size) != (args.size() - 2) / 2 || args.size() % 2 != 0) {
    return make_error(ErrorCode::invalid_argument, "make_shape: ", size, " dimensions, ", args.size(), " arguments");
  }
  std::array<std::int64_t, Tensor::kMaxDims> dims{};
  if (size > Tensor::kMaxDims) return make_error(ErrorCode::invalid_argument, "make_shape: ", size, " dimensions");
  for (std::size_t i = 0; i < static_cast<std::size_t>(size); ++i) {
    DEVRT_ASSIGN_OR_RETURN(const std::int64_t code, int_arg(args, 2 + i * 2, "make_shape"));
    DEVRT_ASSIGN_OR_RETURN(const std::int64_t reg, int_arg(args, 3 + i * 2, "make_shape"));
    if (code == kUseImm) {
      dims[i] = reg;
    } else if (code == kLoadShape) {
      DEVRT_RETURN_IF_ERROR(heap_slot(heap, reg));
      dims[i] = heap[static_cast<std::size_t>(reg)];
    } else {
      return make_error(ErrorCode::unsupported, "make_shape: code ", code, " (TVM's are 0 and 1)");
    }
  }
  result = Value::shape(std::span<const std::int64_t>(dims.data(), static_cast<std::size_t>(size)));
  return boxed(result, "make_shape");
}

Status alloc_shape_heap(VmState& vm, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 2, "alloc_shape_heap"));
  DEVRT_RETURN_IF_ERROR(context_arg(args, 0, "alloc_shape_heap"));
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t size, int_arg(args, 1, "alloc_shape_heap"));
  if (size < 0) return make_error(ErrorCode::invalid_argument, "alloc_shape_heap: size ", size);
  DEVRT_ASSIGN_OR_RETURN(Tensor heap, Tensor::empty({size}, DataType::int64(), vm.devices.back()));
  if (size > 0) std::memset(heap.host_data(), 0, heap.nbytes());
  result = Value(heap);
  return boxed(result, "alloc_shape_heap");
}

Status shape_of(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 1, "shape_of"));
  DEVRT_ASSIGN_OR_RETURN(const Tensor* t, tensor_arg(args, 0, "shape_of"));
  result = Value::shape(t->shape());
  return boxed(result, "shape_of");
}

Status tensor_to_shape(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 1, "tensor_to_shape"));
  DEVRT_ASSIGN_OR_RETURN(const Tensor* t, tensor_arg(args, 0, "tensor_to_shape"));
  const DataType type = t->dtype();
  if (t->ndim() != 1 || type.code != DataTypeCode::signed_int ||
      (type.bits != 16 && type.bits != 32 && type.bits != 64)) {
    return make_error(ErrorCode::invalid_argument, "tensor_to_shape: a 1-d int16/32/64 tensor is needed");
  }
  DEVRT_ASSIGN_OR_RETURN(Tensor host, t->to(kHostDevice));
  std::vector<std::int64_t> dims(static_cast<std::size_t>(host.numel()));
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto* bytes = host.host_data<const unsigned char>() + i * (type.bits / 8);
    if (type.bits == 16) dims[i] = load_as<std::int16_t>(bytes);
    if (type.bits == 32) dims[i] = load_as<std::int32_t>(bytes);
    if (type.bits == 64) dims[i] = load_as<std::int64_t>(bytes);
  }
  result = Value::shape(dims);
  return boxed(result, "tensor_to_shape");
}

// ---- Structure checks ------------------------------------------------------------------------

Status check_tensor_info(VmState&, std::span<const Value> args, Value&) {
  if (args.size() != 3 && args.size() != 4) return exactly(args, 4, "check_tensor_info");
  const std::string_view context = error_context(args, args.size() - 1);
  if (args[0].kind() != Value::Kind::tensor) {
    return make_error(ErrorCode::invalid_argument, "TypeError: ", context, " expect a Tensor but get ",
                      type_key_of(args[0]));
  }
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t ndim, int_arg(args, 1, "check_tensor_info"));
  const Tensor& t = args[0].tensor();
  if (ndim != -1 && t.ndim() != ndim) {
    return make_error(ErrorCode::invalid_argument, "ValueError: ", context, " expect Tensor with ndim ", ndim,
                      " but get ", t.ndim());
  }
  if (args.size() == 4) {
    if (args[2].kind() != Value::Kind::dtype)
      return make_error(ErrorCode::invalid_argument, "check_tensor_info: no dtype");
    const DataType want = args[2].dtype();
    const bool is_void = want.code == DataTypeCode::opaque_handle && want.bits == 0;
    if (!is_void && t.dtype() != want) {
      return make_error(ErrorCode::invalid_argument, "ValueError: ", context, " expect Tensor with dtype ",
                        to_string(want), " but get ", to_string(t.dtype()));
    }
  }
  return Status();
}

Status check_shape_info(VmState&, std::span<const Value> args, Value&) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 3, "check_shape_info"));
  const std::string_view context = error_context(args, 2);
  if (args[0].kind() != Value::Kind::shape) {
    return make_error(ErrorCode::invalid_argument, "TypeError: ", context, " expect a Shape but get ",
                      type_key_of(args[0]));
  }
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t ndim, int_arg(args, 1, "check_shape_info"));
  if (ndim != -1 && args[0].shape().size() != static_cast<std::uint64_t>(ndim)) {
    return make_error(ErrorCode::invalid_argument, "ValueError: ", context, " expect Shape with ndim ", ndim,
                      " but get ", args[0].shape().size());
  }
  return Status();
}

Status check_tuple_info(VmState&, std::span<const Value> args, Value&) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 3, "check_tuple_info"));
  const std::string_view context = error_context(args, 2);
  if (args[0].kind() != Value::Kind::tuple) {
    return make_error(ErrorCode::invalid_argument, "TypeError: ", context, " expect a Tuple but get ",
                      type_key_of(args[0]));
  }
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t size, int_arg(args, 1, "check_tuple_info"));
  if (static_cast<std::int64_t>(args[0].tuple().size()) != size) {
    return make_error(ErrorCode::invalid_argument, "ValueError: ", context, " expect a Tuple with ", size,
                      " elements,  but get a Tuple with ", args[0].tuple().size(), " elements.");
  }
  return Status();
}

Status check_func_info(VmState&, std::span<const Value> args, Value&) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 2, "check_func_info"));
  if (args[0].kind() != Value::Kind::function) {
    return make_error(ErrorCode::invalid_argument, "TypeError: ", error_context(args, 1), " expect a Function but get ",
                      type_key_of(args[0]));
  }
  return Status();
}

// ---- Storage ---------------------------------------------------------------------------------

Status alloc_storage(VmState& vm, std::span<const Value> args, Value& result) {
  if (args.size() != 4 && args.size() != 5) return exactly(args, 5, "alloc_storage");
  DEVRT_RETURN_IF_ERROR(context_arg(args, 0, "alloc_storage"));
  DEVRT_ASSIGN_OR_RETURN(std::span<const std::int64_t> size, shape_arg(args, 1, "alloc_storage"));
  DEVRT_ASSIGN_OR_RETURN(std::int64_t index, int_arg(args, 2, "alloc_storage"));
  if (size.size() != 1 || size[0] < 0) {
    return make_error(ErrorCode::invalid_argument, "alloc_storage: the size is a shape of ", size.size(),
                      " dimensions (one, a byte count, is needed)");
  }
  if (index == -1) index = static_cast<std::int64_t>(vm.devices.size()) - 1;
  if (index < 0 || static_cast<std::uint64_t>(index) >= vm.devices.size()) {
    return make_error(ErrorCode::out_of_range, "The device index is out of VM physical devices list (index ", index,
                      ", ", vm.devices.size(), " devices)");
  }
  if (args.size() == 5 && args[4].kind() == Value::Kind::string && args[4].string() != "global") {
    return make_error(ErrorCode::unsupported, "alloc_storage: memory scope '", args[4].string(),
                      "' (the VM allocates global storage)");
  }
  StorageBox* box = new_box<StorageBox>(result, Value::Kind::object);
  if (box == nullptr) return make_error(ErrorCode::out_of_memory, "alloc_storage: no host memory");
  DEVRT_ASSIGN_OR_RETURN(box->bytes,
                         Tensor::empty({size[0]}, DataType::uint8(), vm.devices[static_cast<std::size_t>(index)]));
  return Status();
}

Status alloc_tensor(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 4, "alloc_tensor"));
  if (args[0].kind() != Value::Kind::object || args[0].type_key() != "relax.Storage") {
    return make_error(ErrorCode::invalid_argument, "alloc_tensor: argument 0 is a ", type_key_of(args[0]),
                      ", not a relax.Storage");
  }
  const Tensor& bytes = unbox<StorageBox>(args[0])->bytes;
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t offset, int_arg(args, 1, "alloc_tensor"));
  DEVRT_ASSIGN_OR_RETURN(std::span<const std::int64_t> shape, shape_arg(args, 2, "alloc_tensor"));
  if (args[3].kind() != Value::Kind::dtype) return make_error(ErrorCode::invalid_argument, "alloc_tensor: no dtype");
  const DataType dtype = args[3].dtype();
  DEVRT_ASSIGN_OR_RETURN(const std::uint64_t needed, shape_bytes(shape, dtype, "alloc_tensor"));
  if (offset < 0 || needed > bytes.nbytes() || static_cast<std::uint64_t>(offset) > bytes.nbytes() - needed) {
    return make_error(ErrorCode::out_of_range, "storage allocation failure, attempted to allocate ", needed,
                      " at offset ", offset, " in region that is ", bytes.nbytes(), "bytes");
  }
  DEVRT_ASSIGN_OR_RETURN(Tensor view, bytes.create_view(shape, dtype, static_cast<std::uint64_t>(offset)));
  result = Value(view);
  return boxed(result, "alloc_tensor");
}

Status reshape(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 2, "reshape"));
  DEVRT_ASSIGN_OR_RETURN(const Tensor* t, tensor_arg(args, 0, "reshape"));
  DEVRT_ASSIGN_OR_RETURN(std::span<const std::int64_t> shape, shape_arg(args, 1, "reshape"));
  DEVRT_ASSIGN_OR_RETURN(Tensor view, t->create_view(shape, t->dtype()));
  result = Value(view);
  return boxed(result, "reshape");
}

// ---- Functions, tuples, values ------------------------------------------------------------------

Status make_closure(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(at_least(args, 1, "make_closure"));
  if (args[0].kind() != Value::Kind::function) {
    return make_error(ErrorCode::invalid_argument, "make_closure: argument 0 is a ", type_key_of(args[0]));
  }
  const FunctionBox& of = *unbox<FunctionBox>(args[0]);
  Value closure;
  FunctionBox* box = new_box<FunctionBox>(closure, Value::Kind::function);
  if (box == nullptr) return make_error(ErrorCode::out_of_memory, "make_closure: no host memory");
  box->index = of.index;
  box->bound.assign(args.begin() + 1, args.end());
  box->bound.insert(box->bound.end(), of.bound.begin(), of.bound.end());
  result = std::move(closure);
  return Status();
}

Status invoke_closure(VmState& vm, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(at_least(args, 2, "invoke_closure"));
  DEVRT_RETURN_IF_ERROR(context_arg(args, 0, "invoke_closure"));
  return invoke_value(vm, args[1], args.subspan(2), result);
}

Status call_tir_dyn(VmState& vm, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(at_least(args, 2, "call_tir_dyn"));
  DEVRT_ASSIGN_OR_RETURN(std::span<const std::int64_t> unpack, shape_arg(args, args.size() - 1, "call_tir_dyn"));
  std::vector<Value> all(args.begin() + 1, args.end() - 1);
  for (const std::int64_t d : unpack) all.emplace_back(d);
  return invoke_value(vm, args[0], all, result);
}

Status copy(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 1, "copy"));
  result = args[0];
  return Status();
}

Status null_value(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 0, "null_value"));
  result = Value();
  return Status();
}

Status read_if_cond(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 1, "read_if_cond"));
  DEVRT_ASSIGN_OR_RETURN(const bool taken, read_condition(args[0], "read_if_cond"));
  result = Value(std::int64_t{taken});
  return Status();
}

Status tuple_getitem(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 2, "tuple_getitem"));
  if (args[0].kind() != Value::Kind::tuple) {
    return make_error(ErrorCode::invalid_argument, "tuple_getitem: argument 0 is a ", type_key_of(args[0]));
  }
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t index, int_arg(args, 1, "tuple_getitem"));
  const std::span<const Value> items = args[0].tuple();
  if (index < 0 || static_cast<std::uint64_t>(index) >= items.size()) {
    return make_error(ErrorCode::out_of_range, "IndexError: indexing ", index, " on an array of size ", items.size());
  }
  result = items[static_cast<std::size_t>(index)];
  return Status();
}

Status make_tuple(VmState&, std::span<const Value> args, Value& result) {
  result = Value::tuple(args);
  return boxed(result, "make_tuple");
}

constexpr BuiltinEntry kBuiltins[] = {
    {"vm.builtin.alloc_shape_heap", alloc_shape_heap},
    {"vm.builtin.match_shape", match_shape},
    {"vm.builtin.make_shape", make_shape},
    {"vm.builtin.check_tensor_info", check_tensor_info},
    {"vm.builtin.check_shape_info", check_shape_info},
    {"vm.builtin.check_tuple_info", check_tuple_info},
    {"vm.builtin.check_func_info", check_func_info},
    {"vm.builtin.alloc_storage", alloc_storage},
    {"vm.builtin.alloc_tensor", alloc_tensor},
    {"vm.builtin.make_closure", make_closure},
    {"vm.builtin.invoke_closure", invoke_closure},
    {"vm.builtin.call_tir_dyn", call_tir_dyn},
    {"vm.builtin.shape_of", shape_of},
    {"vm.builtin.copy", copy},
    {"vm.builtin.reshape", reshape},
    {"vm.builtin.null_value", null_value},
    {"vm.builtin.read_if_cond", read_if_cond},
    {"vm.builtin.tuple_getitem", tuple_getitem},
    {"vm.builtin.make_tuple", make_tuple},
    {"vm.builtin.tensor_to_shape", tensor_to_shape},
    {"vm.builtin.attention_kv_cache_create", kv_cache_create},
    {"vm.builtin.attention_kv_cache_append", kv_cache_append},
    {"vm.builtin.attention_kv_cache_update", kv_cache_update},
    {"vm.builtin.attention_kv_cache_view", kv_cache_view},
    {"vm.builtin.attention_kv_cache_array_popn", kv_cache_array_popn},
    {"vm.builtin.attention_kv_cache_array_clear", kv_cache_array_clear},
};

} // namespace

std::span<const BuiltinEntry> vm_builtins() noexcept { return kBuiltins; }

Result<bool> read_condition(const Value& cond, std::string_view what) {
  if (cond.kind() == Value::Kind::integer) return cond.integer() != 0;
  if (cond.kind() != Value::Kind::tensor) {
    return make_error(ErrorCode::invalid_argument, what, ": the condition is a ", Value::kind_name(cond.kind()),
                      " (an int or a scalar integer tensor)");
  }
  const Tensor& t = cond.tensor();
  const DataType type = t.dtype();
  if ((type.code != DataTypeCode::signed_int && type.code != DataTypeCode::unsigned_int) || t.numel() != 1 ||
      type.lanes != 1 || type.bits > 64) {
    return make_error(ErrorCode::invalid_argument, what, ": the condition is a tensor of ", t.numel(),
                      " elements of another type than a scalar integer");
  }
  std::int64_t raw = 0;
  const std::size_t bytes = type.bits <= 8 ? 1 : type.bits / 8u;
  DEVRT_RETURN_IF_ERROR(t.copy_to_host(&raw, bytes));
  // The copy is ordered on the device's current stream: `raw` holds the value once it is done.
  DEVRT_RETURN_IF_ERROR(synchronize(current_stream(t.device())));
  return (raw & (bytes == 8 ? ~std::int64_t{0} : (std::int64_t{1} << (8 * bytes)) - 1)) != 0;
}

} // namespace devrt::tvm::detail
