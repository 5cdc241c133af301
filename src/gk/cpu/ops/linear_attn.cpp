// linear_attn.cpp - the recurrent linear-attention ops: rwkv_wkv6, gated_linear_attn,
// rwkv_wkv7 and gated_delta_net (scalar gate, or the per-channel gate of KDA).
// Semantics of ggml's CPU kernels (ggml-cpu/ops.cpp), computed in f32 in a fixed order.
//
// Each (sequence, head) pair carries its own S x S state through its tokens, so the pairs
// are split between threads and each is computed start to end by one thread. The state
// is copied into its place in the result first and updated there, token by token.
#include "../dispatch.h"
#include "../rows.h"

#include <cmath>
#include <cstring>

namespace gk::cpu {
namespace {

const float * f32_data(const gk_tensor * t) { return static_cast<const float *>(t->data); }

/// The rwkv / gla driver. Token tensors are contiguous [S, H, T] (T a whole number of
/// sequences of T / n_seqs tokens), state [S*S*H*n_seqs]; dst [S*H, T + S*n_seqs] holds
/// y [S, H, T] and then the new state. step(st, off, h, y) advances the state st (S x S,
/// row-major) of head h by the token whose values start at float `off` of the token
/// tensors, writing the S outputs y.
template <class Step>
void wkv_heads(const compute_params & p, gk_tensor * dst, const gk_tensor * state, Step && step) {
    const int64_t   H       = dst->src[1]->ne[1];
    const int64_t   S       = dst->src[1]->ne[0];
    const int64_t   T       = dst->src[1]->ne[2];
    const int64_t   n_seqs  = state->ne[1];
    const int64_t   per_seq = T / n_seqs;
    auto *          y       = static_cast<float *>(dst->data);
    float *         states  = y + S * H * T;
    const row_range units   = split_rows(n_seqs * H, p.ith, p.nth);
    for (int64_t u = units.begin; u < units.end; ++u) {
        const int64_t seq = u / H, h = u % H;
        float *       st = states + u * S * S;
        std::memcpy(st, f32_data(state) + u * S * S, static_cast<size_t>(S * S) * sizeof(float));
        for (int64_t t = seq * per_seq; t < (seq + 1) * per_seq; ++t) {
            const int64_t off = (t * H + h) * S;
            step(st, off, h, y + off);
        }
    }
}

/// y[j] = sum_i r[i] (tf[h, i] k[i] v[j] + st[i, j]); st[i, j] = st[i, j] td[i] + k[i] v[j].
void rwkv_wkv6(const compute_params & p, gk_tensor * dst) {
    const float * k  = f32_data(dst->src[0]);
    const float * v  = f32_data(dst->src[1]);
    const float * r  = f32_data(dst->src[2]);
    const float * tf = f32_data(dst->src[3]);
    const float * td = f32_data(dst->src[4]);
    const int64_t S  = dst->src[0]->ne[0];
    wkv_heads(p, dst, dst->src[5], [&](float * st, int64_t off, int64_t h, float * y) {
        std::memset(y, 0, static_cast<size_t>(S) * sizeof(float));
        for (int64_t i = 0; i < S; ++i) {
            const float ki = k[off + i], ri = r[off + i], tfi = tf[h * S + i], tdi = td[off + i];
            float *     row = st + i * S;
            for (int64_t j = 0; j < S; ++j) {
                const float kv = v[off + j] * ki;
                y[j] += (kv * tfi + row[j]) * ri;
                row[j] = row[j] * tdi + kv;
            }
        }
    });
}

/// st[i, j] = st[i, j] g[i] + k[i] v[j]; y[j] = sum_i st[i, j] (q[i] scale).
void gated_linear_attn(const compute_params & p, gk_tensor * dst) {
    const float * k     = f32_data(dst->src[0]);
    const float * v     = f32_data(dst->src[1]);
    const float * q     = f32_data(dst->src[2]);
    const float * g     = f32_data(dst->src[3]);
    const float   scale = gk_get_op_params_f32(dst, 0);
    const int64_t S     = dst->src[0]->ne[0];
    wkv_heads(p, dst, dst->src[4], [&](float * st, int64_t off, int64_t, float * y) {
        std::memset(y, 0, static_cast<size_t>(S) * sizeof(float));
        for (int64_t i = 0; i < S; ++i) {
            const float ki = k[off + i], qi = q[off + i] * scale, gi = g[off + i];
            float *     row = st + i * S;
            for (int64_t j = 0; j < S; ++j) {
                row[j] = row[j] * gi + v[off + j] * ki;
                y[j] += row[j] * qi;
            }
        }
    });
}

/// For each row i (a value channel): sa = sum_j a[j] st[i, j];
/// st[i, j] = st[i, j] w[j] + v[i] k[j] + sa b[j]; y[i] = sum_j st[i, j] r[j].
void rwkv_wkv7(const compute_params & p, gk_tensor * dst) {
    const float * r = f32_data(dst->src[0]);
    const float * w = f32_data(dst->src[1]);
    const float * k = f32_data(dst->src[2]);
    const float * v = f32_data(dst->src[3]);
    const float * a = f32_data(dst->src[4]);
    const float * b = f32_data(dst->src[5]);
    const int64_t S = dst->src[0]->ne[0];
    wkv_heads(p, dst, dst->src[6], [&](float * st, int64_t off, int64_t, float * y) {
        for (int64_t i = 0; i < S; ++i) {
            float *     row = st + i * S;
            const float vi  = v[off + i];
            float       sa  = 0.0f;
            for (int64_t j = 0; j < S; ++j) {
                sa += a[off + j] * row[j];
            }
            float sum = 0.0f;
            for (int64_t j = 0; j < S; ++j) {
                row[j] = row[j] * w[off + j] + vi * k[off + j] + sa * b[off + j];
                sum += row[j] * r[off + j];
            }
            y[i] = sum;
        }
    });
}

/// The gated delta rule. The state of head h is M[j][i] = S[i][j] (row j of the stored
/// [S, S] block). Per token: M[j][i] *= exp(g[i]) (KDA, g [S, ...]) or exp(g) (g [1, ...]);
/// delta[j] = (v[j] - sum_i M[j][i] k[i]) beta; M[j][i] += k[i] delta[j];
/// y[j] = (sum_i M[j][i] q[i]) / sqrt(S). q and k heads repeat over v's heads (head h reads
/// q head h % Hq), their sequences are shared by n_seqs / nq3 consecutive sequences.
/// dst [S*H, T*n_seqs + K*S*n_seqs]: y [S, H, T, n_seqs], then K slots [S, S, H, n_seqs]:
/// slot k is the state after token T-1-k, or the initial state where k >= T.
void gated_delta_net(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * q = dst->src[0], *k = dst->src[1], *v = dst->src[2], *g = dst->src[3], *beta = dst->src[4];
    const gk_tensor * state = dst->src[5];
    const int64_t     S = v->ne[0], H = v->ne[1], T = v->ne[2], n_seqs = v->ne[3];
    const int64_t     K      = gk_get_op_params_i32(dst, 0);
    const bool        kda    = g->ne[0] == S && S != 1;
    const float       scale  = 1.0f / std::sqrt(static_cast<float>(S));
    const size_t      bytes  = static_cast<size_t>(S * S) * sizeof(float);
    auto *            y_base = static_cast<float *>(dst->data);
    float *           slots  = y_base + S * H * T * n_seqs;
    const auto        slot   = [&](int64_t s, int64_t u) { return slots + (s * n_seqs * H + u) * S * S; };
    scratch           w      = p.work();
    float *           delta  = w.floats(S);
    const row_range   units  = split_rows(n_seqs * H, p.ith, p.nth);
    for (int64_t u = units.begin; u < units.end; ++u) {
        const int64_t seq = u / H, h = u % H;
        const int64_t qs = seq / (n_seqs / q->ne[3]), ks = seq / (n_seqs / k->ne[3]);
        float *       M = slot(0, u);
        std::memcpy(M, f32_data(state) + u * S * S, bytes);
        for (int64_t s = T > 1 ? T : 1; s < K; ++s) {
            std::memcpy(slot(s, u), M, bytes);
        }
        for (int64_t t = 0; t < T; ++t) {
            const auto * qd = reinterpret_cast<const float *>(element_ptr(q, 0, h % q->ne[1], t, qs));
            const auto * kd = reinterpret_cast<const float *>(element_ptr(k, 0, h % k->ne[1], t, ks));
            const auto * vd = reinterpret_cast<const float *>(element_ptr(v, 0, h, t, seq));
            const auto * gd = reinterpret_cast<const float *>(element_ptr(g, 0, h, t, seq));
            const float  bt = read_element(beta, 0, h, t, seq);
            if (kda) {
                for (int64_t i = 0; i < S; ++i) {
                    delta[i] = std::exp(gd[i]);
                }
                for (int64_t j = 0; j < S; ++j) {
                    for (int64_t i = 0; i < S; ++i) {
                        M[j * S + i] *= delta[i];
                    }
                }
            } else {
                const float decay = std::exp(gd[0]);
                for (int64_t e = 0; e < S * S; ++e) {
                    M[e] *= decay;
                }
            }
            for (int64_t j = 0; j < S; ++j) {
                float sum = 0.0f;
                for (int64_t i = 0; i < S; ++i) {
                    sum += M[j * S + i] * kd[i];
                }
                delta[j] = (vd[j] - sum) * bt;
            }
            float * y = y_base + ((seq * T + t) * H + h) * S;
            for (int64_t j = 0; j < S; ++j) {
                float sum = 0.0f;
                for (int64_t i = 0; i < S; ++i) {
                    M[j * S + i] += kd[i] * delta[j];
                    sum += M[j * S + i] * qd[i];
                }
                y[j] = sum * scale;
            }
            const int64_t back = T - 1 - t;
            if (back > 0 && back < K) {
                std::memcpy(slot(back, u), M, bytes);
            }
        }
    }
}

size_t gated_delta_net_work(const gk_tensor * dst) {
    return scratch_bytes(static_cast<size_t>(dst->src[2]->ne[0]) * sizeof(float));
}

} // namespace

void register_linear_attn(kernel_table & t) {
    t.ops[GK_OP_RWKV_WKV6]         = {rwkv_wkv6, nullptr};
    t.ops[GK_OP_GATED_LINEAR_ATTN] = {gated_linear_attn, nullptr};
    t.ops[GK_OP_RWKV_WKV7]         = {rwkv_wkv7, nullptr};
    t.ops[GK_OP_GATED_DELTA_NET]   = {gated_delta_net, gated_delta_net_work};
}

} // namespace gk::cpu
