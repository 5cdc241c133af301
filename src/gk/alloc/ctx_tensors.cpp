// ctx_tensors.cpp - the linear tensor allocator (gk_tallocr) and allocating every tensor
// of a context into one buffer with it.
#include "gk/gk-alloc.h"

#include "../backend/impl.h"

using gk::backend_error;

namespace {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/// The tensors of ctx that need storage: no data and not a view.
template <class F>
void for_each_unplaced(gk_context * ctx, F && f) {
    for (gk_tensor * t = gk_get_first_tensor(ctx); t; t = gk_get_next_tensor(ctx, t)) {
        if (!t->data && !t->view_src) {
            f(t);
        }
    }
}

} // namespace

extern "C" {

gk_tallocr gk_tallocr_new(gk_backend_buffer_t buffer) {
    const size_t align = gk_backend_buffer_get_alignment(buffer);
    void *       base  = gk_backend_buffer_get_base(buffer);
    return {buffer, base, align, 0};
}

gk_status gk_tallocr_alloc(gk_tallocr * talloc, gk_tensor * tensor) {
    if (!talloc || !talloc->buffer || !tensor) {
        backend_error("tallocr_alloc: %s is NULL", !tensor ? "tensor" : "allocator or its buffer");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    const size_t size  = align_up(gk_backend_buffer_get_alloc_size(talloc->buffer, tensor), talloc->alignment);
    const size_t avail = gk_backend_buffer_get_size(talloc->buffer);
    if (talloc->offset > avail || size > avail - talloc->offset) {
        backend_error("tallocr_alloc: '%s' needs %zu bytes but %zu of the buffer's %zu are left", tensor->name, size,
                      talloc->offset > avail ? 0 : avail - talloc->offset, avail);
        return GK_STATUS_ALLOC_FAILED;
    }
    const gk_status st = gk_backend_tensor_alloc(talloc->buffer, tensor, static_cast<char *>(talloc->base) + talloc->offset);
    if (st == GK_STATUS_SUCCESS) {
        talloc->offset += size;
    }
    return st;
}

size_t gk_backend_alloc_ctx_tensors_from_buft_size(gk_context * ctx, gk_backend_buffer_type_t buft) {
    if (!ctx || !buft) {
        return 0;
    }
    const size_t align = gk_backend_buft_get_alignment(buft);
    size_t       total = 0;
    for_each_unplaced(ctx, [&](gk_tensor * t) { total += align_up(gk_backend_buft_get_alloc_size(buft, t), align); });
    return total;
}

gk_backend_buffer_t gk_backend_alloc_ctx_tensors_from_buft(gk_context * ctx, gk_backend_buffer_type_t buft) {
    gk::backend_error_clear();
    if (!ctx || !buft) {
        backend_error("alloc_ctx_tensors: %s is NULL", ctx ? "buffer type" : "context");
        return nullptr;
    }
    const size_t size = gk_backend_alloc_ctx_tensors_from_buft_size(ctx, buft);
    if (size == 0) {
        return nullptr;  // nothing needs memory (error message stays "")
    }
    gk_backend_buffer_t buffer = gk_backend_buft_alloc_buffer(buft, size);
    if (!buffer) {
        return nullptr;
    }
    gk_tallocr talloc = gk_tallocr_new(buffer);
    gk_status  st     = GK_STATUS_SUCCESS;
    for_each_unplaced(ctx, [&](gk_tensor * t) {
        if (st == GK_STATUS_SUCCESS) {
            st = gk_tallocr_alloc(&talloc, t);
        }
    });
    for (gk_tensor * t = gk_get_first_tensor(ctx); t && st == GK_STATUS_SUCCESS; t = gk_get_next_tensor(ctx, t)) {
        if (!t->data && t->view_src) {  // fails when the source is outside ctx and has no data
            st = gk_backend_view_init(t);
        }
    }
    if (st != GK_STATUS_SUCCESS) {
        // Undo: no tensor may keep a pointer into the buffer about to be freed.
        for (gk_tensor * t = gk_get_first_tensor(ctx); t; t = gk_get_next_tensor(ctx, t)) {
            if (t->buffer == buffer) {
                t->buffer = nullptr;
                t->data   = nullptr;
            }
        }
        gk_backend_buffer_free(buffer);
        return nullptr;
    }
    return buffer;
}

gk_backend_buffer_t gk_backend_alloc_ctx_tensors(gk_context * ctx, gk_backend_t backend) {
    if (!backend) {
        gk::backend_error_clear();
        backend_error("alloc_ctx_tensors: backend is NULL");
        return nullptr;
    }
    return gk_backend_alloc_ctx_tensors_from_buft(ctx, gk_backend_get_default_buffer_type(backend));
}

} // extern "C"
