// gallocr.h - what the scheduler (src/gk/sched/) asks the graph allocator beyond
// gk-alloc.h.
#pragma once

#include "gk/gk-alloc.h"

namespace gk::alloc {

/// True when `buffer` is one of galloc's own buffers: a tensor in it was placed by
/// galloc (and will be placed again by its next allocation), not by someone else.
bool owns_buffer(const gk_gallocr * galloc, const gk_backend_buffer * buffer);

} // namespace gk::alloc
