// SPDX-License-Identifier: Apache-2.0
// A tiny C interface over devrt tensors for the numpy interop test (loaded with ctypes).
// Capsule helpers find Python's C API in the host process at run time, so nothing here links
// against libpython.
#include <devrt/devrt.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

std::atomic<int> g_live{0};
std::atomic<int> g_deleted{0};
thread_local std::string g_last_error;

// Wraps devrt's deleter so the test can count how often consumers call it.
template <class Managed>
struct Counted {
  void* original_ctx;
  void (*original_deleter)(Managed*);
};

template <class Managed>
void counting_deleter(Managed* self) {
  auto* counted = static_cast<Counted<Managed>*>(self->manager_ctx);
  self->manager_ctx = counted->original_ctx;
  self->deleter = counted->original_deleter;
  delete counted;
  g_live.fetch_sub(1);
  g_deleted.fetch_add(1);
  self->deleter(self);
}

template <class Managed>
Managed* counted(Managed* managed) {
  managed->manager_ctx = new Counted<Managed>{managed->manager_ctx, managed->deleter};
  managed->deleter = &counting_deleter<Managed>;
  g_live.fetch_add(1);
  return managed;
}

int fail(const devrt::Status& status) {
  g_last_error = std::string(status.message());
  return static_cast<int>(status.code());
}

devrt::Result<devrt::Tensor> make_tensor(std::int64_t rows, std::int64_t cols, float seed) {
  DEVRT_ASSIGN_OR_RETURN(devrt::Tensor t, devrt::Tensor::empty({rows, cols}, devrt::DataType::float32()));
  float* v = t.host_data<float>();
  for (std::int64_t i = 0; i < rows * cols; ++i) v[i] = static_cast<float>(i) * 0.5f + seed;
  return t;
}

template <class Managed>
int import_to_host(Managed* managed, void* out, std::size_t nbytes, std::int64_t* shape, std::int32_t max_ndim,
                   std::int32_t* ndim, char* dtype, std::size_t dtype_capacity) {
  devrt::Result<devrt::Tensor> tensor = devrt::Tensor::from_dlpack(managed);
  if (!tensor.ok()) return fail(tensor.status());
  *ndim = tensor->ndim();
  for (std::int32_t i = 0; i < tensor->ndim() && i < max_ndim; ++i)
    shape[i] = tensor->shape()[static_cast<std::size_t>(i)];
  std::string name = devrt::to_string(tensor->dtype());
  std::snprintf(dtype, dtype_capacity, "%s", name.c_str());
  devrt::Result<devrt::Tensor> compact = tensor->to(devrt::kHostDevice);
  if (!compact.ok()) return fail(compact.status());
  devrt::Status copied = compact->copy_to_host(out, nbytes);
  return copied.ok() ? 0 : fail(copied);
}

} // namespace

extern "C" {

// A new devrt CPU tensor (rows x cols float32, v[i] = i * 0.5 + seed) exported through DLPack.
DLManagedTensor* shim_export(std::int64_t rows, std::int64_t cols, float seed) {
  devrt::Result<devrt::Tensor> t = make_tensor(rows, cols, seed);
  if (!t.ok()) return nullptr;
  devrt::Result<DLManagedTensor*> m = t->to_dlpack();
  return m.ok() ? counted(*m) : nullptr;
}

devrt::dlpack::ManagedTensorVersioned* shim_export_versioned(std::int64_t rows, std::int64_t cols, float seed) {
  devrt::Result<devrt::Tensor> t = make_tensor(rows, cols, seed);
  if (!t.ok()) return nullptr;
  devrt::Result<devrt::dlpack::ManagedTensorVersioned*> m = t->to_dlpack_versioned();
  return m.ok() ? counted(*m) : nullptr;
}

int shim_live() { return g_live.load(); }
int shim_deleted() { return g_deleted.load(); }
const char* shim_last_error() { return g_last_error.c_str(); }

// Imports a DLManagedTensor (taking ownership), copies its elements compactly into `out`.
// Returns 0 or a devrt error code (message: shim_last_error()).
int shim_import(DLManagedTensor* managed, void* out, std::size_t nbytes, std::int64_t* shape, std::int32_t max_ndim,
                std::int32_t* ndim, char* dtype, std::size_t dtype_capacity) {
  return import_to_host(managed, out, nbytes, shape, max_ndim, ndim, dtype, dtype_capacity);
}

int shim_import_versioned(devrt::dlpack::ManagedTensorVersioned* managed, void* out, std::size_t nbytes,
                          std::int64_t* shape, std::int32_t max_ndim, std::int32_t* ndim, char* dtype,
                          std::size_t dtype_capacity) {
  return import_to_host(managed, out, nbytes, shape, max_ndim, ndim, dtype, dtype_capacity);
}

// PyCapsule destructor for capsules this shim hands to Python: a capsule nobody consumed still
// owns its tensor, so its deleter runs here (the protocol's rule).
void shim_capsule_destructor(void* capsule) {
  using IsValid = int (*)(void*, const char*);
  using GetPointer = void* (*)(void*, const char*);
  static auto is_valid = reinterpret_cast<IsValid>(dlsym(RTLD_DEFAULT, "PyCapsule_IsValid"));
  static auto get_pointer = reinterpret_cast<GetPointer>(dlsym(RTLD_DEFAULT, "PyCapsule_GetPointer"));
  if (is_valid == nullptr || get_pointer == nullptr) return;
  if (is_valid(capsule, devrt::dlpack::kCapsuleName) != 0) {
    auto* m = static_cast<DLManagedTensor*>(get_pointer(capsule, devrt::dlpack::kCapsuleName));
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  } else if (is_valid(capsule, devrt::dlpack::kVersionedCapsuleName) != 0) {
    auto* m =
        static_cast<devrt::dlpack::ManagedTensorVersioned*>(get_pointer(capsule, devrt::dlpack::kVersionedCapsuleName));
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  }
}

} // extern "C"
