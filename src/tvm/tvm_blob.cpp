// SPDX-License-Identifier: Apache-2.0
// TVM's device blob (devrt/tvm.hpp): the module tree export_library packs into the library, read
// as TVM writes it. Strings and vectors are a little-endian uint64 count then the bytes or
// elements, maps a count then key/value pairs, DLDataType its 4 raw bytes. Two layouts:
//  - inline (TVM <= 0.21, library_module.cc's ProcessModuleBlob / ProcessLibraryBin): a module
//    count, then per module its type key and its SaveToBinary bytes, unframed; "_import_tree"
//    an entry of its own;
//  - framed (TVM >= 0.22, tvm-ffi's ProcessLibraryBin): the import tree first, then per module its
//    kind and (but for "_lib") its SaveToBytes as one length-prefixed string.
// Device modules write fmt, fmap (kernel name -> FunctionInfo), then their code. FunctionInfo is
// name, arg_types, launch_param_tags, and from TVM 0.21 (tvm-ffi) arg_extra_tags.
#include <devrt/tvm.hpp>

#include <string_view>
#include <utility>

#include "tvm/tvm_reader.hpp"

namespace devrt::tvm {
namespace {

using Reader = detail::ByteReader<BlobAbi>;
constexpr const char* kBlobPrefix = "TVM device blob";

bool read_strings(Reader& in, std::vector<std::string>& out, const char* what) {
  std::uint64_t n = 0;
  if (!in.count(n, 8, what)) return false;
  out.resize(static_cast<std::size_t>(n));
  for (std::string& s : out) {
    if (!in.string(s, what)) return false;
  }
  return true;
}

bool known_tag(const std::string& tag) {
  if (tag == "tir.use_dyn_shared_memory" || tag == "tirx.use_dyn_shared_memory") return true;
  return (tag.starts_with("blockIdx.") || tag.starts_with("threadIdx.")) && tag.size() == (tag[0] == 'b' ? 10u : 11u) &&
         tag.back() >= 'x' && tag.back() <= 'z';
}

// FunctionInfo::Save: name, arg_types, launch_param_tags; from TVM 0.21 arg_extra_tags (int32s).
bool read_function_info(Reader& in, KernelInfo& info) {
  std::string recorded_name; // empty in the blobs TVM writes: the map's key names the kernel
  if (!in.string(recorded_name, "FunctionInfo.name")) return false;
  std::uint64_t types = 0;
  if (!in.count(types, 4, "FunctionInfo.arg_types")) return false;
  info.arg_types.resize(static_cast<std::size_t>(types));
  for (DataType& type : info.arg_types) {
    unsigned char raw[4];
    if (!in.bytes(raw, 4, "FunctionInfo.arg_types")) return false;
    type.code = static_cast<DataTypeCode>(raw[0]);
    type.bits = raw[1];
    type.lanes = static_cast<std::uint16_t>(raw[2] | raw[3] << 8);
  }
  if (!read_strings(in, info.launch_tags, "FunctionInfo.launch_param_tags")) return false;
  for (const std::string& tag : info.launch_tags) {
    if (tag.ends_with(".use_cooperative_launch") || tag.ends_with(".use_programtic_dependent_launch")) {
      return in.fail(make_error(ErrorCode::unsupported, "TVM device blob: kernel '", info.name, "' asks for ", tag,
                                " (a cooperative or programmatic-dependent launch), which devrt does not make"));
    }
    if (!known_tag(tag)) {
      return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: kernel '", info.name,
                                "' has launch parameter tag '", tag,
                                "' (TVM's are blockIdx.x/y/z, threadIdx.x/y/z and tir[x].use_dyn_shared_memory)"));
    }
  }
  if (in.abi() == BlobAbi::packed) return true;
  std::uint64_t tags = 0;
  if (!in.count(tags, 4, "FunctionInfo.arg_extra_tags")) return false;
  for (std::uint64_t i = 0; i < tags; ++i) {
    std::uint32_t tag = 0;
    if (!in.u32(tag, "FunctionInfo.arg_extra_tags")) return false;
    if (tag == 1) {
      return in.fail(make_error(ErrorCode::unsupported, "TVM device blob: kernel '", info.name, "' takes argument ", i,
                                " as a CUDA tensor map (arg_extra_tags kTensorMap), which devrt does not encode"));
    }
    if (tag != 0) {
      return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: kernel '", info.name,
                                "' has arg_extra_tag ", tag, " for argument ", i, " (TVM's are 0 and 1)"));
    }
  }
  return true;
}

bool read_fmap(Reader& in, std::vector<KernelInfo>& kernels) {
  std::uint64_t n = 0;
  if (!in.count(n, 8 + 8 + 8 + 8, "fmap")) return false;
  kernels.resize(static_cast<std::size_t>(n));
  for (KernelInfo& kernel : kernels) {
    if (!in.string(kernel.name, "fmap key") || !read_function_info(in, kernel)) return false;
  }
  return true;
}

const KernelInfo* find_kernel(const std::vector<KernelInfo>& kernels, std::string_view name) {
  for (const KernelInfo& kernel : kernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

// Every kernel the fmap names has its code, and no code is a kernel's the fmap does not name.
bool check_kernel_code(Reader& in, const DeviceModule& module) {
  for (const KernelInfo& kernel : module.kernels) {
    bool found = false;
    for (const KernelCode& code : module.kernel_code) found = found || code.name == kernel.name;
    if (!found) {
      return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: the ", module.type_key,
                                " module describes kernel '", kernel.name, "' but holds no code for it"));
    }
  }
  for (const KernelCode& code : module.kernel_code) {
    if (find_kernel(module.kernels, code.name) == nullptr) {
      return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: the ", module.type_key,
                                " module holds code for '", code.name, "', which its function map does not describe"));
    }
  }
  return true;
}

// VulkanModuleNode::SaveToBinary: fmt, fmap, smap (name -> SPIRVShader{flag, data words}).
bool read_vulkan(Reader& in, DeviceModule& module) {
  if (!in.string(module.format, "vulkan format") || !read_fmap(in, module.kernels)) return false;
  std::uint64_t n = 0;
  if (!in.count(n, 8 + 4 + 8, "vulkan shader map")) return false;
  module.kernel_code.resize(static_cast<std::size_t>(n));
  for (KernelCode& shader : module.kernel_code) {
    std::uint64_t words = 0;
    if (!in.string(shader.name, "vulkan shader name") || !in.u32(shader.flags, "vulkan shader flag") ||
        !in.count(words, 4, "vulkan shader words")) {
      return false;
    }
    shader.code.resize(static_cast<std::size_t>(words) * 4);
    if (!in.bytes(shader.code.data(), shader.code.size(), "vulkan shader words")) return false;
    if (words < 5 || std::to_integer<unsigned>(shader.code[0]) != 0x03 ||
        std::to_integer<unsigned>(shader.code[3]) != 0x07) {
      return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: vulkan kernel '", shader.name,
                                "' is not SPIR-V (", words, " words, no SPIR-V magic)"));
    }
  }
  return check_kernel_code(in, module);
}

// OpenCLModuleNode::SaveToBinary: fmt ("cl": OpenCL C source), fmap, data.
bool read_opencl(Reader& in, DeviceModule& module) {
  return in.string(module.format, "opencl format") && read_fmap(in, module.kernels) &&
         in.blob(module.source, "opencl code");
}

// CUDAModuleNode / ROCMModuleNode::SaveToBinary: fmt ("ptx", "cubin", "fatbin"; "hsaco"), fmap,
// data (the whole module's code).
bool read_gpu(Reader& in, DeviceModule& module) {
  if (!in.string(module.format, "format") || !read_fmap(in, module.kernels) || !in.blob(module.source, "code")) {
    return false;
  }
  const bool cuda = module.type_key == "cuda";
  const std::string& f = module.format;
  if (cuda ? (f == "ptx" || f == "cubin" || f == "fatbin") : f == "hsaco") return true;
  if (cuda && f == "cuda") {
    return in.fail(make_error(ErrorCode::unsupported, "TVM device blob: the cuda module holds CUDA C++ source "
                                                      "(format \"cuda\"), which TVM compiles when it loads; devrt "
                                                      "loads ptx, cubin and fatbin"));
  }
  return in.fail(make_error(ErrorCode::unsupported, "TVM device blob: ", module.type_key, " code in format '", f,
                            "' (devrt loads ", cuda ? "ptx, cubin and fatbin" : "hsaco", ")"));
}

// WebGPUModuleNode::SaveToBinary (web/emcc/webgpu_runtime.cc): fmap, smap (name -> WGSL).
bool read_webgpu(Reader& in, DeviceModule& module) {
  module.format = "wgsl";
  if (!read_fmap(in, module.kernels)) return false;
  std::uint64_t n = 0;
  if (!in.count(n, 16, "webgpu shader map")) return false;
  module.kernel_code.resize(static_cast<std::size_t>(n));
  for (KernelCode& shader : module.kernel_code) {
    if (!in.string(shader.name, "webgpu shader name") || !in.blob(shader.code, "webgpu shader")) return false;
  }
  return check_kernel_code(in, module);
}

// NDArray::Save (SaveDLTensor): magic, reserved, a CPU DLDevice, ndim, dtype, shape, byte size,
// bytes. Skipped: devrt reads the constants of no module.
bool skip_ndarray(Reader& in) {
  std::uint64_t magic = 0, reserved = 0;
  unsigned char device[8], dtype[4];
  std::uint32_t ndim = 0;
  if (!in.u64(magic, "NDArray header") || !in.u64(reserved, "NDArray header") ||
      !in.bytes(device, 8, "NDArray device") || !in.u32(ndim, "NDArray ndim") || !in.bytes(dtype, 4, "NDArray dtype")) {
    return false;
  }
  if (magic != 0xDD5E40F096B4A13Full || ndim > 64) {
    return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: a constant is not an NDArray (magic 0x",
                              magic, ", ndim ", ndim, ")"));
  }
  for (std::uint32_t d = 0; d < ndim; ++d) {
    std::uint64_t extent = 0;
    if (!in.u64(extent, "NDArray shape")) return false;
  }
  return in.skip_string("NDArray data"); // an int64 byte count, then the bytes
}

// ConstLoaderModule::SaveToBinary (type key "metadata"): the constants of external (BYOC) code:
// variable names, NDArrays, then the symbols and the variables each needs.
bool skip_const_loader(Reader& in) {
  std::vector<std::string> names;
  std::uint64_t count = 0;
  if (!read_strings(in, names, "constant names") || !in.count(count, 48, "constants")) return false;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (!skip_ndarray(in)) return false;
  }
  std::vector<std::string> symbols;
  if (!read_strings(in, symbols, "constant symbols") || !in.count(count, 8, "constant symbols")) return false;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (!read_strings(in, names, "a symbol's constants")) return false;
  }
  return true;
}

// The import tree (CSR): one row per module of the tree plus one, each child a module's index.
bool read_import_tree(Reader& in, std::uint64_t tree_modules) {
  std::vector<std::uint64_t> rows, children;
  for (std::vector<std::uint64_t>* list : {&rows, &children}) {
    std::uint64_t n = 0;
    if (!in.count(n, 8, "import tree")) return false;
    list->resize(static_cast<std::size_t>(n));
    for (std::uint64_t& value : *list) {
      if (!in.u64(value, "import tree")) return false;
    }
  }
  bool ok = rows.size() == tree_modules + 1 && rows.front() == 0 && rows.back() == children.size();
  for (std::size_t i = 1; ok && i < rows.size(); ++i) ok = rows[i] >= rows[i - 1];
  for (std::uint64_t child : children) ok = ok && child < tree_modules;
  if (!ok) {
    return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: its import tree does not index its ",
                              tree_modules, " modules (corrupt)"));
  }
  return true;
}

// One module of key `key` (neither "_lib" nor "_import_tree") from `in`: a device module into
// out.modules, or a known non-device module into out.skipped. `framed`: `in` holds exactly this
// module's bytes (TVM >= 0.22), so a kind devrt does not know is skipped by its length. false:
// in.error() says why.
bool read_module(Reader& in, const std::string& key, DeviceBlob& out, bool framed) {
  // Executable::SaveToBinary writes one string of its sections (relax.VMExecutable from TVM 0.20;
  // framed, from TVM 0.22, its bytes are the module's).
  if (key == "relax.Executable" || key == "relax.VMExecutable") {
    if (!out.vm_key.empty()) {
      return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: a second Relax VM program (", key, ")"));
    }
    if (framed) { // the module's bytes are its SaveToBytes
      const std::span<const std::byte> all = in.take(in.left());
      out.vm_executable.assign(all.begin(), all.end());
    } else if (!in.blob(out.vm_executable, key.c_str())) {
      return false;
    }
    out.vm_key = key;
    out.skipped.push_back(key + ": the Relax VM's program (run it with devrt::tvm::VirtualMachine)");
    return true;
  }
  if (key == "metadata_module") { // MetadataModuleNode::SaveToBinary writes nothing
    out.skipped.push_back("metadata_module: AOT metadata (devrt runs no AOT executor)");
    return true;
  }
  if (key == "metadata") {
    if (!skip_const_loader(in)) return false;
    out.skipped.push_back("metadata: constants of external (BYOC) code, which devrt does not run");
    return true;
  }
  DeviceModule module;
  module.type_key = key;
  bool read = false;
  if (key == "vulkan") {
    read = read_vulkan(in, module);
  } else if (key == "opencl") {
    read = read_opencl(in, module);
  } else if (key == "webgpu") {
    read = read_webgpu(in, module);
  } else if (key == "cuda" || key == "hip" || key == "rocm" || key == "hsaco") {
    read = read_gpu(in, module);
  } else if (key == "metal") {
    return in.fail(make_error(ErrorCode::unsupported, "TVM device blob: metal kernels: devrt has no Metal backend"));
  } else if (framed) {
    out.skipped.push_back(key + ": not device code devrt runs (" + std::to_string(in.left()) + " bytes)");
    static_cast<void>(in.take(in.left()));
    return true;
  } else {
    return in.fail(make_error(ErrorCode::unsupported, "TVM device blob: module type '", key,
                              "' is unknown to devrt, and TVM records no length to skip it by"));
  }
  if (!read) return false;
  out.modules.push_back(std::move(module));
  return true;
}

// The framed layout (TVM >= 0.22): import tree, then per module its kind and its bytes.
bool read_framed(Reader& in, DeviceBlob& out) {
  std::uint64_t rows = 0;
  {
    Reader peek = in;
    if (!peek.count(rows, 8, "import tree")) return in.fail(peek.error());
  }
  if (rows == 0) return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: an empty import tree"));
  if (!read_import_tree(in, rows - 1)) return false;
  for (std::uint64_t i = 0; i + 1 < rows; ++i) {
    std::string kind;
    if (!in.string(kind, "module kind")) return false;
    if (kind == "_lib") {
      out.has_host_module = true;
      continue;
    }
    std::uint64_t n = 0;
    if (!in.count(n, 1, "module bytes")) return false;
    const std::size_t start = in.offset();
    Reader module(in.take(static_cast<std::size_t>(n)), in.abi(), kBlobPrefix);
    if (!read_module(module, kind, out, true)) return in.fail(module.error());
    if (module.left() != 0) {
      return in.fail(make_error(ErrorCode::invalid_argument, "TVM device blob: the ", kind, " module at byte ", start,
                                " leaves ", module.left(), " of its ", n, " bytes unread (corrupt)"));
    }
  }
  return true;
}

// The inline layout (TVM <= 0.21): a module count, then per module its key and its bytes.
bool read_inline(Reader& in, DeviceBlob& out) {
  std::uint64_t modules = 0;
  if (!in.count(modules, 8, "module count")) return false;
  for (std::uint64_t i = 0; i < modules; ++i) {
    std::string key;
    if (!in.string(key, "module type key")) return false;
    if (key == "_import_tree") { // the modules it indexes: every entry but itself
      if (!read_import_tree(in, modules - 1)) return false;
    } else if (key == "_lib") {
      out.has_host_module = true;
    } else if (!read_module(in, key, out, false)) {
      return false;
    }
  }
  return true;
}

} // namespace

Result<DeviceBlob> parse_device_blob(std::span<const std::byte> blob, BlobAbi abi) noexcept {
  Reader outer(blob, abi, kBlobPrefix);
  std::uint64_t nbytes = 0;
  if (!outer.u64(nbytes, "blob size")) return outer.error();
  if (nbytes > outer.left()) {
    return make_error(ErrorCode::invalid_argument, "TVM device blob: its header says ", nbytes, " bytes, ",
                      outer.left(), " follow (truncated or corrupt)");
  }
  Reader in(blob.subspan(8, static_cast<std::size_t>(nbytes)), abi, kBlobPrefix);
  // The framed layout opens with the import tree's row offsets, whose first is 0; the inline one
  // with a module count then a type key's length, never 0.
  bool framed = false;
  {
    Reader peek = in;
    std::uint64_t first = 0, second = 0;
    framed = peek.u64(first, "blob") && peek.u64(second, "blob") && second == 0;
  }
  DeviceBlob out;
  if (!(framed ? read_framed(in, out) : read_inline(in, out))) return in.error();
  if (in.left() != 0) {
    return make_error(ErrorCode::invalid_argument, "TVM device blob: ", in.left(),
                      " bytes after its modules (corrupt)");
  }
  return out;
}

} // namespace devrt::tvm
