// attention.cpp - flash_attn_ext: fused softmax(softcap(scale q k^T) + slope*mask) v,
// with grouped heads (H query heads over Hk key/value heads), ALiBi and sinks.
//
// Dst row (h, iq, s) is query iq of head h in sequence s, computed by one thread:
// 1. q's row is converted once to the dot type of K (vec_dot.h's from_float: f16 K ->
//    f16 q, q8_0 K -> q8_0 q), as ggml's CPU flash attention converts Q.
// 2. The score of key j: vec_dot(K row j, q) - the vec_dot order of vec_dot.h on the K
//    row's own bytes, with q rounded to K's dot type - times scale, softcapped when
//    softcap > 0, plus slope * mask[j]. A key whose mask is -inf (with slope > 0) scores
//    -inf without computing its dot: what the sum gives for any finite dot. So appending
//    masked keys never changes a query's bits (batch invariance: a query of a larger
//    batch sees more cache cells, all the extra ones masked). The dots of a run of
//    unmasked keys go through K's tile kernel where it has one (vec_dot_tile.h: up to
//    tile.rows K rows per call, each result bit-identical to its vec_dot), else one
//    vec_dot per key (a strided row of a plain type gathered first into a dense row of
//    that type, exactly).
// 3. softmax_rows (alibi.h), in key order, over the keys up to the last unmasked one
//    (the masked keys after it would add +0 to every sum: their absence changes no bit,
//    and a query then costs its visible keys, not the cache's size).
// 4. y = the sum, in key order, of weight[j] * V row j over the keys with a nonzero
//    weight: per element from +0 a rounded product, then a rounded sum (no fma), by
//    vec_mad (vec_mad.h, in the kernel sets: the scalar loop's bits at every level).
//    f32 / f16 / bf16 V rows are read in place, other types decoded by the codec row by
//    row.
//
// A unit of work takes rows: the query heads that share a key / value head (grouped-query
// attention; up to all of them) times up to k_query_block consecutive queries of one
// sequence, at most k_rows rows. The dots of the keys any row sees go through one tile call
// per run of keys, the rows as its columns, and the value rows are summed for all the rows
// at once (vec_mad), so each K and V row is loaded (and converted) once per unit rather
// than once per head and query; a row's score of a key it does not see is computed and
// dropped. Every value a row keeps is its own vec_dot and its own sums, so the grouping
// changes no bit. Where the units would be fewer than the threads (a token's decode), a
// unit takes fewer heads.
//
// Partition: the units are dealt out cyclically (unit u of the flattened (head group,
// block, s) units to thread u % nth): under a causal mask a later query costs more, and
// contiguous runs would leave the first threads idle. Every row is still computed by one
// thread.
#include "../dispatch.h"
#include "../rows.h"
#include "../vec_dot.h"
#include "../vec_mad.h"
#include "../vec_dot_tile.h"
#include "alibi.h"

#include "../../internal.h"

#include "quant/fp16.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gk::cpu {
namespace {

// Queries of one head computed together: their key dots share the loads and conversions
// of each K row (the tile's columns). 6 = two of the AVX-512 f16 tile's 3-column steps.
constexpr int k_query_block = 6;

// Rows (query heads x queries) of one unit at most: the query heads that share a key /
// value head share its K and V rows too, so a unit takes up to 24 of them.
constexpr int k_rows = 24;

/// For the nq queries of a block, y_c = y + c * Dv (c < nq) = the sum over keys j < n[c]
/// with w_c[j] != 0 (w_c = w + c * ldw), in key order, of w_c[j] * V row (j0 + j, hk, s)
/// (vec_mad.h: the scalar loop's bits at every level): dense f32 / f16 / bf16 rows read in
/// place by one call for the block, other rows decoded by the codec one by one into vbuf.
void weighted_rows(float * y, const float * w, size_t ldw, const int64_t * n, int nq, const gk_tensor * v, int64_t j0,
                   int64_t hk, int64_t s, float * vbuf) {
    const int64_t Dv = v->ne[0];
    std::fill(y, y + nq * Dv, 0.0f);
    if (v->nb[0] == gk_type_size(v->type)) {
        if (const vec_mad_fn in_place = get_vec_mad(v->type)) {
            in_place(y, Dv, w, ldw, n, nq, element_ptr(v, 0, j0, hk, s), v->nb[1], Dv);
            return;
        }
    }
    const vec_mad_fn decoded = get_vec_mad(GK_TYPE_F32);
    const int64_t    n_max   = *std::max_element(n, n + nq);
    for (int64_t j = 0; j < n_max; ++j) {
        int64_t one[k_rows];  // key j for the rows that see it
        for (int c = 0; c < nq; ++c) {
            one[c] = j < n[c] && w[c * ldw + j] != 0.0f;
        }
        if (std::any_of(one, one + nq, [](int64_t k) { return k != 0; })) {
            decoded(y, Dv, w + j, ldw, one, nq, read_row(v, j0 + j, hk, s, vbuf), 0, Dv);
        }
    }
}

/// The dots of K rows with query rows converted to K's dot type (see the file comment).
struct key_dots {
    const gk_tensor *      k;
    int64_t                D;
    const vec_dot_traits * vd;
    const tile_kernel *    tile;  // nullptr: vec_dot per key and query
    char *                 kbuf;  // a gathered row (K rows not dense)
    void *                 work;  // the tile kernel's scratch

    static const tile_kernel * tile_for(const gk_tensor * k) {
        return k->nb[0] == gk_type_size(k->type) ? get_tile_kernel(k->type) : nullptr;
    }

    /// out[c * ldc + i] = vec_dot(K row (j0 + i, hk, s), query c) for i < n (n <=
    /// max_run()), c < nq; query c at q + c * qbytes.
    void operator()(const char * q, size_t qbytes, int nq, int64_t hk, int64_t s, int64_t j0, int64_t n, float * out,
                    size_t ldc) const {
        if (tile) {
            for (int c0 = 0; c0 < nq; c0 += tile->max_cols) {
                tile->fn(D, static_cast<int>(n), element_ptr(k, 0, j0, hk, s), k->nb[1],
                         std::min(nq - c0, tile->max_cols), q + c0 * qbytes, qbytes, out + c0 * ldc, ldc, work);
            }
            return;
        }
        const size_t elem = gk_type_size(k->type);
        for (int64_t i = 0; i < n; ++i) {
            const char * row = element_ptr(k, 0, j0 + i, hk, s);
            if (k->nb[0] != elem) {
                for (int64_t e = 0; e < D; ++e) {
                    std::memcpy(kbuf + e * elem, row + e * static_cast<int64_t>(k->nb[0]), elem);
                }
                row = kbuf;
            }
            for (int c = 0; c < nq; ++c) {
                vd->vec_dot(D, &out[c * ldc + i], row, q + c * qbytes);
            }
        }
    }

    /// The most keys one call takes.
    int64_t max_run() const { return tile ? tile->rows : 1; }
};

/// Whether m[0 .. 7] are all -inf, without a branch per element.
bool all_neg_inf_8(const float * m) {
    bool all = true;
    for (int i = 0; i < 8; ++i) {
        all &= m[i] == -INFINITY;
    }
    return all;
}

/// The end of mask row m's visible keys: the least e <= n with m[e .. n) all -inf. A causal
/// row of a prompt hides half its cells on average, past its position: 8 at a time.
int64_t visible_end(const float * m, int64_t n) {
    int64_t e = n;
    while (e >= 8 && all_neg_inf_8(m + e - 8)) {
        e -= 8;
    }
    while (e > 0 && m[e - 1] == -INFINITY) {
        --e;
    }
    return e;
}

/// The first key of m[0 .. e) that is not -inf (e when none is): a sliding window's start.
int64_t visible_begin(const float * m, int64_t e) {
    int64_t b = 0;
    while (b + 8 <= e && all_neg_inf_8(m + b)) {
        b += 8;
    }
    while (b < e && m[b] == -INFINITY) {
        ++b;
    }
    return b;
}

/// The largest divisor of n that is at most limit (n, limit >= 1).
int64_t divisor_below(int64_t n, int64_t limit) {
    int64_t d = std::min(n, limit);
    while (n % d != 0) {
        --d;
    }
    return d;
}

/// How flash_attn_ext groups its rows (see the file comment): `heads` query heads of one
/// key/value head times `queries` consecutive queries per unit.
struct row_groups {
    int64_t heads;
    int64_t queries;

    /// `heads` query heads per unit, and as many queries as fit k_rows (k_query_block at most).
    static row_groups with(int64_t heads) { return {heads, std::clamp<int64_t>(k_rows / heads, 1, k_query_block)}; }

    /// The most rows a unit of dst takes, whatever the thread count.
    static int64_t max_rows(const gk_tensor * dst) {
        const int64_t group = dst->src[0]->ne[2] / dst->src[1]->ne[2];  // query heads per kv head
        int64_t       most  = 1;
        for (int64_t d = 1; d <= std::min<int64_t>(group, k_rows); ++d) {
            if (group % d == 0) {
                most = std::max(most, d * with(d).queries);
            }
        }
        return most;
    }

    /// The grouping for nth threads: all the heads of a kv head that fit k_rows, fewer while
    /// there would be fewer units than threads (a token's decode).
    static row_groups of(const gk_tensor * dst, int nth) {
        const int64_t group = dst->src[0]->ne[2] / dst->src[1]->ne[2];
        const auto    units = [&](const row_groups & x) {
            return dst->src[1]->ne[2] * (group / x.heads) * ((dst->ne[2] + x.queries - 1) / x.queries) * dst->ne[3];
        };
        row_groups g = with(divisor_below(group, k_rows));
        while (g.heads > 1 && units(g) < nth) {
            g = with(divisor_below(group, g.heads - 1));
        }
        return g;
    }
};

void flash_attn_ext(const compute_params & p, gk_tensor * dst) {
    const gk_tensor *      q        = dst->src[0];
    const gk_tensor *      k        = dst->src[1];
    const gk_tensor *      v        = dst->src[2];
    const gk_tensor *      mask     = dst->src[3];
    const gk_tensor *      sinks    = dst->src[4];
    const float            scale    = gk_get_op_params_f32(dst, 0);
    const float            max_bias = gk_get_op_params_f32(dst, 1);
    const float            softcap  = gk_get_op_params_f32(dst, 2);
    const int64_t          D        = q->ne[0];
    const int64_t          Dv       = v->ne[0];
    const int64_t          n_kv     = k->ne[1];
    const int64_t          N        = dst->ne[2];
    const int64_t          group    = q->ne[2] / k->ne[2];  // query heads per kv head
    const row_groups       rg       = row_groups::of(dst, p.nth);
    const int64_t          splits   = group / rg.heads;  // units per kv head and block
    const int64_t          blocks   = (N + rg.queries - 1) / rg.queries;
    const vec_dot_traits * vd       = get_vec_dot_traits(k->type);  // the builder checked it
    const tile_kernel *    tile     = key_dots::tile_for(k);
    const size_t           qbytes   = gk_row_size(vd->vec_dot_type, D);
    scratch                w        = p.work();
    float *                qbuf     = w.floats(D);
    auto *                 qdot     = static_cast<char *>(w.take(qbytes * k_rows));
    auto *                 kbuf     = static_cast<char *>(w.take(gk_row_size(k->type, D)));
    void *                 twork    = tile ? w.take(tile->work_bytes) : nullptr;
    const key_dots         dots{k, D, vd, tile, kbuf, twork};
    float *                vbuf     = w.floats(Dv);
    const int64_t          most     = row_groups::max_rows(dst);  // as flash_attn_ext_work_size
    float *                score    = w.floats(n_kv * most);
    float *                ybuf     = w.floats(Dv * most);
    float *                mbuf     = mask ? w.floats(n_kv * most) : nullptr;
    const int64_t          units    = k->ne[2] * splits * blocks * dst->ne[3];
    for (int64_t u = p.ith; u < units; u += p.nth) {
        // unit u: heads [h0, h0 + heads) of kv head hk, queries [i0, i0 + nq) of sequence s;
        // row r: head h0 + r / nq, query i0 + r % nq
        const int64_t hs = u % (k->ne[2] * splits), s = u / (k->ne[2] * splits * blocks);
        const int64_t hk = hs / splits, h0 = hk * group + hs % splits * rg.heads;
        const int64_t i0   = (u / (k->ne[2] * splits)) % blocks * rg.queries;
        const int     nq   = static_cast<int>(std::min<int64_t>(rg.queries, N - i0));
        const int     rows = static_cast<int>(rg.heads) * nq;
        float         slope[k_rows], sink[k_rows];
        bool          inf_mask[k_rows];   // -inf in the mask hides a key (slope > 0)
        const float * mrow[k_rows] = {};  // the rows' mask rows as f32
        int64_t       n[k_rows];          // per row: the keys up to its last visible one
        int64_t       j0 = n_kv;          // the first key some row sees
        // A key whose mask is -inf (with slope > 0) is hidden from a row: it scores -inf
        // without its dot.
        const auto hidden = [&](int r, int64_t j) { return inf_mask[r] && mrow[r][j] == -INFINITY; };
        for (int r = 0; r < rows; ++r) {
            const int64_t h = h0 + r / nq, iq = i0 + r % nq;
            slope[r]    = alibi_slope(max_bias, q->ne[2], h);
            sink[r]     = sinks ? read_element(sinks, h, 0, 0, 0) : 0.0f;
            inf_mask[r] = mask && slope[r] > 0.0f;
            vd->from_float(read_row(q, iq, h, s, qbuf), qdot + r * qbytes, D);
            if (mask) {  // a mask without heads gives the unit's heads the same rows: read once
                const bool shared = mask->ne[2] == 1 && r >= nq;
                mrow[r] = shared ? mrow[r % nq] : read_row(mask, iq, h % mask->ne[2], s % mask->ne[3], mbuf + r * n_kv);
            }
            // Keys after a row's last visible one, and before the unit's first visible one
            // (a sliding window's), score -inf and weigh +0, which changes no bit of a softmax
            // or a sum (step 3): the rows are keys [j0, n[r]).
            if (r >= nq && mrow[r] == mrow[r % nq] && inf_mask[r] == inf_mask[r % nq]) {
                n[r] = n[r % nq];  // the same mask row seen the same way
                continue;
            }
            n[r]                = inf_mask[r] ? visible_end(mrow[r], n_kv) : n_kv;
            const int64_t first = inf_mask[r] ? visible_begin(mrow[r], n[r]) : 0;
            if (first < n[r]) {
                j0 = std::min(j0, first);
            }
        }
        const int64_t n_max       = *std::max_element(n, n + rows);
        j0                        = std::min(j0, n_max);
        const auto masked_for_all = [&](int64_t j) {
            for (int r = 0; r < rows; ++r) {
                if (j < n[r] && !hidden(r, j)) {
                    return false;
                }
            }
            return true;
        };
        // the dots of the keys some row sees, in runs of at most one call (the rows the columns)
        for (int64_t j = j0; j < n_max;) {
            if (masked_for_all(j)) {
                ++j;
                continue;
            }
            int64_t end = j + 1;
            while (end < n_max && end - j < dots.max_run() && !masked_for_all(end)) {
                ++end;
            }
            dots(qdot, qbytes, rows, hk, s, j, end - j, score + j, static_cast<size_t>(n_kv));
            j = end;
        }
        int64_t len[k_rows];  // the rows' lengths from j0
        for (int r = 0; r < rows; ++r) {
            float *       sc = score + r * n_kv;
            const float * m  = mrow[r];
            len[r]           = std::max<int64_t>(0, n[r] - j0);
            if (softcap > 0.0f) {
                for (int64_t j = j0; j < n[r]; ++j) {
                    sc[j] = softcap * std::tanh(sc[j] * scale / softcap);
                }
            } else {
                for (int64_t j = j0; j < n[r]; ++j) {
                    sc[j] = sc[j] * scale;
                }
            }
            if (m) {  // branch-free, so that it vectorises: a masked key's garbage score is dropped
                const bool  hides = inf_mask[r];
                const float sl    = slope[r];
                for (int64_t j = j0; j < n[r]; ++j) {
                    const float x = sc[j] + sl * m[j];
                    sc[j]         = hides && m[j] == -INFINITY ? -INFINITY : x;
                }
            }
        }
        softmax_rows(score + j0, static_cast<size_t>(n_kv), len, rows, sinks ? sink : nullptr);
        weighted_rows(ybuf, score + j0, static_cast<size_t>(n_kv), len, rows, v, j0, hk, s, vbuf);
        for (int r = 0; r < rows; ++r) {
            store_row(dst, h0 + r / nq, i0 + r % nq, s, ybuf + r * Dv);
        }
    }
}

size_t flash_attn_ext_work_size(const gk_tensor * dst) {
    const gk_tensor *   k    = dst->src[1];
    const size_t        D    = static_cast<size_t>(k->ne[0]);
    const size_t        Dv   = static_cast<size_t>(dst->src[2]->ne[0]);
    const size_t        n_kv = static_cast<size_t>(k->ne[1]);
    const size_t        rows = static_cast<size_t>(row_groups::max_rows(dst));
    const tile_kernel * tile = key_dots::tile_for(k);
    return scratch_bytes(D * sizeof(float)) +
           scratch_bytes(gk_row_size(get_vec_dot_traits(k->type)->vec_dot_type, k->ne[0]) * k_rows) +
           scratch_bytes(gk_row_size(k->type, k->ne[0])) + (tile ? scratch_bytes(tile->work_bytes) : 0) +
           scratch_bytes(Dv * sizeof(float)) + scratch_bytes(Dv * rows * sizeof(float)) +
           (dst->src[3] ? 2 : 1) * scratch_bytes(n_kv * rows * sizeof(float));
}

// flash_attn_back (gk_flash_attn_back): one unit per key head (hk, s), which owns dk and
// dv of that head and dq of its query heads hk, hk + Hk, ...: no other unit writes them,
// so each sum below runs in one fixed order whatever the thread count. Per query row i of
// query head h: S_j = scale dot(k_j, q_i) for the visible keys j (dots and every other sum
// ascending, in float), P = softmax(S) (max subtracted, std::exp, the sum in double),
// G_j = P_j (dot(v_j, d_i) - sum_j P_j dot(v_j, d_i)) scale; then dq_i = sum_j G_j k_j,
// dk_j += G_j q_i and dv_j += P_j d_i, the rows i of every query head of the unit in order.
void flash_attn_back(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * q      = dst->src[0];
    const gk_tensor * k      = dst->src[1];
    const gk_tensor * v      = dst->src[2];
    const gk_tensor * d      = dst->src[3];
    const bool        masked = gk_get_op_params_i32(dst, 0) != 0;
    const int64_t     D = q->ne[0], N = q->ne[1], H = q->ne[2], M = k->ne[1], Hk = k->ne[2];
    const float       scale = 1.0f / std::sqrt(static_cast<float>(D));
    auto *            out   = static_cast<float *>(dst->data);
    float *           dq    = out;
    float *           dk    = out + flash_attn_back_offset(q, k, v, 1);
    float *           dv    = out + flash_attn_back_offset(q, k, v, 2);
    if (p.ith == 0) {  // the padding after each part
        std::memset(dq + gk_nelements(q), 0, static_cast<size_t>(dk - dq - gk_nelements(q)) * sizeof(float));
        std::memset(dk + gk_nelements(k), 0, static_cast<size_t>(dv - dk - gk_nelements(k)) * sizeof(float));
        std::memset(dv + gk_nelements(v), 0,
                    static_cast<size_t>(gk_nelements(dst) - (dv - out) - gk_nelements(v)) * sizeof(float));
    }
    scratch         w      = p.work();
    float *         score  = w.floats(M);
    float *         weight = w.floats(M);
    const row_range r      = split_rows(Hk * q->ne[3], p.ith, p.nth);
    for (int64_t u = r.begin; u < r.end; ++u) {
        const int64_t hk = u % Hk, s = u / Hk;
        float *       dk_head = dk + (s * Hk + hk) * M * D;  // [D, M] of this key head
        float *       dv_head = dv + (s * Hk + hk) * D * M;  // [M, D]
        std::memset(dk_head, 0, static_cast<size_t>(M * D) * sizeof(float));
        std::memset(dv_head, 0, static_cast<size_t>(M * D) * sizeof(float));
        for (int64_t h = hk; h < H; h += Hk) {
            for (int64_t i = 0; i < N; ++i) {
                const auto *  qi      = reinterpret_cast<const float *>(element_ptr(q, 0, i, h, s));
                const auto *  di      = reinterpret_cast<const float *>(element_ptr(d, 0, i, h, s));
                const int64_t visible = masked ? M - N + i + 1 : M;
                float         max     = -INFINITY;
                for (int64_t j = 0; j < visible; ++j) {
                    const auto * kj  = reinterpret_cast<const float *>(element_ptr(k, 0, j, hk, s));
                    float        dot = 0.0f;
                    for (int64_t c = 0; c < D; ++c) {
                        dot += kj[c] * qi[c];
                    }
                    score[j] = dot * scale;
                    max      = std::fmax(max, score[j]);
                }
                double sum = 0.0;
                for (int64_t j = 0; j < visible; ++j) {
                    weight[j] = std::exp(score[j] - max);
                    sum += weight[j];
                }
                const float inv     = static_cast<float>(1.0 / sum);
                float       dot_pdv = 0.0f;
                for (int64_t j = 0; j < visible; ++j) {
                    weight[j] *= inv;
                    float dvj = 0.0f;  // dot(v_j, d_i): v_j is column j of v's rows
                    for (int64_t c = 0; c < D; ++c) {
                        dvj += *reinterpret_cast<const float *>(element_ptr(v, j, c, hk, s)) * di[c];
                    }
                    score[j] = dvj;
                    dot_pdv += weight[j] * dvj;
                }
                float * dqi = dq + ((s * H + h) * N + i) * D;
                for (int64_t c = 0; c < D; ++c) {
                    dqi[c] = 0.0f;
                }
                for (int64_t j = 0; j < visible; ++j) {
                    const float  g  = weight[j] * (score[j] - dot_pdv) * scale;
                    const auto * kj = reinterpret_cast<const float *>(element_ptr(k, 0, j, hk, s));
                    for (int64_t c = 0; c < D; ++c) {
                        dqi[c] += g * kj[c];
                        dk_head[j * D + c] += g * qi[c];
                        dv_head[c * M + j] += weight[j] * di[c];
                    }
                }
            }
        }
    }
}

size_t flash_attn_back_work_size(const gk_tensor * dst) {
    return 2 * scratch_bytes(static_cast<size_t>(dst->src[1]->ne[1]) * sizeof(float));
}

} // namespace

void register_attention(kernel_table & t) {
    t.ops[GK_OP_FLASH_ATTN_EXT]  = {flash_attn_ext, flash_attn_ext_work_size};
    t.ops[GK_OP_FLASH_ATTN_BACK] = {flash_attn_back, flash_attn_back_work_size};
}

} // namespace gk::cpu
