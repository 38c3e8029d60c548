// SPDX-License-Identifier: Apache-2.0
// devrt_comm: collectives across devices and processes over NCCL, RCCL and MPI (docs/collectives.md).
// A separate library (Meson feature `comm`, pkg-config `devrt-comm`): the core and firmware builds
// never see it. Hosted platforms with MPI only.
#ifndef DEVRT_COMM_HPP
#define DEVRT_COMM_HPP

#include <devrt/comm/communicator.hpp>
#include <devrt/comm/mpi.hpp>

#endif // DEVRT_COMM_HPP
