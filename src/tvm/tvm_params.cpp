// SPDX-License-Identifier: Apache-2.0
// MLC's weight format (devrt/tvm_vm.hpp's load_params), as TVM's ndarray_cache_support.cc reads
// it: `ndarray-cache.json` holds {"records": [shard, ...]}, a shard {"dataPath", "format":
// "raw-shard", "nbytes", "records": [param, ...]}, a param {"name", "shape", "dtype", "format":
// "raw" | "f32-to-bf16", "nbytes", "byteOffset"} whose bytes are the shard file's
// [byteOffset, byteOffset + nbytes); "f32-to-bf16" stores a float32 tensor's upper halves. Every
// size is checked against the shape, the dtype and the file before anything is read into it.
#include <cstdio>
#include <cstring>
#include <memory>

#include <devrt/stream.hpp>

#include "tvm/tvm_json.hpp"
#include "tvm/tvm_vm_value.hpp"

namespace devrt::tvm {
namespace {

using detail::Json;

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};

// The whole file at `path`; not_found naming it when there is none.
Result<std::vector<std::byte>> read_whole(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return make_error(ErrorCode::not_found, "MLC weights: ", path, ": no such file");
  std::vector<std::byte> bytes;
  std::byte chunk[1 << 16];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file.get())) > 0;) {
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  if (std::ferror(file.get()) != 0)
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", path, ": unreadable");
  return bytes;
}

Result<std::int64_t> integer_field(const Json& record, const char* key, const std::string& where) {
  const Json* v = record.find(key);
  if (v == nullptr || v->kind != Json::Kind::integer || v->integer < 0) {
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": no non-negative integer \"", key, "\"");
  }
  return v->integer;
}

Result<std::string> string_field(const Json& record, const char* key, const std::string& where) {
  const Json* v = record.find(key);
  if (v == nullptr || v->kind != Json::Kind::string) {
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": no string \"", key, "\"");
  }
  return v->text;
}

Result<const std::vector<Json>*> array_field(const Json& record, const char* key, const std::string& where) {
  const Json* v = record.find(key);
  if (v == nullptr || v->kind != Json::Kind::array) {
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": no array \"", key, "\"");
  }
  return &v->items;
}

// One parameter record of a shard whose bytes are `shard`: its tensor on `device`.
Status load_record(const Json& record, std::span<const std::byte> shard, const std::string& shard_name, Device device,
                   std::vector<Parameter>& out) {
  DEVRT_ASSIGN_OR_RETURN(std::string name, string_field(record, "name", shard_name));
  const std::string where = shard_name + ", record '" + name + "'";
  DEVRT_ASSIGN_OR_RETURN(const std::string dtype_name, string_field(record, "dtype", where));
  DEVRT_ASSIGN_OR_RETURN(const std::string format, string_field(record, "format", where));
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t nbytes, integer_field(record, "nbytes", where));
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t offset, integer_field(record, "byteOffset", where));
  DEVRT_ASSIGN_OR_RETURN(const std::vector<Json>* dims, array_field(record, "shape", where));
  std::vector<std::int64_t> shape;
  for (const Json& d : *dims) {
    if (d.kind != Json::Kind::integer || d.integer < 0) {
      return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": a shape of non-negative integers");
    }
    shape.push_back(d.integer);
  }
  Result<DataType> dtype = parse_data_type(dtype_name);
  if (!dtype.ok())
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": ", dtype.status().message());
  const bool bf16 = format == "f32-to-bf16";
  if (format != "raw" && !(bf16 && *dtype == DataType::float32())) {
    return make_error(ErrorCode::unsupported, "MLC weights: ", where, ": format '", format, "' for ", dtype_name,
                      " (devrt reads \"raw\", and \"f32-to-bf16\" for float32)");
  }
  if (static_cast<std::uint64_t>(offset) > shard.size() || static_cast<std::uint64_t>(nbytes) > shard.size() - offset) {
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": bytes [", offset, ", +", nbytes,
                      ") past the shard's end (", shard.size(), " bytes)");
  }
  // The record's size against its shape before anything of that shape is allocated.
  DEVRT_ASSIGN_OR_RETURN(const std::uint64_t numel, detail::shape_bytes(shape, DataType::uint8(), "MLC weights"));
  DEVRT_ASSIGN_OR_RETURN(const std::uint64_t size, detail::shape_bytes(shape, *dtype, "MLC weights"));
  const std::uint64_t stored = bf16 ? size / 2 : size;
  if (static_cast<std::uint64_t>(nbytes) != stored) {
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": ", nbytes, " bytes for ", numel,
                      " elements of ", dtype_name, (bf16 ? " stored as bfloat16" : ""));
  }
  DEVRT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::empty(shape, *dtype, device));
  const std::byte* bytes = shard.data() + offset;
  if (!bf16) {
    DEVRT_RETURN_IF_ERROR(tensor.copy_from_host(bytes, static_cast<std::size_t>(stored)));
  } else {
    std::vector<std::uint32_t> widened(static_cast<std::size_t>(tensor.numel()));
    for (std::size_t i = 0; i < widened.size(); ++i) {
      std::uint16_t half = 0;
      std::memcpy(&half, bytes + 2 * i, 2);
      widened[i] = static_cast<std::uint32_t>(half) << 16;
    }
    DEVRT_RETURN_IF_ERROR(tensor.copy_from_host(widened.data(), tensor.nbytes()));
    DEVRT_RETURN_IF_ERROR(synchronize(current_stream(device))); // the copy reads `widened`
  }
  for (const Parameter& p : out) {
    if (p.name == name)
      return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": a second record of it");
  }
  out.push_back({std::move(name), std::move(tensor)});
  return Status();
}

Status load_shard(const std::string& directory, const Json& shard, Device device, std::vector<Parameter>& out) {
  DEVRT_ASSIGN_OR_RETURN(const std::string path, string_field(shard, "dataPath", "ndarray-cache.json"));
  if (path.empty() || path.find('/') != std::string::npos || path == "..") {
    return make_error(ErrorCode::invalid_argument, "MLC weights: dataPath '", path,
                      "' is no file name of the directory");
  }
  DEVRT_ASSIGN_OR_RETURN(const std::string format, string_field(shard, "format", path));
  if (format != "raw-shard") {
    return make_error(ErrorCode::unsupported, "MLC weights: ", path, ": format '", format, "' (TVM's is raw-shard)");
  }
  DEVRT_ASSIGN_OR_RETURN(const std::int64_t nbytes, integer_field(shard, "nbytes", path));
  DEVRT_ASSIGN_OR_RETURN(const std::vector<Json>* records, array_field(shard, "records", path));
  DEVRT_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, read_whole(directory + "/" + path));
  if (bytes.size() != static_cast<std::uint64_t>(nbytes)) {
    return make_error(ErrorCode::invalid_argument, "MLC weights: ", path, ": ", bytes.size(),
                      " bytes, ndarray-cache.json says ", nbytes,
                      " (a corrupted parameter shard: not downloaded completely?)");
  }
  Status loaded;
  for (std::size_t i = 0; i < records->size() && loaded.ok(); ++i) {
    loaded = load_record((*records)[i], bytes, path, device, out);
  }
  // The copies read the shard's bytes, which go with this function: wait for them, on every path.
  const Status waited = synchronize(current_stream(device));
  return loaded.ok() ? waited : loaded;
}

} // namespace

Result<std::vector<Parameter>> load_params(std::string_view directory, Device device) noexcept {
  const std::string dir(directory);
  DEVRT_ASSIGN_OR_RETURN(const std::vector<std::byte> index, read_whole(dir + "/ndarray-cache.json"));
  DEVRT_ASSIGN_OR_RETURN(const Json json,
                         detail::parse_json(std::string_view(reinterpret_cast<const char*>(index.data()), index.size()),
                                            "MLC weights: ndarray-cache.json"));
  DEVRT_ASSIGN_OR_RETURN(const std::vector<Json>* shards, array_field(json, "records", "ndarray-cache.json"));
  std::vector<Parameter> out;
  for (const Json& shard : *shards) DEVRT_RETURN_IF_ERROR(load_shard(dir, shard, device, out));
  return out;
}

Result<ModelMetadata> model_metadata(VirtualMachine& vm) noexcept {
  DEVRT_ASSIGN_OR_RETURN(const Value metadata, vm.call("_metadata", {}));
  if (metadata.kind() != Value::Kind::string) {
    return make_error(ErrorCode::invalid_argument, "MLC weights: the model's _metadata is no JSON string");
  }
  DEVRT_ASSIGN_OR_RETURN(const Json json, detail::parse_json(metadata.string(), "MLC weights: _metadata"));
  DEVRT_ASSIGN_OR_RETURN(const std::vector<Json>* wanted, array_field(json, "params", "_metadata"));
  ModelMetadata out;
  for (const auto& [key, text] : {std::pair{"model_type", &out.model_type}, {"quantization", &out.quantization}}) {
    const Json* v = json.find(key);
    if (v != nullptr && v->kind == Json::Kind::string) *text = v->text;
  }
  const Json* context = json.find("context_window_size");
  if (context != nullptr && context->kind == Json::Kind::integer && context->integer > 0) {
    out.context_window_size = context->integer;
  }
  std::vector<ParameterSpec>& specs = out.params;
  for (const Json& w : *wanted) {
    ParameterSpec spec;
    DEVRT_ASSIGN_OR_RETURN(spec.name, string_field(w, "name", "_metadata"));
    const std::string where = "_metadata, '" + spec.name + "'";
    DEVRT_ASSIGN_OR_RETURN(const std::string dtype, string_field(w, "dtype", where));
    Result<DataType> parsed = parse_data_type(dtype);
    if (!parsed.ok()) return make_error(ErrorCode::invalid_argument, "MLC weights: ", where, ": dtype '", dtype, "'");
    spec.dtype = *parsed;
    DEVRT_ASSIGN_OR_RETURN(const std::vector<Json>* shape, array_field(w, "shape", where));
    for (const Json& extent : *shape) {
      // A symbolic dimension (a string) takes any extent.
      if (extent.kind == Json::Kind::string) {
        spec.shape.push_back(-1);
      } else if (extent.kind == Json::Kind::integer && extent.integer >= 0) {
        spec.shape.push_back(extent.integer);
      } else {
        return make_error(ErrorCode::invalid_argument, "MLC weights: ", where,
                          ": an extent neither a count nor a name");
      }
    }
    specs.push_back(std::move(spec));
  }
  return out;
}

Result<Value> model_params(VirtualMachine& vm, std::span<const Parameter> params) noexcept {
  DEVRT_ASSIGN_OR_RETURN(const ModelMetadata metadata, model_metadata(vm));
  std::vector<Value> ordered;
  for (const ParameterSpec& spec : metadata.params) {
    const Parameter* found = nullptr;
    for (const Parameter& p : params) found = p.name == spec.name ? &p : found;
    if (found == nullptr) return make_error(ErrorCode::not_found, "MLC weights: no parameter '", spec.name, "'");
    bool same =
        spec.shape.size() == static_cast<std::size_t>(found->tensor.ndim()) && found->tensor.dtype() == spec.dtype;
    for (std::size_t d = 0; same && d < spec.shape.size(); ++d) {
      same = spec.shape[d] < 0 || spec.shape[d] == found->tensor.shape()[d];
    }
    if (!same) {
      return make_error(ErrorCode::invalid_argument, "MLC weights: '", spec.name, "' is ",
                        to_string(found->tensor.dtype()), " of rank ", found->tensor.ndim(),
                        " with other extents than _metadata's ", to_string(spec.dtype), " of rank ", spec.shape.size());
    }
    ordered.emplace_back(found->tensor);
  }
  Value out = Value::tuple(ordered);
  if (out.is_null()) return make_error(ErrorCode::out_of_memory, "MLC weights: no host memory");
  return out;
}

} // namespace devrt::tvm
