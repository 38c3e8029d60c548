// SPDX-License-Identifier: Apache-2.0
// What this build of devrt is (devrt/build_info.hpp): version, compiler, C++ standard,
// options and each backend's state, as text and as devrt-info's JSON.
#include <devrt/build_info.hpp>

#include <devrt/backend/registry.hpp>
#include <devrt/config.hpp>
#include <devrt/plugin.hpp>

#include "build_info_config.hpp"
#include "build_revision.hpp"
#include "support/json.hpp"

namespace devrt {
namespace {

#define DEVRT_STRINGIFY_INNER(x) #x
#define DEVRT_STRINGIFY(x) DEVRT_STRINGIFY_INNER(x)

#if defined(__clang__)
constexpr std::string_view kCompiler = "clang";
constexpr std::string_view kCompilerVersion =
    DEVRT_STRINGIFY(__clang_major__) "." DEVRT_STRINGIFY(__clang_minor__) "." DEVRT_STRINGIFY(__clang_patchlevel__);
#elif defined(__GNUC__)
constexpr std::string_view kCompiler = "gcc";
constexpr std::string_view kCompilerVersion =
    DEVRT_STRINGIFY(__GNUC__) "." DEVRT_STRINGIFY(__GNUC_MINOR__) "." DEVRT_STRINGIFY(__GNUC_PATCHLEVEL__);
#else
constexpr std::string_view kCompiler = "unknown";
constexpr std::string_view kCompilerVersion = "unknown";
#endif

constexpr std::string_view cpp_standard() noexcept {
  if (__cplusplus > 202002L) return "C++23";
  if (__cplusplus >= 202002L) return "C++20";
  return "C++17";
}

constexpr std::string_view or_none(std::string_view text) noexcept { return text.empty() ? "none" : text; }

constexpr BuiltBackend kBuiltBackends[] = {DEVRT_BUILD_BACKEND_ENTRIES};

constexpr BuildInfo kBuildInfo{
    DEVRT_VERSION_STRING,
    DEVRT_BUILD_GIT_REVISION,
    kCompiler,
    kCompilerVersion,
    cpp_standard(),
    DEVRT_BUILD_TYPE,
    DEVRT_BUILD_SANITIZERS,
    DEVRT_BUILD_BACKENDS,
    DEVRT_BUILD_PLUGINS != 0,
    DEVRT_ENABLE_LOGGING != 0,
    or_none(DEVRT_BUILD_DLPACK_VERSION),
    or_none(DEVRT_BUILD_FMT_VERSION),
    kBuiltBackends,
};

void line(std::string& out, std::string_view key, std::string_view value) {
  out += "  ";
  out += key;
  out += ": ";
  for (std::size_t i = key.size(); i < 18; ++i) out += ' ';
  out += value;
  out += '\n';
}

} // namespace

const BuildInfo& build_info() noexcept { return kBuildInfo; }

std::string describe() {
  const BuildInfo& b = build_info();
  std::string out = "devrt ";
  out += b.version;
  out += " (";
  out += b.git_revision;
  out += ")\n";
  line(out, "compiler",
       std::string(b.compiler) + " " + std::string(b.compiler_version) + ", " + std::string(b.cpp_standard));
  line(out, "build type", b.build_type);
  line(out, "sanitizers", b.sanitizers);
  line(out, "backends", b.backends);
  line(out, "plugins", b.plugins ? "yes" : "no");
  line(out, "logging", b.logging ? "yes" : "no");
  line(out, "dlpack headers", b.dlpack_version);
  line(out, "fmt", b.fmt_version);
  for (const BuiltBackend& backend : b.built_backends) {
    if (backend.header_version != "none") line(out, std::string(backend.name) + " headers", backend.header_version);
  }
  out += "runtime:\n";
  const Registry& registry = Registry::global();
  for (std::size_t i = 0; i < registry.size(); ++i) {
    BackendRef backend = registry.at(i);
    Status status = backend.availability();
    std::string value;
    if (status.ok()) {
      Result<std::int32_t> count = backend.device_count();
      std::int32_t n = count.ok() ? *count : 0;
      value = "available, " + std::to_string(n) + (n == 1 ? " device" : " devices");
    } else {
      value = "unavailable: ";
      value += status.message();
    }
    line(out, backend.name(), value);
  }
  for (const LoadedPlugin& plugin : loaded_plugins()) {
    std::string names;
    for (const std::string& name : plugin.backends) names += (names.empty() ? "" : ", ") + name;
    line(out, "plugin", plugin.path + " (" + names + ")");
  }
  return out;
}

std::string build_info_json() {
  const BuildInfo& build = build_info();
  std::string out = "{";
  auto key = [&out](std::string_view name) {
    if (out.size() > 1) out += ", ";
    detail::append_json_string(out, name);
    out += ": ";
  };
  auto text = [&](std::string_view name, std::string_view value) {
    key(name);
    detail::append_json_string(out, value);
  };
  auto flag = [&](std::string_view name, bool value) {
    key(name);
    out += value ? "true" : "false";
  };
  text("git_revision", build.git_revision);
  text("compiler", build.compiler);
  text("compiler_version", build.compiler_version);
  text("cpp_standard", build.cpp_standard);
  text("build_type", build.build_type);
  text("sanitizers", build.sanitizers);
  text("backends", build.backends);
  flag("plugins", build.plugins);
  flag("logging", build.logging);
  text("dlpack", build.dlpack_version);
  text("fmt", build.fmt_version);
  for (const BuiltBackend& backend : build.built_backends) {
    if (backend.header_version != "none") text(backend.name, backend.header_version);
  }
  out += "}";
  return out;
}

} // namespace devrt
