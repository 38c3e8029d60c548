// SPDX-License-Identifier: Apache-2.0
#include <devrt/devrt.hpp>
#include <devrt/toolchain/cc.hpp>
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/process.hpp>

#include <catch2/catch.hpp>

#include <array>

#include "toolchain_test_util.hpp"

using devrt::ErrorCode;
using namespace devrt::toolchain;

namespace {

// A CPU kernel as a JIT would generate it: C, compiled at run time, loaded as a module.
constexpr const char* kKernelSource = R"(#include <devrt/backend/cpu_kernel.h>
#include <stdint.h>
#define EXPORT __attribute__((visibility("default")))
EXPORT const char scale_add_devrt_signature[] = "buffer,buffer,float32,int32";
EXPORT int32_t scale_add(const devrt_cpu_kernel_context* c, devrt_error* err) {
  (void)err;
  const float* x = (const float*)devrt_cpu_arg_pointer(c, 0);
  float* y = (float*)devrt_cpu_arg_pointer(c, 1);
  float alpha = devrt_cpu_arg_f32(c, 2);
  int32_t n = devrt_cpu_arg_i32(c, 3);
  for (uint32_t t = 0; t < c->block[0]; ++t) {
    int32_t i = (int32_t)(c->block_index[0] * c->block[0] + t);
    if (i < n) y[i] = alpha * x[i] + y[i];
  }
  return 0;
}
EXPORT int32_t global_counter = 5;
EXPORT int32_t zeroed_counter;
EXPORT const char read_only_text[] = "devrt";
)";

} // namespace

TEST_CASE("the host compiler is found and names its target", "[cc]") {
  devrt::Result<std::string> cxx = find_cxx_compiler();
  REQUIRE(cxx.ok());
  CHECK(cxx->front() == '/');
  REQUIRE(find_c_compiler().ok());
  devrt::Result<std::string> triple = target_triple();
  REQUIRE(triple.ok());
  CHECK(contains(*triple, "linux"));
  CHECK(target_triple("/devrt/no/compiler").status().code() == ErrorCode::unavailable);
}

TEST_CASE("a shared library built at run time is loaded and launched as a CPU module", "[cc][jit]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  std::string source = dir->relpath("kernel.c");
  std::string library = dir->relpath("libkernel.so");
  REQUIRE(write_file(source, kKernelSource).ok());
  devrt::Status built = create_shared(library, {source}, {"-O2", "-I" DEVRT_TEST_INCLUDE_DIR}, "cc");
  INFO(built.message());
  REQUIRE(built.ok());

  devrt::Result<devrt::Module> module =
      devrt::Module::load_file(devrt::kHostDevice, devrt::ModuleFormat::shared_object, library.c_str());
  REQUIRE(module.ok());
  devrt::Result<devrt::Function> function = module->function("scale_add");
  REQUIRE(function.ok());
  constexpr int kN = 1000;
  std::array<float, kN> x{};
  std::array<float, kN> y{};
  for (int i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0F;
  }
  const devrt::KernelArg args[] = {devrt::host_span(x.data(), sizeof x), devrt::host_span(y.data(), sizeof y), 2.0F,
                                   kN};
  devrt::LaunchConfig config;
  config.grid.x = (kN + 127) / 128;
  config.block.x = 128;
  REQUIRE(function->launch(config, args).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(devrt::kHostDevice)).ok());
  bool all = true;
  for (int i = 0; i < kN; ++i) all = all && y[i] == 2.0F * static_cast<float>(i) + 1.0F;
  CHECK(all);

  // Where the library's globals live.
  devrt::Result<std::map<std::string, std::string>> sections = global_symbol_sections(library);
  REQUIRE(sections.ok());
  CHECK((*sections)["scale_add"] == ".text");
  CHECK((*sections)["global_counter"] == ".data");
  CHECK((*sections)["zeroed_counter"] == ".bss");
  CHECK((*sections)["read_only_text"] == ".rodata");
  CHECK(global_symbol_sections(source).status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("compiler errors come back with the compiler's own output", "[cc]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  std::string source = dir->relpath("broken.cc");
  REQUIRE(write_file(source, "int main() { return undeclared_thing; }\n").ok());
  devrt::Status status = create_executable(dir->relpath("broken"), {source});
  CHECK(status.code() == ErrorCode::tool_failed);
  CHECK(contains(status.message(), "undeclared_thing"));
  CHECK(contains(status.message(), "exited with status 1"));
  CHECK(create_shared(dir->relpath("x.so"), {}).code() == ErrorCode::invalid_argument);
}

TEST_CASE("a static library and an executable are built and run; a cross compiler keeps its options", "[cc]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  REQUIRE(write_file(dir->relpath("value.cc"), "int value() { return VALUE; }\n").ok());
  REQUIRE(write_file(dir->relpath("main.cc"),
                     "#include <cstdio>\nint value();\nint main() { std::printf(\"%d\\n\", value()); }\n")
              .ok());
  // A "cross compiler" fixing -DVALUE=7: every build through it sees the option.
  Compiler host;
  Compiler fixed = cross_compiler(host, {"-DVALUE=7"}, OutputKind::static_library);
  devrt::Status archived = fixed(dir->relpath("libvalue.a"), {dir->relpath("value.cc")});
  INFO(archived.message());
  REQUIRE(archived.ok());
  devrt::Result<std::map<std::string, std::string>> sections = global_symbol_sections(dir->relpath("libvalue.a.0.o"));
  REQUIRE(sections.ok());
  CHECK((*sections)["_Z5valuev"] == ".text");

  REQUIRE(create_executable(dir->relpath("prog"), {dir->relpath("main.cc"), dir->relpath("libvalue.a")}).ok());
  devrt::Result<std::string> out = run_and_capture({dir->relpath("prog")});
  REQUIRE(out.ok());
  CHECK(*out == "7\n");

  Compiler named = cross_compiler("devrt-missing-cross-g++", {"-O2"});
  CHECK(named(dir->relpath("y.so"), {dir->relpath("value.cc")}).code() == ErrorCode::unavailable);
  CHECK(named.options == std::vector<std::string>{"-O2"});
}
