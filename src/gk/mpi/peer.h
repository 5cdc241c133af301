// peer.h - the MPI backend's state (gk-mpi.h): the communicator gk sends on and one device
// per other rank, whose buffer type is that rank's memory.
#pragma once

#include "../backend/impl.h"
#include "gk/gk-mpi.h"

#include <algorithm>
#include <mpi.h>
#include <string>

namespace gk::mpi {

/// One other rank: its device and buffer type (context: the peer_device itself).
struct peer_device {
    int                    rank = 0;
    std::string            name;         // "MPI<rank>"
    std::string            description;  // "memory of MPI rank <rank> (this process is rank r of n)"
    gk_backend_device      device{};
    gk_backend_buffer_type buffer_type{};
};

/// gk's communicator (a duplicate of MPI_COMM_WORLD), MPI_COMM_NULL before gk_mpi_init.
MPI_Comm comm();

/// The device of rank `peer`, nullptr when there is none (this rank, out of range, or
/// before gk_mpi_init).
peer_device * peer(int rank);

/// fn(offset, n) over bytes [0, size) in pieces of at most 1 GiB (MPI counts are ints):
/// the same pieces on every rank for the same size.
template <class Fn>
void in_pieces(size_t size, Fn fn) {
    for (size_t at = 0; at < size;) {
        const size_t n = std::min<size_t>(size - at, size_t(1) << 30);
        fn(at, static_cast<int>(n));
        at += n;
    }
}

/// Fill d's device and buffer type tables (backend.cpp).
void init_peer_device(peer_device & d);

} // namespace gk::mpi
