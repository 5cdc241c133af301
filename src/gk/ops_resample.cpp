// ops_resample.cpp - builders of the resampling ops: interpolate (and its upscale forms)
// and pad_reflect_1d.
#include "internal.h"

using gk::builder;
using gk::describe;

extern "C" {

gk_tensor * gk_interpolate(gk_context * ctx, gk_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                           uint32_t mode) {
    builder bd(ctx, "interpolate");
    if (!bd.inputs(a) || !bd.type_is(a, GK_TYPE_F32, "a")) {
        return nullptr;
    }
    const uint32_t base  = mode & 0xFFu;
    const uint32_t flags = mode & ~0xFFu;
    if (base >= GK_SCALE_MODE_COUNT ||
        (flags & ~static_cast<uint32_t>(GK_SCALE_FLAG_ALIGN_CORNERS | GK_SCALE_FLAG_ANTIALIAS)) != 0 ||
        ((flags & GK_SCALE_FLAG_ANTIALIAS) != 0 && base != GK_SCALE_MODE_BILINEAR)) {
        bd.fail("mode 0x%x: need a gk_scale_mode with align-corners / antialias flags (antialias for bilinear only)",
                mode);
        return nullptr;
    }
    if (ne0 < 1 || ne1 < 1 || ne2 < 1 || ne3 < 1) {
        bd.fail("size [%lld, %lld, %lld, %lld] must be >= 1 in every dim", static_cast<long long>(ne0),
                static_cast<long long>(ne1), static_cast<long long>(ne2), static_cast<long long>(ne3));
        return nullptr;
    }
    if (gk_nelements(a) == 0) {  // every output element reads some source element
        bd.fail("a %s is empty: nothing to interpolate from", describe(a).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_UPSCALE, a);
    if (r) {
        gk::set_op_param_i32(r, 0, static_cast<int32_t>(mode));
    }
    return r;
}

gk_tensor * gk_upscale(gk_context * ctx, gk_tensor * a, int scale_factor, gk_scale_mode mode) {
    builder bd(ctx, "upscale");
    if (!bd.inputs(a)) {
        return nullptr;
    }
    int64_t ne0 = 0, ne1 = 0;
    if (scale_factor < 2 || __builtin_mul_overflow(a->ne[0], static_cast<int64_t>(scale_factor), &ne0) ||
        __builtin_mul_overflow(a->ne[1], static_cast<int64_t>(scale_factor), &ne1)) {
        bd.fail("scale_factor = %d must be > 1 and keep the size of a %s in range", scale_factor, describe(a).c_str());
        return nullptr;
    }
    return gk_interpolate(ctx, a, ne0, ne1, a->ne[2], a->ne[3], mode);
}

gk_tensor * gk_upscale_ext(gk_context * ctx, gk_tensor * a, int ne0, int ne1, int ne2, int ne3, gk_scale_mode mode) {
    return gk_interpolate(ctx, a, ne0, ne1, ne2, ne3, mode);
}

gk_tensor * gk_pad_reflect_1d(gk_context * ctx, gk_tensor * a, int p0, int p1) {
    builder bd(ctx, "pad_reflect_1d");
    if (!bd.inputs(a) || !bd.type_is(a, GK_TYPE_F32, "a") || !bd.contiguous(a, "a")) {
        return nullptr;
    }
    if (p0 < 0 || p1 < 0 || p0 >= a->ne[0] || p1 >= a->ne[0]) {
        bd.fail("padding (%d, %d) must be >= 0 and less than ne0 of a %s", p0, p1, describe(a).c_str());
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0] + p0 + p1, a->ne[1], a->ne[2], a->ne[3]};
    gk_tensor *   r     = bd.result(GK_TYPE_F32, ne, GK_OP_PAD_REFLECT_1D, a);
    if (r) {
        gk::set_op_param_i32(r, 0, p0);
        gk::set_op_param_i32(r, 1, p1);
    }
    return r;
}

}  // extern "C"
