// backend.cpp - the MPI backend's buffers, buffer type, backend and device (gk-mpi.h).
//
// A buffer in a peer's memory reserves address space of its size (PROT_NONE: no memory,
// and a fault rather than silent garbage should anything dereference it) so that its
// tensors get distinct data pointers as the graph allocator expects; the bytes live on
// the peer. Writes are sends and reads receives of exactly the bytes named (the offset is
// not sent: the reading side decides where the bytes go), in pieces of at most 1 GiB.
#include "peer.h"

#include "../internal.h"

#include <cstdio>
#include <sys/mman.h>
#include <vector>

namespace gk::mpi {
namespace {

constexpr size_t k_alignment = 64;
constexpr int    k_tag       = 0x676b;  // "gk": every transfer between two ranks, in order

peer_device & peer_of(gk_backend_buffer_t b) { return *static_cast<peer_device *>(b->buft->context); }

// ---- buffers --------------------------------------------------------------------------

/// The reserved range's length: at least one page, so that a 0-byte buffer has a base.
size_t reserved_bytes(size_t size) { return size == 0 ? 1 : size; }

void free_buffer(gk_backend_buffer_t b) { munmap(b->context, reserved_bytes(b->size)); }

void * base(gk_backend_buffer_t b) { return b->context; }

void send(gk_backend_buffer_t b, const void * data, size_t size) {
    const auto * bytes = static_cast<const unsigned char *>(data);
    in_pieces(size, [&](size_t at, int n) { MPI_Send(bytes + at, n, MPI_BYTE, peer_of(b).rank, k_tag, comm()); });
}

void set_tensor(gk_backend_buffer_t b, gk_tensor *, const void * data, size_t, size_t size) { send(b, data, size); }

void memset_tensor(gk_backend_buffer_t b, gk_tensor *, uint8_t value, size_t, size_t size) {
    const std::vector<unsigned char> bytes(size, value);
    send(b, bytes.data(), size);
}

/// The next message from the peer, which must be `size` bytes: a longer one is MPI's
/// truncation error (fatal), a shorter one ends the job here, as the sides then disagree
/// on what they exchange and nothing later could be trusted.
void get_tensor(gk_backend_buffer_t b, const gk_tensor * t, void * data, size_t, size_t size) {
    auto * bytes = static_cast<unsigned char *>(data);
    in_pieces(size, [&](size_t at, int n) {
        MPI_Status status;
        MPI_Recv(bytes + at, n, MPI_BYTE, peer_of(b).rank, k_tag, comm(), &status);
        int got = 0;
        MPI_Get_count(&status, MPI_BYTE, &got);
        if (got != n) {
            std::fprintf(stderr, "gk: %s: '%s': received %d bytes from rank %d where %d were expected\n",
                         peer_of(b).name.c_str(), t->name, got, peer_of(b).rank, n);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    });
}

void clear(gk_backend_buffer_t b, uint8_t value) { memset_tensor(b, nullptr, value, 0, b->size); }

// ---- buffer type ----------------------------------------------------------------------

const char * buft_name(gk_backend_buffer_type_t buft) {
    return static_cast<peer_device *>(buft->context)->name.c_str();
}

gk_backend_buffer_t alloc_buffer(gk_backend_buffer_type_t buft, size_t size) {
    void * range = mmap(nullptr, reserved_bytes(size), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED) {
        backend_error("%s buffer: cannot reserve %zu bytes of address space", buft_name(buft), size);
        return nullptr;
    }
    const gk_backend_buffer_i i{free_buffer, base,  nullptr, memset_tensor, set_tensor,
                                get_tensor,  clear, nullptr, nullptr};
    gk_backend_buffer_t       b = buffer_init(buft, i, range, size);
    if (!b) munmap(range, reserved_bytes(size));
    return b;
}

size_t alignment(gk_backend_buffer_type_t) { return k_alignment; }

// ---- backend --------------------------------------------------------------------------

peer_device & peer_of(gk_backend_t b) { return *static_cast<peer_device *>(b->context); }

const char * backend_name(gk_backend_t b) { return peer_of(b).name.c_str(); }

void backend_free(gk_backend_t) {}

/// The one op: a copy of a whole value (no view, same type and bytes, both contiguous),
/// whose bytes are exactly what the scheduler's staging sends to the peer.
bool supports(const gk_tensor * op) {
    const gk_tensor * a = op->src[0];
    return op->op == GK_OP_CPY && a && !a->view_src && a->type == op->type && gk_nbytes(a) == gk_nbytes(op) &&
           gk_is_contiguous(a) && gk_is_contiguous(op);
}

/// Every copy's source was staged into the peer's memory (sent) before this split runs,
/// and that is the copy: nothing is left to do here but to check that it was.
gk_status graph_compute(gk_backend_t b, gk_cgraph * graph) {
    peer_device & d = peer_of(b);
    for (int i = 0; i < gk_graph_n_nodes(graph); ++i) {
        const gk_tensor * n = gk_graph_node(graph, i);
        if (n->op == GK_OP_NONE || is_layout_op(n->op)) continue;
        const gk_tensor * a = n->src[0];
        if (!supports(n) || !a->buffer || gk_backend_buffer_get_type(a->buffer) != &d.buffer_type) {
            backend_error("%s: node '%s' (%s) is not a copy of a value in rank %d's memory", d.name.c_str(),
                          gk_get_name(n), gk_op_name(n->op), d.rank);
            set_error(gk_graph_context(graph), "%s", gk_backend_last_error());
            return GK_STATUS_UNSUPPORTED;
        }
    }
    return GK_STATUS_SUCCESS;
}

// ---- device ---------------------------------------------------------------------------

peer_device & peer_of(gk_backend_dev_t dev) { return *static_cast<peer_device *>(dev->context); }

const char * dev_name(gk_backend_dev_t dev) { return peer_of(dev).name.c_str(); }
const char * dev_description(gk_backend_dev_t dev) { return peer_of(dev).description.c_str(); }

void dev_memory(gk_backend_dev_t, size_t * free, size_t * total) {
    *free  = 0;
    *total = 0;
}

enum gk_backend_dev_type dev_type(gk_backend_dev_t) { return GK_BACKEND_DEVICE_TYPE_ACCEL; }

gk_backend_t dev_init(gk_backend_dev_t dev, const char *) {
    return backend_init({backend_name, backend_free, graph_compute, nullptr}, dev, &peer_of(dev));
}

gk_backend_buffer_type_t dev_buffer_type(gk_backend_dev_t dev) { return &peer_of(dev).buffer_type; }

bool dev_supports_op(gk_backend_dev_t, const gk_tensor * op) { return supports(op); }

bool dev_supports_buft(gk_backend_dev_t dev, gk_backend_buffer_type_t buft) {
    return buft == &peer_of(dev).buffer_type;
}

} // namespace

void init_peer_device(peer_device & d) {
    d.buffer_type = {{buft_name, alloc_buffer, alignment, nullptr, nullptr, nullptr}, &d.device, &d};
    d.device      = {{dev_name, dev_description, dev_memory, dev_type, dev_init, dev_buffer_type, dev_supports_op,
                      dev_supports_buft, nullptr, nullptr},
                     &d};
}

} // namespace gk::mpi

extern "C" {

gk_backend_t gk_backend_mpi_init(int peer) {
    gk::mpi::peer_device * d = gk::mpi::peer(peer);
    if (!d) {
        gk::backend_error("backend_mpi_init: rank %d is not a peer of this process (rank %d of %d%s)", peer,
                          gk_mpi_rank(), gk_mpi_size(),
                          gk::mpi::comm() == MPI_COMM_NULL ? ", MPI not initialised" : "");
        return nullptr;
    }
    return gk_backend_dev_init(&d->device, nullptr);
}

} // extern "C"
