// SPDX-License-Identifier: Apache-2.0
// devrt-server's host-code decisions (src/remote/host_code.hpp) as pure functions: which
// devices run kernels inside the server, against the devices recorded in test/fixtures (an H100
// machine's Vulkan and OpenCL devices, PoCL, lavapipe, Dawn over llvmpipe, an Adreno) and against
// the devices present; and which OpenCL C sources and build options would read a server file.
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <devrt/devrt.hpp>
#include <devrt/discovery.hpp>
#include <devrt/target.hpp>

#include "remote/host_code.hpp"

namespace {

using devrt::DeviceKind;
using devrt::Target;
using devrt::server::check_build_options;
using devrt::server::check_source_reads_no_files;
using devrt::server::kernels_run_in_process;

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(DEVRT_TEST_FIXTURES) + "/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value after `key` on each line that has it ("key = value" or "key   value"), in order.
std::vector<std::string> values(const std::string& text, const std::string& key) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find(key);
    if (at == std::string::npos || line.find_first_not_of(" \t") != at) continue;
    std::size_t value = line.find_first_not_of(" \t=", at + key.size());
    if (value != std::string::npos) out.push_back(line.substr(value));
  }
  return out;
}

} // namespace

TEST_CASE("Vulkan devices recorded on real machines: CPU types run in the server, GPUs do not", "[host_code]") {
  const std::vector<std::pair<std::string, bool>> fixtures = {{"lavapipe/vulkaninfo.txt", true},
                                                              {"nvidia-h100/vulkaninfo.txt", false}};
  for (const auto& [fixture, in_process] : fixtures) {
    const std::string text = read_fixture(fixture);
    const std::vector<std::string> types = values(text, "deviceType"), names = values(text, "deviceName");
    REQUIRE(types.size() == 1);
    REQUIRE(names.size() == 1);
    INFO(fixture << ": " << types[0] << ", " << names[0]);
    // The vulkan backend's target says the type as TVM's runtime does ("cpu", "discrete", ...).
    Target target("vulkan");
    target.set("device_type", types[0] == "PHYSICAL_DEVICE_TYPE_CPU" ? "cpu" : "discrete");
    CHECK(kernels_run_in_process(DeviceKind::vulkan, target, names[0]) == in_process);
    // By type alone, and by name alone.
    CHECK(kernels_run_in_process(DeviceKind::vulkan, target, "") == in_process);
    CHECK(kernels_run_in_process(DeviceKind::vulkan, Target(), names[0]) == in_process);
  }
}

TEST_CASE("OpenCL devices recorded on real machines: PoCL's CPU device runs in the server", "[host_code]") {
  // The H100 machine has PoCL's CPU device beside NVIDIA's GPU; the Adreno's is a GPU.
  for (const char* fixture : {"nvidia-h100/clinfo.txt", "adreno-740/clinfo.txt"}) {
    const std::string text = read_fixture(fixture);
    const std::vector<std::string> types = values(text, "Device Type");
    std::vector<std::string> names = values(text, "Device Name");
    REQUIRE(!types.empty());
    REQUIRE(names.size() >= types.size());
    for (std::size_t i = 0; i < types.size(); ++i) {
      INFO(fixture << ": " << names[i] << " (" << types[i] << ")");
      Target target("opencl");
      target.set("device", types[i] == "CPU" ? "cpu" : "gpu");
      CHECK(kernels_run_in_process(DeviceKind::opencl, target, names[i]) == (types[i] == "CPU"));
    }
  }
}

TEST_CASE("a WebGPU adapter over llvmpipe runs in the server though its API says only its name", "[host_code]") {
  const std::string text = read_fixture("webgpu-llvmpipe/adapter.txt");
  const std::vector<std::string> names = values(text, "device:");
  REQUIRE(names.size() == 1);
  Target target("webgpu");
  target.set("device_name", names[0]);
  target.set("backend", "OpenGL ES");
  CHECK(kernels_run_in_process(DeviceKind::webgpu, target, names[0]));
  CHECK_FALSE(kernels_run_in_process(DeviceKind::webgpu, Target("webgpu"), "NVIDIA H100 80GB HBM3"));
  CHECK(kernels_run_in_process(DeviceKind::webgpu, Target("webgpu"), "SwiftShader Device (Subzero)"));
  CHECK_FALSE(kernels_run_in_process(DeviceKind::cuda, Target("cuda"), "NVIDIA H100 80GB HBM3"));
  CHECK(kernels_run_in_process(DeviceKind::cpu, Target(), ""));
}

TEST_CASE("every device present here runs its kernels in this process", "[host_code]") {
  // This machine has CPU implementations only: PoCL, lavapipe, Dawn over llvmpipe, the cpu backend.
  int checked = 0;
  for (devrt::Device device : devrt::devices()) { // devrt/discovery.hpp
    if (device.kind == DeviceKind::remote) continue;
    devrt::Result<Target> target = devrt::detect_target(device);
    devrt::Result<std::optional<std::string>> attribute = devrt::get_attribute<devrt::Attribute::device_name>(device);
    const std::string name = attribute.ok() && attribute->has_value() ? **attribute : "";
    INFO(devrt::device_kind_name(device.kind) << ":" << device.id << " " << name);
    CHECK(kernels_run_in_process(device.kind, target.ok() ? *target : Target(), name));
    ++checked;
  }
  CHECK(checked > 0); // the cpu backend at least
}

TEST_CASE("OpenCL C that names a file to read is refused, however it is spelt", "[host_code]") {
  const std::vector<std::string> reading = {
      "#include \"/etc/passwd\"\n",
      "  #   include </etc/passwd>\n",
      "#/* a comment */include \"/etc/passwd\"\n",
      "%:include \"/etc/passwd\"\n",
      "?\?=include \"/etc/passwd\"\n",
      "#inc\\\nlude \"/etc/passwd\"\n",
      "#\\\r\ninclude \"/etc/passwd\"\n",
      "#include_next <x.h>\n",
      "#import \"/etc/passwd\"\n",
      "#embed \"/etc/passwd\"\n",
      "#define FILE \"/etc/passwd\"\n#include FILE\n",
      "#if __has_include(\"/etc/passwd\")\n#endif\n",
      "#define PROBE __has_include_next(<x>)\n",
      "#if __has_embed(\"/etc/passwd\")\n#endif\n",
      "_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n",
      "#pragma GCC dependency \"/etc/passwd\"\n",
      "#pragma clang module import x\n",
  };
  for (const std::string& source : reading) {
    INFO(source);
    const devrt::Status s = check_source_reads_no_files(source);
    CHECK(s.code() == devrt::ErrorCode::permission_denied);
    CHECK(std::string(s.message()).find("reads files of the server") != std::string::npos);
  }
  // A directive after a comment on its line is one too.
  CHECK(check_source_reads_no_files("/* one */ /* two */ #include \"x\"\n").code() ==
        devrt::ErrorCode::permission_denied);
  // Reading nothing: directives that do not, the words inside strings and comments.
  const std::vector<std::string> fine = {
      "#define N 4\n#ifdef N\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
      "__kernel void k(__global float* x) { x[get_global_id(0)] *= N; }\n",
      "// #include \"/etc/passwd\"\n/* #include <x> */ __kernel void k() {}\n",
      "__constant char text[] = \"#include __has_include\";\n__kernel void k() {}\n",
      "#pragma unroll\n#pragma clang loop unroll(full)\n#line 10 \"named.cl\"\n#\n#error stop\n",
      "float include = 1.0f; int embed; float a = b ? c : d; float pct = 5 % 2;\n",
  };
  for (const std::string& source : fine) {
    INFO(source);
    CHECK(check_source_reads_no_files(source).ok());
  }
}

TEST_CASE("build options that name a file are refused", "[host_code]") {
  for (const char* options :
       {"-I /tmp", "-I/tmp", "-include /etc/passwd", "-imacros /etc/passwd", "@/etc/passwd", "-D N=1 /etc/passwd",
        "-cl-std=CL1.2 -x cl", "-D -I/tmp", "-o /tmp/out", "-cl-kernel-arg-info -idirafter /tmp", "-cl-/etc/passwd"}) {
    INFO(options);
    CHECK(check_build_options(options).code() == devrt::ErrorCode::permission_denied);
  }
  for (const char* options :
       {"", "  ", "-D N=4", "-DN=4 -UX -cl-fast-relaxed-math -cl-std=CL1.2", "-D N -w -Werror", "-cl-mad-enable\t-g"}) {
    INFO(options);
    CHECK(check_build_options(options).ok());
  }
  CHECK(check_build_options("-D").code() == devrt::ErrorCode::invalid_argument);
}
