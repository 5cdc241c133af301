// debug.h - debugging switches, read once from the environment, all off by default.
//
//   GK_NAN_FILL=1   fill every freshly allocated tensor buffer with NaN (0xFF bytes), so a
//                   kernel that leaves part of its output unwritten shows up as NaN.
//   GK_NODE_HASH=1  print a 64-bit FNV-1a hash of every node's output to stderr as the
//                   compute pass finishes it ("gk: node <i> <op> <name> <hash>").
#pragma once

#include <cstddef>

namespace gk {

struct debug_flags {
    bool nan_fill  = false;
    bool node_hash = false;
};

/// The switches (read from the environment on the first call).
const debug_flags & debug();

/// Fill `n` bytes at `p` with the NaN pattern when GK_NAN_FILL is set; no-op otherwise.
void debug_fill_fresh(void * p, size_t n);

} // namespace gk
