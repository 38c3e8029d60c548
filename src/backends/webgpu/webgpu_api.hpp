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

// ---- Layouts, as webgpu.h has them -----------------------------------------------------------
// Every size and field offset above, measured by tools/webgpu-layouts.py against webgpu.h of
// webgpu-native/webgpu-headers c51643d3225f037f8a55bb2108fa5fbe9f4ea982 (2025-05-30; unchanged
// through b3f67b8, 2026-07-10) and printed with --emit. A declaration edited by mistake fails to
// compile here; one changed on purpose is measured again with the tool first.
static_assert(sizeof(WGPUStringView) == 16);
static_assert(offsetof(WGPUStringView, data) == 0);
static_assert(offsetof(WGPUStringView, length) == 8);
static_assert(sizeof(WGPUChainedStruct) == 16);
static_assert(offsetof(WGPUChainedStruct, next) == 0);
static_assert(offsetof(WGPUChainedStruct, sType) == 8);
static_assert(sizeof(WGPUFuture) == 8);
static_assert(offsetof(WGPUFuture, id) == 0);
static_assert(sizeof(WGPURequestAdapterOptions) == 32);
static_assert(offsetof(WGPURequestAdapterOptions, nextInChain) == 0);
static_assert(offsetof(WGPURequestAdapterOptions, featureLevel) == 8);
static_assert(offsetof(WGPURequestAdapterOptions, powerPreference) == 12);
static_assert(offsetof(WGPURequestAdapterOptions, forceFallbackAdapter) == 16);
static_assert(offsetof(WGPURequestAdapterOptions, backendType) == 20);
static_assert(offsetof(WGPURequestAdapterOptions, compatibleSurface) == 24);
static_assert(sizeof(WGPUAdapterInfo) == 96);
static_assert(offsetof(WGPUAdapterInfo, nextInChain) == 0);
static_assert(offsetof(WGPUAdapterInfo, vendor) == 8);
static_assert(offsetof(WGPUAdapterInfo, architecture) == 24);
static_assert(offsetof(WGPUAdapterInfo, device) == 40);
static_assert(offsetof(WGPUAdapterInfo, description) == 56);
static_assert(offsetof(WGPUAdapterInfo, backendType) == 72);
static_assert(offsetof(WGPUAdapterInfo, adapterType) == 76);
static_assert(offsetof(WGPUAdapterInfo, vendorID) == 80);
static_assert(offsetof(WGPUAdapterInfo, deviceID) == 84);
static_assert(offsetof(WGPUAdapterInfo, subgroupMinSize) == 88);
static_assert(offsetof(WGPUAdapterInfo, subgroupMaxSize) == 92);
static_assert(sizeof(WGPULimits) == 152);
static_assert(offsetof(WGPULimits, nextInChain) == 0);
static_assert(offsetof(WGPULimits, maxTextureArrayLayers) == 20);
static_assert(offsetof(WGPULimits, maxBindingsPerBindGroup) == 32);
static_assert(offsetof(WGPULimits, maxDynamicStorageBuffersPerPipelineLayout) == 40);
static_assert(offsetof(WGPULimits, maxStorageBuffersPerShaderStage) == 52);
static_assert(offsetof(WGPULimits, maxUniformBuffersPerShaderStage) == 60);
static_assert(offsetof(WGPULimits, maxStorageBufferBindingSize) == 72);
static_assert(offsetof(WGPULimits, minStorageBufferOffsetAlignment) == 84);
static_assert(offsetof(WGPULimits, maxVertexBuffers) == 88);
static_assert(offsetof(WGPULimits, maxBufferSize) == 96);
static_assert(offsetof(WGPULimits, maxInterStageShaderVariables) == 112);
static_assert(offsetof(WGPULimits, maxColorAttachmentBytesPerSample) == 120);
static_assert(offsetof(WGPULimits, maxComputeInvocationsPerWorkgroup) == 128);
static_assert(offsetof(WGPULimits, maxComputeWorkgroupSizeZ) == 140);
static_assert(offsetof(WGPULimits, maxComputeWorkgroupsPerDimension) == 144);
static_assert(offsetof(WGPULimits, maxImmediateSize) == 148);
static_assert(sizeof(WGPUQueueDescriptor) == 24);
static_assert(offsetof(WGPUQueueDescriptor, nextInChain) == 0);
static_assert(offsetof(WGPUQueueDescriptor, label) == 8);
static_assert(sizeof(WGPUDeviceDescriptor) == 144);
static_assert(offsetof(WGPUDeviceDescriptor, nextInChain) == 0);
static_assert(offsetof(WGPUDeviceDescriptor, label) == 8);
static_assert(offsetof(WGPUDeviceDescriptor, requiredFeatureCount) == 24);
static_assert(offsetof(WGPUDeviceDescriptor, requiredFeatures) == 32);
static_assert(offsetof(WGPUDeviceDescriptor, requiredLimits) == 40);
static_assert(offsetof(WGPUDeviceDescriptor, defaultQueue) == 48);
static_assert(offsetof(WGPUDeviceDescriptor, deviceLostCallbackInfo) == 72);
static_assert(offsetof(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo) == 112);
static_assert(sizeof(WGPUBufferDescriptor) == 48);
static_assert(offsetof(WGPUBufferDescriptor, nextInChain) == 0);
static_assert(offsetof(WGPUBufferDescriptor, label) == 8);
static_assert(offsetof(WGPUBufferDescriptor, usage) == 24);
static_assert(offsetof(WGPUBufferDescriptor, size) == 32);
static_assert(offsetof(WGPUBufferDescriptor, mappedAtCreation) == 40);
static_assert(sizeof(WGPUShaderSourceWGSL) == 32);
static_assert(offsetof(WGPUShaderSourceWGSL, chain) == 0);
static_assert(offsetof(WGPUShaderSourceWGSL, code) == 16);
static_assert(sizeof(WGPUShaderModuleDescriptor) == 24);
static_assert(offsetof(WGPUShaderModuleDescriptor, nextInChain) == 0);
static_assert(offsetof(WGPUShaderModuleDescriptor, label) == 8);
static_assert(sizeof(WGPUComputeState) == 48);
static_assert(offsetof(WGPUComputeState, nextInChain) == 0);
static_assert(offsetof(WGPUComputeState, module) == 8);
static_assert(offsetof(WGPUComputeState, entryPoint) == 16);
static_assert(offsetof(WGPUComputeState, constantCount) == 32);
static_assert(offsetof(WGPUComputeState, constants) == 40);
static_assert(sizeof(WGPUComputePipelineDescriptor) == 80);
static_assert(offsetof(WGPUComputePipelineDescriptor, nextInChain) == 0);
static_assert(offsetof(WGPUComputePipelineDescriptor, label) == 8);
static_assert(offsetof(WGPUComputePipelineDescriptor, layout) == 24);
static_assert(offsetof(WGPUComputePipelineDescriptor, compute) == 32);
static_assert(sizeof(WGPUBindGroupEntry) == 56);
static_assert(offsetof(WGPUBindGroupEntry, nextInChain) == 0);
static_assert(offsetof(WGPUBindGroupEntry, binding) == 8);
static_assert(offsetof(WGPUBindGroupEntry, buffer) == 16);
static_assert(offsetof(WGPUBindGroupEntry, offset) == 24);
static_assert(offsetof(WGPUBindGroupEntry, size) == 32);
static_assert(offsetof(WGPUBindGroupEntry, sampler) == 40);
static_assert(offsetof(WGPUBindGroupEntry, textureView) == 48);
static_assert(sizeof(WGPUBindGroupDescriptor) == 48);
static_assert(offsetof(WGPUBindGroupDescriptor, nextInChain) == 0);
static_assert(offsetof(WGPUBindGroupDescriptor, label) == 8);
static_assert(offsetof(WGPUBindGroupDescriptor, layout) == 24);
static_assert(offsetof(WGPUBindGroupDescriptor, entryCount) == 32);
static_assert(offsetof(WGPUBindGroupDescriptor, entries) == 40);
static_assert(sizeof(WGPUCompilationMessage) == 64);
static_assert(offsetof(WGPUCompilationMessage, nextInChain) == 0);
static_assert(offsetof(WGPUCompilationMessage, message) == 8);
static_assert(offsetof(WGPUCompilationMessage, type) == 24);
static_assert(offsetof(WGPUCompilationMessage, length) == 56);
static_assert(sizeof(WGPUCompilationInfo) == 24);
static_assert(offsetof(WGPUCompilationInfo, nextInChain) == 0);
static_assert(offsetof(WGPUCompilationInfo, messageCount) == 8);
static_assert(offsetof(WGPUCompilationInfo, messages) == 16);

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_API_HPP
