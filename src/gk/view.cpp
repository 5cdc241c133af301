// view.cpp - views, reshapes, permutes, transposes and cont: tensors that alias the
// storage of another, made at build time (no work at compute time; cont copies only
// when its source is not already contiguous).
//
// A view always points at the tensor that owns the storage: a view of a view collapses
// to (owner, summed offset), so view_src is never itself a view.
#include "internal.h"

#include <cstdio>
#include <cstring>

namespace gk {
namespace {

/// A view of `a` with shape ne and strides nb (nb[0] is the type size) at byte
/// `offset` from a's first element. Checks that the view's bytes lie within the
/// storage of the owner, that blocks stay whole and that elements stay aligned.
gk_tensor * make_view(builder & bd, gk_tensor * a, const int64_t ne[4], const size_t nb[4], size_t offset, gk_op op) {
    if (!bd.inputs(a)) {
        return nullptr;
    }
    for (int i = 0; i < 4; ++i) {
        if (ne[i] < 0) {
            bd.fail("ne[%d] = %lld is negative", i, static_cast<long long>(ne[i]));
            return nullptr;
        }
    }
    if (!gk_row_len_ok(a->type, ne[0])) {
        bd.fail("ne[0] = %lld is not a whole number of %s blocks", static_cast<long long>(ne[0]), gk_type_name(a->type));
        return nullptr;
    }
    gk_tensor * owner = a->view_src ? a->view_src : a;
    size_t      offs  = 0;
    size_t      span  = 0;
    gk_tensor   probe{};
    probe.type = a->type;
    std::memcpy(probe.ne, ne, sizeof(probe.ne));
    if (!checked_nbytes(a->type, ne, nb, &span) || __builtin_add_overflow(a->view_offs, offset, &offs) ||
        offs > gk_nbytes(owner) || span > gk_nbytes(owner) - offs) {
        bd.fail("view %s at byte offset %zu reaches past the %zu bytes of its storage", describe(&probe).c_str(),
                offset, gk_nbytes(owner));
        return nullptr;
    }
    // Every element (or block) of the view must start on an element (block) boundary of
    // the owner: kernels load them as typed values, and a misaligned one is undefined.
    const size_t unit = gk_type_size(a->type);
    for (int i = 1; i < 4; ++i) {
        if (nb[i] % unit != 0) {
            bd.fail("nb[%d] = %zu is not a multiple of %zu, the bytes of one %s %s", i, nb[i], unit,
                    gk_type_name(a->type), gk_is_quantized(a->type) ? "block" : "element");
            return nullptr;
        }
    }
    if (offs % unit != 0) {
        bd.fail("byte offset %zu is not a multiple of %zu, the bytes of one %s %s", offs, unit, gk_type_name(a->type),
                gk_is_quantized(a->type) ? "block" : "element");
        return nullptr;
    }
    gk_tensor * r = new_tensor(bd.ctx(), a->type, ne, false);
    if (!r) {
        return nullptr;
    }
    std::memcpy(r->nb, nb, sizeof(r->nb));
    r->view_src  = owner;
    r->view_offs = offs;
    r->data      = owner->data ? static_cast<char *>(owner->data) + offs : nullptr;
    r->op        = op;
    r->src[0]    = a;
    std::snprintf(r->name, sizeof(r->name), "%.50s (view)", a->name);
    return r;
}

gk_tensor * view_nd(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1,
                    size_t nb2, size_t nb3, size_t offset, int n_dims) {
    builder       bd(ctx, "view");
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    if (!bd.inputs(a)) {
        return nullptr;
    }
    // Strides beyond the given dims follow from the ones below (unused dims are 1).
    size_t nb[4] = {gk_type_size(a->type), nb1, nb2, nb3};
    if (n_dims < 2) {
        nb[1] = gk_row_size(a->type, ne0);
    }
    for (int i = n_dims < 2 ? 2 : n_dims; i < 4; ++i) {
        nb[i] = nb[i - 1] * static_cast<size_t>(ne[i - 1]);
    }
    gk_tensor * r = make_view(bd, a, ne, nb, offset, GK_OP_VIEW);
    if (r) {
        std::memcpy(r->op_params, &offset, sizeof(offset));  // ggml keeps the offset here
    }
    return r;
}

gk_tensor * reshape_to(gk_context * ctx, gk_tensor * a, const int64_t ne[4]) {
    builder bd(ctx, "reshape");
    if (!bd.inputs(a) || !bd.contiguous(a, "a")) {
        return nullptr;
    }
    int64_t n = 0;
    if (!checked_nelements(ne, &n) || n != gk_nelements(a)) {
        bd.fail("[%lld, %lld, %lld, %lld] has a different element count from %s", static_cast<long long>(ne[0]),
                static_cast<long long>(ne[1]), static_cast<long long>(ne[2]), static_cast<long long>(ne[3]),
                describe(a).c_str());
        return nullptr;
    }
    gk_tensor probe{};
    probe.type = a->type;
    std::memcpy(probe.ne, ne, sizeof(probe.ne));
    set_default_strides(&probe);
    gk_tensor * r = make_view(bd, a, ne, probe.nb, 0, GK_OP_RESHAPE);
    if (r) {
        std::snprintf(r->name, sizeof(r->name), "%.50s (reshaped)", a->name);
    }
    return r;
}

} // namespace

bool is_layout_op(gk_op op) {
    return op == GK_OP_NONE || op == GK_OP_VIEW || op == GK_OP_RESHAPE || op == GK_OP_PERMUTE ||
           op == GK_OP_TRANSPOSE;
}

} // namespace gk

using gk::builder;

extern "C" {

gk_tensor * gk_view_tensor(gk_context * ctx, gk_tensor * a) {
    builder bd(ctx, "view");
    if (!bd.inputs(a)) {
        return nullptr;
    }
    return gk::make_view(bd, a, a->ne, a->nb, 0, GK_OP_VIEW);
}

gk_tensor * gk_view_1d(gk_context * ctx, gk_tensor * a, int64_t ne0, size_t offset) {
    return gk::view_nd(ctx, a, ne0, 1, 1, 1, 0, 0, 0, offset, 1);
}

gk_tensor * gk_view_2d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    return gk::view_nd(ctx, a, ne0, ne1, 1, 1, nb1, 0, 0, offset, 2);
}

gk_tensor * gk_view_3d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2,
                       size_t offset) {
    return gk::view_nd(ctx, a, ne0, ne1, ne2, 1, nb1, nb2, 0, offset, 3);
}

gk_tensor * gk_view_4d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1,
                       size_t nb2, size_t nb3, size_t offset) {
    return gk::view_nd(ctx, a, ne0, ne1, ne2, ne3, nb1, nb2, nb3, offset, 4);
}

gk_tensor * gk_reshape(gk_context * ctx, gk_tensor * a, gk_tensor * b) {
    builder bd(ctx, "reshape");
    return bd.inputs(a, b) ? gk::reshape_to(ctx, a, b->ne) : nullptr;
}

gk_tensor * gk_reshape_1d(gk_context * ctx, gk_tensor * a, int64_t ne0) {
    const int64_t ne[4] = {ne0, 1, 1, 1};
    return gk::reshape_to(ctx, a, ne);
}

gk_tensor * gk_reshape_2d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1) {
    const int64_t ne[4] = {ne0, ne1, 1, 1};
    return gk::reshape_to(ctx, a, ne);
}

gk_tensor * gk_reshape_3d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[4] = {ne0, ne1, ne2, 1};
    return gk::reshape_to(ctx, a, ne);
}

gk_tensor * gk_reshape_4d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return gk::reshape_to(ctx, a, ne);
}

gk_tensor * gk_permute(gk_context * ctx, gk_tensor * a, int axis0, int axis1, int axis2, int axis3) {
    builder bd(ctx, "permute");
    if (!bd.inputs(a)) {
        return nullptr;
    }
    const int axes[4] = {axis0, axis1, axis2, axis3};
    bool      seen[4] = {};
    for (int ax : axes) {
        if (ax < 0 || ax > 3 || seen[ax]) {
            bd.fail("axes (%d, %d, %d, %d) are not a permutation of 0..3", axis0, axis1, axis2, axis3);
            return nullptr;
        }
        seen[ax] = true;
    }
    if (gk_is_quantized(a->type) && axis0 != 0) {
        bd.fail("dimension 0 of a %s tensor holds whole blocks and cannot be moved", gk_type_name(a->type));
        return nullptr;
    }
    int64_t ne[4];
    size_t  nb[4];
    for (int i = 0; i < 4; ++i) {
        ne[axes[i]] = a->ne[i];
        nb[axes[i]] = a->nb[i];
    }
    gk_tensor * r = gk::make_view(bd, a, ne, nb, 0, GK_OP_PERMUTE);
    if (r) {
        std::memcpy(r->op_params, axes, sizeof(axes));
        std::snprintf(r->name, sizeof(r->name), "%.50s (permuted)", a->name);
    }
    return r;
}

gk_tensor * gk_transpose(gk_context * ctx, gk_tensor * a) {
    gk_tensor * r = gk_permute(ctx, a, 1, 0, 2, 3);
    if (r) {
        r->op = GK_OP_TRANSPOSE;
        std::memset(r->op_params, 0, sizeof(r->op_params));
        std::snprintf(r->name, sizeof(r->name), "%.50s (transposed)", a->name);
    }
    return r;
}

gk_tensor * gk_cont_4d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    builder bd(ctx, "cont");
    if (!bd.inputs(a)) {
        return nullptr;
    }
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    if (gk_is_contiguous(a)) {
        return gk::reshape_to(ctx, a, ne);  // already laid out: an alias
    }
    int64_t n = 0;
    if (!gk::checked_nelements(ne, &n) || n != gk_nelements(a)) {
        bd.fail("[%lld, %lld, %lld, %lld] has a different element count from %s", static_cast<long long>(ne0),
                static_cast<long long>(ne1), static_cast<long long>(ne2), static_cast<long long>(ne3),
                gk::describe(a).c_str());
        return nullptr;
    }
    if (!bd.decodable(a, "a") || !bd.encodable(a, "a")) {
        return nullptr;
    }
    gk_tensor * r = bd.result(a->type, ne, GK_OP_CONT, a);
    if (r) {
        std::snprintf(r->name, sizeof(r->name), "%.50s (cont)", a->name);
    }
    return r;
}

gk_tensor * gk_cont(gk_context * ctx, gk_tensor * a) {
    builder bd(ctx, "cont");
    if (!bd.inputs(a)) {
        return nullptr;
    }
    return gk_cont_4d(ctx, a, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
}

gk_tensor * gk_cont_2d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1) {
    return gk_cont_4d(ctx, a, ne0, ne1, 1, 1);
}

gk_tensor * gk_cont_3d(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    return gk_cont_4d(ctx, a, ne0, ne1, ne2, 1);
}

} // extern "C"
