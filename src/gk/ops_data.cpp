// ops_data.cpp - builders of the data-movement ops: dup, cpy, cast, get_rows,
// set_rows, repeat, concat, pad, and the generators arange and timestep_embedding.
#include "internal.h"

#include <cmath>

namespace gk {
namespace {

/// Checks shared by dup / cpy / cast: a readable, the destination type writable.
bool convertible(builder & bd, const gk_tensor * a, gk_type dst_type) {
    if (!bd.decodable(a, "a")) {
        return false;
    }
    if (!has_encoder(dst_type)) {
        return bd.fail("destination type %s has no row encoder", gk_type_name(dst_type));
    }
    return true;
}

} // namespace
} // namespace gk

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_dup(gk_context * ctx, gk_tensor * a) {
    builder bd(ctx, "dup");
    if (!bd.inputs(a) || !gk::convertible(bd, a, a->type)) {
        return nullptr;
    }
    return bd.result(a->type, a->ne, GK_OP_DUP, a);
}

gk_tensor * gk_cpy(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    builder bd(ctx, "cpy");
    if (!bd.inputs(a, b) || !gk::convertible(bd, a, b->type)) {
        return nullptr;
    }
    if (gk_nelements(a) != gk_nelements(b)) {
        bd.fail("a %s and b %s hold different element counts", describe(a).c_str(), describe(b).c_str());
        return nullptr;
    }
    return bd.alias(b, GK_OP_CPY, a, b);
}

gk_tensor * gk_cast(gk_context * ctx, gk_tensor * a, gk_type type) {
    builder bd(ctx, "cast");
    if (!bd.inputs(a) || !gk::convertible(bd, a, type)) {
        return nullptr;
    }
    if (!gk_row_len_ok(type, a->ne[0])) {
        bd.fail("ne[0] of a %s is not a whole number of %s blocks", describe(a).c_str(), gk_type_name(type));
        return nullptr;
    }
    return bd.result(type, a->ne, GK_OP_CPY, a);
}

gk_tensor * gk_get_rows(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    builder bd(ctx, "get_rows");
    if (!bd.inputs(a, b) || !bd.decodable(a, "a") || !bd.type_is(b, GK_TYPE_I32, "b") ||
        !bd.dims_at_most(b, 3, "b")) {
        return nullptr;
    }
    if (a->ne[2] != b->ne[1] || a->ne[3] != b->ne[2]) {
        bd.fail("a %s and indices b %s: need a.ne2 == b.ne1 and a.ne3 == b.ne2", describe(a).c_str(),
                describe(b).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[1], b->ne[2]};
    return bd.result(a->type == GK_TYPE_I32 ? GK_TYPE_I32 : GK_TYPE_F32, ne, GK_OP_GET_ROWS, a, b);
}

gk_tensor * gk_set_rows(gk_context * ctx, gk_tensor * a, gk_tensor * b, gk_tensor * c) {
    builder bd(ctx, "set_rows");
    if (!bd.inputs(a, b, c) || !bd.encodable(a, "a") || !bd.float_type(b, "b") || !bd.dims_at_most(c, 3, "c")) {
        return nullptr;
    }
    if (c->type != GK_TYPE_I32 && c->type != GK_TYPE_I64) {
        bd.fail("indices c must be i32 or i64, got %s", gk_type_name(c->type));
        return nullptr;
    }
    if (a->ne[0] != b->ne[0] || a->ne[2] != b->ne[2] || a->ne[3] != b->ne[3] || b->ne[1] != c->ne[0] ||
        c->ne[1] == 0 || c->ne[2] == 0 || b->ne[2] % c->ne[1] != 0 || b->ne[3] % c->ne[2] != 0) {
        bd.fail("a %s, b %s, c %s: need a, b equal but for ne1, b.ne1 == c.ne0, b.ne2/3 multiples of c.ne1/2",
                describe(a).c_str(), describe(b).c_str(), describe(c).c_str());
        return nullptr;
    }
    return bd.alias(a, GK_OP_SET_ROWS, b, c, a);
}

gk_tensor * gk_repeat(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    builder bd(ctx, "repeat");
    if (!bd.inputs(a, b) || !bd.plain_type(a, "a")) {
        return nullptr;
    }
    if (!gk_can_repeat(a, b)) {
        bd.fail("a %s does not tile b %s", describe(a).c_str(), describe(b).c_str());
        return nullptr;
    }
    return bd.result(a->type, b->ne, GK_OP_REPEAT, a);
}

gk_tensor * gk_concat(gk_context * ctx, gk_tensor * a, gk_tensor * b, int dim) {
    builder bd(ctx, "concat");
    if (!bd.inputs(a, b) || !bd.type_is(b, a->type, "b")) {
        return nullptr;
    }
    if (dim < 0 || dim > 3) {
        bd.fail("dim = %d must be 0..3", dim);
        return nullptr;
    }
    int64_t ne[4];
    for (int d = 0; d < 4; ++d) {
        if (d != dim && a->ne[d] != b->ne[d]) {
            bd.fail("a %s and b %s differ in dim %d", describe(a).c_str(), describe(b).c_str(), d);
            return nullptr;
        }
        ne[d] = d == dim ? a->ne[d] + b->ne[d] : a->ne[d];
    }
    gk_tensor * r = bd.result(a->type, ne, GK_OP_CONCAT, a, b);
    if (r) {
        gk::set_op_param_i32(r, 0, dim);
    }
    return r;
}

gk_tensor * gk_pad_ext(gk_context * ctx, gk_tensor * a, int lp0, int rp0, int lp1, int rp1, int lp2, int rp2, int lp3,
                       int rp3) {
    builder bd(ctx, "pad");
    if (!bd.inputs(a) || !bd.float_type(a, "a")) {
        return nullptr;
    }
    const int pads[8] = {lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3};
    int64_t   ne[4];
    for (int d = 0; d < 4; ++d) {
        if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) {
            bd.fail("padding of dim %d (%d, %d) must be >= 0", d, pads[2 * d], pads[2 * d + 1]);
            return nullptr;
        }
        ne[d] = a->ne[d] + pads[2 * d] + pads[2 * d + 1];
    }
    gk_tensor * r = bd.result(a->type, ne, GK_OP_PAD, a);
    if (r) {
        for (int i = 0; i < 8; ++i) {
            gk::set_op_param_i32(r, i, pads[i]);
        }
    }
    return r;
}

gk_tensor * gk_pad(gk_context * ctx, gk_tensor * a, int p0, int p1, int p2, int p3) {
    return gk_pad_ext(ctx, a, 0, p0, 0, p1, 0, p2, 0, p3);
}

gk_tensor * gk_pad_ext_circular(gk_context * ctx, gk_tensor * a, int lp0, int rp0, int lp1, int rp1, int lp2, int rp2,
                                int lp3, int rp3) {
    if (a && gk_nelements(a) == 0) {
        builder(ctx, "pad").fail("a %s is empty: nothing to wrap around", describe(a).c_str());
        return nullptr;
    }
    gk_tensor * r = gk_pad_ext(ctx, a, lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3);
    if (r) {
        gk::set_op_param_i32(r, 8, 1);
    }
    return r;
}

gk_tensor * gk_pad_circular(gk_context * ctx, gk_tensor * a, int p0, int p1, int p2, int p3) {
    return gk_pad_ext_circular(ctx, a, 0, p0, 0, p1, 0, p2, 0, p3);
}

gk_tensor * gk_arange(gk_context * ctx, float start, float stop, float step) {
    if (!ctx) {
        return nullptr;
    }
    builder      bd(ctx, "arange");
    const double n = std::ceil((static_cast<double>(stop) - start) / step);
    if (step == 0.0f || !std::isfinite(n) || n < 0 || n > 1e15) {
        bd.fail("start %g, stop %g, step %g do not give a finite count", static_cast<double>(start),
                static_cast<double>(stop), static_cast<double>(step));
        return nullptr;
    }
    const int64_t ne[4] = {static_cast<int64_t>(n), 1, 1, 1};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_ARANGE);
    if (r) {
        gk::set_op_param_f32(r, 0, start);
        gk::set_op_param_f32(r, 1, stop);
        gk::set_op_param_f32(r, 2, step);
    }
    return r;
}

gk_tensor * gk_timestep_embedding(gk_context * ctx, gk_tensor * timesteps, int dim, int max_period) {
    builder bd(ctx, "timestep_embedding");
    if (!bd.inputs(timesteps) || !bd.type_is(timesteps, GK_TYPE_F32, "timesteps") ||
        !bd.dims_at_most(timesteps, 1, "timesteps")) {
        return nullptr;
    }
    if (dim < 1 || max_period < 1) {
        bd.fail("dim = %d and max_period = %d must be >= 1", dim, max_period);
        return nullptr;
    }
    const int64_t ne[4] = {dim, timesteps->ne[0], 1, 1};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_TIMESTEP_EMBEDDING, timesteps);
    if (r) {
        gk::set_op_param_i32(r, 0, dim);
        gk::set_op_param_i32(r, 1, max_period);
    }
    return r;
}


gk_tensor * gk_roll(gk_context * ctx, gk_tensor * a, int shift0, int shift1, int shift2, int shift3) {
    builder bd(ctx, "roll");
    if (!bd.inputs(a) || !bd.float_type(a, "a") || !bd.dense_rows(a, "a")) {
        return nullptr;
    }
    const int shift[4] = {shift0, shift1, shift2, shift3};
    for (int d = 0; d < 4; ++d) {
        if (shift[d] <= -a->ne[d] || shift[d] >= a->ne[d]) {
            bd.fail("shift%d = %d must be smaller than ne%d of a %s in magnitude", d, shift[d], d, describe(a).c_str());
            return nullptr;
        }
    }
    gk_tensor * r = bd.result(a->type, a->ne, GK_OP_ROLL, a);
    for (int d = 0; r && d < 4; ++d) {
        gk::set_op_param_i32(r, d, shift[d]);
    }
    return r;
}

} // extern "C"
