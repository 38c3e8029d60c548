// SPDX-License-Identifier: Apache-2.0
#include "null_backend.hpp"

DEVRT_REGISTER_BACKEND(null, devrt::null::NullBackend)
