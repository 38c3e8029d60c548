// SPDX-License-Identifier: Apache-2.0
// Catch2's implementation with its main renamed, for test executables with a main of their own
// (the conformance suite), which call it after their set-up. Compiled only where Debian's
// libCatch2WithMain.a is missing (test/meson.build renames that library's main instead).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

extern "C" int devrt_catch_session_main(int argc, char** argv) {
  return Catch::Session().run(argc, argv);
}
