// debug.h - debugging switches, read once from the environment, all off by default.
//
//   GK_NAN_FILL=1   fill every freshly allocated tensor buffer with NaN (0xFF bytes), so a
//                   kernel that leaves part of its output unwritten shows up as NaN.
//   GK_NODE_HASH=1  print a 64-bit FNV-1a hash of every node's output to stderr as the
//                   compute pass finishes it ("gk: node <i> <op> <name> <hash>").
//   GK_ALLOC_NO_REUSE=1  the graph allocator gives every tensor storage of its own: no
//                   reuse after a last consumer, no in-place placement.
//   GK_NO_SOLO=1    the CPU compute pass runs every node on all its threads, small ones
//                   included (compute.cpp), so that test-threading-partitioned sweeps
//                   every kernel's partition.
#pragma once

#include <cstddef>

namespace gk {

struct debug_flags {
    bool nan_fill  = false;
    bool node_hash = false;
    bool alloc_no_reuse = false;
    bool no_solo        = false;
};

/// True when environment variable `name` is set, non-empty and not "0" (the rule every
/// switch here follows; also used for GK_QUIET).
bool env_flag(const char * name);

/// The switches (read from the environment on the first call).
const debug_flags & debug();

/// Fill `n` bytes at `p` with the NaN pattern when GK_NAN_FILL is set; no-op otherwise.
void debug_fill_fresh(void * p, size_t n);

} // namespace gk
