// ssm.cpp - Mamba's state-space ops: ssm_conv and ssm_scan (semantics of ggml's CPU
// kernels, ggml-cpu/ops.cpp, computed in f32 in a fixed order).
//
// ssm_conv splits the result rows (token, sequence) between threads; ssm_scan splits the
// (sequence, head) pairs, each of which is an independent recurrence over the tokens.
#include "../dispatch.h"
#include "../rows.h"

#include <cmath>
#include <cstring>

namespace gk::cpu {
namespace {

/// dst [d_inner, n_t, n_s]: dst[ch, t, s] = sum_{i < d_conv} sx[t + i, ch, s] * c[i, ch], summed
/// in order of i.
void ssm_conv(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * sx     = dst->src[0];
    const gk_tensor * c      = dst->src[1];
    const int64_t     d_conv = c->ne[0];
    for_each_row(p, dst, [&](int64_t t, int64_t s, int64_t) {
        auto * y = reinterpret_cast<float *>(element_ptr(dst, 0, t, s, 0));
        for (int64_t ch = 0; ch < dst->ne[0]; ++ch) {
            const auto * xs  = reinterpret_cast<const float *>(element_ptr(sx, t, ch, s, 0));
            const auto * w   = reinterpret_cast<const float *>(element_ptr(c, 0, ch, 0, 0));
            float        sum = 0.0f;
            for (int64_t i = 0; i < d_conv; ++i) {
                sum += xs[i] * w[i];
            }
            y[ch] = sum;
        }
    });
}

float softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }

/// The result is [y | K state slots]: y [head_dim, n_head, n_tokens, n_seqs], then slot k
/// (k = 0 .. K-1) holding [d_state, head_dim, n_head, n_seqs]: the state after token
/// n_tokens-1-k, or the initial state where k >= n_tokens (ggml leaves those unwritten).
/// Per token: dt' = softplus(dt[h]), state = state * exp(dt' A) + B[g] * (x dt'),
/// y = sum over d_state of state * C[g] (in order), g = h / (n_head / n_group).
void ssm_scan(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * s0  = dst->src[0];
    const gk_tensor * x   = dst->src[1];
    const gk_tensor * dt  = dst->src[2];
    const gk_tensor * A   = dst->src[3];
    const gk_tensor * B   = dst->src[4];
    const gk_tensor * C   = dst->src[5];
    const gk_tensor * ids = dst->src[6];
    const int64_t     K   = gk_get_op_params_i32(dst, 0);
    const int64_t     nc = s0->ne[0], nr = x->ne[0], nh = x->ne[1], nt = x->ne[2], ns = x->ne[3];
    const int64_t     heads_per_group = nh / B->ne[1];
    const size_t      head_bytes      = s0->nb[2];  // one head's state, [d_state, head_dim]
    auto *            out             = static_cast<char *>(dst->data);
    char *            slots           = out + gk_nelements(x) * sizeof(float);
    const auto        slot_head       = [&](int64_t k, int64_t seq, int64_t h) {
        return reinterpret_cast<float *>(slots + (k * ns + seq) * s0->nb[3] + h * head_bytes);
    };
    const row_range units = split_rows(ns * nh, p.ith, p.nth);
    for (int64_t u = units.begin; u < units.end; ++u) {
        const int64_t seq = u / nh, h = u % nh, g = h / heads_per_group;
        const int64_t id = read_index(ids, seq, 0, 0, 0);
        if (id < 0 || id >= s0->ne[3]) {
            p.error->set(GK_STATUS_OUT_OF_RANGE, "ssm_scan: ids[%lld] = %lld is outside the %lld states",
                         static_cast<long long>(seq), static_cast<long long>(id), static_cast<long long>(s0->ne[3]));
            return;
        }
        const auto * init = reinterpret_cast<const float *>(element_ptr(s0, 0, 0, h, id));
        float *      st   = slot_head(0, seq, h);
        std::memcpy(st, init, head_bytes);
        for (int64_t k = nt > 1 ? nt : 1; k < K; ++k) {
            std::memcpy(slot_head(k, seq, h), init, head_bytes);
        }
        for (int64_t t = 0; t < nt; ++t) {
            const float  dts = softplus(read_element(dt, h, t, seq, 0));
            const float  dA  = std::exp(dts * read_element(A, 0, h, 0, 0));  // Mamba-2: one decay per head
            const auto * b   = reinterpret_cast<const float *>(element_ptr(B, 0, g, t, seq));
            const auto * cc  = reinterpret_cast<const float *>(element_ptr(C, 0, g, t, seq));
            const auto * xs  = reinterpret_cast<const float *>(element_ptr(x, 0, h, t, seq));
            const auto * a   = reinterpret_cast<const float *>(element_ptr(A, 0, h, 0, 0));
            float *      y   = reinterpret_cast<float *>(out) + ((seq * nt + t) * nh + h) * nr;
            for (int64_t i1 = 0; i1 < nr; ++i1) {
                const float x_dt = xs[i1] * dts;
                float *     row  = st + i1 * nc;
                float       sum  = 0.0f;
                for (int64_t i0 = 0; i0 < nc; ++i0) {
                    const float decay = A->ne[0] == 1 ? dA : std::exp(dts * a[i0]);
                    row[i0]           = row[i0] * decay + b[i0] * x_dt;
                    sum += row[i0] * cc[i0];
                }
                y[i1] = sum;
            }
            const int64_t slot = nt - 1 - t;
            if (slot > 0 && slot < K) {
                std::memcpy(slot_head(slot, seq, h), st, head_bytes);
            }
        }
    }
}

} // namespace

void register_ssm(kernel_table & t) {
    t.ops[GK_OP_SSM_CONV] = {ssm_conv, nullptr};
    t.ops[GK_OP_SSM_SCAN] = {ssm_scan, nullptr};
}

} // namespace gk::cpu
