// SPDX-License-Identifier: Apache-2.0
// Fault injection at the driver boundary (-Dfault_injection=true, test builds only): every slot
// of a backend's driver table can be wrapped so that its N-th call returns a chosen error without
// reaching the driver, and every call and every success is counted (so a test can pair creates
// with releases). Chosen by DEVRT_FAULT=<backend>:<symbol>:<n>:<code> or by arm(). When the
// option is off, DEVRT_FAULT_WRAP_SYMBOLS expands to nothing and this file declares nothing else.
// Not public API.
#ifndef DEVRT_SRC_SUPPORT_FAULT_INJECTION_HPP
#define DEVRT_SRC_SUPPORT_FAULT_INJECTION_HPP

#ifndef DEVRT_FAULT_INJECTION
#define DEVRT_FAULT_INJECTION 0
#endif

#if DEVRT_FAULT_INJECTION

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::detail::fault {

// One wrapped driver entry point. Its counters only grow (reset_counts() zeroes them).
struct Site {
  const char* backend = nullptr;
  const char* symbol = nullptr;
  bool injectable = false; // false for entry points that return nothing (vkCmd*, vkDestroy*)
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> successes{0};
  Site* next = nullptr;
};

// Adds a site to the process's list (once); arms it when DEVRT_FAULT names it. Thread-safe.
void register_site(Site& site) noexcept;
// Counts a call; true when this call is the armed one, with the error code to return.
bool should_fail(Site& site, std::int64_t& code) noexcept;

// A snapshot of one site, for tests.
struct SiteCounts {
  std::string backend, symbol;
  bool injectable = false;
  std::uint64_t calls = 0, successes = 0;
};
// Every registered site. Thread-safe.
std::vector<SiteCounts> sites();
// Fails the `nth` call (1-based, counted from now) of backend's `symbol` with `code`; one fault
// at a time, fired once, or with `persistent` on every call from the nth until disarm() (a
// failure that retrying does not cure). invalid_argument for an unknown site or one that
// cannot fail.
Status arm(std::string_view backend, std::string_view symbol, std::uint64_t nth, std::int64_t code,
           bool persistent = false);
// Parses and arms "<backend>:<symbol>:<n>:<code>" (DEVRT_FAULT's form; the code a number or a
// name such as CL_OUT_OF_RESOURCES or VK_ERROR_DEVICE_LOST). A site not yet registered is armed
// when it registers.
Status arm(std::string_view spec);
// Clears the armed fault; true when it had fired.
bool disarm() noexcept;
// Zeroes every counter.
void reset_counts() noexcept;
// The error code a name stands for (CL_*, VK_*, CUDA_ERROR_*, hipError*, nccl*), or false.
bool code_of(std::string_view name, std::int64_t& code) noexcept;

// The wrapper of one entry point: Tag names it (a local class with `static const char*
// symbol()`), Fn is its pointer type.
template <class Tag, class R, class... A>
struct Hook {
  static inline R (*real)(A...) = nullptr;
  static inline Site site;

  // OpenCL creators return a handle and report through a trailing cl_int*.
  static constexpr bool reports_through_last_argument() {
    if constexpr (sizeof...(A) == 0) {
      return false;
    } else {
      using Last = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;
      return std::is_pointer_v<R> && std::is_same_v<Last, std::int32_t*>;
    }
  }
  static constexpr bool kInjectable = std::is_integral_v<R> || std::is_enum_v<R> || reports_through_last_argument();

  static R call(A... args) noexcept {
    if constexpr (kInjectable) {
      std::int64_t code = 0;
      if (should_fail(site, code)) [[unlikely]] {
        if constexpr (std::is_integral_v<R> || std::is_enum_v<R>) {
          return static_cast<R>(code);
        } else {
          std::int32_t* report = std::get<sizeof...(A) - 1>(std::forward_as_tuple(args...));
          if (report != nullptr) *report = static_cast<std::int32_t>(code);
          return nullptr;
        }
      }
    } else {
      site.calls.fetch_add(1, std::memory_order_relaxed);
    }
    if constexpr (std::is_void_v<R>) {
      real(args...);
      site.successes.fetch_add(1, std::memory_order_relaxed);
    } else {
      R result = real(args...);
      bool ok;
      if constexpr (std::is_pointer_v<R>) {
        ok = result != nullptr;
      } else {
        ok = result == R{};
      }
      if (ok) site.successes.fetch_add(1, std::memory_order_relaxed);
      return result;
    }
  }
};

template <class Tag, class R, class... A>
void wrap(const char* backend, R (*&slot)(A...)) noexcept {
  using H = Hook<Tag, R, A...>;
  if (slot == nullptr || slot == &H::call) return;
  H::real = slot;
  H::site.backend = backend;
  H::site.symbol = Tag::symbol();
  H::site.injectable = H::kInjectable;
  register_site(H::site);
  slot = &H::call;
}

} // namespace devrt::detail::fault

#define DEVRT_DETAIL_FAULT_WRAP_ONE(name, ...)                                                                         \
  {                                                                                                                    \
    struct Tag {                                                                                                       \
      static const char* symbol() { return DEVRT_DETAIL_FAULT_NAME(name); }                                            \
    };                                                                                                                 \
    ::devrt::detail::fault::wrap<Tag>(devrt_fault_backend, devrt_fault_api.name);                                      \
  }
#define DEVRT_DETAIL_FAULT_NAME_(x) #x
#define DEVRT_DETAIL_FAULT_NAME(x) DEVRT_DETAIL_FAULT_NAME_(x)
// Wraps every non-null slot of `api` listed by SYMBOLS (each X(name) or X(name, type)).
#define DEVRT_FAULT_WRAP_SYMBOLS(backend, api, SYMBOLS)                                                                \
  do {                                                                                                                 \
    const char* devrt_fault_backend = (backend);                                                                       \
    auto& devrt_fault_api = (api);                                                                                     \
    SYMBOLS(DEVRT_DETAIL_FAULT_WRAP_ONE)                                                                               \
  } while (0)

#else

#define DEVRT_FAULT_WRAP_SYMBOLS(backend, api, SYMBOLS)                                                                \
  do {                                                                                                                 \
  } while (0)

#endif // DEVRT_FAULT_INJECTION

#endif // DEVRT_SRC_SUPPORT_FAULT_INJECTION_HPP
