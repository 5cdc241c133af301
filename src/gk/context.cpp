// context.cpp - the context: one fixed arena that tensor structs, graphs and tensor
// data are carved from, the object list over it, and the last-error slot.
#include "internal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace gk {
namespace {

constexpr size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

constexpr size_t k_header = align_up(sizeof(gk_object), GK_MEM_ALIGN);

} // namespace

void set_error_v(gk_context * ctx, const char * fmt, va_list ap) {
    if (ctx) {
        std::vsnprintf(ctx->error, sizeof(ctx->error), fmt, ap);
    }
}

void set_error(gk_context * ctx, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error_v(ctx, fmt, ap);
    va_end(ap);
}

size_t arena_cost(size_t size) { return k_header + align_up(size, GK_MEM_ALIGN); }

void * arena_alloc(gk_context * ctx, gk_object::kind_t kind, size_t size) {
    // Objects start at GK_MEM_ALIGN boundaries of the address space (a caller-supplied
    // buffer need not be aligned), so the first one may skip a few bytes.
    const uintptr_t base  = reinterpret_cast<uintptr_t>(ctx->mem);
    const size_t    start = align_up(base + ctx->used, GK_MEM_ALIGN) - base;
    if (size > ctx->mem_size || start > ctx->mem_size || ctx->mem_size - start < arena_cost(size)) {
        const size_t need = size > ctx->mem_size ? size : arena_cost(size);  // arena_cost wraps near SIZE_MAX
        set_error(ctx, "context arena exhausted: %zu bytes needed, %zu of %zu in use", need, ctx->used, ctx->mem_size);
        return nullptr;
    }
    auto * obj = new (ctx->mem + start) gk_object{kind, start + k_header, size, nullptr};
    (ctx->last ? ctx->last->next : ctx->first) = obj;
    ctx->last = obj;
    ctx->used = start + arena_cost(size);
    return ctx->mem + start + k_header;
}

} // namespace gk

using gk::k_header;

extern "C" {

gk_context * gk_init(gk_init_params params) {
    if (params.mem_size == 0) {
        return nullptr;
    }
    auto * ctx = new (std::nothrow) gk_context;
    if (!ctx) {
        return nullptr;
    }
    ctx->mem_size = params.mem_size;
    ctx->no_alloc = params.no_alloc;
    if (params.mem_buffer) {
        ctx->mem = static_cast<unsigned char *>(params.mem_buffer);
    } else {
        // aligned_alloc wants a multiple of the alignment; a size that cannot be rounded
        // up without wrapping cannot be allocated either.
        if (params.mem_size <= SIZE_MAX - GK_MEM_ALIGN) {
            ctx->mem = static_cast<unsigned char *>(
                std::aligned_alloc(GK_MEM_ALIGN, gk::align_up(params.mem_size, GK_MEM_ALIGN)));
        }
        ctx->mem_owned = true;
        if (!ctx->mem) {
            delete ctx;
            return nullptr;
        }
    }
    return ctx;
}

void gk_free(gk_context * ctx) {
    if (!ctx) {
        return;
    }
    if (ctx->mem_owned) {
        std::free(ctx->mem);
    }
    delete ctx;
}

const char * gk_last_error(const gk_context * ctx) { return ctx ? ctx->error : "no context"; }

void gk_clear_error(gk_context * ctx) {
    if (ctx) {
        ctx->error[0] = '\0';
    }
}

size_t gk_used_mem(const gk_context * ctx) { return ctx ? ctx->used : 0; }
size_t gk_get_mem_size(const gk_context * ctx) { return ctx ? ctx->mem_size : 0; }
bool   gk_get_no_alloc(const gk_context * ctx) { return ctx && ctx->no_alloc; }

void gk_set_no_alloc(gk_context * ctx, bool no_alloc) {
    if (ctx) {
        ctx->no_alloc = no_alloc;
    }
}

void gk_reset(gk_context * ctx) {
    if (ctx) {
        ctx->used  = 0;
        ctx->first = nullptr;
        ctx->last  = nullptr;
    }
}

void * gk_get_mem_buffer(const gk_context * ctx) { return ctx ? ctx->mem : nullptr; }

void * gk_new_buffer(gk_context * ctx, size_t nbytes) {
    return ctx ? gk::arena_alloc(ctx, gk_object::data, nbytes) : nullptr;
}

const gk_object * gk_get_first_object(const gk_context * ctx) { return ctx ? ctx->first : nullptr; }

gk_object_info gk_object_get_info(const gk_object * obj) {
    return {static_cast<gk_object_kind>(obj->kind), obj->offs, obj->size, obj->next};
}

size_t gk_tensor_overhead(void) { return gk::arena_cost(sizeof(gk_tensor)); }

size_t gk_tensor_data_overhead(void) { return gk::arena_cost(1) - 1; }

static gk_tensor * tensor_of(gk_object * obj) {
    for (; obj; obj = obj->next) {
        if (obj->kind == gk_object::tensor) {
            return reinterpret_cast<gk_tensor *>(reinterpret_cast<unsigned char *>(obj) + k_header);
        }
    }
    return nullptr;
}

gk_tensor * gk_get_first_tensor(const gk_context * ctx) { return ctx ? tensor_of(ctx->first) : nullptr; }

gk_tensor * gk_get_next_tensor(const gk_context * ctx, gk_tensor * tensor) {
    if (!ctx || !tensor) {
        return nullptr;
    }
    auto * obj = reinterpret_cast<gk_object *>(reinterpret_cast<unsigned char *>(tensor) - k_header);
    return tensor_of(obj->next);
}

gk_tensor * gk_get_tensor(gk_context * ctx, const char * name) {
    if (!name) {
        return nullptr;
    }
    for (gk_tensor * t = gk_get_first_tensor(ctx); t; t = gk_get_next_tensor(ctx, t)) {
        if (std::strcmp(t->name, name) == 0) {
            return t;
        }
    }
    return nullptr;
}

} // extern "C"
