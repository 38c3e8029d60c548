// SPDX-License-Identifier: Apache-2.0
// The part of the WebGPU C API (`webgpu.h`) the webgpu backend uses, declared here because the
// implementations ship no header of their own: Dawn generates its header from dawn.json, and
// wgpu-native follows webgpu-native/webgpu-headers. These declarations match the ABI of
// webgpu-headers as of 2025-05 (the standardised API: string views, callback-info structs with
// two userdata pointers, 64-bit flags, statuses counted from 1), which Dawn 29b45b55 (npm
// bun-webgpu-linux-x64 0.1.7) implements; test/integration checks them against the real library.
// The library is opened with dlopen at first use and never linked: nothing here is a prototype.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_API_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_API_HPP

#include <cstddef>
#include <cstdint>

namespace devrt::webgpu {

// Plain layout-compatible structs and function-pointer types (GCC and Clang give C and C++
// function types one calling convention, so no extern "C" is needed, and templates are allowed).

// ---- Handles (opaque), scalars ---------------------------------------------------------------

using WGPUInstance = struct WGPUInstanceImpl*;
using WGPUAdapter = struct WGPUAdapterImpl*;
using WGPUDevice = struct WGPUDeviceImpl*;
using WGPUQueue = struct WGPUQueueImpl*;
using WGPUBuffer = struct WGPUBufferImpl*;
using WGPUShaderModule = struct WGPUShaderModuleImpl*;
using WGPUComputePipeline = struct WGPUComputePipelineImpl*;
using WGPUPipelineLayout = struct WGPUPipelineLayoutImpl*;
using WGPUBindGroupLayout = struct WGPUBindGroupLayoutImpl*;
using WGPUBindGroup = struct WGPUBindGroupImpl*;
using WGPUCommandEncoder = struct WGPUCommandEncoderImpl*;
using WGPUComputePassEncoder = struct WGPUComputePassEncoderImpl*;
using WGPUCommandBuffer = struct WGPUCommandBufferImpl*;
using WGPUSampler = struct WGPUSamplerImpl*;
using WGPUTextureView = struct WGPUTextureViewImpl*;
using WGPUSurface = struct WGPUSurfaceImpl*;

using WGPUBool = std::uint32_t;
using WGPUFlags = std::uint64_t; // buffer usages, map modes
using WGPUEnum = std::uint32_t;  // every enum is 32 bits wide (the headers force 0x7FFFFFFF)

// Enum values, each as the headers number it.
inline constexpr WGPUEnum kBackendNull = 1, kBackendD3D12 = 4, kBackendMetal = 5, kBackendVulkan = 6,
                          kBackendOpenGL = 7, kBackendOpenGLES = 8;
inline constexpr WGPUEnum kAdapterDiscreteGPU = 1, kAdapterIntegratedGPU = 2, kAdapterCPU = 3, kAdapterUnknown = 4;
inline constexpr WGPUEnum kFeatureLevelCompatibility = 1, kFeatureLevelCore = 2;
inline constexpr WGPUEnum kCallbackModeAllowProcessEvents = 2;
inline constexpr WGPUEnum kSuccess = 1; // every status enum: WGPUStatus, RequestAdapter, MapAsync, QueueWorkDone, ...
inline constexpr WGPUEnum kRequestAdapterUnavailable = 3; // no adapter of that kind (not an error)
// WGPUDeviceLostReason: the device was released (Destroyed), the instance went (CallbackCancelled).
inline constexpr WGPUEnum kDeviceLostDestroyed = 2, kDeviceLostCallbackCancelled = 3;
inline constexpr WGPUEnum kErrorNone = 1, kErrorValidation = 2, kErrorOutOfMemory = 3, kErrorInternal = 4;
inline constexpr WGPUEnum kErrorFilterValidation = 1, kErrorFilterOutOfMemory = 2, kErrorFilterInternal = 3;
inline constexpr WGPUEnum kSTypeShaderSourceWGSL = 2;
inline constexpr WGPUEnum kCompilationMessageError = 1;
inline constexpr WGPUEnum kFeatureShaderF16 = 0x0A, kFeatureSubgroups = 0x11;
inline constexpr WGPUFlags kUsageMapRead = 0x1, kUsageMapWrite = 0x2, kUsageCopySrc = 0x4, kUsageCopyDst = 0x8,
                           kUsageUniform = 0x40, kUsageStorage = 0x80;
inline constexpr WGPUFlags kMapRead = 0x1, kMapWrite = 0x2;

// ---- Structs ---------------------------------------------------------------------------------

struct WGPUStringView {
  const char* data; // not NUL-terminated unless length is SIZE_MAX ("up to the NUL")
  std::size_t length;
};
struct WGPUChainedStruct {
  WGPUChainedStruct* next;
  WGPUEnum sType;
};
struct WGPUFuture {
  std::uint64_t id;
};

struct WGPURequestAdapterOptions {
  WGPUChainedStruct* nextInChain;
  WGPUEnum featureLevel;
  WGPUEnum powerPreference;
  WGPUBool forceFallbackAdapter;
  WGPUEnum backendType;
  WGPUSurface compatibleSurface;
};

using WGPURequestAdapterCallback = void (*)(WGPUEnum status, WGPUAdapter adapter, WGPUStringView message,
                                            void* userdata1, void* userdata2);
using WGPURequestDeviceCallback = void (*)(WGPUEnum status, WGPUDevice device, WGPUStringView message, void* userdata1,
                                           void* userdata2);
using WGPUBufferMapCallback = void (*)(WGPUEnum status, WGPUStringView message, void* userdata1, void* userdata2);
using WGPUQueueWorkDoneCallback = void (*)(WGPUEnum status, WGPUStringView message, void* userdata1, void* userdata2);
using WGPUPopErrorScopeCallback = void (*)(WGPUEnum status, WGPUEnum type, WGPUStringView message, void* userdata1,
                                           void* userdata2);
using WGPUDeviceLostCallback = void (*)(const WGPUDevice* device, WGPUEnum reason, WGPUStringView message,
                                        void* userdata1, void* userdata2);
using WGPUUncapturedErrorCallback = void (*)(const WGPUDevice* device, WGPUEnum type, WGPUStringView message,
                                             void* userdata1, void* userdata2);

// The callback-info shape every asynchronous call takes: {chain, mode, callback, userdata x2}.
template <class Callback>
struct WGPUCallbackInfo {
  WGPUChainedStruct* nextInChain;
  WGPUEnum mode;
  Callback callback;
  void* userdata1;
  void* userdata2;
};
using WGPURequestAdapterCallbackInfo = WGPUCallbackInfo<WGPURequestAdapterCallback>;
using WGPURequestDeviceCallbackInfo = WGPUCallbackInfo<WGPURequestDeviceCallback>;
using WGPUBufferMapCallbackInfo = WGPUCallbackInfo<WGPUBufferMapCallback>;
using WGPUQueueWorkDoneCallbackInfo = WGPUCallbackInfo<WGPUQueueWorkDoneCallback>;
using WGPUPopErrorScopeCallbackInfo = WGPUCallbackInfo<WGPUPopErrorScopeCallback>;
using WGPUDeviceLostCallbackInfo = WGPUCallbackInfo<WGPUDeviceLostCallback>;
struct WGPUUncapturedErrorCallbackInfo { // no mode: it may fire at any time
  WGPUChainedStruct* nextInChain;
  WGPUUncapturedErrorCallback callback;
  void* userdata1;
  void* userdata2;
};

struct WGPUAdapterInfo {
  WGPUChainedStruct* nextInChain;
  WGPUStringView vendor;
  WGPUStringView architecture;
  WGPUStringView device;
  WGPUStringView description;
  WGPUEnum backendType;
  WGPUEnum adapterType;
  std::uint32_t vendorID;
  std::uint32_t deviceID;
  std::uint32_t subgroupMinSize;
  std::uint32_t subgroupMaxSize;
};

// WGPULimits, in the headers' order; WGPU_LIMIT_U32_UNDEFINED / U64 where a device descriptor asks
// for the defaults.
struct WGPULimits {
  WGPUChainedStruct* nextInChain;
  std::uint32_t maxTextureDimension1D, maxTextureDimension2D, maxTextureDimension3D, maxTextureArrayLayers;
  std::uint32_t maxBindGroups, maxBindGroupsPlusVertexBuffers, maxBindingsPerBindGroup;
  std::uint32_t maxDynamicUniformBuffersPerPipelineLayout, maxDynamicStorageBuffersPerPipelineLayout;
  std::uint32_t maxSampledTexturesPerShaderStage, maxSamplersPerShaderStage, maxStorageBuffersPerShaderStage;
  std::uint32_t maxStorageTexturesPerShaderStage, maxUniformBuffersPerShaderStage;
  std::uint64_t maxUniformBufferBindingSize, maxStorageBufferBindingSize;
  std::uint32_t minUniformBufferOffsetAlignment, minStorageBufferOffsetAlignment;
  std::uint32_t maxVertexBuffers;
  std::uint64_t maxBufferSize;
  std::uint32_t maxVertexAttributes, maxVertexBufferArrayStride, maxInterStageShaderVariables;
  std::uint32_t maxColorAttachments, maxColorAttachmentBytesPerSample;
  std::uint32_t maxComputeWorkgroupStorageSize, maxComputeInvocationsPerWorkgroup;
  std::uint32_t maxComputeWorkgroupSizeX, maxComputeWorkgroupSizeY, maxComputeWorkgroupSizeZ;
  std::uint32_t maxComputeWorkgroupsPerDimension;
  std::uint32_t maxImmediateSize;
};

// Dawn's own chained struct for a request-adapter call (include/dawn/native/OpenGLBackend.h,
// RequestAdapterOptionsGetGLProc, sType 0x0005000D in Dawn's 2025 numbering): the EGL display and
// the eglGetProcAddress its OpenGL ES backend uses instead of opening a display itself.
inline constexpr WGPUEnum kSTypeDawnRequestAdapterOptionsGetGLProc = 0x0005000D;
struct DawnRequestAdapterOptionsGetGLProc {
  WGPUChainedStruct chain;
  void* (*getProc)(const char* name);
  void* display; // EGLDisplay
};

struct WGPUQueueDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
struct WGPUDeviceDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  std::size_t requiredFeatureCount;
  const WGPUEnum* requiredFeatures;
  const WGPULimits* requiredLimits;
  WGPUQueueDescriptor defaultQueue;
  WGPUDeviceLostCallbackInfo deviceLostCallbackInfo;
  WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
};

struct WGPUBufferDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUFlags usage;
  std::uint64_t size;
  WGPUBool mappedAtCreation;
};

struct WGPUShaderSourceWGSL {
  WGPUChainedStruct chain; // sType kSTypeShaderSourceWGSL
  WGPUStringView code;
};
struct WGPUShaderModuleDescriptor {
  WGPUChainedStruct* nextInChain; // the WGPUShaderSourceWGSL
  WGPUStringView label;
};

struct WGPUConstantEntry { // an override constant of a pipeline
  WGPUChainedStruct* nextInChain;
  WGPUStringView key;
  double value;
};
struct WGPUComputeState {
  WGPUChainedStruct* nextInChain;
  WGPUShaderModule module;
  WGPUStringView entryPoint;
  std::size_t constantCount;
  const WGPUConstantEntry* constants;
};
struct WGPUComputePipelineDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUPipelineLayout layout; // null: derived from the shader ("auto")
  WGPUComputeState compute;
};

struct WGPUBindGroupEntry {
  WGPUChainedStruct* nextInChain;
  std::uint32_t binding;
  WGPUBuffer buffer;
  std::uint64_t offset;
  std::uint64_t size;
  WGPUSampler sampler;
  WGPUTextureView textureView;
};
struct WGPUBindGroupDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUBindGroupLayout layout;
  std::size_t entryCount;
  const WGPUBindGroupEntry* entries;
};

struct WGPUCompilationMessage {
  WGPUChainedStruct* nextInChain;
  WGPUStringView message;
  WGPUEnum type;
  std::uint64_t lineNum, linePos, offset, length;
};
struct WGPUCompilationInfo {
  WGPUChainedStruct* nextInChain;
  std::size_t messageCount;
  const WGPUCompilationMessage* messages;
};
using WGPUCompilationInfoCallback = void (*)(WGPUEnum status, const WGPUCompilationInfo* info, void* userdata1,
                                             void* userdata2);
using WGPUCompilationInfoCallbackInfo = WGPUCallbackInfo<WGPUCompilationInfoCallback>;

// Every entry point, once: X(name, return type, parameters). The table holds pointers of exactly
// these types, resolved by name from the library.
#define DEVRT_WEBGPU_SYMBOLS(X)                                                                                        \
  X(wgpuCreateInstance, WGPUInstance, (const void* descriptor))                                                        \
  X(wgpuInstanceRequestAdapter, WGPUFuture,                                                                            \
    (WGPUInstance, const WGPURequestAdapterOptions*, WGPURequestAdapterCallbackInfo))                                  \
  X(wgpuInstanceProcessEvents, void, (WGPUInstance))                                                                   \
  X(wgpuAdapterGetInfo, WGPUEnum, (WGPUAdapter, WGPUAdapterInfo*))                                                     \
  X(wgpuAdapterInfoFreeMembers, void, (WGPUAdapterInfo))                                                               \
  X(wgpuAdapterGetLimits, WGPUEnum, (WGPUAdapter, WGPULimits*))                                                        \
  X(wgpuAdapterHasFeature, WGPUBool, (WGPUAdapter, WGPUEnum))                                                          \
  X(wgpuAdapterRequestDevice, WGPUFuture, (WGPUAdapter, const WGPUDeviceDescriptor*, WGPURequestDeviceCallbackInfo))   \
  X(wgpuAdapterRelease, void, (WGPUAdapter))                                                                           \
  X(wgpuDeviceGetQueue, WGPUQueue, (WGPUDevice))                                                                       \
  X(wgpuQueueRelease, void, (WGPUQueue))                                                                               \
  X(wgpuDeviceRelease, void, (WGPUDevice))                                                                             \
  X(wgpuDevicePushErrorScope, void, (WGPUDevice, WGPUEnum))                                                            \
  X(wgpuDevicePopErrorScope, WGPUFuture, (WGPUDevice, WGPUPopErrorScopeCallbackInfo))                                  \
  X(wgpuDeviceCreateBuffer, WGPUBuffer, (WGPUDevice, const WGPUBufferDescriptor*))                                     \
  X(wgpuDeviceCreateShaderModule, WGPUShaderModule, (WGPUDevice, const WGPUShaderModuleDescriptor*))                   \
  X(wgpuDeviceCreateComputePipeline, WGPUComputePipeline, (WGPUDevice, const WGPUComputePipelineDescriptor*))          \
  X(wgpuDeviceCreateBindGroup, WGPUBindGroup, (WGPUDevice, const WGPUBindGroupDescriptor*))                            \
  X(wgpuDeviceCreateCommandEncoder, WGPUCommandEncoder, (WGPUDevice, const void* descriptor))                          \
  X(wgpuQueueWriteBuffer, void, (WGPUQueue, WGPUBuffer, std::uint64_t offset, const void* data, std::size_t size))     \
  X(wgpuQueueSubmit, void, (WGPUQueue, std::size_t count, const WGPUCommandBuffer* commands))                          \
  X(wgpuQueueOnSubmittedWorkDone, WGPUFuture, (WGPUQueue, WGPUQueueWorkDoneCallbackInfo))                              \
  X(wgpuBufferMapAsync, WGPUFuture,                                                                                    \
    (WGPUBuffer, WGPUFlags mode, std::size_t offset, std::size_t size, WGPUBufferMapCallbackInfo))                     \
  X(wgpuBufferGetConstMappedRange, const void*, (WGPUBuffer, std::size_t offset, std::size_t size))                    \
  X(wgpuBufferUnmap, void, (WGPUBuffer))                                                                               \
  X(wgpuBufferDestroy, void, (WGPUBuffer))                                                                             \
  X(wgpuBufferRelease, void, (WGPUBuffer))                                                                             \
  X(wgpuShaderModuleGetCompilationInfo, WGPUFuture, (WGPUShaderModule, WGPUCompilationInfoCallbackInfo))               \
  X(wgpuShaderModuleRelease, void, (WGPUShaderModule))                                                                 \
  X(wgpuComputePipelineGetBindGroupLayout, WGPUBindGroupLayout, (WGPUComputePipeline, std::uint32_t group))            \
  X(wgpuComputePipelineRelease, void, (WGPUComputePipeline))                                                           \
  X(wgpuBindGroupLayoutRelease, void, (WGPUBindGroupLayout))                                                           \
  X(wgpuBindGroupRelease, void, (WGPUBindGroup))                                                                       \
  X(wgpuCommandEncoderBeginComputePass, WGPUComputePassEncoder, (WGPUCommandEncoder, const void* descriptor))          \
  X(wgpuCommandEncoderCopyBufferToBuffer, void,                                                                        \
    (WGPUCommandEncoder, WGPUBuffer, std::uint64_t, WGPUBuffer, std::uint64_t, std::uint64_t))                         \
  X(wgpuCommandEncoderFinish, WGPUCommandBuffer, (WGPUCommandEncoder, const void* descriptor))                         \
  X(wgpuCommandEncoderRelease, void, (WGPUCommandEncoder))                                                             \
  X(wgpuComputePassEncoderSetPipeline, void, (WGPUComputePassEncoder, WGPUComputePipeline))                            \
  X(wgpuComputePassEncoderSetBindGroup, void,                                                                          \
    (WGPUComputePassEncoder, std::uint32_t, WGPUBindGroup, std::size_t, const std::uint32_t*))                         \
  X(wgpuComputePassEncoderDispatchWorkgroups, void,                                                                    \
    (WGPUComputePassEncoder, std::uint32_t, std::uint32_t, std::uint32_t))                                             \
  X(wgpuComputePassEncoderEnd, void, (WGPUComputePassEncoder))                                                         \
  X(wgpuComputePassEncoderRelease, void, (WGPUComputePassEncoder))                                                     \
  X(wgpuCommandBufferRelease, void, (WGPUCommandBuffer))

struct Api {
#define DEVRT_WEBGPU_SLOT(name, result, parameters) result(*name) parameters = nullptr;
  DEVRT_WEBGPU_SYMBOLS(DEVRT_WEBGPU_SLOT)
#undef DEVRT_WEBGPU_SLOT
};

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_API_HPP
