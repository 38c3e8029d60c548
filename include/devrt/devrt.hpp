// SPDX-License-Identifier: Apache-2.0
// devrt: one small API over device backends, for applications: devices and their attributes,
// buffers and copies, streams and events, kernel modules and launches, workspaces, tensors and
// compiler targets. It holds no backend ABI, registry, mutex or std::vector (a program that
// includes it compiles about 10% more than <string>, <string_view>, <span>, <optional> and
// <cstdint> alone; the header-budget test, tools/header-budget.py, checks it). Apart, for code that needs them:
//   <devrt/discovery.hpp>       every backend (available or why not) and every present device
//   <devrt/build_info.hpp>      what this devrt was built with: version, backends, options
//   <devrt/plugin.hpp>          loading backend plugins at run time
//   <devrt/backend/workspace_pool.hpp>  managing workspace pools
//   <devrt/memory_stats.hpp>    memory statistics, the allocation history, shutdown()
//   <devrt/backend/attribute_value.hpp> attributes chosen at run time, as one std::variant
//   <devrt/backend/backend.hpp>         backend authors: concepts, the C ABI, the registry, registrars
#ifndef DEVRT_DEVRT_HPP
#define DEVRT_DEVRT_HPP

#include <devrt/attribute.hpp>
#include <devrt/config.hpp>
#include <devrt/device.hpp>
#include <devrt/dlpack.hpp>
#include <devrt/dtype.hpp>
#include <devrt/log.hpp>
#include <devrt/memory.hpp>
#include <devrt/module.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>
#include <devrt/target.hpp>
#include <devrt/tensor.hpp>
#include <devrt/workspace.hpp>

#endif // DEVRT_DEVRT_HPP
