// SPDX-License-Identifier: Apache-2.0
#include <devrt/backend/module_image.hpp>
#include <devrt/devrt.hpp>
#include <devrt/toolchain/android_ndk.hpp>
#include <devrt/toolchain/clang.hpp>
#include <devrt/toolchain/emscripten.hpp>
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/process.hpp>
#include <devrt/toolchain/rocm.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

#include "toolchain_test_util.hpp"

using devrt::ErrorCode;
using namespace devrt::toolchain;

TEST_CASE("gfx processors parse, and matrix cores follow the architecture", "[rocm]") {
  devrt::Result<GfxArch> arch = parse_gfx_arch("gfx90a");
  REQUIRE(arch.ok());
  CHECK(arch->major == 9);
  CHECK(arch->minor == 0);
  CHECK(arch->stepping == 10);
  devrt::Result<GfxArch> rdna = parse_gfx_arch("gfx1030");
  REQUIRE(rdna.ok());
  CHECK(rdna->major == 10);
  CHECK(rdna->minor == 3);
  CHECK(parse_gfx_arch("gfx90a:sramecc+:xnack-")->name == "gfx90a");
  for (const char* bad : {"gfx", "gfx9", "sm_90", "gfxzz0", "", "gfx90g"}) {
    INFO(bad);
    CHECK(parse_gfx_arch(bad).status().code() == ErrorCode::invalid_argument);
  }
  CHECK(*have_matrixcore("gfx908"));
  CHECK(*have_matrixcore("gfx90a"));
  CHECK(*have_matrixcore("gfx942"));
  CHECK(*have_matrixcore("gfx1100"));
  CHECK(!*have_matrixcore("gfx906"));
  CHECK(!*have_matrixcore("gfx1030"));
  CHECK(*have_matrixcore("9.0")); // TVM's compute-version form and rule
  CHECK(!*have_matrixcore("7.5"));
  CHECK(have_matrixcore("matrix").status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("ld.lld links an AMDGPU object into a code object devrt recognises", "[rocm][lld]") {
  devrt::Result<std::string> lld = find_lld();
  devrt::Result<std::string> clang = find_clang();
  if (!lld.ok() || !clang.ok()) {
    WARN("skipped: " << (lld.ok() ? clang.status().message() : lld.status().message()));
    return;
  }
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  REQUIRE(write_file(dir->relpath("k.cl"), "kernel void fill(global int* out, int i) { out[i] = 7; }\n").ok());
  devrt::Result<std::string> compiled =
      run_and_capture({*clang, "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx900", "-nogpulib", "-O2", "-x", "cl",
                       "-cl-std=CL1.2", "-c", dir->relpath("k.cl"), "-o", dir->relpath("k.o")});
  if (!compiled.ok()) {
    WARN("skipped: clang cannot target amdgcn here: " << compiled.status().message());
    return;
  }
  devrt::Status linked = rocm_link(dir->relpath("k.o"), dir->relpath("k.hsaco"), *lld);
  INFO(linked.message());
  REQUIRE(linked.ok());
  devrt::Result<std::string> bytes = read_file(dir->relpath("k.hsaco"));
  REQUIRE(bytes.ok());
  devrt::Result<devrt::ModuleImageInfo> info = devrt::inspect_module_image(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes->data()), bytes->size()));
  REQUIRE(info.ok());
  CHECK(info->format == devrt::ModuleFormat::hsaco);
  REQUIRE(!info->architectures.empty());
  CHECK(info->architectures.front() == "gfx900");

  // The linker's words come back: an object that is not there.
  devrt::Status missing = rocm_link(dir->relpath("missing.o"), dir->relpath("x.hsaco"), *lld);
  CHECK(missing.code() == ErrorCode::tool_failed);
  CHECK(contains(missing.message(), "missing.o"));
}

TEST_CASE("clang emits LLVM IR from source text and files, linking several", "[clang]") {
  devrt::Result<std::string> clang = find_clang();
  if (!clang.ok()) {
    WARN("skipped: " << clang.status().message());
    return;
  }
  devrt::Result<std::string> ir = emit_llvm_ir({"int add(int a, int b) { return a + b; }"}, {"-O1"});
  REQUIRE(ir.ok());
  CHECK(contains(*ir, "define"));
  CHECK(contains(*ir, "@add("));

  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  REQUIRE(write_file(dir->relpath("mul.c"), "int mul(int a, int b) { return a * b; }\n").ok());
  devrt::Result<std::string> linked = emit_llvm_ir({"int add(int a, int b) { return a + b; }", dir->relpath("mul.c")});
  if (linked.ok()) {
    CHECK(contains(*linked, "@add("));
    CHECK(contains(*linked, "@mul("));
  } else {
    CHECK(linked.status().code() == ErrorCode::unavailable); // no llvm-link next to this clang
  }
  devrt::Result<std::string> broken = emit_llvm_ir({"int f() { return missing_symbol; }"});
  CHECK(broken.status().code() == ErrorCode::tool_failed);
  CHECK(contains(broken.status().message(), "missing_symbol"));
}

TEST_CASE("Emscripten and the Android NDK answer 'tool not found' when absent", "[emcc][ndk]") {
  if (find_emcc().ok() || find_ndk_compiler().ok()) {
    WARN("skipped: emcc or an Android NDK is installed here");
    return;
  }
  devrt::Status wasm = create_wasm("/tmp/devrt-never.wasm", {"x.o"});
  CHECK(wasm.code() == ErrorCode::unavailable);
  CHECK(contains(wasm.message(), "tool not found: emcc"));
  devrt::Status android = create_android_shared("/tmp/devrt-never.so", {"x.o"});
  CHECK(android.code() == ErrorCode::unavailable);
  CHECK(contains(android.message(), "tool not found"));
  CHECK(contains(android.message(), "ANDROID_NDK_HOME"));
  ::setenv("ANDROID_NDK_HOME", "/devrt/no/ndk", 1);
  CHECK(contains(find_ndk_compiler().status().message(), "/devrt/no/ndk/toolchains"));
  ::unsetenv("ANDROID_NDK_HOME");
  ::setenv("EMCC", "/devrt/no/emcc", 1);
  CHECK(find_emcc().status().code() == ErrorCode::unavailable);
  ::unsetenv("EMCC");
  CHECK(create_wasm("/tmp/x.wasm", {}).code() == ErrorCode::invalid_argument);
}
