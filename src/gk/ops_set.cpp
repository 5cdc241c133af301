// ops_set.cpp - builders of the ops that write or add b into a view of a: set (set_1d,
// set_2d), acc, and add1 (a plus a scalar). op_params of set and acc are ggml's:
// i32 nb1, nb2, nb3, offset (bytes), inplace.
#include "internal.h"

#include <climits>

namespace gk {
namespace {

/// The view of a that set / acc write: b's shape with byte strides esz (a's element size),
/// nb1, nb2, nb3 at byte `offset`. Checks that it is aligned to a's elements, that its rows
/// do not overlap (each stride at least the span of the dims inside it) and that it lies
/// inside a.
bool view_fits(builder & bd, const gk_tensor * a, const gk_tensor * b, const size_t nb[4], size_t offset) {
    const size_t esz = gk_type_size(a->type);
    for (int d = 1; d < 4; ++d) {
        if (nb[d] % esz != 0 || nb[d] > INT32_MAX) {
            return bd.fail("stride nb%d = %zu must be a multiple of %zu and fit in int32", d, nb[d], esz);
        }
    }
    if (offset % esz != 0 || offset > INT32_MAX) {
        return bd.fail("offset %zu must be a multiple of %zu and fit in int32", offset, esz);
    }
    if (gk_is_empty(b)) {
        return true;
    }
    size_t span = static_cast<size_t>(b->ne[0]) * esz;  // bytes from the view's first element past its last
    for (int d = 1; d < 4; ++d) {
        if (b->ne[d] > 1 && nb[d] < span) {
            return bd.fail("stride nb%d = %zu is below the %zu bytes of the dims inside it: the view's rows overlap", d,
                           nb[d], span);
        }
        span += static_cast<size_t>(b->ne[d] - 1) * nb[d];
    }
    if (offset + span > gk_nbytes(a)) {
        return bd.fail("the view of b %s at offset %zu spans %zu bytes, past the %zu bytes of a %s",
                       describe(b).c_str(), offset, span, gk_nbytes(a), describe(a).c_str());
    }
    return true;
}

/// set (op SET) and acc (op ACC): the shared checks and the result.
gk_tensor * write_view(gk_context * ctx, gk_op op, gk_tensor * a, gk_tensor * b, size_t nb1, size_t nb2, size_t nb3,
                       size_t offset, bool inplace) {
    builder bd(ctx, gk_op_symbol(op));
    if (!bd.inputs(a, b) || !bd.contiguous(a, "a")) {
        return nullptr;
    }
    if (op == GK_OP_SET) {
        if (!bd.plain_type(a, "a") || !bd.type_is(b, a->type, "b")) {
            return nullptr;
        }
    } else if (!bd.type_is(a, GK_TYPE_F32, "a") || !bd.float_type(b, "b")) {
        return nullptr;
    }
    const size_t nb[4] = {gk_type_size(a->type), nb1, nb2, nb3};
    if (!view_fits(bd, a, b, nb, offset)) {
        return nullptr;
    }
    gk_tensor * r = inplace ? bd.alias(a, op, a, b) : bd.result(a->type, a->ne, op, a, b);
    if (r) {
        set_op_param_i32(r, 0, static_cast<int32_t>(nb1));
        set_op_param_i32(r, 1, static_cast<int32_t>(nb2));
        set_op_param_i32(r, 2, static_cast<int32_t>(nb3));
        set_op_param_i32(r, 3, static_cast<int32_t>(offset));
        set_op_param_i32(r, 4, inplace ? 1 : 0);
    }
    return r;
}

gk_tensor * add1(gk_context * ctx, gk_tensor * a, gk_tensor * b, bool inplace) {
    builder bd(ctx, "add1");
    if (!bd.inputs(a, b) || !bd.float_type(a, "a") || !bd.float_type(b, "b")) {
        return nullptr;
    }
    if (gk_nelements(b) != 1) {
        bd.fail("b %s must be a scalar (one element)", describe(b).c_str());
        return nullptr;
    }
    return inplace ? bd.alias(a, GK_OP_ADD1, a, b) : bd.result(a->type, a->ne, GK_OP_ADD1, a, b);
}

/// a->nb[d], or 0 for a null a (the builder then reports the null source).
size_t stride(const gk_tensor * a, int d) { return a ? a->nb[d] : 0; }

} // namespace
} // namespace gk

extern "C" {

gk_tensor * gk_set(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return gk::write_view(ctx, GK_OP_SET, a, b, nb1, nb2, nb3, offset, false);
}

gk_tensor * gk_set_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t nb1, size_t nb2, size_t nb3,
                           size_t offset) {
    return gk::write_view(ctx, GK_OP_SET, a, b, nb1, nb2, nb3, offset, true);
}

gk_tensor * gk_set_1d(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t offset) {
    return gk_set(ctx, a, b, gk::stride(a, 1), gk::stride(a, 2), gk::stride(a, 3), offset);
}

gk_tensor * gk_set_1d_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t offset) {
    return gk_set_inplace(ctx, a, b, gk::stride(a, 1), gk::stride(a, 2), gk::stride(a, 3), offset);
}

gk_tensor * gk_set_2d(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t nb1, size_t offset) {
    return gk_set(ctx, a, b, nb1, gk::stride(a, 2), gk::stride(a, 3), offset);
}

gk_tensor * gk_set_2d_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t nb1, size_t offset) {
    return gk_set_inplace(ctx, a, b, nb1, gk::stride(a, 2), gk::stride(a, 3), offset);
}

gk_tensor * gk_acc(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return gk::write_view(ctx, GK_OP_ACC, a, b, nb1, nb2, nb3, offset, false);
}

gk_tensor * gk_acc_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b, size_t nb1, size_t nb2, size_t nb3,
                           size_t offset) {
    return gk::write_view(ctx, GK_OP_ACC, a, b, nb1, nb2, nb3, offset, true);
}

gk_tensor * gk_add1(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return gk::add1(ctx, a, b, false); }

gk_tensor * gk_add1_inplace(gk_context * ctx, gk_tensor * a, gk_tensor * b) { return gk::add1(ctx, a, b, true); }

} // extern "C"
