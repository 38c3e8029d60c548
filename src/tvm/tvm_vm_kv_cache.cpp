// SPDX-License-Identifier: Apache-2.0
// The legacy attention KV cache of TVM's lm_support.cc (relax.vm.AttentionKVCache), which MLC's
// libraries of the unity era create in `_initialize_effect` and append to in `prefill` and
// `decode`: a tensor of reserved rows, the first fill_count filled. Append copies the value's rows
// after them on the device (the current stream, after the kernels that wrote the value), doubling
// the reservation when it runs out; view is the filled rows, as a view.
#include "tvm/tvm_vm_builtins.hpp"

namespace devrt::tvm::detail {
namespace {

Result<KvCacheBox*> cache_arg(std::span<const Value> args, std::size_t i, std::string_view builtin) {
  if (args[i].kind() != Value::Kind::object || args[i].type_key() != "relax.vm.AttentionKVCache") {
    return wrong_kind(args, i, builtin, "relax.vm.AttentionKVCache");
  }
  return unbox<KvCacheBox>(args[i]);
}

std::int64_t row_elements(const Tensor& t) {
  std::int64_t n = 1;
  for (std::size_t d = 1; d < t.shape().size(); ++d) n *= t.shape()[d];
  return n;
}

Status same_rows(const KvCacheBox& cache, const Tensor& value) {
  if (value.dtype() != cache.data.dtype()) return make_error(ErrorCode::invalid_argument, "dtype mismatch");
  if (value.ndim() != cache.data.ndim() || value.ndim() == 0) {
    return make_error(ErrorCode::invalid_argument, "the value has ", value.ndim(), " dimensions, the cache ",
                      cache.data.ndim());
  }
  for (std::int32_t d = 1; d < value.ndim(); ++d) {
    if (value.shape()[d] != cache.data.shape()[d]) {
      return make_error(ErrorCode::invalid_argument, "Dimension ", d, " mismatch");
    }
  }
  return Status();
}

// Copies `value` into the cache's rows from `row` on.
Status write_rows(KvCacheBox& cache, const Tensor& value, std::int64_t row) {
  const std::uint64_t offset =
      static_cast<std::uint64_t>(row * row_elements(cache.data)) * cache.data.dtype().size_bytes();
  DEVRT_ASSIGN_OR_RETURN(Tensor destination, cache.data.create_view(value.shape(), value.dtype(), offset));
  return destination.copy_from(value);
}

// AttentionKVCacheObj::Append.
Status append(KvCacheBox& cache, const Tensor& value) {
  DEVRT_RETURN_IF_ERROR(same_rows(cache, value));
  const std::int64_t rows = value.shape()[0];
  std::int64_t reserved = cache.data.shape()[0];
  if (reserved <= 0 && rows > 0) reserved = 1;
  while (cache.fill_count + rows > reserved) reserved *= 2;
  if (reserved != cache.data.shape()[0]) {
    std::vector<std::int64_t> shape(cache.data.shape().begin(), cache.data.shape().end());
    shape[0] = reserved;
    DEVRT_ASSIGN_OR_RETURN(Tensor grown, Tensor::empty(shape, cache.data.dtype(), cache.data.device()));
    DEVRT_ASSIGN_OR_RETURN(Tensor old_rows, grown.create_view(cache.data.shape(), cache.data.dtype()));
    DEVRT_RETURN_IF_ERROR(old_rows.copy_from(cache.data));
    cache.data = std::move(grown);
  }
  DEVRT_RETURN_IF_ERROR(write_rows(cache, value, cache.fill_count));
  cache.fill_count += rows;
  return Status();
}

// AttentionKVCacheObj::View.
Status view(const KvCacheBox& cache, std::span<const std::int64_t> shape, Value& result) {
  if (shape.empty() || shape[0] != cache.fill_count) {
    return make_error(ErrorCode::invalid_argument, "Requested shape do not match the filled count");
  }
  if (shape.size() != static_cast<std::size_t>(cache.data.ndim())) {
    return make_error(ErrorCode::invalid_argument, "the view has ", shape.size(), " dimensions, the cache ",
                      cache.data.ndim());
  }
  for (std::size_t d = 1; d < shape.size(); ++d) {
    if (shape[d] != cache.data.shape()[d]) return make_error(ErrorCode::invalid_argument, "Dimension ", d, " mismatch");
  }
  DEVRT_ASSIGN_OR_RETURN(Tensor filled, cache.data.create_view(shape, cache.data.dtype()));
  result = Value(filled);
  return boxed(result, "attention_kv_cache_view");
}

// Each cache of the tuple at args[0].
template <class Each>
Status for_each_cache(std::span<const Value> args, std::string_view builtin, Each each) {
  if (args[0].kind() != Value::Kind::tuple) return wrong_kind(args, 0, builtin, "Array of caches");
  const std::span<const Value> caches = args[0].tuple();
  for (std::size_t i = 0; i < caches.size(); ++i) {
    DEVRT_ASSIGN_OR_RETURN(KvCacheBox * cache, cache_arg(caches, i, builtin));
    DEVRT_RETURN_IF_ERROR(each(*cache));
  }
  return Status();
}

} // namespace

// AttentionKVCache::Create(init_data, reserve_shape, init_fill_count).
Status kv_cache_create(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 3, "attention_kv_cache_create"));
  DEVRT_ASSIGN_OR_RETURN(const Tensor* init, tensor_arg(args, 0, "attention_kv_cache_create"));
  DEVRT_ASSIGN_OR_RETURN(std::span<const std::int64_t> reserve, shape_arg(args, 1, "attention_kv_cache_create"));
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t fill, int_arg(args, 2, "attention_kv_cache_create"));
  Value made;
  KvCacheBox* cache = new_box<KvCacheBox>(made, Value::Kind::object);
  if (cache == nullptr) return make_error(ErrorCode::out_of_memory, "attention_kv_cache_create: no host memory");
  DEVRT_ASSIGN_OR_RETURN(cache->data, Tensor::empty(reserve, init->dtype(), init->device()));
  DEVRT_RETURN_IF_ERROR(append(*cache, *init));
  if (fill >= 0) {
    if (fill > cache->data.shape()[0]) {
      return make_error(ErrorCode::out_of_range, "attention_kv_cache_create: fill count ", fill, " past its ",
                        cache->data.shape()[0], " rows");
    }
    cache->fill_count = fill;
    cache->window_position = fill;
  }
  result = std::move(made);
  return Status();
}

Status kv_cache_append(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 2, "attention_kv_cache_append"));
  DEVRT_ASSIGN_OR_RETURN(KvCacheBox * cache, cache_arg(args, 0, "attention_kv_cache_append"));
  DEVRT_ASSIGN_OR_RETURN(const Tensor* value, tensor_arg(args, 1, "attention_kv_cache_append"));
  DEVRT_RETURN_IF_ERROR(append(*cache, *value));
  result = args[0];
  return Status();
}

// AttentionKVCacheObj::Update: the value replaces the filled rows (as many as it has).
Status kv_cache_update(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 2, "attention_kv_cache_update"));
  DEVRT_ASSIGN_OR_RETURN(KvCacheBox * cache, cache_arg(args, 0, "attention_kv_cache_update"));
  DEVRT_ASSIGN_OR_RETURN(const Tensor* value, tensor_arg(args, 1, "attention_kv_cache_update"));
  DEVRT_RETURN_IF_ERROR(same_rows(*cache, *value));
  if (value->shape()[0] != cache->fill_count || value->shape()[0] > cache->data.shape()[0]) {
    return make_error(ErrorCode::invalid_argument, "Requested shape do not match the filled count");
  }
  DEVRT_RETURN_IF_ERROR(write_rows(*cache, *value, 0));
  cache->fill_count = value->shape()[0];
  result = args[0];
  return Status();
}

Status kv_cache_view(VmState&, std::span<const Value> args, Value& result) {
  if (args.size() != 1 && args.size() != 2) {
    return make_error(ErrorCode::invalid_argument,
                      "ValueError: `vm.builtin.attention_kv_cache_view` expects 1 or 2 arguments, but got ",
                      args.size(), ".");
  }
  DEVRT_ASSIGN_OR_RETURN(KvCacheBox * cache, cache_arg(args, 0, "attention_kv_cache_view"));
  if (args.size() == 2) {
    DEVRT_ASSIGN_OR_RETURN(std::span<const std::int64_t> shape, shape_arg(args, 1, "attention_kv_cache_view"));
    return view(*cache, shape, result);
  }
  std::vector<std::int64_t> shape(cache->data.shape().begin(), cache->data.shape().end());
  shape[0] = cache->fill_count;
  return view(*cache, shape, result);
}

Status kv_cache_array_popn(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 2, "attention_kv_cache_array_popn"));
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t n, int_arg(args, 1, "attention_kv_cache_array_popn"));
  result = Value();
  return for_each_cache(args, "attention_kv_cache_array_popn", [n](KvCacheBox& cache) {
    if (n < 0 || n > cache.fill_count) {
      return make_error(ErrorCode::out_of_range, "attention_kv_cache_array_popn: ", n, " rows of ", cache.fill_count);
    }
    cache.fill_count -= n;
    return Status();
  });
}

Status kv_cache_array_clear(VmState&, std::span<const Value> args, Value& result) {
  DEVRT_RETURN_IF_ERROR(exactly(args, 1, "attention_kv_cache_array_clear"));
  result = Value();
  return for_each_cache(args, "attention_kv_cache_array_clear", [](KvCacheBox& cache) {
    cache.fill_count = 0;
    return Status();
  });
}

} // namespace devrt::tvm::detail
