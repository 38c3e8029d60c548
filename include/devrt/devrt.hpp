// SPDX-License-Identifier: Apache-2.0
// devrt: one small API over device backends, for applications: include this for everything an
// application uses. Backend authors include <devrt/backend.hpp> (concepts, tables, registrars).
#ifndef DEVRT_DEVRT_HPP
#define DEVRT_DEVRT_HPP

#include <devrt/attribute.hpp>
#include <devrt/build_info.hpp>
#include <devrt/config.hpp>
#include <devrt/device.hpp>
#include <devrt/dlpack.hpp>
#include <devrt/dtype.hpp>
#include <devrt/log.hpp>
#include <devrt/memory.hpp>
#include <devrt/module.hpp>
#include <devrt/plugin.hpp>
#include <devrt/registry.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>
#include <devrt/target.hpp>
#include <devrt/tensor.hpp>
#include <devrt/workspace.hpp>

#endif // DEVRT_DEVRT_HPP
