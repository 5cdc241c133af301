/* gk-sched.h - the scheduler: one graph computed across several backends.
 *
 * Shaped like ggml_backend_sched. Typical use:
 *
 *     gk_backend_t backends[2] = {gpu, cpu};               // priority order, the CPU last
 *     gk_sched_t   sched = gk_sched_new(backends, 2);
 *     gk_sched_alloc_graph(sched, graph);                  // assign, split, stage, place
 *     gk_backend_tensor_set(input, ...);                   // then fill the inputs
 *     gk_sched_graph_compute(sched, graph);
 *
 * Assignment. Every node of the graph gets one backend, by the first rule that gives one
 * supporting the node's op (gk_backend_supports_op), in this order:
 *   0. the backend set for it with gk_sched_set_tensor_backend (which also places a leaf
 *      or input without storage in that backend's memory);
 *   1. the memory the node already lives in (its storage was placed before: a tensor of a
 *      weights or cache buffer, or a view of one) - the first backend that can address
 *      that memory (gk_backend_supports_buft);
 *   2. the memory a source lives in, sources in order (a matmul goes where its weight
 *      is) - the first backend that can address it;
 *   3. the backend of the first source that has one;
 *   4. the first backend, in priority order, that supports the op.
 * Rules 0, 1 and 2 pin a node. A view (a node whose storage is another tensor's) goes with
 * its storage: to that tensor's backend, or the first backend that can address it. A
 * leaf or input without storage lives with the first node that reads it. Then one
 * smoothing pass: a node whose neighbours (the previous and next nodes that do work)
 * are both on one other backend moves there when that backend supports it - unless it
 * is pinned or a view. The result depends only on the graph: the same graph gives the
 * same assignment and the same splits.
 *
 * Splits. The node list is cut where the backend changes (layout nodes - view, reshape,
 * permute, transpose - do no work and stay in the split they fall in). Each split runs
 * on its backend as one graph. Every value a split reads from memory its backend cannot
 * address gets a staging tensor of its own in the split's memory (a copy of the value's
 * whole storage; a view reads a view of the copy), filled by gk_backend_tensor_copy just
 * before the split runs.
 *
 * Memory. One buffer per memory (buffer type: backends sharing a buffer type share it),
 * placed by one graph allocator in one pass over the graph and its staging tensors, so
 * storage is reused across splits within each memory. The graph's nodes and sources are
 * left as they are: staged reads are redirected only while their split runs.
 *
 * Errors: functions that fail return a status, NULL or false and record a message for
 * the calling thread (gk_backend_last_error()); a node no backend supports is
 * GK_STATUS_UNSUPPORTED and the message names its op.
 *
 * Threads: a scheduler is not thread-safe; each backend computes on its own threads
 * (gk_backend_cpu_set_n_threads), and results do not depend on their number.
 */
#ifndef GK_SCHED_H
#define GK_SCHED_H

#include "gk/gk-alloc.h"
#include "gk/gk-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gk_sched * gk_sched_t;

/** A scheduler over n_backends backends (kept, not owned), highest priority first; put
 *  the CPU last so that it takes what no other backend supports. NULL with a message
 *  when backends is NULL, n_backends < 1, a backend is NULL or listed twice, or memory
 *  runs out. */
gk_sched_t gk_sched_new(gk_backend_t * backends, int n_backends);
/** Free the scheduler and its buffers (NULL is ok); tensors it placed must not be used. */
void       gk_sched_free(gk_sched_t sched);

/** Assign every node a backend, cut the splits, make the staging tensors and place every
 *  tensor of graph without storage (and those it placed before) in the buffers, growing
 *  them as needed. Values of placed tensors are undefined afterwards: set the inputs
 *  after this call. GK_STATUS_INVALID_ARGUMENT for a NULL argument, UNSUPPORTED for a
 *  node no backend supports, ALLOC_FAILED when a buffer cannot grow; the message says
 *  which node. */
enum gk_status gk_sched_alloc_graph(gk_sched_t sched, struct gk_cgraph * graph);

/** Run graph split by split: fill each split's staging tensors, then compute the split
 *  on its backend. Allocates first (gk_sched_alloc_graph) when graph is not the graph
 *  last allocated. Returns the first failing split's status; its message names the
 *  split and carries the backend's. */
enum gk_status gk_sched_graph_compute(gk_sched_t sched, struct gk_cgraph * graph);

/** Measure graph as gk_sched_alloc_graph would place it and grow the buffers to hold it,
 *  placing nothing (the graph is not modified): reserve the largest graph once so that
 *  later ones do not grow the buffers (ggml_backend_sched_reserve). The assignment is
 *  kept (gk_sched_get_tensor_backend answers); a compute allocates first. Same statuses. */
enum gk_status gk_sched_reserve(gk_sched_t sched, struct gk_cgraph * graph);

/** Assign every node a backend and cut the splits, placing and measuring nothing
 *  (ggml_backend_sched_split_graph): then gk_sched_get_tensor_backend and the split
 *  queries answer for graph; a compute allocates first. Same statuses. */
enum gk_status gk_sched_split_graph(gk_sched_t sched, struct gk_cgraph * graph);

/** Compute `node` (and everything the scheduler computes with it) on `backend`, one of
 *  the scheduler's, in the graphs allocated from now until gk_sched_reset: rule 0 above.
 *  False with a message when an argument is NULL or the backend is not the scheduler's.
 *  A node whose backend does not support its op fails the allocation (UNSUPPORTED). */
bool gk_sched_set_tensor_backend(gk_sched_t sched, const struct gk_tensor * node, gk_backend_t backend);

/** Forget the last assigned graph and the backends set with gk_sched_set_tensor_backend;
 *  the buffers stay (ggml_backend_sched_reset). The next compute allocates again. */
void gk_sched_reset(gk_sched_t sched);

/** The eval callback (ggml_backend_sched_eval_callback's contract): while a graph
 *  computes, each node is first offered with ask = true - return true to observe it; the
 *  nodes up to and including an observed one are computed, then it is shown with
 *  ask = false, its value in memory - return false to cancel the rest of the compute
 *  (gk_sched_graph_compute then returns GK_STATUS_ABORTED). Nodes are offered split by
 *  split, in graph order; results do not depend on the callback. */
typedef bool (*gk_sched_eval_callback)(struct gk_tensor * node, bool ask, void * user_data);
/** Set (or, with NULL, clear) the eval callback of later computes. */
void gk_sched_set_eval_callback(gk_sched_t sched, gk_sched_eval_callback callback, void * user_data);

/** Backend `i` in priority order (NULL when out of range), and how many there are. */
int          gk_sched_get_n_backends(gk_sched_t sched);
gk_backend_t gk_sched_get_backend(gk_sched_t sched, int i);

/** The backend a node of the last assigned graph (allocated, reserved or split) computes
 *  on, or the backend whose memory a leaf was placed in; NULL for a tensor the scheduler
 *  did not assign (a weight read where it lies, a tensor of another graph). */
gk_backend_t gk_sched_get_tensor_backend(gk_sched_t sched, const struct gk_tensor * tensor);
/** True when rule 1 or 2 (its own or a source's memory) placed that node. */
bool         gk_sched_is_pinned(gk_sched_t sched, const struct gk_tensor * node);

/** One split of the last assigned graph: its backend (index in priority order), its
 *  nodes [first_node, first_node + n_nodes) of the graph, and the staging copies
 *  filled before it runs. */
struct gk_sched_split {
    int backend;
    int first_node;
    int n_nodes;
    int n_copies;
};
int  gk_sched_get_n_splits(gk_sched_t sched);
/** Split `i` into *split; false when i is out of range or split is NULL. */
bool gk_sched_get_split(gk_sched_t sched, int i, struct gk_sched_split * split);
/** Staging copies of the last assigned graph, over all splits. */
int  gk_sched_get_n_copies(gk_sched_t sched);

/** Bytes of the compute buffer in backend's memory (its default buffer type): the
 *  graph's live set there, staging tensors included. Backends sharing a buffer type
 *  report the same buffer. 0 before any allocation or for a backend not scheduled. */
size_t gk_sched_get_buffer_size(gk_sched_t sched, gk_backend_t backend);

#ifdef __cplusplus
}
#endif

#endif /* GK_SCHED_H */
