// tensor.cpp - tensor creation with default strides, shape and stride queries, names,
// flags and op parameter access.
#include "debug.h"
#include "internal.h"

#include "quant/codec.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace gk {

void set_default_strides(gk_tensor * t) {
    t->nb[0] = gk_type_size(t->type);
    t->nb[1] = gk_row_size(t->type, t->ne[0]);
    t->nb[2] = t->nb[1] * static_cast<size_t>(t->ne[1]);
    t->nb[3] = t->nb[2] * static_cast<size_t>(t->ne[2]);
}

gk_tensor * new_tensor(gk_context * ctx, gk_type type, const int64_t ne[4], bool with_data) {
    if (!ctx) {
        return nullptr;
    }
    if (!gk_type_is_valid(type)) {
        set_error(ctx, "new tensor: invalid type id %d", static_cast<int>(type));
        return nullptr;
    }
    for (int i = 0; i < 4; ++i) {
        if (ne[i] < 0) {
            set_error(ctx, "new tensor: ne[%d] = %lld is negative", i, static_cast<long long>(ne[i]));
            return nullptr;
        }
    }
    if (ne[0] % gk_blck_size(type) != 0) {
        set_error(ctx, "new tensor: ne[0] = %lld is not a whole number of %s blocks (%lld elements)",
                  static_cast<long long>(ne[0]), gk_type_name(type), static_cast<long long>(gk_blck_size(type)));
        return nullptr;
    }
    if (!gk_row_len_ok(type, ne[0])) {
        set_error(ctx, "new tensor: a row of %lld %s elements has more than 2^63 - 1 bytes",
                  static_cast<long long>(ne[0]), gk_type_name(type));
        return nullptr;
    }
    // Element count and total bytes, checked for overflow.
    int64_t n_elements = 0;
    size_t  bytes      = gk_row_size(type, ne[0]);
    if (!checked_nelements(ne, &n_elements)) {
        bytes = SIZE_MAX;  // reported below
    }
    for (int i = 1; i < 4; ++i) {
        if (bytes == SIZE_MAX || __builtin_mul_overflow(bytes, static_cast<size_t>(ne[i]), &bytes)) {
            set_error(ctx, "new tensor: size of [%lld, %lld, %lld, %lld] %s overflows", static_cast<long long>(ne[0]),
                      static_cast<long long>(ne[1]), static_cast<long long>(ne[2]), static_cast<long long>(ne[3]),
                      gk_type_name(type));
            return nullptr;
        }
    }
    const bool alloc_data = with_data && !ctx->no_alloc;
    void *     mem        = arena_alloc(ctx, gk_object::tensor, sizeof(gk_tensor));
    if (!mem) {
        return nullptr;
    }
    void * data = nullptr;
    if (alloc_data) {
        data = arena_alloc(ctx, gk_object::data, bytes);
        if (!data) {
            return nullptr;  // the tensor struct stays in the arena, unreachable by name
        }
        debug_fill_fresh(data, bytes);
    }
    auto * t = new (mem) gk_tensor{};
    t->type  = type;
    for (int i = 0; i < 4; ++i) {
        t->ne[i] = ne[i];
    }
    set_default_strides(t);
    t->data = data;
    return t;
}

bool checked_nelements(const int64_t ne[4], int64_t * out) {
    int64_t n = 1;
    for (int i = 0; i < 4; ++i) {
        if (__builtin_mul_overflow(n, ne[i], &n)) {
            return false;
        }
    }
    *out = n;
    return true;
}

bool checked_nbytes(gk_type type, const int64_t ne[4], const size_t nb[4], size_t * out) {
    for (int i = 0; i < 4; ++i) {
        if (ne[i] <= 0) {
            *out = 0;
            return true;
        }
    }
    // Bytes from the first element to one past the last, following the strides.
    const int64_t blck  = gk_blck_size(type);
    size_t        bytes = 0;
    size_t        term  = 0;
    if (blck == 1) {
        bytes = gk_type_size(type);
        if (__builtin_mul_overflow(static_cast<size_t>(ne[0] - 1), nb[0], &term) ||
            __builtin_add_overflow(bytes, term, &bytes)) {
            return false;
        }
    } else if (__builtin_mul_overflow(static_cast<size_t>(ne[0] / blck), nb[0], &bytes)) {
        return false;
    }
    for (int i = 1; i < 4; ++i) {
        if (__builtin_mul_overflow(static_cast<size_t>(ne[i] - 1), nb[i], &term) ||
            __builtin_add_overflow(bytes, term, &bytes)) {
            return false;
        }
    }
    *out = bytes;
    return true;
}

std::string describe(const gk_tensor * t) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "[%lld, %lld, %lld, %lld] %s", static_cast<long long>(t->ne[0]),
                  static_cast<long long>(t->ne[1]), static_cast<long long>(t->ne[2]), static_cast<long long>(t->ne[3]),
                  gk_type_name(t->type));
    return buf;
}

bool is_float_type(gk_type type) { return type == GK_TYPE_F32 || type == GK_TYPE_F16 || type == GK_TYPE_BF16; }

bool has_decoder(gk_type type) {
    const auto * tt = quant::get_type_traits(type);
    return tt && tt->to_float;
}

bool has_encoder(gk_type type) {
    const auto * tt = quant::get_type_traits(type);
    return tt && tt->from_float;
}

bool is_contiguous_from(const gk_tensor * t, int from) {
    // Each dimension >= `from` of size > 1 must have the stride of everything below it
    // packed; dimensions of size 1 may carry any stride.
    size_t next = gk_type_size(t->type);
    for (int i = 0; i < 4; ++i) {
        if (t->ne[i] == 1) {
            continue;
        }
        if (i >= from && t->nb[i] != next) {
            return false;
        }
        next = t->nb[i] * static_cast<size_t>(t->ne[i]) / static_cast<size_t>(i == 0 ? gk_blck_size(t->type) : 1);
    }
    return true;
}

void set_op_param_i32(gk_tensor * t, int i, int32_t v) { t->op_params[i] = v; }

void set_op_param_f32(gk_tensor * t, int i, float v) { std::memcpy(&t->op_params[i], &v, sizeof(v)); }

} // namespace gk

extern "C" {

gk_tensor * gk_new_tensor(gk_context * ctx, gk_type type, int n_dims, const int64_t * ne) {
    if (!ctx) {
        return nullptr;
    }
    if (n_dims < 1 || n_dims > 4 || !ne) {
        gk::set_error(ctx, "new tensor: n_dims = %d (must be 1..4 with ne given)", n_dims);
        return nullptr;
    }
    int64_t full[4] = {1, 1, 1, 1};
    for (int i = 0; i < n_dims; ++i) {
        full[i] = ne[i];
    }
    return gk::new_tensor(ctx, type, full, true);
}

gk_tensor * gk_new_tensor_1d(gk_context * ctx, gk_type type, int64_t ne0) { return gk_new_tensor(ctx, type, 1, &ne0); }

gk_tensor * gk_new_tensor_2d(gk_context * ctx, gk_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = {ne0, ne1};
    return gk_new_tensor(ctx, type, 2, ne);
}

gk_tensor * gk_new_tensor_3d(gk_context * ctx, gk_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    return gk_new_tensor(ctx, type, 3, ne);
}

gk_tensor * gk_new_tensor_4d(gk_context * ctx, gk_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return gk_new_tensor(ctx, type, 4, ne);
}

gk_tensor * gk_dup_tensor(gk_context * ctx, const gk_tensor * a) {
    if (!a) {
        return nullptr;
    }
    return gk::new_tensor(ctx, a->type, a->ne, true);
}

const char * gk_get_name(const gk_tensor * t) { return t ? t->name : ""; }

gk_tensor * gk_set_name(gk_tensor * t, const char * name) {
    if (t) {
        std::snprintf(t->name, sizeof(t->name), "%s", name ? name : "");
    }
    return t;
}

gk_tensor * gk_format_name(gk_tensor * t, const char * fmt, ...) {
    if (t && fmt) {
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(t->name, sizeof(t->name), fmt, ap);
        va_end(ap);
    }
    return t;
}

void gk_set_input(gk_tensor * t) {
    if (t) {
        t->flags |= GK_TENSOR_FLAG_INPUT;
    }
}

void gk_set_output(gk_tensor * t) {
    if (t) {
        t->flags |= GK_TENSOR_FLAG_OUTPUT;
    }
}

void gk_set_param(gk_tensor * t) {
    if (t) {
        t->flags |= GK_TENSOR_FLAG_PARAM;
    }
}

void gk_set_loss(gk_tensor * t) {
    if (t) {
        t->flags |= GK_TENSOR_FLAG_LOSS;
    }
}

int64_t gk_nelements(const gk_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

int64_t gk_nrows(const gk_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

size_t gk_nbytes(const gk_tensor * t) {
    size_t bytes = 0;
    return gk::checked_nbytes(t->type, t->ne, t->nb, &bytes) ? bytes : SIZE_MAX;
}

size_t gk_element_size(const gk_tensor * t) { return gk_type_size(t->type); }

int gk_n_dims(const gk_tensor * t) {
    for (int i = 3; i >= 1; --i) {
        if (t->ne[i] > 1) {
            return i + 1;
        }
    }
    return 1;
}

bool gk_is_contiguous(const gk_tensor * t) { return gk::is_contiguous_from(t, 0); }

bool gk_is_contiguous_rows(const gk_tensor * t) { return t->ne[0] <= 1 || t->nb[0] == gk_type_size(t->type); }

bool gk_is_transposed(const gk_tensor * t) { return t->nb[0] > t->nb[1]; }

bool gk_is_permuted(const gk_tensor * t) {
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

bool gk_is_view(const gk_tensor * t) { return t->view_src != nullptr; }

bool gk_is_empty(const gk_tensor * t) { return gk_nelements(t) == 0; }

bool gk_are_same_shape(const gk_tensor * a, const gk_tensor * b) {
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

bool gk_can_repeat(const gk_tensor * b, const gk_tensor * a) {
    if (gk_is_empty(b)) {
        return gk_is_empty(a);
    }
    for (int i = 0; i < 4; ++i) {
        if (a->ne[i] % b->ne[i] != 0) {
            return false;
        }
    }
    return true;
}

void * gk_get_data(const gk_tensor * t) { return t->data; }

float * gk_get_data_f32(const gk_tensor * t) {
    return t->type == GK_TYPE_F32 ? static_cast<float *>(t->data) : nullptr;
}

int32_t gk_get_op_params_i32(const gk_tensor * t, int i) {
    return i >= 0 && i < GK_MAX_OP_PARAMS / 4 ? t->op_params[i] : 0;
}

float gk_get_op_params_f32(const gk_tensor * t, int i) {
    float v = 0.0f;
    if (i >= 0 && i < GK_MAX_OP_PARAMS / 4) {
        std::memcpy(&v, &t->op_params[i], sizeof(v));
    }
    return v;
}

gk_unary_op gk_get_unary_op(const gk_tensor * t) { return static_cast<gk_unary_op>(t->op_params[0]); }

gk_glu_op gk_get_glu_op(const gk_tensor * t) { return static_cast<gk_glu_op>(t->op_params[0]); }

} // extern "C"
