// SPDX-License-Identifier: Apache-2.0
// Catch2's implementation without a main, for test executables with a main of their own (the
// conformance suite), which call catch_run() after their set-up. Compiled once, like
// catch_main.cpp.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

int catch_run(int argc, char** argv) { return Catch::Session().run(argc, argv); }
