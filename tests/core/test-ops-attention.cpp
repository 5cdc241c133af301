// test-ops-attention - soft_max (scale, f16/f32 mask, ALiBi, sinks), diag_mask_inf/zero,
// rope (normal, neox, partial, frequency factors, YaRN) and flash_attn_ext (grouped
// heads, mask, ALiBi, softcap, sinks, f16/bf16 and the quantized KV cache types q8_0 q4_0
// q4_1 q5_0 q5_1 iq4_nl as K/V, alone and mixed, strided K) against double references;
// flash_attn_ext's masked keys change no bit of a query (batch invariance) and its bits do
// not depend on the thread count.
#include "op_check.h"

#include "gk/cpu/vec_dot.h"
#include "quant/fp16.h"
#include "quant/legacy.h"

#include <cstring>
#include <numbers>
#include <string>

namespace {

using namespace gk_test;

double alibi(double max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0) {
        return 1;
    }
    const int64_t m = int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(n_head))));
    return h < m ? std::pow(2.0, -max_bias / m * static_cast<double>(h + 1))
                 : std::pow(2.0, -max_bias / (2.0 * m) * static_cast<double>(2 * (h - m) + 1));
}

/// Softmax of w (plus an optional sink logit in the normaliser); all -inf gives zeros.
void softmax_ref(std::vector<double> & w, const double * sink) {
    double mx = sink ? *sink : -INFINITY;
    for (double x : w) mx = std::max(mx, x);
    if (mx == -INFINITY) {
        std::fill(w.begin(), w.end(), 0.0);
        return;
    }
    double s = sink ? std::exp(*sink - mx) : 0;
    for (double & x : w) s += (x = std::exp(x - mx));
    for (double & x : w) x /= s;
}

void check_soft_max(gk_type mask_type, float scale, float max_bias, bool sinks) {
    env           e;
    const int64_t n = 24, rows = 5, heads = 6, seqs = 2;
    gk_tensor *   a = e.rand(GK_TYPE_F32, n, rows, heads, seqs, -3, 3);
    gk_tensor *   m = mask_type == GK_TYPE_COUNT ? nullptr : e.causal_mask(mask_type, n, rows + 2);
    gk_tensor *   s = sinks ? e.f32(heads) : nullptr;
    gk_tensor *   y = gk_soft_max_ext(e.ctx, a, m, scale, max_bias);
    ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
    if (s) {
        ASSERT_TRUE(gk_soft_max_add_sinks(y, s));
    }
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          va = values(a);
    const auto          vm = m ? values(m) : std::vector<double>{};
    const auto          vs = s ? values(s) : std::vector<double>{};
    std::vector<double> ref;
    for (int64_t i3 = 0; i3 < seqs; ++i3)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t r = 0; r < rows; ++r) {
                std::vector<double> w(n);
                for (int64_t i = 0; i < n; ++i) {
                    w[i] = va[flat(a->ne, i, r, h, i3)] * scale +
                           (m ? alibi(max_bias, heads, h) * vm[flat(m->ne, i, r)] : 0.0);
                }
                softmax_ref(w, s ? &vs[h] : nullptr);
                ref.insert(ref.end(), w.begin(), w.end());
            }
    expect_close(y, ref, 1e-7, 1e-5, "soft_max");
}

TEST(OpsAttention, SoftMax) {
    check_soft_max(GK_TYPE_COUNT, 1.0f, 0.0f, false);
    check_soft_max(GK_TYPE_F16, 0.125f, 0.0f, false);
    check_soft_max(GK_TYPE_F32, 0.5f, 8.0f, false);
    check_soft_max(GK_TYPE_F16, 0.3f, 0.0f, true);
}

TEST(OpsAttention, FullyMaskedRowIsZero) {
    env         e;
    gk_tensor * a = e.f32(4, 2);
    gk_tensor * y = gk_soft_max(e.ctx, gk_diag_mask_inf(e.ctx, gk_scale(e.ctx, a, 1.0f), -1));
    ASSERT_TRUE(compute(e.ctx, y));
    const auto v = values(y);
    EXPECT_EQ(v[0] + v[1] + v[2] + v[3], 0.0);  // row 0: every column is past n_past + 0
    EXPECT_NEAR(v[4], 1.0, 1e-7);               // row 1: only column 0 visible
}

TEST(OpsAttention, DiagMask) {
    env         e;
    gk_tensor * a  = e.f32(7, 5, 2);
    gk_tensor * mi = gk_diag_mask_inf(e.ctx, a, 2);
    gk_tensor * mz = gk_diag_mask_zero(e.ctx, a, 0);
    ASSERT_TRUE(compute(e.ctx, mi));
    ASSERT_TRUE(compute(e.ctx, mz));
    const auto          va = values(a);
    std::vector<double> ri, rz;
    for (int64_t i2 = 0; i2 < 2; ++i2)
        for (int64_t j = 0; j < 5; ++j)
            for (int64_t i = 0; i < 7; ++i) {
                const double x = va[flat(a->ne, i, j, i2)];
                ri.push_back(i > 2 + j ? -INFINITY : x);
                rz.push_back(i > j ? 0.0 : x);
            }
    expect_close(mi, ri, 0, 0, "diag_mask_inf");
    expect_close(mz, rz, 0, 0, "diag_mask_zero");
}

struct rope_cfg {
    int   n_dims, mode, n_ctx_orig;
    float base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    bool  freq_factors;
    int   max_pos;
};

void check_rope(const rope_cfg & c, const char * what) {
    env           e;
    const int64_t D = 32, H = 3, T = 7;
    gk_tensor *   a   = e.f32(D, H, T);
    gk_tensor *   pos = e.indices(c.max_pos, T);
    gk_tensor *   ff  = c.freq_factors ? e.positive(std::max(1, c.n_dims / 2)) : nullptr;
    gk_tensor *   y   = gk_rope_ext(e.ctx, a, pos, ff, c.n_dims, c.mode, c.n_ctx_orig, c.base, c.freq_scale,
                                    c.ext_factor, c.attn_factor, c.beta_fast, c.beta_slow);
    ASSERT_TRUE(compute(e.ctx, y)) << what;
    const auto   va = values(a), vp = values(pos);
    const auto   vf = ff ? values(ff) : std::vector<double>{};
    const auto   corr = [&](double beta) {
        return c.n_dims * std::log(c.n_ctx_orig / (beta * 2 * std::numbers::pi)) / (2 * std::log(static_cast<double>(c.base)));
    };
    const double low  = std::max(0.0, std::floor(corr(c.beta_fast)));
    const double high = std::min(c.n_dims - 1.0, std::ceil(corr(c.beta_slow)));
    std::vector<double> ref(va.size());
    for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < H; ++h) {
            for (int64_t i = c.n_dims; i < D; ++i) ref[flat(a->ne, i, h, t)] = va[flat(a->ne, i, h, t)];
            for (int64_t i = 0; i < c.n_dims / 2; ++i) {
                const double extrap = vp[t] * std::pow(static_cast<double>(c.base), -2.0 * i / c.n_dims) / (ff ? vf[i] : 1.0);
                const double interp = c.freq_scale * extrap;
                double       theta = interp, mscale = c.attn_factor;
                if (c.ext_factor != 0) {
                    const double ramp = (1 - std::min(1.0, std::max(0.0, (i - low) / std::max(0.001, high - low)))) * c.ext_factor;
                    theta             = interp * (1 - ramp) + extrap * ramp;
                    mscale *= 1 + 0.1 * std::log(1.0 / c.freq_scale);
                }
                const int64_t j0 = c.mode == GK_ROPE_TYPE_NEOX ? i : 2 * i;
                const int64_t j1 = c.mode == GK_ROPE_TYPE_NEOX ? i + c.n_dims / 2 : 2 * i + 1;
                const double  x0 = va[flat(a->ne, j0, h, t)], x1 = va[flat(a->ne, j1, h, t)];
                ref[flat(a->ne, j0, h, t)] = (x0 * std::cos(theta) - x1 * std::sin(theta)) * mscale;
                ref[flat(a->ne, j1, h, t)] = (x0 * std::sin(theta) + x1 * std::cos(theta)) * mscale;
            }
        }
    // theta is built by repeated f32 multiplication: its relative error grows with the
    // pair index, so the bound scales with the largest position.
    expect_close(y, ref, 4e-6 * c.max_pos, 1e-5, what);
}

TEST(OpsAttention, Rope) {
    check_rope({32, GK_ROPE_TYPE_NORMAL, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "normal");
    check_rope({32, GK_ROPE_TYPE_NEOX, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "neox");
    check_rope({12, GK_ROPE_TYPE_NEOX, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "partial neox");
    check_rope({20, GK_ROPE_TYPE_NORMAL, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "partial normal");
    check_rope({32, GK_ROPE_TYPE_NORMAL, 0, 500000, 1, 0, 1, 0, 0, true, 100}, "freq factors");
    check_rope({32, GK_ROPE_TYPE_NEOX, 4096, 10000, 0.25f, 0, 1, 32, 1, false, 100}, "linear scaling");
    check_rope({32, GK_ROPE_TYPE_NEOX, 4096, 10000, 0.25f, 1, 1, 32, 1, false, 100}, "yarn");
    check_rope({32, GK_ROPE_TYPE_NORMAL, 2048, 10000, 0.5f, 0.5f, 0.8f, 32, 1, false, 100}, "yarn partial mix");
    check_rope({0, GK_ROPE_TYPE_NORMAL, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "n_dims 0: a copy");
    check_rope({0, GK_ROPE_TYPE_NEOX, 0, 10000, 1, 0, 1, 0, 0, false, 100}, "n_dims 0, neox: a copy");
    check_rope({0, GK_ROPE_TYPE_NEOX, 0, 0, 0, 0, 0, 0, 0, true, 100}, "n_dims 0, frequencies 0 (unused): a copy");
}

TEST(OpsAttention, RopeRefusesBadNDims) {
    env e;
    for (int n_dims : {-2, 3, 34}) {
        gk_tensor * y = gk_rope_ext(e.ctx, e.f32(32, 3, 7), e.indices(100, 7), nullptr, n_dims, GK_ROPE_TYPE_NORMAL, 0,
                                    10000, 1, 0, 1, 0, 0);
        EXPECT_EQ(y, nullptr) << n_dims;
        EXPECT_NE(std::string(gk_last_error(e.ctx)).find("must be even and in 0..ne0 = 32"), std::string::npos)
            << gk_last_error(e.ctx);
    }
    EXPECT_EQ(gk_rope_ext(e.ctx, e.f32(32, 3, 7), e.indices(100, 7), nullptr, 2, GK_ROPE_TYPE_NORMAL, 0, 0, 1, 0, 1, 0, 0),
              nullptr);
    EXPECT_NE(std::string(gk_last_error(e.ctx)).find("freq_base 0 and freq_scale 1 must be > 0"), std::string::npos)
        << gk_last_error(e.ctx);
}

/// q's values as flash_attn_ext dots them against a K of type kt: each row converted to
/// K's dot activation type (vec_dot.h's from_float) and decoded back.
std::vector<double> q_as_dot_type(const gk_tensor * q, gk_type kt) {
    const gk::cpu::vec_dot_traits * vd   = gk::cpu::get_vec_dot_traits(kt);
    const int64_t                   D    = q->ne[0];
    const std::vector<double>       vq   = values(q);
    std::vector<float>              row(static_cast<size_t>(D)), back(static_cast<size_t>(D));
    std::vector<uint8_t>            conv(gk_row_size(vd->vec_dot_type, D));
    std::vector<double>             out;
    for (size_t r = 0; r < vq.size(); r += static_cast<size_t>(D)) {
        for (int64_t i = 0; i < D; ++i) row[static_cast<size_t>(i)] = static_cast<float>(vq[r + static_cast<size_t>(i)]);
        vd->from_float(row.data(), conv.data(), D);
        gk::quant::get_type_traits(vd->vec_dot_type)->to_float(conv.data(), back.data(), D);
        out.insert(out.end(), back.begin(), back.end());
    }
    return out;
}

/// For K of an affine type (q4_1, q5_1: x = q d + m) dotted against q8_1 rows: the dot adds
/// a block's offset as m * s, with s the q8_1 block's stored f16 sum (vec_dot.h, as ggml),
/// not as m times the sum of the block's decoded values. Per q row (in values() order),
/// those stored sums s_b; empty when K's dot type is not q8_1.
std::vector<std::vector<double>> q_stored_sums(const gk_tensor * q, gk_type kt) {
    const gk::cpu::vec_dot_traits * vd = gk::cpu::get_vec_dot_traits(kt);
    std::vector<std::vector<double>> out;
    if (vd->vec_dot_type != GK_TYPE_Q8_1) {
        return out;
    }
    const int64_t             D  = q->ne[0];
    const std::vector<double> vq = values(q);
    std::vector<float>        row(static_cast<size_t>(D));
    std::vector<gk::quant::block_q8_1> conv(static_cast<size_t>(D / 32));
    for (size_t r = 0; r < vq.size(); r += static_cast<size_t>(D)) {
        for (int64_t i = 0; i < D; ++i) {
            row[static_cast<size_t>(i)] = static_cast<float>(vq[r + static_cast<size_t>(i)]);
        }
        vd->from_float(row.data(), conv.data(), D);
        std::vector<double> sums;
        for (const auto & b : conv) sums.push_back(gk::fp16_to_fp32(b.s));
        out.push_back(sums);
    }
    return out;
}

/// The f16 offset m of block b of K row (j, hk, s): the second f16 of a q4_1 / q5_1 block.
double key_block_offset(const gk_tensor * k, int64_t j, int64_t hk, int64_t s, int64_t b) {
    const char * p = static_cast<const char *>(k->data) + j * k->nb[1] + hk * k->nb[2] + s * k->nb[3] +
                     b * static_cast<int64_t>(gk_type_size(k->type)) + sizeof(gk::fp16_t);
    gk::fp16_t m;
    std::memcpy(&m, p, sizeof(m));
    return gk::fp16_to_fp32(m);
}

/// wide_v: V rows of 200 elements (blocks of 8 vectors in registers, single vectors and
/// a tail on every SIMD level), else 8 (64 for a block type). v_type: V's type when it
/// differs from K's (GK_TYPE_COUNT: kv_type for both).
void check_flash(gk_type kv_type, bool masked, float max_bias, float softcap, bool sinks, bool strided_k = false,
                 bool wide_v = false, gk_type v_type = GK_TYPE_COUNT) {
    env           e;
    const gk_type vt     = v_type == GK_TYPE_COUNT ? kv_type : v_type;
    const int64_t blocks = gk_blck_size(kv_type) > 1 || gk_blck_size(vt) > 1;  // rows of two 32-blocks
    const int64_t D = blocks ? 64 : 16, Dv = wide_v ? 200 : blocks ? 64 : 8, Nq = 5, Nkv = 9, H = 4, Hk = 2, S = 2;
    gk_tensor *   q = e.f32(D, Nq, H, S);
    // strided_k: K's rows are columns of a [Nkv, D] matrix (nb[0] is a row of Nkv).
    gk_tensor *   k = strided_k ? gk_permute(e.ctx, e.rand(kv_type, Nkv, D, Hk, S), 1, 0, 2, 3)
                                : e.rand(kv_type, D, Nkv, Hk, S);
    gk_tensor *   v = e.rand(vt, Dv, Nkv, Hk, S);
    gk_tensor *   m = masked ? e.causal_mask(GK_TYPE_F16, Nkv, Nq) : nullptr;
    gk_tensor *   s = sinks ? e.f32(H) : nullptr;
    const float   scale = 0.25f;
    gk_tensor *   y = gk_flash_attn_ext(e.ctx, q, k, v, m, scale, max_bias, softcap);
    ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
    if (s) {
        ASSERT_TRUE(gk_flash_attn_ext_add_sinks(y, s));
    }
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          vq = q_as_dot_type(q, kv_type);
    const auto          qs = q_stored_sums(q, kv_type);
    const auto          vk = values(k), vv = values(v);
    const auto          vm = m ? values(m) : std::vector<double>{};
    const auto          vs = s ? values(s) : std::vector<double>{};
    std::vector<double> ref;
    for (int64_t sq = 0; sq < S; ++sq)
        for (int64_t iq = 0; iq < Nq; ++iq)
            for (int64_t h = 0; h < H; ++h) {
                const int64_t       hk = h / (H / Hk);
                std::vector<double> w(Nkv);
                for (int64_t j = 0; j < Nkv; ++j) {
                    double d = 0;
                    for (int64_t i = 0; i < D; ++i) d += vq[flat(q->ne, i, iq, h, sq)] * vk[flat(k->ne, i, j, hk, sq)];
                    for (size_t b = 0; b < (qs.empty() ? 0 : qs[0].size()); ++b) {  // affine K: m * stored s
                        const size_t r   = flat(q->ne, 0, iq, h, sq) / static_cast<size_t>(D);
                        double       sum = 0;
                        for (size_t i = 32 * b; i < 32 * b + 32; ++i) sum += vq[r * static_cast<size_t>(D) + i];
                        d += key_block_offset(k, j, hk, sq, static_cast<int64_t>(b)) * (qs[r][b] - sum);
                    }
                    d *= scale;
                    if (softcap > 0) d = softcap * std::tanh(d / softcap);
                    w[j] = d + (m ? alibi(max_bias, H, h) * vm[flat(m->ne, j, iq)] : 0.0);
                }
                softmax_ref(w, s ? &vs[h] : nullptr);
                for (int64_t i = 0; i < Dv; ++i) {
                    double o = 0;
                    for (int64_t j = 0; j < Nkv; ++j) o += w[j] * vv[flat(v->ne, i, j, hk, sq)];
                    ref.push_back(o);
                }
            }
    expect_close(y, ref, 1e-6, 1e-5, (std::string(gk_type_name(kv_type)) + " / " + gk_type_name(vt)).c_str());
}

TEST(OpsAttention, FlashAttnExt) {
    check_flash(GK_TYPE_F32, false, 0, 0, false);
    check_flash(GK_TYPE_F32, true, 0, 0, false);
    check_flash(GK_TYPE_F16, true, 4.0f, 0, false);
    check_flash(GK_TYPE_F16, true, 0, 2.0f, true);
    check_flash(GK_TYPE_BF16, true, 0, 0, false);
    check_flash(GK_TYPE_Q8_0, true, 0, 0, false);
    check_flash(GK_TYPE_F16, true, 0, 0, false, true);
    check_flash(GK_TYPE_F32, false, 0, 0, true, true);
    check_flash(GK_TYPE_F16, true, 0, 0, false, false, true);
    check_flash(GK_TYPE_BF16, true, 2.0f, 0, true, false, true);
}

// The KV cache types of gk-run (llama.cpp's -ctk / -ctv list) as K and V, alone and mixed:
// K dotted in its own type against q in K's dot type, V rows decoded, against the double
// reference over the decoded rows.
TEST(OpsAttention, FlashAttnExtQuantizedKv) {
    for (gk_type t : {GK_TYPE_Q8_0, GK_TYPE_Q4_0, GK_TYPE_Q4_1, GK_TYPE_Q5_0, GK_TYPE_Q5_1, GK_TYPE_IQ4_NL}) {
        check_flash(t, true, 0, 0, false);
        check_flash(t, false, 0, 0, true);
    }
    check_flash(GK_TYPE_Q8_0, true, 0, 0, false, false, false, GK_TYPE_Q4_0);
    check_flash(GK_TYPE_F16, true, 0, 0, false, false, false, GK_TYPE_Q5_1);
    check_flash(GK_TYPE_IQ4_NL, true, 0, 2.0f, false, false, false, GK_TYPE_F16);
    check_flash(GK_TYPE_Q4_1, true, 4.0f, 0, false, false, false, GK_TYPE_BF16);
    check_flash(GK_TYPE_Q5_0, true, 0, 0, false, false, true, GK_TYPE_F16);  // V rows of 200
}

/// flash_attn_ext over K of k_type and V of v_type computed at 1 thread and at several
/// more: every output bit is the same (each row is one thread's, in a fixed order).
void check_flash_threads(gk_type k_type, gk_type v_type) {
    env           e;
    const int64_t D = 64, Nq = 7, Nkv = 19, H = 4, Hk = 2;
    gk_tensor *   q = e.f32(D, Nq, H);
    gk_tensor *   k = e.rand(k_type, D, Nkv, Hk);
    gk_tensor *   v = e.rand(v_type, D, Nkv, Hk);
    gk_tensor *   y = gk_flash_attn_ext(e.ctx, q, k, v, e.causal_mask(GK_TYPE_F16, Nkv, Nq), 0.2f, 0.0f, 0.0f);
    ASSERT_TRUE(compute(e.ctx, y, 1));
    const std::vector<uint8_t> one(static_cast<const uint8_t *>(y->data),
                                   static_cast<const uint8_t *>(y->data) + gk_nbytes(y));
    for (int threads : {2, 3, 4, 7}) {
        std::memset(y->data, 0, gk_nbytes(y));
        ASSERT_TRUE(compute(e.ctx, y, threads));
        EXPECT_EQ(std::memcmp(y->data, one.data(), one.size()), 0)
            << gk_type_name(k_type) << " / " << gk_type_name(v_type) << " at " << threads << " threads";
    }
}

TEST(OpsAttention, FlashAttnExtQuantizedKvSameBitsAtEveryThreadCount) {
    for (gk_type t : {GK_TYPE_Q8_0, GK_TYPE_Q4_0, GK_TYPE_Q4_1, GK_TYPE_Q5_0, GK_TYPE_Q5_1, GK_TYPE_IQ4_NL}) {
        check_flash_threads(t, t);
    }
    check_flash_threads(GK_TYPE_Q8_0, GK_TYPE_F16);
    check_flash_threads(GK_TYPE_BF16, GK_TYPE_Q4_0);
}

/// With K all zeros every visible key scores 0 and gets the weight w = f32(1 / n_visible)
/// exactly, so the output is the f32 loop y = 0; y = y + w * v[j] over the visible keys in
/// order (a rounded product, then a rounded sum): the vector code must give those bits.
void check_flash_value_sum(gk_type v_type, int64_t Dv) {
    env           e;
    const int64_t D = 32, Nq = 4, Nkv = 11, H = 2;
    gk_tensor *   q = e.f32(D, Nq, H);
    gk_tensor *   k = e.rand(v_type, D, Nkv, 1, 1, 0.0f, 0.0f);
    gk_tensor *   v = e.rand(v_type, Dv, Nkv, 1);
    gk_tensor *   m = e.causal_mask(GK_TYPE_F16, Nkv, Nq);
    gk_tensor *   y = gk_flash_attn_ext(e.ctx, q, k, v, m, 0.5f, 0.0f, 0.0f);
    ASSERT_TRUE(compute(e.ctx, y));
    const auto          vv = values(v);
    const auto *        out = static_cast<const float *>(y->data);
    for (int64_t iq = 0; iq < Nq; ++iq) {
        const int64_t n_vis = iq + 1 + Nkv - Nq;
        const float   w     = static_cast<float>(1.0 / static_cast<double>(n_vis));
        for (int64_t h = 0; h < H; ++h) {
            for (int64_t i = 0; i < Dv; ++i) {
                float want = 0.0f;
                for (int64_t j = 0; j < n_vis; ++j) want = want + w * static_cast<float>(vv[flat(v->ne, i, j)]);
                ASSERT_EQ(out[(iq * H + h) * Dv + i], want) << gk_type_name(v_type) << " Dv " << Dv << " query " << iq
                                                            << " element " << i;
            }
        }
    }
}

TEST(OpsAttention, FlashAttnExtValueSumIsTheScalarLoop) {
    for (int64_t Dv : {8, 16, 200}) {
        check_flash_value_sum(GK_TYPE_F16, Dv);
        check_flash_value_sum(GK_TYPE_F32, Dv);
        check_flash_value_sum(GK_TYPE_BF16, Dv);
    }
}

TEST(OpsAttention, FlashAttnExtNeedsADotForK) {
    // The builder takes any K of whole-block rows; the CPU's supports_op and its compute
    // pass refuse a K type it has no dot product for, naming it, before anything runs.
    env         e;
    gk_tensor * k = gk_new_tensor_3d(e.ctx, GK_TYPE_I32, 16, 4, 1);
    std::memset(k->data, 0, gk_nbytes(k));
    gk_tensor * a = gk_flash_attn_ext(e.ctx, e.f32(16, 2, 1), k, e.f32(8, 4, 1), nullptr, 1.0f, 0.0f, 0.0f);
    ASSERT_NE(a, nullptr) << gk_last_error(e.ctx);
    EXPECT_FALSE(gk_cpu_supports_op(a));
    gk_cgraph * g = gk_new_graph(e.ctx);
    ASSERT_EQ(gk_build_forward_expand(g, a), GK_STATUS_SUCCESS);
    EXPECT_EQ(gk_graph_compute(g, 2), GK_STATUS_UNSUPPORTED);
    EXPECT_NE(std::string(gk_last_error(e.ctx)).find("type i32 has no dot product for rows of 16 elements"),
              std::string::npos)
        << gk_last_error(e.ctx);
}

/// Each query of a masked run sees keys [lo, hi) (random windows, some empty); the same
/// query run alone over K/V rows [lo, hi) with an all-zero mask gives the same bits: the
/// masked keys take part in nothing (batch invariance of attention).
void check_flash_masked_keys_are_free(gk_type kv_type, float max_bias, float softcap, bool sinks) {
    env           e;
    const int64_t D = 32, Dv = 32, Nq = 6, Nkv = 23, H = 4, Hk = 2;
    gk_tensor *   q = e.f32(D, Nq, H);
    gk_tensor *   k = e.rand(kv_type, D, Nkv, Hk);
    gk_tensor *   v = e.rand(kv_type, Dv, Nkv, Hk);
    gk_tensor *   s = sinks ? e.f32(H) : nullptr;
    gk_tensor *   m = gk_new_tensor_2d(e.ctx, GK_TYPE_F16, Nkv, Nq);
    std::vector<int64_t> lo(Nq), hi(Nq);
    std::vector<float>   mv(static_cast<size_t>(Nkv * Nq));
    for (int64_t iq = 0; iq < Nq; ++iq) {
        lo[iq] = iq == Nq - 1 ? 0 : static_cast<int64_t>(e.uniform() * 10);
        hi[iq] = iq == Nq - 1 ? Nkv : iq == 0 ? lo[iq] : lo[iq] + 1 + static_cast<int64_t>(e.uniform() * 12);
        for (int64_t j = 0; j < Nkv; ++j) {
            mv[static_cast<size_t>(iq * Nkv + j)] = j >= lo[iq] && j < hi[iq] ? 0.0f : -INFINITY;
        }
    }
    gk::quant::quantize_rows(GK_TYPE_F16, mv.data(), m->data, Nq, Nkv, nullptr);
    gk_tensor * y = gk_flash_attn_ext(e.ctx, q, k, v, m, 0.3f, max_bias, softcap);
    ASSERT_NE(y, nullptr) << gk_last_error(e.ctx);
    if (s) {
        ASSERT_TRUE(gk_flash_attn_ext_add_sinks(y, s));
    }
    ASSERT_TRUE(compute(e.ctx, y));
    for (int64_t iq = 0; iq < Nq; ++iq) {
        SCOPED_TRACE(iq);
        const int64_t n   = hi[iq] - lo[iq];
        const auto *  row = reinterpret_cast<const float *>(static_cast<const char *>(y->data) + iq * y->nb[2]);
        if (n == 0) {  // nothing visible: zeros (a sink joins only the normaliser)
            for (int64_t i = 0; i < Dv * H; ++i) EXPECT_EQ(row[i], 0.0f);
            continue;
        }
        gk_tensor *   qi = gk_view_3d(e.ctx, q, D, 1, H, q->nb[1], q->nb[2], iq * q->nb[1]);
        gk_tensor *   ki = gk_view_3d(e.ctx, k, D, n, Hk, k->nb[1], k->nb[2], lo[iq] * k->nb[1]);
        gk_tensor *   vi = gk_view_3d(e.ctx, v, Dv, n, Hk, v->nb[1], v->nb[2], lo[iq] * v->nb[1]);
        gk_tensor *   mi = gk_new_tensor_2d(e.ctx, GK_TYPE_F16, n, 1);
        std::memset(mi->data, 0, gk_nbytes(mi));
        gk_tensor * yi = gk_flash_attn_ext(e.ctx, qi, ki, vi, mi, 0.3f, max_bias, softcap);
        ASSERT_NE(yi, nullptr) << gk_last_error(e.ctx);
        if (s) {
            ASSERT_TRUE(gk_flash_attn_ext_add_sinks(yi, s));
        }
        ASSERT_TRUE(compute(e.ctx, yi));
        // y [Dv, H, Nq]: query iq is H rows of Dv floats; yi [Dv, H, 1] is those rows.
        EXPECT_EQ(std::memcmp(row, yi->data, gk_nbytes(yi)), 0);
    }
}

TEST(OpsAttention, FlashAttnExtMaskedKeysChangeNoBit) {
    check_flash_masked_keys_are_free(GK_TYPE_F16, 0, 0, false);
    check_flash_masked_keys_are_free(GK_TYPE_F32, 0, 0, false);
    check_flash_masked_keys_are_free(GK_TYPE_F16, 8.0f, 0, false);
    check_flash_masked_keys_are_free(GK_TYPE_F16, 0, 3.0f, true);
    for (gk_type t : {GK_TYPE_Q8_0, GK_TYPE_Q4_0, GK_TYPE_Q4_1, GK_TYPE_Q5_0, GK_TYPE_Q5_1, GK_TYPE_IQ4_NL}) {
        check_flash_masked_keys_are_free(t, 0, 0, false);
    }
}

} // namespace
