// util.cpp - ggml's small utilities composed from gk's queries: the tensor overhead,
// versions, clocks, shape
// predicates, the context accessors gk spells differently, ggml_set_zero, thread pool
// parameters, and ggml_build_forward_select.
#include "convert.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace {

const auto g_start = std::chrono::steady_clock::now();

// Whether t's memory layout is packed in every dimension from 0 to n-1, except that the
// dimensions 1..m may have any stride (they only have to be packed inside themselves).
bool packed_from(const ggml_tensor * t, int m, int n) {
    const int64_t blck   = ggml_blck_size(t->type);
    size_t        stride = ggml_type_size(t->type);  // the stride dimension i would have if packed
    if (t->ne[0] != blck && t->nb[0] != stride) {
        return false;
    }
    stride *= static_cast<size_t>(t->ne[0] / blck);
    for (int i = 1; i < n; ++i) {
        if (i <= m) {
            stride = static_cast<size_t>(t->ne[i]) * t->nb[i];
        } else if (t->ne[i] != 1 && t->nb[i] != stride) {
            return false;
        } else {
            stride *= static_cast<size_t>(t->ne[i]);
        }
    }
    return true;
}

} // namespace

extern "C" {

// ggml puts a tensor's data in its struct's arena object; gk gives the data an object of
// its own. Programs size ggml contexts as n * ggml_tensor_overhead() + the data bytes (as
// gguf_init_from_file does here), so the overhead counts both objects' headers and the
// data's padding.
size_t ggml_tensor_overhead(void) { return gk_tensor_overhead() + gk_tensor_data_overhead(); }

const char * ggml_version(void) { return GK_COMPAT_GGML_VERSION; }
const char * ggml_commit(void) { return "gk-compat"; }

void    ggml_time_init(void) {}
int64_t ggml_time_us(void) {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - g_start).count();
}
int64_t ggml_time_ms(void) { return ggml_time_us() / 1000; }
int64_t ggml_cycles(void) { return ggml_time_us(); }
int64_t ggml_cycles_per_ms(void) { return 1000; }

FILE * ggml_fopen(const char * fname, const char * mode) { return std::fopen(fname, mode); }

bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b) { return std::memcmp(guid_a, guid_b, sizeof(ggml_guid)) == 0; }

double ggml_type_sizef(enum ggml_type type) {
    return static_cast<double>(ggml_type_size(type)) / static_cast<double>(ggml_blck_size(type));
}

const char * ggml_op_desc(const struct ggml_tensor * t) {
    return t->op == GGML_OP_UNARY ? ggml_unary_op_name(ggml_get_unary_op(t))
         : t->op == GGML_OP_GLU   ? ggml_glu_op_name(ggml_get_glu_op(t))
                                  : ggml_op_name(t->op);
}

size_t ggml_nbytes_pad(const struct ggml_tensor * t) { return GGML_PAD(ggml_nbytes(t), GGML_MEM_ALIGN); }

bool ggml_is_scalar(const struct ggml_tensor * t) { return t->ne[0] == 1 && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_vector(const struct ggml_tensor * t) { return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_matrix(const struct ggml_tensor * t) { return t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_3d(const struct ggml_tensor * t) { return t->ne[3] == 1; }

bool ggml_are_same_stride(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    return std::memcmp(a->nb, b->nb, sizeof a->nb) == 0;
}

struct ggml_tensor * ggml_format_name(struct ggml_tensor * tensor, const char * fmt, ...) {
    char    name[GGML_MAX_NAME];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(name, sizeof name, fmt, args);
    va_end(args);
    return ggml_set_name(tensor, name);
}

void ggml_set_loss(struct ggml_tensor * tensor) { tensor->flags |= GGML_TENSOR_FLAG_LOSS; }

bool ggml_is_contiguous_1(const struct ggml_tensor * t) { return packed_from(t, 1, GGML_MAX_DIMS); }
bool ggml_is_contiguous_2(const struct ggml_tensor * t) { return packed_from(t, 2, GGML_MAX_DIMS); }
bool ggml_is_contiguous_to_1(const struct ggml_tensor * t) { return packed_from(t, 0, 1); }
bool ggml_is_contiguous_to_2(const struct ggml_tensor * t) { return packed_from(t, 0, 2); }
bool ggml_is_contiguous_to_3(const struct ggml_tensor * t) { return packed_from(t, 0, 3); }
bool ggml_is_contiguously_allocated(const struct ggml_tensor * t) {
    return ggml_nbytes(t) == static_cast<size_t>(ggml_nelements(t)) * ggml_type_size(t->type) / static_cast<size_t>(ggml_blck_size(t->type));
}
bool ggml_is_contiguous_channels(const struct ggml_tensor * t) {
    return t->nb[0] > t->nb[2] && t->nb[1] > t->nb[0] && t->nb[2] == ggml_type_size(t->type);
}

size_t ggml_get_max_tensor_size(const struct ggml_context * ctx) {
    size_t largest = 0;
    for (ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        largest = std::max(largest, ggml_nbytes(t));
    }
    return largest;
}

struct ggml_tensor * ggml_set_zero(struct ggml_tensor * tensor) {
    if (ggml_is_empty(tensor)) {
        return tensor;
    }
    if (tensor->buffer) {
        ggml_backend_tensor_memset(tensor, 0, 0, ggml_nbytes(tensor));
    } else if (tensor->data) {
        std::memset(tensor->data, 0, ggml_nbytes(tensor));
    } else {
        ggml_abort(__FILE__, __LINE__, "ggml_set_zero: the tensor has no data");
    }
    return tensor;
}

void ggml_threadpool_params_init(struct ggml_threadpool_params * p, int n_threads) {
    *p           = {};  // no CPU mask (inherited affinity), normal priority, not strict, not paused
    p->n_threads = n_threads;
    p->prio      = GGML_SCHED_PRIO_NORMAL;
    p->poll      = 50;  // ggml's default polling level
}

struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads) {
    ggml_threadpool_params p;
    ggml_threadpool_params_init(&p, n_threads);
    return p;
}

// Equal in the fields that shape a pool (paused is a state, not compared, as in ggml).
bool ggml_threadpool_params_match(const struct ggml_threadpool_params * p0, const struct ggml_threadpool_params * p1) {
    return p0->n_threads == p1->n_threads && p0->prio == p1->prio && p0->poll == p1->poll &&
           p0->strict_cpu == p1->strict_cpu && std::memcmp(p0->cpumask, p1->cpumask, sizeof p0->cpumask) == 0;
}

// Only the selected candidate joins the graph: gk computes every node of a graph (it has
// no per-node compute flag), so the others, whose inputs may not be set, stay out of it.
struct ggml_tensor * ggml_build_forward_select(struct ggml_cgraph * cgraph, struct ggml_tensor ** tensors, int n_tensors,
                                               int idx) {
    if (idx < 0 || idx >= n_tensors) {
        ggml_abort(__FILE__, __LINE__, "ggml_build_forward_select: index %d outside [0, %d)", idx, n_tensors);
    }
    ggml_build_forward_expand(cgraph, tensors[idx]);
    return tensors[idx];
}

} // extern "C"
