// SPDX-License-Identifier: Apache-2.0
#include <devrt/build_info.hpp>
#include <devrt/devrt.hpp>

#include <catch2/catch.hpp>

#include <string>

TEST_CASE("build info names what devrt was built from", "[build_info]") {
  const devrt::BuildInfo& info = devrt::build_info();
  CHECK(info.version == DEVRT_VERSION_STRING);
  CHECK_FALSE(info.git_revision.empty());
  CHECK((info.compiler == "gcc" || info.compiler == "clang"));
  CHECK(info.compiler_version.find('.') != std::string_view::npos);
  CHECK(info.cpp_standard.substr(0, 3) == "C++");
  CHECK_FALSE(info.build_type.empty());
  CHECK(info.backends.substr(0, 3) == "cpu");
  CHECK(info.dlpack_version.find('.') != std::string_view::npos);
  CHECK(info.plugins == (DEVRT_PLUGINS != 0));
  CHECK(info.logging == (DEVRT_ENABLE_LOGGING != 0));
  // One entry per built backend, in registration order: the CPU first, with no vendor headers.
  REQUIRE_FALSE(info.built_backends.empty());
  CHECK(info.built_backends[0].name == "cpu");
  CHECK(info.built_backends[0].header_version == "none");
  CHECK_FALSE(info.built_backends[0].plugin);
  std::string names;
  for (const devrt::BuiltBackend& built : info.built_backends) {
    names += (names.empty() ? "" : ",") + std::string(built.name);
    CHECK_FALSE(built.header_version.empty());
    if (built.plugin) CHECK(info.plugins);
  }
  CHECK(names == info.backends);
#if DEVRT_WITH_VULKAN
  bool vulkan_listed = false;
  for (const devrt::BuiltBackend& built : info.built_backends) {
    if (built.name == "vulkan") vulkan_listed = built.header_version.rfind("1.", 0) == 0;
  }
  CHECK(vulkan_listed);
#endif
}

TEST_CASE("describe() adds what is available now", "[build_info]") {
  std::string text = devrt::describe();
  CHECK(text.rfind("devrt " DEVRT_VERSION_STRING, 0) == 0);
  CHECK(text.find("runtime:") != std::string::npos);
  CHECK(text.find("cpu:") != std::string::npos);
  CHECK(text.find("available, 1 device") != std::string::npos);
}
