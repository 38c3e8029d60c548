// SPDX-License-Identifier: Apache-2.0
// bench-kernels' raw OpenCL side: what a hand-written OpenCL program does for each benchmark,
// through the same dlopened entry points devrt's backend uses.
#include "bench_kernels.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "backends/opencl/opencl_api.hpp"
#include "support/dynamic_library.hpp"

namespace bench_kernels {
namespace {

// ---- OpenCL, raw ---------------------------------------------------------------------------------

struct OpenclLibrary {
  devrt::opencl::Api api;
  devrt::detail::DynamicLibrary library;
  std::string error;
};

OpenclLibrary& opencl_library() {
  static OpenclLibrary* lib = [] {
    auto* l = new OpenclLibrary();
    if (devrt::Status opened = l->library.open(devrt::opencl::kLoader); !opened.ok()) {
      l->error = opened.message();
      return l;
    }
#define DEVRT_BENCH_RESOLVE(name) l->library.resolve(#name, l->api.name);
    DEVRT_OPENCL_SYMBOLS(DEVRT_BENCH_RESOLVE)
#undef DEVRT_BENCH_RESOLVE
    return l;
  }();
  return *lib;
}

class RawOpencl final : public RawDevice {
public:
  // Opens the device called `name` on any platform.
  explicit RawOpencl(const std::string& name) : api_(opencl_library().api) {
    if (!opencl_library().error.empty()) {
      error = "raw OpenCL: " + opencl_library().error;
      return;
    }
    cl_uint platforms = 0;
    api_.clGetPlatformIDs(0, nullptr, &platforms);
    std::vector<cl_platform_id> platform(platforms);
    api_.clGetPlatformIDs(platforms, platform.data(), nullptr);
    for (cl_platform_id p : platform) {
      cl_uint count = 0;
      if (api_.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
      std::vector<cl_device_id> ids(count);
      api_.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
      for (cl_device_id id : ids) {
        char text[256] = {};
        api_.clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof text - 1, text, nullptr);
        if (device_ == nullptr && name == text) device_ = id;
      }
    }
    if (device_ == nullptr) {
      error = "raw OpenCL found no device named '" + name + "'";
      return;
    }
    cl_device_type type = 0;
    api_.clGetDeviceInfo(device_, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    cl_int err = 0;
    context_ = api_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    queue_ = api_.clCreateCommandQueue(context_, device_, 0, &err);
    std::string source = read_file(DEVRT_BENCH_OPENCL_SOURCE);
    const char* text = source.c_str();
    cl_program program = api_.clCreateProgramWithSource(context_, 1, &text, nullptr, &err);
    buffer_ = api_.clCreateBuffer(context_, CL_MEM_READ_WRITE, kLaunchBufferBytes, nullptr, &err);
    if (err != CL_SUCCESS) error = "raw OpenCL: setup failed (" + std::to_string(err) + ")";
    if (api_.clBuildProgram(program, 1, &device_, "", nullptr, nullptr) != CL_SUCCESS) {
      launch_error = "raw OpenCL: clBuildProgram failed";
      return;
    }
    kernel_ = api_.clCreateKernel(program, "scale", &err);
  }

  // Two markers on a queue made with CL_QUEUE_PROFILING_ENABLE, the second waited for, their
  // CL_PROFILING_COMMAND_END read.
  void timed_pair(benchmark::State& state) override {
    cl_int err = CL_SUCCESS;
    cl_command_queue queue = api_.clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
      state.SkipWithError("raw OpenCL: no profiling queue");
      return;
    }
    for (auto _ : state) {
      cl_event start = nullptr, end = nullptr;
      api_.clEnqueueMarkerWithWaitList(queue, 0, nullptr, &start);
      api_.clEnqueueMarkerWithWaitList(queue, 0, nullptr, &end);
      api_.clWaitForEvents(1, &end);
      cl_ulong from = 0, to = 0;
      api_.clGetEventProfilingInfo(start, CL_PROFILING_COMMAND_END, sizeof from, &from, nullptr);
      api_.clGetEventProfilingInfo(end, CL_PROFILING_COMMAND_END, sizeof to, &to, nullptr);
      benchmark::DoNotOptimize(to - from);
      api_.clReleaseEvent(start);
      api_.clReleaseEvent(end);
    }
    api_.clReleaseCommandQueue(queue);
  }

  // cl_khr_command_buffer: kGraphLaunches kernels chained by sync points, finalized once, then
  // enqueued and waited for each time.
  void graph_replay(benchmark::State& state) override {
    using GetAddress = void* (*)(cl_platform_id, const char*);
    GetAddress get = nullptr;
    cl_platform_id platform = nullptr;
    api_.clGetDeviceInfo(device_, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
    if (!opencl_library().library.resolve("clGetExtensionFunctionAddressForPlatform", get) || get == nullptr) {
      return state.SkipWithError("raw OpenCL: no clGetExtensionFunctionAddressForPlatform");
    }
    auto create = reinterpret_cast<clCreateCommandBufferKHR_fn>(get(platform, "clCreateCommandBufferKHR"));
    auto record = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(get(platform, "clCommandNDRangeKernelKHR"));
    auto finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(get(platform, "clFinalizeCommandBufferKHR"));
    auto enqueue_buffer = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(get(platform, "clEnqueueCommandBufferKHR"));
    auto release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(get(platform, "clReleaseCommandBufferKHR"));
    if (create == nullptr || record == nullptr || finalize == nullptr || enqueue_buffer == nullptr ||
        release == nullptr) {
      return state.SkipWithError("raw OpenCL: the platform has no cl_khr_command_buffer");
    }
    cl_int err = CL_SUCCESS;
    cl_command_buffer_khr commands = create(1, &queue_, nullptr, &err);
    if (err != CL_SUCCESS) return state.SkipWithError("raw OpenCL: clCreateCommandBufferKHR failed");
    float factor = 1.0f;
    cl_int n = static_cast<cl_int>(kGraphElements);
    std::size_t global = kGraphElements, local = kBlock;
    api_.clSetKernelArg(kernel_, 0, sizeof(cl_mem), &buffer_);
    api_.clSetKernelArg(kernel_, 1, sizeof factor, &factor);
    api_.clSetKernelArg(kernel_, 2, sizeof n, &n);
    cl_sync_point_khr point = 0;
    for (int i = 0; i < kGraphLaunches; ++i) {
      const cl_sync_point_khr after = point;
      record(commands, nullptr, nullptr, kernel_, 1, nullptr, &global, &local, i == 0 ? 0 : 1,
             i == 0 ? nullptr : &after, &point, nullptr);
    }
    finalize(commands);
    for (auto _ : state) {
      enqueue_buffer(0, nullptr, commands, 0, nullptr, nullptr);
      api_.clFinish(queue_);
    }
    release(commands);
    state.SetItemsProcessed(state.iterations() * kGraphLaunches);
  }

  void launch_sync(benchmark::State& state) override {
    for (auto _ : state) {
      enqueue();
      api_.clFinish(queue_);
    }
  }
  void launch_batch(benchmark::State& state) override {
    for (auto _ : state) {
      for (int i = 0; i < kBatch; ++i) enqueue();
      api_.clFinish(queue_);
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
  }
  void alloc_free(benchmark::State& state) override {
    for (auto _ : state) {
      cl_int err = 0;
      cl_mem mem =
          api_.clCreateBuffer(context_, CL_MEM_READ_WRITE, static_cast<std::size_t>(state.range(0)), nullptr, &err);
      api_.clReleaseMemObject(mem);
    }
  }
  void copy(benchmark::State& state, bool write) override {
    auto n = static_cast<std::size_t>(state.range(0));
    std::vector<unsigned char> host(n, 1);
    cl_int err = 0;
    cl_mem mem = api_.clCreateBuffer(context_, CL_MEM_READ_WRITE, n, nullptr, &err);
    for (auto _ : state) {
      if (write) {
        api_.clEnqueueWriteBuffer(queue_, mem, CL_FALSE, 0, n, host.data(), 0, nullptr, nullptr);
        api_.clFinish(queue_);
      } else {
        api_.clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, n, host.data(), 0, nullptr, nullptr);
      }
    }
    api_.clReleaseMemObject(mem);
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
  }
  void texture_copy(benchmark::State& state, bool write) override {
    auto n = static_cast<std::size_t>(state.range(0));
    std::vector<unsigned char> host(n, 1);
    const cl_image_format format{CL_RGBA, CL_FLOAT};
    cl_image_desc desc{};
    // One layer of an image array, as devrt makes a texture by default (TVM main's layout).
    desc.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY;
    desc.image_width = kTextureWidth;
    desc.image_height = n / kTextureRowBytes;
    desc.image_array_size = 1;
    cl_int err = 0;
    cl_mem image = api_.clCreateImage(context_, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
    if (err != CL_SUCCESS) return state.SkipWithError(("raw clCreateImage failed: " + std::to_string(err)).c_str());
    const std::size_t origin[3] = {0, 0, 0};
    const std::size_t region[3] = {desc.image_width, desc.image_height, 1};
    for (auto _ : state) {
      if (write) {
        api_.clEnqueueWriteImage(queue_, image, CL_FALSE, origin, region, kTextureRowBytes, n, host.data(), 0, nullptr,
                                 nullptr);
        api_.clFinish(queue_);
      } else {
        api_.clEnqueueReadImage(queue_, image, CL_TRUE, origin, region, kTextureRowBytes, n, host.data(), 0, nullptr,
                                nullptr);
      }
    }
    api_.clReleaseMemObject(image);
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
  }

private:
  void enqueue() {
    float factor = 1.0f;
    cl_int n = 0;
    std::size_t global = kBlock, local = kBlock;
    api_.clSetKernelArg(kernel_, 0, sizeof(cl_mem), &buffer_);
    api_.clSetKernelArg(kernel_, 1, sizeof factor, &factor);
    api_.clSetKernelArg(kernel_, 2, sizeof n, &n);
    api_.clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  }

  const devrt::opencl::Api& api_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_mem buffer_ = nullptr;
};

} // namespace

std::shared_ptr<RawDevice> open_raw_opencl(const std::string& name) { return std::make_shared<RawOpencl>(name); }

} // namespace bench_kernels
