// SPDX-License-Identifier: Apache-2.0
// Running a whole model TVM compiled: the Relax VM program (`relax.Executable`) a library carries
// as the first module of its blob (MLC's model libraries), interpreted over the library's
// operators on devrt's devices, as TVM's relax_vm::VirtualMachine runs it (docs/tvm-libraries.md).
//
//   devrt::Result<devrt::tvm::Library> lib = devrt::tvm::Library::load("gpt2-vulkan.so", device);
//   devrt::Result<devrt::tvm::VirtualMachine> vm = devrt::tvm::VirtualMachine::create(*lib);
//   devrt::Result<devrt::tvm::Value> caches = vm->call("_initialize_effect", {});
//   devrt::Result<devrt::tvm::Value> out = vm->call("prefill", {tokens, Value::shape({8}), *caches, params});
//
// Hosted platforms only; Meson feature `tvm`.
#ifndef DEVRT_TVM_VM_HPP
#define DEVRT_TVM_VM_HPP

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/dtype.hpp>
#include <devrt/status.hpp>
#include <devrt/tensor.hpp>
#include <devrt/tvm.hpp>

namespace devrt {
class TimeEvaluator; // devrt/timing.hpp
} // namespace devrt

namespace devrt::tvm {

namespace detail {
struct VmBox;
struct VmState;
// A boxed value's reference count, kept in devrt (no shared_ptr control block crosses into the
// caller's code, which may be built with RTTI where devrt is not). Thread-safe.
void retain(VmBox* box) noexcept;
void release(VmBox* box) noexcept;
} // namespace detail

// A value of the Relax VM: what its registers hold and its functions take and return. Copying
// shares the boxed kinds (strings, shapes, tensors, tuples, objects), as TVM's ObjectRefs do,
// by an atomic reference count.
// Thread-safe to copy and read from several threads; the objects inside (a KV cache) are the
// VM's to change while one of its calls runs.
class Value {
public:
  enum class Kind : std::uint8_t {
    null,     // TVM's None (vm.builtin.null_value, the void register)
    integer,  // int64
    real,     // float64
    dtype,    // a DLDataType constant
    string,   // a String constant (error contexts, _metadata's JSON)
    shape,    // a ShapeTuple
    tensor,   // an NDArray: a devrt Tensor
    tuple,    // an Array of values
    function, // a VM function, a packed function or a closure over one
    object,   // an opaque object of the VM's builtins: a KV cache, a storage
    context,  // the VM itself, as builtins receive it (kVMRegister)
  };

  Value() noexcept = default;
  Value(std::int64_t value) noexcept : kind_(Kind::integer), scalar_{.integer = value} {} // NOLINT
  Value(int value) noexcept : kind_(Kind::integer), scalar_{.integer = value} {}          // NOLINT
  Value(double value) noexcept : kind_(Kind::real), scalar_{.real = value} {}             // NOLINT
  Value(DataType value) noexcept : kind_(Kind::dtype), scalar_{.dtype = pack(value)} {}   // NOLINT
  Value(const Value& other) noexcept : kind_(other.kind_), scalar_(other.scalar_), box_(other.box_) {
    if (box_ != nullptr) detail::retain(box_);
  }
  Value(Value&& other) noexcept : kind_(other.kind_), scalar_(other.scalar_), box_(other.box_) {
    other.kind_ = Kind::null;
    other.box_ = nullptr;
  }
  Value& operator=(const Value& other) noexcept {
    Value copy(other);
    swap(copy);
    return *this;
  }
  Value& operator=(Value&& other) noexcept {
    Value moved(static_cast<Value&&>(other));
    swap(moved);
    return *this;
  }
  ~Value() {
    if (box_ != nullptr) detail::release(box_);
  }
  Value(const Tensor& tensor) noexcept; // NOLINT
  // Boxed values; out of host memory gives a null Value (kind() says so).
  static Value string(std::string_view text) noexcept;
  static Value shape(std::span<const std::int64_t> dims) noexcept;
  static Value shape(std::initializer_list<std::int64_t> dims) noexcept {
    return shape(std::span<const std::int64_t>(dims.begin(), dims.size()));
  }
  static Value tuple(std::span<const Value> items) noexcept;
  static Value tuple(std::initializer_list<Value> items) noexcept {
    return tuple(std::span<const Value>(items.begin(), items.size()));
  }

  Kind kind() const noexcept { return kind_; }
  bool is_null() const noexcept { return kind_ == Kind::null; }
  // The value of each kind; the zero value of the type for a Value of another kind.
  std::int64_t integer() const noexcept { return kind_ == Kind::integer ? scalar_.integer : 0; }
  double real() const noexcept { return kind_ == Kind::real ? scalar_.real : 0.0; }
  DataType dtype() const noexcept { return kind_ == Kind::dtype ? unpack(scalar_.dtype) : DataType{}; }
  std::string_view string() const noexcept;
  std::span<const std::int64_t> shape() const noexcept;
  const Tensor& tensor() const noexcept;
  std::span<const Value> tuple() const noexcept;
  // What an object or function is, in TVM's type keys ("relax.vm.AttentionKVCache",
  // "relax.Storage", "vm.Closure", "runtime.PackedFunc"); "" for other kinds.
  std::string_view type_key() const noexcept;

  // Internal: a boxed value of `kind`, taking over the reference `box` holds (devrt's VM makes
  // them).
  Value(Kind kind, detail::VmBox* box) noexcept : kind_(kind), box_(box) {}
  detail::VmBox* box() const noexcept { return box_; }

  // Names the kind ("tensor", "tuple", ...), for messages.
  static const char* kind_name(Kind kind) noexcept;

private:
  static constexpr std::uint32_t pack(DataType t) noexcept {
    return static_cast<std::uint32_t>(t.code) | static_cast<std::uint32_t>(t.bits) << 8 |
           static_cast<std::uint32_t>(t.lanes) << 16;
  }
  static constexpr DataType unpack(std::uint32_t v) noexcept {
    return DataType{static_cast<DataTypeCode>(v & 0xff), static_cast<std::uint8_t>(v >> 8),
                    static_cast<std::uint16_t>(v >> 16)};
  }

  void swap(Value& other) noexcept {
    const Value::Kind kind = kind_;
    const Scalar scalar = scalar_;
    detail::VmBox* box = box_;
    kind_ = other.kind_;
    scalar_ = other.scalar_;
    box_ = other.box_;
    other.kind_ = kind;
    other.scalar_ = scalar;
    other.box_ = box;
  }

  union Scalar { // the scalar of kind_ (a Value is 24 bytes: registers are copied on every call)
    std::int64_t integer;
    double real;
    std::uint32_t dtype;
  };
  Kind kind_ = Kind::null;
  Scalar scalar_{.integer = 0};
  detail::VmBox* box_ = nullptr;
};

// TVM's relax_vm::VirtualMachine over a loaded Library: its executable parsed and checked when
// created (every instruction, every name it calls resolved in the library or among devrt's
// builtins), its devices the library's device and the CPU host (TVM's device list: allocations
// name them by index, the shape heap lives on the host). Move-only. One call at a time per VM
// (TVM's VM is not reentrant either); distinct VMs may run on distinct threads.
class VirtualMachine {
public:
  // The VM of `library`'s relax.Executable. `library` must outlive the VM. Errors: not_found (the
  // library carries no VM program), invalid_argument (a malformed executable, naming where it
  // broke), unsupported (a layout, constant kind, opcode or argument kind devrt does not know,
  // kVMTIRFunc functions, names neither the library nor devrt provides: all of them listed).
  // Thread-safe.
  static Result<VirtualMachine> create(const Library& library) noexcept;

  VirtualMachine() noexcept;
  VirtualMachine(VirtualMachine&&) noexcept;
  VirtualMachine& operator=(VirtualMachine&&) noexcept;
  ~VirtualMachine();

  // The VM functions it can call ("prefill", "decode", ...), in the executable's order.
  std::vector<std::string> functions() const;
  // The parameter names of VM function `name` (empty for an unknown name).
  std::vector<std::string> parameters(std::string_view name) const;
  // The version string the executable carries ("0.14"); it does not identify the layout.
  const std::string& version() const noexcept;
  // The VM's devices: the library's device, then the CPU host.
  std::span<const Device> devices() const noexcept;

  // Runs VM function `name` on `args` and returns its result. Tensors the caller passes must be on
  // the VM's devices; results are on them (device work queued on the calling thread's current
  // stream of the library's device, as Library::call queues it: synchronize before reading).
  // Errors name the function, the instruction and the call that failed; TVM's own checks come
  // back in TVM's words (a shape mismatch: "RuntimeError: ErrorContext(...) match_cast error").
  // not_found for a name that is no VM function. Not reentrant (see above).
  Result<Value> call(std::string_view name, std::span<const Value> args) noexcept;
  Result<Value> call(std::string_view name, std::initializer_list<Value> args) noexcept {
    return call(name, std::span<const Value>(args.begin(), args.size()));
  }

  // Instructions run by this VM's calls so far (all functions, nested calls included).
  std::uint64_t instructions_run() const noexcept;

private:
  explicit VirtualMachine(std::unique_ptr<detail::VmState> state) noexcept;
  std::unique_ptr<detail::VmState> state_;
};

// TVM's vm.time_evaluator(name, dev, ...)(*args): seconds per call of VM function `name` on
// `args`, one per repeat, by `evaluator`'s rules (devrt/timing.hpp: made for the VM's library
// device; it keeps TVM's grown `number` between runs). A call is the whole function with its host
// work (shape heap, storage, KV-cache growth), its device work queued on the evaluator's stream:
// timed on the device's clock from a mark before the call to one after its last kernel (the device
// waits for the host in between, so the host work counts), or on the host's clock. Before each
// call every KV cache among `args` (or in their tuples) is put back to the length it had when the
// run began, so each call measures the same step (a `decode` appends past it; what a row past
// that length holds is never read), and the caches end the run with that length. invalid_argument
// for an evaluator of another device; unsupported on a remote device, where the evaluator replays
// a captured batch and a capture cannot replay the VM's host work (time `call` with a host clock
// there). One call at a time per VM.
Result<std::vector<double>> time_function(VirtualMachine& vm, TimeEvaluator& evaluator, std::string_view name,
                                          std::span<const Value> args) noexcept;

// ---- A model's weights (MLC's format) ----------------------------------------------------------

// One parameter of a model, named as its weight files name it.
struct Parameter {
  std::string name;
  Tensor tensor;
};

// MLC's weights: `directory`'s ndarray-cache.json and the shard files it names (raw-shard), each
// record ("raw", or "f32-to-bf16" for float32) read into a new tensor on `device`, in the file's
// order. Every size is checked before it is read: a missing file is not_found naming it; a shard
// of another size than the index says, a record past its shard's end, a byte count that disagrees
// with its shape and dtype, a malformed index, a second record of one name are invalid_argument
// naming the file and the record; another encoding is unsupported. The copies are complete on
// return. Thread-safe.
Result<std::vector<Parameter>> load_params(std::string_view directory, Device device) noexcept;

// A parameter as a model's `_metadata` lists it: its name, extents (-1 for a symbolic one) and
// dtype.
struct ParameterSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  DataType dtype;
};

// What an MLC model's `_metadata` function says of it: the parameters it takes, in its order (what
// a caller needs to make weights of its own), its kind and the longest sequence it was built for.
struct ModelMetadata {
  std::string model_type;               // "gpt2", "llama"; "" when not given
  std::string quantization;             // "q0f16", "q4f16_1"; "" when not given
  std::int64_t context_window_size = 0; // tokens; 0 when not given
  std::vector<ParameterSpec> params;
};

// `vm`'s model's metadata; invalid_argument when its JSON is not MLC's. Calls `vm` (one call at
// a time, as VirtualMachine::call).
Result<ModelMetadata> model_metadata(VirtualMachine& vm) noexcept;

// `params` as `vm`'s model takes them (its `packed_params`): in the order its `_metadata` function's
// JSON lists them, each checked against the listed dtype and shape (a symbolic extent takes any);
// a name missing from `params` is not_found, a disagreement invalid_argument naming the parameter.
// Calls `vm` (one call at a time, as VirtualMachine::call).
Result<Value> model_params(VirtualMachine& vm, std::span<const Parameter> params) noexcept;

} // namespace devrt::tvm

#endif // DEVRT_TVM_VM_HPP
