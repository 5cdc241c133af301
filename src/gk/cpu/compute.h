// compute.h - the CPU compute pass as the CPU backend calls it: with the backend's own
// thread pool.
#pragma once

#include "gk/gk.h"

namespace gk::cpu {

class thread_pool;

/// gk_graph_compute on the workers of `pool` (the caller is thread 0): the same status,
/// message and bits; n_threads is clamped to 1 .. 512.
gk_status graph_compute(gk_cgraph * graph, int n_threads, thread_pool & pool);

} // namespace gk::cpu
