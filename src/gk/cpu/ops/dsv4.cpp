// dsv4.cpp - kernels of DeepSeek-V4's ops, with ggml-cpu's formulas (ggml-cpu/ops.cpp);
// every sum runs in f32 in the index order written here.
//
// lightning_indexer: dst[ik, t, 0, s] = sum_h max(q[:, h, t, s] . k[:, 0, ik, s], 0) *
//   w[h, t, 0, s] + mask[ik, t, 0, s % mask.ne3] (the dot product in vec_dot.h's f32 order,
//   h ascending).
// dsv4_hc_comb (hc = 4): per token, c = softmax over idst of (mixes[8 + idst + 4 isrc] *
//   scale[2] + base[8 + idst + 4 isrc]) + eps for each isrc; then the columns normalised
//   (each divided by eps + its sum), and n_iter - 1 times rows then columns again.
// dsv4_hc_pre: dst[i0, t] = scale * sum_h x[i0, h, t] * w, w = weights[h, t] or, gated,
//   sigmoid(gate[i0, h, t]) (libm's expf).
// dsv4_hc_post: dst[i0, d, t] = x[i0, t] * post[d, t] + sum_s residual[i0, s, t] * comb[d, s, t]
//   (s ascending), or + residual[i0, d, t] without comb.
// All split by destination row (hc_comb: by token).
#include "../dispatch.h"
#include "../rows.h"
#include "../vec_dot.h"

#include <cmath>

namespace gk::cpu {
namespace {

float f32_at(const gk_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *reinterpret_cast<const float *>(element_ptr(t, i0, i1, i2, i3));
}

void lightning_indexer(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * q    = dst->src[0];
    const gk_tensor * k    = dst->src[1];
    const gk_tensor * w    = dst->src[2];
    const gk_tensor * mask = dst->src[3];
    const vec_dot_fn  dot  = get_vec_dot_traits(GK_TYPE_F32)->vec_dot;
    scratch           ws   = p.work();
    float *           kbuf = ws.floats(k->ne[0]);
    float *           qbuf = ws.floats(q->ne[0]);
    float *           ybuf = ws.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t t, int64_t, int64_t s) {
        float * y = out_row(dst, t, 0, s, ybuf);
        for (int64_t ik = 0; ik < dst->ne[0]; ++ik) {
            const float * kr    = read_row(k, 0, ik, s, kbuf);
            float         score = 0.0f;
            for (int64_t h = 0; h < q->ne[1]; ++h) {
                float qk = 0.0f;
                dot(q->ne[0], &qk, kr, read_row(q, h, t, s, qbuf));
                score += (qk > 0.0f ? qk : 0.0f) * f32_at(w, h, t, 0, s);
            }
            y[ik] = score + read_element(mask, ik, t, 0, s % mask->ne[3]);
        }
        store_row(dst, t, 0, s, y);
    });
}

void hc_comb(const compute_params & p, gk_tensor * dst) {
    constexpr int64_t hc    = 4;
    constexpr int64_t off   = 2 * hc;
    const gk_tensor * mixes = dst->src[0];
    const gk_tensor * base  = dst->src[2];
    const float       scale = f32_at(dst->src[1], 2, 0, 0, 0);
    const float       eps   = gk_get_op_params_f32(dst, 0);
    const int         iters = gk_get_op_params_i32(dst, 1);
    // c[idst + hc isrc] /= eps + its sum over isrc (over_src: ggml's norm_cols) or over idst (norm_rows)
    const auto normalise = [eps](float * c, bool over_src) {
        for (int64_t a = 0; a < hc; ++a) {
            float sum = eps;
            for (int64_t b = 0; b < hc; ++b) {
                sum += over_src ? c[a + hc * b] : c[b + hc * a];
            }
            const float inv = 1.0f / sum;
            for (int64_t b = 0; b < hc; ++b) {
                (over_src ? c[a + hc * b] : c[b + hc * a]) *= inv;
            }
        }
    };
    const row_range r = split_rows(mixes->ne[1], p.ith, p.nth);
    for (int64_t t = r.begin; t < r.end; ++t) {
        float c[hc * hc];
        for (int64_t isrc = 0; isrc < hc; ++isrc) {
            float * col = c + hc * isrc;
            float   max = -INFINITY;
            for (int64_t idst = 0; idst < hc; ++idst) {
                const int64_t i = off + idst + hc * isrc;
                col[idst]       = f32_at(mixes, i, t, 0, 0) * scale + f32_at(base, i, 0, 0, 0);
                max             = col[idst] > max ? col[idst] : max;
            }
            float sum = 0.0f;
            for (int64_t idst = 0; idst < hc; ++idst) {
                col[idst] = std::exp(col[idst] - max);
                sum += col[idst];
            }
            const float inv = 1.0f / sum;
            for (int64_t idst = 0; idst < hc; ++idst) {
                col[idst] = col[idst] * inv + eps;
            }
        }
        normalise(c, true);
        for (int i = 1; i < iters; ++i) {
            normalise(c, false);
            normalise(c, true);
        }
        for (int64_t isrc = 0; isrc < hc; ++isrc) {
            for (int64_t idst = 0; idst < hc; ++idst) {
                *reinterpret_cast<float *>(element_ptr(dst, idst, isrc, t, 0)) = c[idst + hc * isrc];
            }
        }
    }
}

void hc_pre(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * x     = dst->src[0];
    const gk_tensor * w     = dst->src[1];
    const float       scale = gk_get_op_params_f32(dst, 0);
    const bool        gated = gk_get_op_params_i32(dst, 1) != 0;
    for_each_row(p, dst, [&](int64_t t, int64_t, int64_t) {
        auto * y = reinterpret_cast<float *>(element_ptr(dst, 0, t, 0, 0));
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            float sum = 0.0f;
            for (int64_t h = 0; h < x->ne[1]; ++h) {
                const float wv = gated ? 1.0f / (1.0f + std::exp(-f32_at(w, i0, h, t, 0))) : f32_at(w, h, t, 0, 0);
                sum += f32_at(x, i0, h, t, 0) * wv;
            }
            y[i0] = scale * sum;
        }
    });
}

void hc_post(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * x    = dst->src[0];
    const gk_tensor * res  = dst->src[1];
    const gk_tensor * post = dst->src[2];
    const gk_tensor * comb = dst->src[3];
    for_each_row(p, dst, [&](int64_t d, int64_t t, int64_t) {
        auto *      y  = reinterpret_cast<float *>(element_ptr(dst, 0, d, t, 0));
        const float pv = f32_at(post, d, t, 0, 0);
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            float sum = f32_at(x, i0, t, 0, 0) * pv;
            if (comb) {
                for (int64_t s = 0; s < res->ne[1]; ++s) {
                    sum += f32_at(res, i0, s, t, 0) * f32_at(comb, d, s, t, 0);
                }
            } else {
                sum += f32_at(res, i0, d, t, 0);
            }
            y[i0] = sum;
        }
    });
}

} // namespace

void register_dsv4(kernel_table & t) {
    t.ops[GK_OP_LIGHTNING_INDEXER] = {lightning_indexer, nullptr};
    t.ops[GK_OP_DSV4_HC_COMB]      = {hc_comb, nullptr};
    t.ops[GK_OP_DSV4_HC_PRE]       = {hc_pre, nullptr};
    t.ops[GK_OP_DSV4_HC_POST]      = {hc_post, nullptr};
}

} // namespace gk::cpu
