// SPDX-License-Identifier: Apache-2.0
#include "webgpu_backend.hpp"

DEVRT_REGISTER_BACKEND(webgpu, devrt::webgpu::WebgpuBackend)
