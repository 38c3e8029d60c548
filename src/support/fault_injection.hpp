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
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
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

// An asynchronous entry point's callback info (WebGPU's): the call reports through `callback`.
template <class T>
concept CallbackInfo = requires {
  std::declval<T&>().callback;
  std::declval<T&>().userdata1;
  std::declval<T&>().userdata2;
};

// What an injected failure of an asynchronous call delivers: its callback, called at once with the
// code as its first parameter (the status), every other parameter empty but for a message string
// view naming the seam, and the call's two userdata pointers. A backend specializes it where its
// API reports an error otherwise (WebGPU's error scopes: status Success, the code as the type).
template <class Callback>
struct CallbackFault;

inline constexpr std::string_view kInjectedMessage = "failed by devrt's fault injection";

template <class Status, class... Rest>
struct CallbackFault<void (*)(Status, Rest...)> {
  template <class T>
  static T argument(std::size_t index, void* userdata1, void* userdata2) {
    if constexpr (std::is_same_v<T, void*>) {
      if (index + 2 == sizeof...(Rest)) return userdata1;
      if (index + 1 == sizeof...(Rest)) return userdata2;
      return nullptr;
    } else if constexpr (requires { T{kInjectedMessage.data(), kInjectedMessage.size()}; }) {
      return T{kInjectedMessage.data(), kInjectedMessage.size()};
    } else {
      return T{};
    }
  }
  template <std::size_t... I>
  static void call(void (*callback)(Status, Rest...), std::int64_t code, void* userdata1, void* userdata2,
                   std::index_sequence<I...>) {
    callback(static_cast<Status>(code), argument<Rest>(I, userdata1, userdata2)...);
  }
  static void invoke(void (*callback)(Status, Rest...), std::int64_t code, void* userdata1, void* userdata2) {
    if (callback != nullptr) call(callback, code, userdata1, userdata2, std::index_sequence_for<Rest...>{});
  }
};

// How a backend's entry points may fail, beyond the rule the types give (integral or enum results,
// OpenCL's trailing cl_int*, WebGPU's callback infos): entry points that return a pointer the API
// allows to be null (failed with null), and entry points with an integral result that reports no
// failure (a yes/no answer; never failed).
struct FaultRules {
  std::span<const std::string_view> may_return_null;
  std::span<const std::string_view> cannot_fail;
};

// The wrapper of one entry point: Tag names it (a local class with `static const char*
// symbol()`), Fn is its pointer type.
template <class Tag, class R, class... A>
struct Hook {
  static inline R (*real)(A...) = nullptr;
  static inline Site site;

  using Last = std::tuple_element_t<(sizeof...(A) > 0 ? sizeof...(A) - 1 : 0), std::tuple<A..., void>>;
  // OpenCL creators return a handle and report through a trailing cl_int*.
  static constexpr bool kReportsThroughLastArgument =
      sizeof...(A) > 0 && std::is_pointer_v<R>&& std::is_same_v<Last, std::int32_t*>;
  // WebGPU's asynchronous calls return a future and report through a trailing callback info.
  static constexpr bool kReportsThroughCallback = sizeof...(A) > 0 && CallbackInfo<Last>;
  static constexpr bool kInjectable =
      std::is_integral_v<R> || std::is_enum_v<R> || kReportsThroughLastArgument || kReportsThroughCallback;
  static constexpr bool kMayBeNull = std::is_pointer_v<R> && !kReportsThroughLastArgument;

  static R injected(std::int64_t code, A... args) noexcept {
    if constexpr (std::is_integral_v<R> || std::is_enum_v<R>) {
      return static_cast<R>(code);
    } else if constexpr (kReportsThroughLastArgument) {
      std::int32_t* report = std::get<sizeof...(A) - 1>(std::forward_as_tuple(args...));
      if (report != nullptr) *report = static_cast<std::int32_t>(code);
      return nullptr;
    } else if constexpr (kReportsThroughCallback) {
      const Last& info = std::get<sizeof...(A) - 1>(std::forward_as_tuple(args...));
      CallbackFault<decltype(info.callback)>::invoke(info.callback, code, info.userdata1, info.userdata2);
      return R{};
    } else if constexpr (kMayBeNull) {
      return nullptr;
    } else {
      return R();
    }
  }

  static R call(A... args) noexcept {
    if (site.injectable) {
      std::int64_t code = 0;
      if (should_fail(site, code)) [[unlikely]]
        return injected(code, args...);
    } else {
      site.calls.fetch_add(1, std::memory_order_relaxed);
    }
    if constexpr (std::is_void_v<R>) {
      real(args...);
      site.successes.fetch_add(1, std::memory_order_relaxed);
    } else {
      R result = real(args...);
      bool ok = true;
      if constexpr (std::is_pointer_v<R>) {
        ok = result != nullptr;
      } else if constexpr (!std::is_class_v<R>) {
        ok = result == R{};
      }
      if (ok) site.successes.fetch_add(1, std::memory_order_relaxed);
      return result;
    }
  }
};

inline bool listed(std::span<const std::string_view> names, std::string_view symbol) noexcept {
  for (std::string_view name : names) {
    if (name == symbol) return true;
  }
  return false;
}

template <class Tag, class R, class... A>
void wrap(const char* backend, R (*&slot)(A...), const FaultRules& rules) noexcept {
  using H = Hook<Tag, R, A...>;
  if (slot == nullptr || slot == &H::call) return;
  H::real = slot;
  H::site.backend = backend;
  H::site.symbol = Tag::symbol();
  H::site.injectable = (H::kInjectable && !listed(rules.cannot_fail, Tag::symbol())) ||
                       (H::kMayBeNull && listed(rules.may_return_null, Tag::symbol()));
  register_site(H::site);
  slot = &H::call;
}

} // namespace devrt::detail::fault

#define DEVRT_DETAIL_FAULT_WRAP_ONE(name, ...)                                                                         \
  {                                                                                                                    \
    struct Tag {                                                                                                       \
      static const char* symbol() { return DEVRT_DETAIL_FAULT_NAME(name); }                                            \
    };                                                                                                                 \
    ::devrt::detail::fault::wrap<Tag>(devrt_fault_backend, devrt_fault_api.name, devrt_fault_rules);                   \
  }
#define DEVRT_DETAIL_FAULT_NAME_(x) #x
#define DEVRT_DETAIL_FAULT_NAME(x) DEVRT_DETAIL_FAULT_NAME_(x)
// Wraps every non-null slot of `api` listed by SYMBOLS (each X(name, ...)), failing them as `rules`
// (a FaultRules) adds to what their types say.
#define DEVRT_FAULT_WRAP_SYMBOLS_WITH(backend, api, SYMBOLS, rules)                                                    \
  do {                                                                                                                 \
    const char* devrt_fault_backend = (backend);                                                                       \
    auto& devrt_fault_api = (api);                                                                                     \
    const ::devrt::detail::fault::FaultRules& devrt_fault_rules = (rules);                                             \
    SYMBOLS(DEVRT_DETAIL_FAULT_WRAP_ONE)                                                                               \
  } while (0)
#define DEVRT_FAULT_WRAP_SYMBOLS(backend, api, SYMBOLS)                                                                \
  DEVRT_FAULT_WRAP_SYMBOLS_WITH(backend, api, SYMBOLS, ::devrt::detail::fault::FaultRules{})

#else

#define DEVRT_FAULT_WRAP_SYMBOLS(backend, api, SYMBOLS)                                                                \
  do {                                                                                                                 \
  } while (0)
#define DEVRT_FAULT_WRAP_SYMBOLS_WITH(backend, api, SYMBOLS, rules)                                                    \
  do {                                                                                                                 \
  } while (0)

#endif // DEVRT_FAULT_INJECTION

#endif // DEVRT_SRC_SUPPORT_FAULT_INJECTION_HPP
