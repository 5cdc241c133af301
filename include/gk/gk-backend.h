/* gk-backend.h - buffer types, buffers, backends and the device registry.
 *
 * Shaped like ggml-backend.h so that a ggml program maps onto it one call to one call:
 *   - a buffer type (gk_backend_buffer_type_t) is a kind of memory: it allocates buffers
 *     and states their alignment and the bytes a tensor needs in them;
 *   - a buffer (gk_backend_buffer_t) is one allocation of that memory; tensors placed in
 *     it have tensor->buffer set and tensor->data pointing inside it;
 *   - a backend (gk_backend_t) computes graphs whose tensors live in memory it can
 *     address; a device (gk_backend_dev_t) describes one piece of hardware and creates
 *     backends for it. The registry lists the devices of this build (the CPU always).
 *
 * Tensor data is read and written through gk_backend_tensor_set / _get, never through
 * tensor->data directly, unless gk_backend_buffer_is_host() says the memory is the
 * host's. A tensor with data but no buffer (a tensor of an allocating context) is host
 * memory too, and set / get accept it.
 *
 * Errors. Nothing here aborts on bad input. A function that fails returns a status,
 * NULL or false and records a message for the calling thread, read with
 * gk_backend_last_error(). gk_backend_graph_compute records its message in the graph's
 * context (gk_last_error(gk_graph_context(graph))), as gk_graph_compute does.
 *
 * Threads. Buffers and backends are not thread-safe; the registry is.
 */
#ifndef GK_BACKEND_H
#define GK_BACKEND_H

#include "gk/gk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gk_backend_buffer_type * gk_backend_buffer_type_t;
typedef struct gk_backend_buffer *      gk_backend_buffer_t;
typedef struct gk_backend *             gk_backend_t;
typedef struct gk_backend_device *      gk_backend_dev_t;

/** Message of the most recent failure of a gk-backend.h / gk-alloc.h call on this
 *  thread, "" when none. */
const char * gk_backend_last_error(void);

/* ------------------------------------------------------------------------------------ */
/* Buffer types                                                                          */

const char *          gk_backend_buft_name(gk_backend_buffer_type_t buft);
/** A new buffer of `size` bytes (0 is allowed: a buffer with no room); NULL when the
 *  memory cannot be allocated or size exceeds gk_backend_buft_get_max_size. */
gk_backend_buffer_t   gk_backend_buft_alloc_buffer(gk_backend_buffer_type_t buft, size_t size);
/** Alignment in bytes of every buffer base (a power of two). */
size_t                gk_backend_buft_get_alignment(gk_backend_buffer_type_t buft);
/** Largest buffer this type can allocate, in bytes (SIZE_MAX when unlimited). */
size_t                gk_backend_buft_get_max_size(gk_backend_buffer_type_t buft);
/** Bytes `tensor` needs in a buffer of this type (gk_nbytes unless the type pads). */
size_t                gk_backend_buft_get_alloc_size(gk_backend_buffer_type_t buft, const struct gk_tensor * tensor);
/** True when the memory is the host's (tensor->data may be dereferenced). */
bool                  gk_backend_buft_is_host(gk_backend_buffer_type_t buft);
gk_backend_dev_t      gk_backend_buft_get_device(gk_backend_buffer_type_t buft);

/* ------------------------------------------------------------------------------------ */
/* Buffers                                                                               */

/** What a buffer holds; values are ggml's enum ggml_backend_buffer_usage. */
enum gk_backend_buffer_usage {
    GK_BACKEND_BUFFER_USAGE_ANY     = 0,
    GK_BACKEND_BUFFER_USAGE_WEIGHTS = 1,
    GK_BACKEND_BUFFER_USAGE_COMPUTE = 2,
};

const char *             gk_backend_buffer_name(gk_backend_buffer_t buffer);
/** Free the buffer and its memory (NULL is ok). Tensors placed in it keep dangling
 *  pointers; they must not be used afterwards. */
void                     gk_backend_buffer_free(gk_backend_buffer_t buffer);
void *                   gk_backend_buffer_get_base(gk_backend_buffer_t buffer);
size_t                   gk_backend_buffer_get_size(gk_backend_buffer_t buffer);
size_t                   gk_backend_buffer_get_alignment(gk_backend_buffer_t buffer);
size_t                   gk_backend_buffer_get_max_size(gk_backend_buffer_t buffer);
size_t                   gk_backend_buffer_get_alloc_size(gk_backend_buffer_t buffer, const struct gk_tensor * tensor);
/** Let the buffer prepare a tensor just placed in it (a no-op on the CPU). */
enum gk_status           gk_backend_buffer_init_tensor(gk_backend_buffer_t buffer, struct gk_tensor * tensor);
/** Set every byte of the buffer to `value`. */
void                     gk_backend_buffer_clear(gk_backend_buffer_t buffer, uint8_t value);
bool                     gk_backend_buffer_is_host(gk_backend_buffer_t buffer);
void                     gk_backend_buffer_set_usage(gk_backend_buffer_t buffer, enum gk_backend_buffer_usage usage);
enum gk_backend_buffer_usage gk_backend_buffer_get_usage(gk_backend_buffer_t buffer);
gk_backend_buffer_type_t gk_backend_buffer_get_type(gk_backend_buffer_t buffer);
/** Drop per-tensor state a buffer keeps (none on the CPU); tensors stay placed. */
void                     gk_backend_buffer_reset(gk_backend_buffer_t buffer);

/** Place `tensor` (not a view, no data yet) at `addr` inside `buffer`: sets
 *  tensor->buffer and tensor->data and calls init_tensor. Fails when addr ..
 *  addr + alloc size is not inside the buffer, or addr is not aligned for the type
 *  (the largest power of two dividing gk_type_size, at most 8). */
enum gk_status gk_backend_tensor_alloc(gk_backend_buffer_t buffer, struct gk_tensor * tensor, void * addr);
/** Point a view at its storage: data = view_src->data + view_offs, buffer =
 *  view_src->buffer. Fails when the view's source has no data yet. */
enum gk_status gk_backend_view_init(struct gk_tensor * tensor);

/* ------------------------------------------------------------------------------------ */
/* Tensor data                                                                           */

/** Copy `size` bytes from `data` to byte `offset` of tensor's storage. Fails (nothing
 *  copied) when the tensor has no data or offset + size exceeds gk_nbytes(tensor). */
enum gk_status gk_backend_tensor_set(struct gk_tensor * tensor, const void * data, size_t offset, size_t size);
/** Copy `size` bytes from byte `offset` of tensor's storage to `data` (same checks). */
enum gk_status gk_backend_tensor_get(const struct gk_tensor * tensor, void * data, size_t offset, size_t size);
/** Set `size` bytes from byte `offset` of tensor's storage to `value` (same checks). */
enum gk_status gk_backend_tensor_memset(struct gk_tensor * tensor, uint8_t value, size_t offset, size_t size);
/** Copy all bytes of src to dst, wherever each lives. src and dst must have the same
 *  gk_nbytes and both be contiguous. */
enum gk_status gk_backend_tensor_copy(const struct gk_tensor * src, struct gk_tensor * dst);

/* ------------------------------------------------------------------------------------ */
/* Backends                                                                              */

const char *             gk_backend_name(gk_backend_t backend);
/** Free the backend (NULL is ok). Buffers it allocated stay valid. */
void                     gk_backend_free(gk_backend_t backend);
gk_backend_dev_t         gk_backend_get_device(gk_backend_t backend);
gk_backend_buffer_type_t gk_backend_get_default_buffer_type(gk_backend_t backend);
/** = gk_backend_buft_alloc_buffer(gk_backend_get_default_buffer_type(backend), size). */
gk_backend_buffer_t      gk_backend_alloc_buffer(gk_backend_t backend, size_t size);
size_t                   gk_backend_get_alignment(gk_backend_t backend);
size_t                   gk_backend_get_max_size(gk_backend_t backend);
/** Wait until the backend's queued work is done (computation on the CPU is synchronous). */
void                     gk_backend_synchronize(gk_backend_t backend);
/** Compute every node of graph. Every node and source must have data in memory this
 *  backend can address (placed by gk_gallocr_alloc_graph, gk_backend_alloc_ctx_tensors
 *  or an allocating context). Returns gk_graph_compute's status and message. */
enum gk_status           gk_backend_graph_compute(gk_backend_t backend, struct gk_cgraph * graph);
/** True when the backend's device can compute this node. */
bool                     gk_backend_supports_op(gk_backend_t backend, const struct gk_tensor * op);
/** True when the backend can compute on tensors in buffers of this type. */
bool                     gk_backend_supports_buft(gk_backend_t backend, gk_backend_buffer_type_t buft);

/* ------------------------------------------------------------------------------------ */
/* Devices                                                                               */

/** Values are ggml's enum ggml_backend_dev_type. */
enum gk_backend_dev_type {
    GK_BACKEND_DEVICE_TYPE_CPU,    /* host memory, host cores         */
    GK_BACKEND_DEVICE_TYPE_GPU,    /* dedicated memory                */
    GK_BACKEND_DEVICE_TYPE_IGPU,   /* integrated GPU on host memory   */
    GK_BACKEND_DEVICE_TYPE_ACCEL,  /* works alongside the CPU backend */
    GK_BACKEND_DEVICE_TYPE_META,   /* made of other devices (compat's ggml_backend_meta_device);
                                      gk's registry lists none */
};

/** One name = value pair of what a device's code was built for ("SIMD" = "AVX2"). */
struct gk_backend_feature {
    const char * name;
    const char * value;
};

const char *             gk_backend_dev_name(gk_backend_dev_t dev);         /* "CPU"             */
const char *             gk_backend_dev_description(gk_backend_dev_t dev);  /* "gk CPU backend"  */
/** Free and total memory of the device in bytes (0, 0 when unknown). */
void                     gk_backend_dev_memory(gk_backend_dev_t dev, size_t * free, size_t * total);
enum gk_backend_dev_type gk_backend_dev_type(gk_backend_dev_t dev);
/** A new backend on this device; params is backend-specific and may be NULL. NULL on
 *  failure. */
gk_backend_t             gk_backend_dev_init(gk_backend_dev_t dev, const char * params);
gk_backend_buffer_type_t gk_backend_dev_buffer_type(gk_backend_dev_t dev);
bool                     gk_backend_dev_supports_op(gk_backend_dev_t dev, const struct gk_tensor * op);
bool                     gk_backend_dev_supports_buft(gk_backend_dev_t dev, gk_backend_buffer_type_t buft);
/** The device's in-place policy: true when its kernel for `node` may write the result
 *  over node->src[0] when the two have the same type, shape and strides (the graph
 *  allocator then may place them on the same storage). False for a NULL device or node. */
bool                     gk_backend_dev_can_run_in_place(gk_backend_dev_t dev, const struct gk_tensor * node);
/** The device's feature pairs, ended by an entry whose name is NULL. */
const struct gk_backend_feature * gk_backend_dev_features(gk_backend_dev_t dev);

/* ------------------------------------------------------------------------------------ */
/* Registry                                                                              */
/* The first call of any function below discovers the devices of this build and prints */
/* one line per device to stderr ("gk: CPU - gk CPU backend, 31954 MiB | SIMD = AVX2 |  */
/* AVX512 = 0 | AVX2 = 1 | FMA = 1 | F16C = 1"); GK_QUIET=1 silences it.                */

size_t           gk_backend_dev_count(void);
/** Device `index` (0 .. count-1), NULL when out of range. */
gk_backend_dev_t gk_backend_dev_get(size_t index);
/** First device with this name (case-insensitive), or NULL. */
gk_backend_dev_t gk_backend_dev_by_name(const char * name);
/** First device of this type, or NULL. */
gk_backend_dev_t gk_backend_dev_by_type(enum gk_backend_dev_type type);
/** Add a device (kept for the life of the process; the caller keeps it alive). Devices
 *  added this way are listed after those found by discovery and print no line. */
void             gk_backend_device_register(gk_backend_dev_t dev);
/** = gk_backend_dev_init(gk_backend_dev_by_name(name), params). */
gk_backend_t     gk_backend_init_by_name(const char * name, const char * params);
/** = gk_backend_dev_init(gk_backend_dev_by_type(type), params). */
gk_backend_t     gk_backend_init_by_type(enum gk_backend_dev_type type, const char * params);
/** A GPU backend when one is listed, else the CPU backend. */
gk_backend_t     gk_backend_init_best(void);

/* ------------------------------------------------------------------------------------ */
/* CPU backend                                                                           */

/** A CPU backend computing on std::thread::hardware_concurrency() threads. */
gk_backend_t             gk_backend_cpu_init(void);
bool                     gk_backend_is_cpu(gk_backend_t backend);
/** Threads for the next computes (>= 1; the result does not depend on it). */
enum gk_status           gk_backend_cpu_set_n_threads(gk_backend_t backend, int n_threads);
/** Host memory, aligned to GK_MEM_ALIGN. */
gk_backend_buffer_type_t gk_backend_cpu_buffer_type(void);
/** A buffer over caller-owned host memory (e.g. a mapped file); freeing the buffer
 *  leaves the memory alone. ptr must be aligned to GK_MEM_ALIGN. */
gk_backend_buffer_t      gk_backend_cpu_buffer_from_ptr(void * ptr, size_t size);

/* ------------------------------------------------------------------------------------ */
/* Training                                                                              */

/** Before a training step of a graph from gk_build_backward_expand: every gradient
 *  accumulator set to 0, a loss's to 1 (the seed of the backward pass), and the moments
 *  m, v of every opt_step_adamw node to 0; written wherever the tensors live (context
 *  memory or a backend buffer). Fails (GK_STATUS_INVALID_ARGUMENT, message in the graph's
 *  context) for a graph without grads or an accumulator without data. */
enum gk_status gk_graph_reset(struct gk_cgraph * graph);

#ifdef __cplusplus
}
#endif

#endif /* GK_BACKEND_H */
