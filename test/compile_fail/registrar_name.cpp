// SPDX-License-Identifier: Apache-2.0
// DEVRT_REGISTER_BACKEND(id, Type): Type::name must be the identifier, the backend's name in the
// build. Here a copied template registered under a new identifier keeps its old name.
#include "backends/null/null_backend.hpp"

#ifdef DEVRT_EXPECT_OK
DEVRT_REGISTER_BACKEND(null, devrt::null::NullBackend)
#else
DEVRT_REGISTER_BACKEND(foo, devrt::null::NullBackend)
#endif
