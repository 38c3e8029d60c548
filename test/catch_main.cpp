// SPDX-License-Identifier: Apache-2.0
// Catch2's implementation and main, compiled once where Debian's libCatch2WithMain.a is missing.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
