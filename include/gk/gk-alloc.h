/* gk-alloc.h - placing tensors in backend buffers: the linear tensor allocator, the
 * graph allocator (gallocr) and the helper that allocates a whole context.
 *
 * Shaped like ggml-alloc.h (one call maps to one call). Typical use:
 *
 *     gk_gallocr_t galloc = gk_gallocr_new(gk_backend_cpu_buffer_type());
 *     gk_gallocr_reserve(galloc, worst_case_graph);        // optional: size the buffer once
 *     gk_gallocr_alloc_graph(galloc, graph);               // place every tensor of graph
 *     gk_backend_tensor_set(input, ...);                   // then fill the inputs
 *     gk_backend_graph_compute(backend, graph);
 *
 * The graph allocator gives a node's storage back as soon as its last consumer has run
 * and hands it to a later node, so the buffer holds the graph's live set rather than
 * all of its tensors; see docs/memory.md for the rules (views, in-place placement,
 * inputs, outputs). GK_ALLOC_NO_REUSE=1 in the environment turns reuse off.
 *
 * Errors: functions that fail return false / NULL / a status and record a message for
 * the calling thread (gk_backend_last_error()).
 */
#ifndef GK_ALLOC_H
#define GK_ALLOC_H

#include "gk/gk-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* Linear tensor allocator: places tensors one after another in a buffer.               */

struct gk_tallocr {
    gk_backend_buffer_t buffer;
    void *              base;
    size_t              alignment;
    size_t              offset;     /* bytes used so far */
};

struct gk_tallocr gk_tallocr_new(gk_backend_buffer_t buffer);
/** Place tensor (no data, not a view) at the next aligned offset. Fails, leaving the
 *  tensor unplaced, when it does not fit. */
enum gk_status    gk_tallocr_alloc(struct gk_tallocr * talloc, struct gk_tensor * tensor);

/* ------------------------------------------------------------------------------------ */
/* Graph allocator.                                                                      */
/*                                                                                       */
/* Which tensors it places: every tensor of the graph without data, and every tensor it */
/* placed itself in an earlier call (so a graph can be allocated again). A tensor that  */
/* has data from elsewhere (a weight, a context tensor, a buffer of another allocator)  */
/* is left alone, and so are views of it. Views of placed tensors are pointed at their  */
/* source. Leafs and tensors flagged input or output keep their storage for the whole   */
/* graph; every other node gives it back after its last consumer.                       */

typedef struct gk_gallocr * gk_gallocr_t;

/** An allocator with one buffer of type buft (no memory is allocated yet). */
gk_gallocr_t gk_gallocr_new(gk_backend_buffer_type_t buft);
/** An allocator with n_bufs buffers, one per type (for graphs spread over memories). */
gk_gallocr_t gk_gallocr_new_n(gk_backend_buffer_type_t * bufts, int n_bufs);
/** Free the allocator and its buffers (NULL is ok); tensors it placed must not be used. */
void         gk_gallocr_free(gk_gallocr_t galloc);

/** Measure graph and grow the buffers to hold it; the graph is not modified. Call with
 *  the largest graph to be allocated to avoid growing later. */
bool gk_gallocr_reserve(gk_gallocr_t galloc, struct gk_cgraph * graph);
/** As reserve, with the buffer index of each node and leaf (by position in the graph;
 *  NULL means all 0). The indices are remembered for gk_gallocr_alloc_graph on graphs
 *  with the same node and leaf counts. */
bool gk_gallocr_reserve_n(gk_gallocr_t galloc, struct gk_cgraph * graph, const int * node_buffer_ids,
                          const int * leaf_buffer_ids);
/** As reserve_n, but only measures (ggml_gallocr_reserve_n_size): sizes[i] receives the
 *  bytes buffer i needs for graph (one entry per buffer of the allocator), no buffer is
 *  allocated or grown, and the ids are remembered as by reserve_n. False with a message
 *  (gk_backend_last_error) on bad input; sizes is then left unchanged. */
bool gk_gallocr_reserve_n_size(gk_gallocr_t galloc, struct gk_cgraph * graph, const int * node_buffer_ids,
                               const int * leaf_buffer_ids, size_t * sizes);

/** Place every tensor of graph that this allocator owns (see above), growing a buffer
 *  when the graph needs more than it has. Values of the placed tensors are undefined
 *  afterwards: set the inputs after this call. When a buffer grows, graphs allocated
 *  before point into freed memory and must be allocated again before use. With several
 *  buffers, the graph's node and leaf counts must match the last gk_gallocr_reserve_n. */
bool gk_gallocr_alloc_graph(gk_gallocr_t galloc, struct gk_cgraph * graph);

/** Bytes of buffer `buffer_id` (0 when none is allocated or the id is out of range). */
size_t gk_gallocr_get_buffer_size(gk_gallocr_t galloc, int buffer_id);

/* ------------------------------------------------------------------------------------ */
/* Whole contexts                                                                        */

/** Bytes gk_backend_alloc_ctx_tensors_from_buft would allocate for ctx. */
size_t              gk_backend_alloc_ctx_tensors_from_buft_size(struct gk_context * ctx, gk_backend_buffer_type_t buft);
/** One buffer holding every tensor of a no_alloc context that has no data yet (views are
 *  pointed at their source). NULL with gk_backend_last_error() "" when nothing needs
 *  memory; NULL with a message on failure (no tensor is modified then). */
gk_backend_buffer_t gk_backend_alloc_ctx_tensors_from_buft(struct gk_context * ctx, gk_backend_buffer_type_t buft);
/** = ..._from_buft(ctx, gk_backend_get_default_buffer_type(backend)). */
gk_backend_buffer_t gk_backend_alloc_ctx_tensors(struct gk_context * ctx, gk_backend_t backend);

#ifdef __cplusplus
}
#endif

#endif /* GK_ALLOC_H */
