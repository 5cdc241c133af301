// resample.cpp - upscale (ggml's interpolate: nearest, bilinear with or without aligned
// corners or antialiasing, bicubic) and pad_reflect_1d, split by destination row.
//
// The coordinate and weight formulas are ggml's (ggml-cpu/ops.cpp), evaluated in f32 in
// the same order without fused multiply-adds: nearest gives ggml's values exactly, the
// interpolating modes differ from a ggml build that fuses (-march=native) in the last bits.
#include "../dispatch.h"
#include "../rows.h"

#include <algorithm>
#include <cmath>

namespace gk::cpu {
namespace {

/// Source sampling of one upscale: scale factors out/in per dim and the pixel offset.
struct resample {
    const gk_tensor * a;
    float             sf[4];
    float             offset;  // 0.5, or 0 with aligned corners

    float at(int64_t x, int64_t y, int64_t i2, int64_t i3) const { return read_element(a, x, y, i2, i3); }
};

int64_t clamp_index(int64_t i, int64_t n) { return std::max<int64_t>(0, std::min<int64_t>(i, n - 1)); }

float bilinear(const resample & r, float x, float y, int64_t i2, int64_t i3) {
    const int64_t w = r.a->ne[0], h = r.a->ne[1];
    const int64_t x0 = clamp_index(static_cast<int64_t>(std::floor(x)), w),
                  x1 = clamp_index(static_cast<int64_t>(std::floor(x)) + 1, w);
    const int64_t y0 = clamp_index(static_cast<int64_t>(std::floor(y)), h),
                  y1 = clamp_index(static_cast<int64_t>(std::floor(y)) + 1, h);
    const float dx   = std::max(0.0f, std::min(x - static_cast<float>(x0), 1.0f));
    const float dy   = std::max(0.0f, std::min(y - static_cast<float>(y0), 1.0f));
    return r.at(x0, y0, i2, i3) * (1 - dx) * (1 - dy) + r.at(x1, y0, i2, i3) * dx * (1 - dy) +
           r.at(x0, y1, i2, i3) * (1 - dx) * dy + r.at(x1, y1, i2, i3) * dx * dy;
}

/// Keys' cubic convolution with a = -0.75 (PyTorch's), taps at x0-1 .. x0+2.
float cubic(float p0, float p1, float p2, float p3, float t) {
    const float a      = -0.75f;
    const auto  w_near = [a](float x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
    const auto  w_far  = [a](float x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
    return p0 * w_far(t + 1) + p1 * w_near(t) + p2 * w_near(1 - t) + p3 * w_far(2 - t);
}

float bicubic(const resample & r, float x, float y, int64_t i2, int64_t i3) {
    const int64_t x0 = static_cast<int64_t>(std::floor(x)), y0 = static_cast<int64_t>(std::floor(y));
    const float   dx = x - static_cast<float>(x0), dy = y - static_cast<float>(y0);
    const auto    px = [&](int64_t yo) {
        const int64_t yy = clamp_index(y0 + yo, r.a->ne[1]);
        const auto    at = [&](int64_t xo) { return r.at(clamp_index(x0 + xo, r.a->ne[0]), yy, i2, i3); };
        return cubic(at(-1), at(0), at(1), at(2), dx);
    };
    return cubic(px(-1), px(0), px(1), px(2), dy);
}

/// Bilinear with antialiasing: a triangle filter max(1, 1/scale) source pixels wide,
/// normalised by its total weight.
float antialiased(const resample & r, float x, float y, int64_t i2, int64_t i3) {
    const float   support0 = std::max(1.0f, 1.0f / r.sf[0]), inv0 = 1.0f / support0;
    const float   support1 = std::max(1.0f, 1.0f / r.sf[1]), inv1 = 1.0f / support1;
    const float   off  = r.offset;
    const int64_t x_lo = std::max<int64_t>(static_cast<int64_t>(x - support0 + off), 0);
    const int64_t x_hi = std::min<int64_t>(static_cast<int64_t>(x + support0 + off), r.a->ne[0]);
    const int64_t y_lo = std::max<int64_t>(static_cast<int64_t>(y - support1 + off), 0);
    const int64_t y_hi = std::min<int64_t>(static_cast<int64_t>(y + support1 + off), r.a->ne[1]);
    const auto    tri  = [](float t) { return std::max(1.0f - std::fabs(t), 0.0f); };
    float         sum = 0.0f, total = 0.0f;
    for (int64_t sy = y_lo; sy < y_hi; ++sy) {
        const float wy = tri((static_cast<float>(sy) - y + off) * inv1);
        for (int64_t sx = x_lo; sx < x_hi; ++sx) {
            const float wgt = tri((static_cast<float>(sx) - x + off) * inv0) * wy;
            if (wgt > 0.0f) {
                sum += r.at(sx, sy, i2, i3) * wgt;
                total += wgt;
            }
        }
    }
    return total > 0.0f ? sum / total : sum;
}

void upscale(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a     = dst->src[0];
    const int32_t     flags = gk_get_op_params_i32(dst, 0);
    const int32_t     mode  = flags & 0xFF;
    resample          r{a, {}, 0.5f};
    for (int d = 0; d < 4; ++d) {
        r.sf[d] = static_cast<float>(dst->ne[d]) / static_cast<float>(a->ne[d]);
    }
    if (flags & GK_SCALE_FLAG_ALIGN_CORNERS) {
        r.offset = 0.0f;
        for (int d = 0; d < 2; ++d) {
            if (dst->ne[d] > 1 && a->ne[d] > 1) {
                r.sf[d] = static_cast<float>(dst->ne[d] - 1) / static_cast<float>(a->ne[d] - 1);
            }
        }
    }
    const bool aa = (flags & GK_SCALE_FLAG_ANTIALIAS) != 0;
    scratch    w  = p.work();
    float *    yb = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const auto j2 = static_cast<int64_t>(static_cast<float>(i2) / r.sf[2]);
        const auto j3 = static_cast<int64_t>(static_cast<float>(i3) / r.sf[3]);
        float *    y  = out_row(dst, i1, i2, i3, yb);
        // Source coordinates: the pixel centre (i + offset) / sf, less the offset except
        // for antialiasing, whose filter works on the centre itself.
        const float sy = (static_cast<float>(i1) + r.offset) / r.sf[1] - (aa ? 0.0f : r.offset);
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            const float sx = (static_cast<float>(i0) + r.offset) / r.sf[0] - (aa ? 0.0f : r.offset);
            if (mode == GK_SCALE_MODE_NEAREST) {
                y[i0] = r.at(static_cast<int64_t>(static_cast<float>(i0) / r.sf[0]),
                             static_cast<int64_t>(static_cast<float>(i1) / r.sf[1]), j2, j3);
            } else if (mode == GK_SCALE_MODE_BICUBIC) {
                y[i0] = bicubic(r, sx, sy, j2, j3);
            } else {
                y[i0] = aa ? antialiased(r, sx, sy, j2, j3) : bilinear(r, sx, sy, j2, j3);
            }
        }
        store_row(dst, i1, i2, i3, y);
    });
}

/// Element i of a row is a[|i - p0|], mirrored again about the last element past the end.
void pad_reflect_1d(const compute_params & p, gk_tensor * dst) {
    const int64_t p0 = gk_get_op_params_i32(dst, 0);
    const int64_t n  = dst->src[0]->ne[0];
    scratch       w  = p.work();
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t, int64_t, int64_t) {
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            int64_t j = i - p0;
            j         = j < 0 ? -j : j;
            y[i]      = x[j < n ? j : 2 * (n - 1) - j];
        }
    });
}

}  // namespace

void register_resample(kernel_table & t) {
    t.ops[GK_OP_UPSCALE]        = {upscale, nullptr};
    t.ops[GK_OP_PAD_REFLECT_1D] = {pad_reflect_1d, nullptr};
}

}  // namespace gk::cpu
