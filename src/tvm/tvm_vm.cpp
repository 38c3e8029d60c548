// SPDX-License-Identifier: Apache-2.0
// The Relax VM (devrt/tvm_vm.hpp): TVM's register machine (vm.cc) over a parsed executable. Each VM
// function call gets a register file of its size, its arguments in the first registers; Call
// reads each argument (a register, an immediate, a constant, a function of the table; the void
// register is null, the VM register the VM itself), calls the table entry and writes the result
// to its destination; Ret returns a register; Goto and If move the pc by their offsets.
#include <devrt/tvm_vm.hpp>

#include <algorithm>
#include <new>
#include <utility>

#include "tvm/tvm_vm_builtins.hpp"

namespace devrt::tvm {

// ---- Value ------------------------------------------------------------------------------------

Value::Value(const Tensor& tensor) noexcept {
  if (detail::TensorBox* box = detail::new_box<detail::TensorBox>(*this, Kind::tensor)) box->tensor = tensor;
}

Value Value::string(std::string_view text) noexcept {
  Value out;
  if (detail::StringBox* box = detail::new_box<detail::StringBox>(out, Kind::string)) box->text.assign(text);
  return out;
}

Value Value::shape(std::span<const std::int64_t> dims) noexcept {
  Value out;
  if (detail::ShapeBox* box = detail::new_box<detail::ShapeBox>(out, Kind::shape))
    box->dims.assign(dims.begin(), dims.end());
  return out;
}

Value Value::tuple(std::span<const Value> items) noexcept {
  Value out;
  if (detail::TupleBox* box = detail::new_box<detail::TupleBox>(out, Kind::tuple))
    box->items.assign(items.begin(), items.end());
  return out;
}

std::string_view Value::string() const noexcept {
  return kind_ == Kind::string ? std::string_view(detail::unbox<detail::StringBox>(*this)->text) : std::string_view();
}

std::span<const std::int64_t> Value::shape() const noexcept {
  if (kind_ != Kind::shape) return {};
  return detail::unbox<detail::ShapeBox>(*this)->dims;
}

const Tensor& Value::tensor() const noexcept {
  static const Tensor none;
  return kind_ == Kind::tensor ? detail::unbox<detail::TensorBox>(*this)->tensor : none;
}

std::span<const Value> Value::tuple() const noexcept {
  if (kind_ != Kind::tuple) return {};
  return detail::unbox<detail::TupleBox>(*this)->items;
}

std::string_view Value::type_key() const noexcept {
  if (kind_ == Kind::object) return detail::unbox<detail::ObjectBox>(*this)->type_key();
  if (kind_ == Kind::function) {
    return detail::unbox<detail::FunctionBox>(*this)->bound.empty() ? "runtime.PackedFunc" : "vm.Closure";
  }
  return {};
}

const char* Value::kind_name(Kind kind) noexcept {
  switch (kind) {
  case Kind::null: return "null";
  case Kind::integer: return "int";
  case Kind::real: return "float";
  case Kind::dtype: return "DataType";
  case Kind::string: return "String";
  case Kind::shape: return "Shape";
  case Kind::tensor: return "Tensor";
  case Kind::tuple: return "Tuple";
  case Kind::function: return "Function";
  case Kind::object: return "Object";
  case Kind::context: return "VirtualMachine";
  }
  return "?";
}

namespace detail {

void retain(VmBox* box) noexcept { box->references.fetch_add(1, std::memory_order_relaxed); }

void release(VmBox* box) noexcept {
  if (box->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete box;
}

namespace {

constexpr int kMaxDepth = 200;
constexpr std::size_t kInlineArgs = 16;

// A call's arguments: in place for up to kInlineArgs, else on the heap.
class CallArgs {
public:
  explicit CallArgs(std::size_t n) : n_(n) {
    if (n_ > kInlineArgs) heap_.resize(n_);
    for (std::size_t i = 0; n_ <= kInlineArgs && i < n_; ++i) new (&inline_[i]) Value();
  }
  CallArgs(const CallArgs&) = delete;
  CallArgs& operator=(const CallArgs&) = delete;
  ~CallArgs() {
    for (std::size_t i = 0; n_ <= kInlineArgs && i < n_; ++i) inline_[i].~Value();
  }
  Value* data() noexcept { return n_ > kInlineArgs ? heap_.data() : inline_; }
  std::span<const Value> span() noexcept { return {data(), n_}; }

private:
  std::size_t n_;
  union {
    Value inline_[kInlineArgs];
  };
  std::vector<Value> heap_;
};

std::string_view call_name(const VmState& vm, std::int64_t index) {
  return vm.exe.functions[static_cast<std::size_t>(index)].name;
}

// A located error: where in which function, unless a nested call located it already.
Status located(const VmState& vm, const VmFunction& f, std::int64_t pc, const Status& error) {
  if (error.message().starts_with("Relax VM: ")) return error;
  const VmInstruction& in = vm.exe.code[static_cast<std::size_t>(pc)];
  if (in.op == VmOpcode::call) {
    return make_error(error.code(), "Relax VM: function '", f.name, "', instruction ", pc, " (call ",
                      call_name(vm, in.target), "): ", error.message());
  }
  return make_error(error.code(), "Relax VM: function '", f.name, "', instruction ", pc, ": ", error.message());
}

struct Frame {
  const VmFunction& f;
  std::vector<Value> registers;
};

Value read_arg(const VmState& vm, const Frame& frame, const VmArg& arg) {
  switch (arg.kind) {
  case VmArgKind::reg: return frame.registers[static_cast<std::size_t>(arg.value)];
  case VmArgKind::immediate: return Value(arg.value);
  case VmArgKind::constant: return vm.constants[static_cast<std::size_t>(arg.value)];
  case VmArgKind::function: return vm.functions[static_cast<std::size_t>(arg.value)];
  case VmArgKind::void_reg: return {};
  case VmArgKind::vm_reg: return Value(Value::Kind::context, nullptr);
  }
  return {};
}

// Runs bytecode function `f` on its register file until a Ret.
Status run(VmState& vm, Frame& frame, Value& result) {
  const VmFunction& f = frame.f;
  std::int64_t pc = f.start;
  while (pc >= f.start && pc < f.end) {
    const VmInstruction& in = vm.exe.code[static_cast<std::size_t>(pc)];
    ++vm.instructions;
    switch (in.op) {
    case VmOpcode::call: {
      CallArgs args(in.num_args);
      Value* out = args.data();
      for (std::uint32_t i = 0; i < in.num_args; ++i) out[i] = read_arg(vm, frame, vm.exe.args[in.first_arg + i]);
      Value value;
      if (Status s = call_function(vm, in.target, args.span(), value); !s.ok()) return located(vm, f, pc, s);
      if (in.reg != VmInstruction::kNoRegister) frame.registers[static_cast<std::size_t>(in.reg)] = std::move(value);
      ++pc;
      break;
    }
    case VmOpcode::ret: result = frame.registers[static_cast<std::size_t>(in.reg)]; return Status();
    case VmOpcode::jump: pc += in.offset; break;
    case VmOpcode::branch: {
      Result<bool> taken = read_condition(frame.registers[static_cast<std::size_t>(in.reg)], "If");
      if (!taken.ok()) return located(vm, f, pc, taken.status());
      pc += *taken ? 1 : in.offset;
      break;
    }
    }
  }
  return make_error(ErrorCode::invalid_argument, "Relax VM: function '", f.name, "' ran past its last instruction ",
                    f.end - 1, " without a Ret");
}

Status invoke_bytecode(VmState& vm, const VmFunction& f, std::span<const Value> args, Value& result) {
  if (static_cast<std::int64_t>(args.size()) != f.num_args) {
    return make_error(ErrorCode::invalid_argument, "ValueError: Invoking function ", f.name, " requires ", f.num_args,
                      " inputs but only ", args.size(), " inputs are provided.");
  }
  if (vm.depth >= kMaxDepth) {
    return make_error(ErrorCode::out_of_range, "Relax VM: function '", f.name, "' nests ", kMaxDepth,
                      " VM calls deep (unbounded recursion?)");
  }
  Frame frame{f, {}};
  frame.registers.resize(static_cast<std::size_t>(f.registers));
  std::copy(args.begin(), args.end(), frame.registers.begin());
  ++vm.depth;
  Status status = run(vm, frame, result);
  --vm.depth;
  return status;
}

// A library function: tensors, ints and floats become its arguments.
Status call_library(VmState& vm, std::int64_t index, std::span<const Value> args) {
  std::vector<Argument> converted;
  converted.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Value& a = args[i];
    switch (a.kind()) {
    case Value::Kind::tensor: converted.emplace_back(a.tensor()); break;
    case Value::Kind::integer: converted.emplace_back(a.integer()); break;
    case Value::Kind::real: converted.emplace_back(a.real()); break;
    default:
      return make_error(ErrorCode::invalid_argument, "argument ", i, " is a ", Value::kind_name(a.kind()),
                        "; the library's functions take tensors, ints and floats");
    }
  }
  return call_host(*vm.shared, *vm.kernels, call_name(vm, index), vm.pool[static_cast<std::size_t>(index)].address,
                   converted);
}

} // namespace

Status call_function(VmState& vm, std::int64_t index, std::span<const Value> args, Value& result) noexcept {
  const PoolEntry& entry = vm.pool[static_cast<std::size_t>(index)];
  switch (entry.kind) {
  case PoolEntry::Kind::bytecode:
    return invoke_bytecode(vm, vm.exe.functions[static_cast<std::size_t>(index)], args, result);
  case PoolEntry::Kind::builtin: return entry.builtin(vm, args, result);
  case PoolEntry::Kind::library: result = Value(); return call_library(vm, index, args);
  }
  return Status();
}

Status invoke_value(VmState& vm, const Value& function, std::span<const Value> args, Value& result) noexcept {
  if (function.kind() != Value::Kind::function) {
    return make_error(ErrorCode::invalid_argument, "a ", Value::kind_name(function.kind()), " is called as a function");
  }
  const FunctionBox& box = *unbox<FunctionBox>(function);
  if (box.bound.empty()) return call_function(vm, box.index, args, result);
  std::vector<Value> all(args.begin(), args.end());
  all.insert(all.end(), box.bound.begin(), box.bound.end());
  return call_function(vm, box.index, all, result);
}

namespace {

// Each table entry resolved: a VM function, a library function, or a builtin; everything
// missing listed at once.
Status resolve(VmState& vm, const std::string& label) {
  const std::vector<std::string>& exported = vm.shared->symbols.functions;
  std::string missing, tir;
  vm.pool.resize(vm.exe.functions.size());
  vm.functions.resize(vm.exe.functions.size());
  for (std::size_t i = 0; i < vm.exe.functions.size(); ++i) {
    const VmFunction& f = vm.exe.functions[i];
    PoolEntry& entry = vm.pool[i];
    FunctionBox* box = new_box<FunctionBox>(vm.functions[i], Value::Kind::function);
    if (box == nullptr) return make_error(ErrorCode::out_of_memory, "Relax VM: no host memory");
    box->index = static_cast<std::int64_t>(i);
    if (f.kind == VmFunctionKind::bytecode) {
      entry.kind = PoolEntry::Kind::bytecode;
      continue;
    }
    if (f.kind == VmFunctionKind::tir) {
      tir += (tir.empty() ? "" : ", ") + f.name;
      continue;
    }
    const auto found = std::lower_bound(exported.begin(), exported.end(), f.name);
    if (found != exported.end() && *found == f.name) {
      entry.kind = PoolEntry::Kind::library;
      entry.address = vm.shared->function_addresses[static_cast<std::size_t>(found - exported.begin())];
      continue;
    }
    const std::span<const BuiltinEntry> builtins = vm_builtins();
    const auto builtin =
        std::find_if(builtins.begin(), builtins.end(), [&](const BuiltinEntry& b) { return b.name == f.name; });
    if (builtin == builtins.end()) {
      missing += (missing.empty() ? "" : ", ") + f.name;
      continue;
    }
    entry.builtin = builtin->function;
  }
  if (!tir.empty()) {
    return make_error(ErrorCode::unsupported, "Relax VM of ", label, ": ", tir,
                      " are kVMTIRFunc functions (TVM's compiled exec mode, whose host code calls "
                      "TVMBackendAnyList*), which devrt does not run; build with exec_mode=\"bytecode\"");
  }
  if (!missing.empty()) {
    return make_error(ErrorCode::unsupported, "Relax VM of ", label, ": it calls ", missing,
                      ", which neither the library nor devrt's builtins provide");
  }
  return Status();
}

// The pool's NDArrays copied to the VM's device, as TVM's VM copies its constants.
Status place_constants(VmState& vm) {
  vm.constants = vm.exe.constants;
  for (std::size_t i = 0; i < vm.constants.size(); ++i) {
    Value& c = vm.constants[i];
    const std::string& scope = vm.exe.constant_scopes[i];
    if (c.kind() != Value::Kind::tensor || (vm.devices[0] == kHostDevice && scope.empty())) continue;
    if (scope.empty() || scope == "global") {
      DEVRT_ASSIGN_OR_RETURN(Tensor placed, c.tensor().to(vm.devices[0]));
      c = Value(placed);
      continue;
    }
    // TVM main places a constant in the memory scope its executable names (a texture, VTCM).
    DEVRT_ASSIGN_OR_RETURN(const MemoryScope memory_scope, parse_memory_scope(scope));
    DEVRT_ASSIGN_OR_RETURN(
        Tensor placed, Tensor::empty(c.tensor().shape(), c.tensor().dtype(), vm.devices[0], {.scope = memory_scope}));
    DEVRT_RETURN_IF_ERROR(placed.copy_from(c.tensor()));
    c = Value(placed);
  }
  return vm.devices[0] == kHostDevice ? Status() : synchronize(current_stream(vm.devices[0]));
}

} // namespace
} // namespace detail

Result<VirtualMachine> VirtualMachine::create(const Library& library) noexcept {
  detail::SharedLibrary* shared = detail::LibraryAccess::shared(library);
  if (shared == nullptr) return make_error(ErrorCode::invalid_argument, "Relax VM: an empty Library");
  if (shared->blob.vm_key.empty()) {
    return make_error(ErrorCode::not_found, "Relax VM: ", shared->label,
                      " carries no Relax VM program (no relax.Executable in its blob): call its functions with "
                      "Library::call");
  }
  auto state = std::unique_ptr<detail::VmState>(new (std::nothrow) detail::VmState());
  if (!state) return make_error(ErrorCode::out_of_memory, "Relax VM: no host memory");
  state->shared = shared;
  state->kernels = detail::LibraryAccess::kernels(library);
  // The library's ABI tells which TVM wrote the program (its version string does not).
  const std::string& symbol = shared->symbols.blob_symbol;
  const detail::VmLayout layout = symbol == "__tvm_ffi__library_bin"  ? detail::VmLayout::ffi
                                  : symbol == "__tvm_ffi_library_bin" ? detail::VmLayout::ffi_0_21
                                                                      : detail::VmLayout::packed;
  Result<detail::VmExecutable> exe =
      detail::parse_vm_executable(shared->blob.vm_executable, shared->blob.vm_key, layout);
  if (!exe.ok()) return make_error(exe.status().code(), shared->label, ": ", exe.status().message());
  state->exe = std::move(exe).value();
  state->devices = {library.device(), kHostDevice};
  DEVRT_RETURN_IF_ERROR(detail::resolve(*state, shared->label));
  DEVRT_RETURN_IF_ERROR(detail::place_constants(*state));
  return VirtualMachine(std::move(state));
}

VirtualMachine::VirtualMachine() noexcept = default;
VirtualMachine::VirtualMachine(std::unique_ptr<detail::VmState> state) noexcept : state_(std::move(state)) {}
VirtualMachine::VirtualMachine(VirtualMachine&&) noexcept = default;
VirtualMachine& VirtualMachine::operator=(VirtualMachine&&) noexcept = default;
VirtualMachine::~VirtualMachine() = default;

std::vector<std::string> VirtualMachine::functions() const {
  std::vector<std::string> names;
  if (!state_) return names;
  for (const detail::VmFunction& f : state_->exe.functions) {
    if (f.kind == detail::VmFunctionKind::bytecode) names.push_back(f.name);
  }
  return names;
}

std::vector<std::string> VirtualMachine::parameters(std::string_view name) const {
  if (!state_) return {};
  for (const detail::VmFunction& f : state_->exe.functions) {
    if (f.kind == detail::VmFunctionKind::bytecode && f.name == name) return f.params;
  }
  return {};
}

const std::string& VirtualMachine::version() const noexcept {
  static const std::string none;
  return state_ ? state_->exe.version : none;
}

std::span<const Device> VirtualMachine::devices() const noexcept {
  if (!state_) return {};
  return state_->devices;
}

std::uint64_t VirtualMachine::instructions_run() const noexcept { return state_ ? state_->instructions : 0; }

Result<Value> VirtualMachine::call(std::string_view name, std::span<const Value> args) noexcept {
  if (!state_) return make_error(ErrorCode::invalid_argument, "Relax VM: an empty VirtualMachine");
  const std::vector<detail::VmFunction>& table = state_->exe.functions;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].kind != detail::VmFunctionKind::bytecode || table[i].name != name) continue;
    Value result;
    DEVRT_RETURN_IF_ERROR(detail::call_function(*state_, static_cast<std::int64_t>(i), args, result));
    return result;
  }
  return make_error(ErrorCode::not_found, "Relax VM of ", state_->shared->label, ": no VM function '", name,
                    "' (it has ", functions().size(), ")");
}

} // namespace devrt::tvm
