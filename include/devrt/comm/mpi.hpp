// SPDX-License-Identifier: Apache-2.0
// Communicators from MPI: MPI is devrt_comm's bootstrap and launcher (mpirun, Slurm's srun).
// Including this header needs MPI's headers (devrt-comm's pkg-config and Meson dependency carry
// them). Part of devrt_comm.
#ifndef DEVRT_COMM_MPI_HPP
#define DEVRT_COMM_MPI_HPP

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1 // the C API only: no MPI-2 C++ bindings
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <devrt/comm/communicator.hpp>

namespace devrt::comm {

// Collective over `comm`: every rank of it calls this with its own device (one device per rank).
// The communicator works on a duplicate of `comm` (MPI_Comm_idup) whose errors return instead of
// aborting; for NCCL/RCCL rank 0's unique id travels over it. MPI must be initialised
// (unavailable otherwise); the creation itself obeys the timeout. The caller keeps `comm`.
// Thread-safe for distinct communicators when MPI was initialised with MPI_THREAD_MULTIPLE.
Result<Communicator> create(MPI_Comm comm, Device device, Options options = {}) noexcept;

} // namespace devrt::comm

#endif // DEVRT_COMM_MPI_HPP
