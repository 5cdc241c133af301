// matmul.cpp - mul_mat, mul_mat_id and out_prod.
//
// mul_mat: dst[m, n, i2, i3] = vec_dot(K, a row (m, i2/r2, i3/r3), b row (n, i2, i3))
// where r2 = B2/A2, r3 = B3/A3. The b rows are first converted to the weight type's
// vec_dot_type (vec_dot.h) - the same conversion for every element, so each output
// element is one vec_dot of fixed inputs and its bits do not depend on who computes it.
//
// Partition: the units are (slab, weight row) pairs, slab = (i2, i3), flattened in that
// order and split into contiguous ranges: one per thread (split_rows), or for a decode
// (one column) about 16 per thread, handed out as threads come free (next_chunk), so
// that one slowed-down thread does not hold up the pass. A thread walks its weight rows
// of one slab in column panels of up to k_panel b rows: it converts the panel once
// and dots every one of its weight rows against it (two rows per call where the type has
// vec_dot2, each with vec_dot's bits). So decode (one b row) still spreads
// over the weight rows, and a panel is never reused across slabs. With more than one
// column and a weight type that has a tile kernel (vec_dot_tile.h), the panels are the
// kernel's max_cols wide and the kernel takes the thread's weight rows `rows` at a time,
// unpacking each weight block once per panel; its elements have the same bits.
//
// mul_mat_id splits by destination row (u, t) - one token's use of one expert each:
// dst[:, u, t] = as[:, :, ids[u, t]] * b[:, u % B1, t] - each cut into parts of the
// expert's rows when there are too few of them to keep every thread busy (a decode uses
// a handful of experts), the chunks handed out at run time (next_chunk). An expert id
// outside [0, E) is GK_STATUS_OUT_OF_RANGE.
//
// out_prod splits by destination row (n, i2, i3) and accumulates over k in order:
// dst[m, n] = sum_k a[m, k] b[n, k], in f32.
#include "../cpu_features.h"
#include "../dispatch.h"
#include "../rows.h"
#include "../vec_dot.h"
#include "../vec_dot_tile.h"

#include <cstring>

namespace gk::cpu {
namespace {

constexpr int64_t k_panel = 16;  // b rows converted at a time

// Weight rows read ahead by the per-row loop. Decode streams the whole weight from memory
// for a few operations per byte; the hardware's stream prefetcher stops at page
// boundaries, and asking for the row 4 ahead line by line took gemma3-270m's generation
// from 24 to 30 tokens/s at 1 thread on an Intel Xeon (docs/performance.md). 2 and 8
// measured the same. On AMD Zen 4 the same requests cost gemma3-270m's generation 7 % and
// gk-bench's 4096 x 14336 q4_K / q6_K decode about half its rate, so AMD CPUs with AVX-512
// (Zen 4 and later) run without. On an AMD Zen 3 they pay for short rows only: gemma3-270m's
// generation (rows of 440 bytes to 1.7 KB) 39.3 -> 43.7 tokens/s (three alternating runs
// each) and its 640 x 262144 q8_0 output matrix 1.03 -> 1.31 of ggml, while 4096-element
// rows lost (q8_0, 4.3 KB: 1.05 -> 0.87; q5_0, 2.8 KB: 1.00 -> 0.96). So there rows of at
// most 2 KiB are read ahead. On the Intel Xeon the longest rows lose too: f32 4096 x 14336
// (16 KB rows) 0.91-0.97 of ggml with, 0.96-1.01 without (three alternating rounds), while
// bf16's 8 KB rows measured the same both ways; so there rows up to 8 KiB are read ahead.
constexpr int64_t k_prefetch_rows = 4;
constexpr size_t  k_short_row     = 2048;
constexpr size_t  k_long_row      = 8192;

/// Weight rows per chunk of a decode (one column) over `total` rows on nth threads: about
/// 16 chunks per thread (next_chunk hands them out), at least 16 rows each; one chunk for
/// one thread.
int64_t decode_chunk(int64_t total, int nth) {
    if (nth == 1) {
        return total;
    }
    const int64_t per = (total + 16 * nth - 1) / (16 * nth);
    return per < 16 ? 16 : per;
}

/// Parts each destination column of mul_mat_id is cut into, by its expert's M weight rows:
/// about 4 chunks per thread over all `cols` columns (a decode has only a few, one per
/// expert used), none under 16 rows; one when the columns alone give every thread work.
int64_t expert_parts(int64_t cols, int64_t M, int nth) {
    const int64_t want = (4 * static_cast<int64_t>(nth) + cols - 1) / cols;
    const int64_t most = M / 16 > 1 ? M / 16 : 1;
    return want < 1 ? 1 : (want > most ? most : want);
}

/// Weight rows the per-row loops take in one dot call with `left` rows left: two where the
/// type has vec_dot2, else one.
int64_t rows_per_dot(const vec_dot_traits * vd, int64_t left) { return vd->vec_dot2 && left > 1 ? 2 : 1; }

/// s[0 .. nr - 1] = the dots of nr (rows_per_dot) weight rows from w, nb1 bytes apart, with
/// activation row act.
void dot_rows(const vec_dot_traits * vd, int64_t K, const char * w, size_t nb1, int64_t nr, const char * act,
              float * s) {
    if (nr == 2) {
        vd->vec_dot2(K, s, w, nb1, act);
    } else {
        vd->vec_dot(K, s, w, act);
    }
}

/// Whether the per-row loop reads rows of `row_bytes` ahead on this host (see above).
bool read_ahead(size_t row_bytes) {
    static const cpu_features & host = host_cpu();
    return host.amd ? !host.avx512 && row_bytes <= k_short_row : row_bytes <= k_long_row;
}

/// Ask for the `bytes` at p to be brought into the cache (a hint: no effect on results).
void prefetch_row(const char * p, size_t bytes) {
    for (size_t off = 0; off < bytes; off += 64) {
        __builtin_prefetch(p + off);
    }
}

size_t act_row_bytes(const gk_tensor * a) {
    return gk_row_size(get_vec_dot_traits(a->type)->vec_dot_type, a->ne[0]);
}

void put(gk_tensor * dst, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    std::memcpy(element_ptr(dst, i0, i1, i2, i3), &v, sizeof(v));
}

/// The tile kernel mul_mat uses for dst, or nullptr: a weight type with one, more than
/// one column or a kernel that takes decodes too, and a destination whose rows are dense
/// f32 (the kernel writes them).
const tile_kernel * tile_for(const gk_tensor * dst) {
    const tile_kernel * tk = get_tile_kernel(dst->src[0]->type);
    if (!tk || (dst->src[1]->ne[1] < 2 && !tk->decode) || dst->nb[0] != sizeof(float) ||
        dst->nb[1] % sizeof(float) != 0) {
        return nullptr;
    }
    return tk;
}

/// Columns converted at a time: a tile kernel's max_cols, else k_panel.
int64_t panel_cols(const tile_kernel * tk) { return tk ? tk->max_cols : k_panel; }

void mul_mat(const compute_params & p, gk_tensor * dst) {
    const gk_tensor *      a     = dst->src[0];
    const gk_tensor *      b     = dst->src[1];
    const vec_dot_traits * vd    = get_vec_dot_traits(a->type);
    const tile_kernel *    tk    = tile_for(dst);
    const int64_t          K     = a->ne[0];
    const int64_t          M     = a->ne[1];
    const int64_t          N     = b->ne[1];
    const int64_t          r2    = b->ne[2] / a->ne[2];
    const int64_t          r3    = b->ne[3] / a->ne[3];
    const size_t           arow  = act_row_bytes(a);
    const size_t           wbytes = gk_row_size(a->type, K);
    const bool             ahead  = read_ahead(wbytes);
    const int64_t          cols  = panel_cols(tk);
    scratch                w     = p.work();
    float *                bbuf  = w.floats(K);
    auto *                 panel = static_cast<char *>(w.take(arow * static_cast<size_t>(cols)));
    void *                 twork = tk ? w.take(tk->work_bytes) : nullptr;
    // The slab whose converted columns the panel holds, when one panel takes all N
    // columns: a decode's chunks of one slab convert its activation row once per thread.
    int64_t panel_slab = -1;
    // units [begin, end): weight rows of one slab or more, all their columns
    const auto run = [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end;) {
            const int64_t slab = u / M;
            const int64_t i2   = slab % b->ne[2];
            const int64_t i3   = slab / b->ne[2];
            const int64_t m0   = u % M;
            const int64_t m1   = (slab + 1) * M < end ? M : end - slab * M;
            const char *  wrow = element_ptr(a, 0, 0, i2 / r2, i3 / r3);  // weight row m at wrow + m nb1
            for (int64_t n0 = 0; n0 < N; n0 += cols) {
                const int64_t n1 = n0 + cols < N ? n0 + cols : N;
                if (N > cols || slab != panel_slab) {
                    for (int64_t n = n0; n < n1; ++n) {
                        vd->from_float(read_row(b, n, i2, i3, bbuf), panel + (n - n0) * arow, K);
                    }
                    panel_slab = slab;
                }
                if (tk) {
                    for (int64_t m = m0; m < m1; m += tk->rows) {
                        const int nr = static_cast<int>(m1 - m < tk->rows ? m1 - m : tk->rows);
                        tk->fn(K, nr, wrow + m * a->nb[1], a->nb[1], static_cast<int>(n1 - n0), panel, arow,
                               reinterpret_cast<float *>(element_ptr(dst, m, n0, i2, i3)), dst->nb[1] / sizeof(float),
                               twork);
                    }
                    continue;
                }
                for (int64_t m = m0, nr; m < m1; m += nr) {
                    nr = rows_per_dot(vd, m1 - m);
                    if (ahead) {
                        for (int64_t r = m + k_prefetch_rows; r < m + k_prefetch_rows + nr && r < m1; ++r) {
                            prefetch_row(wrow + r * a->nb[1], wbytes);
                        }
                    }
                    for (int64_t n = n0; n < n1; ++n) {
                        float s[2];
                        dot_rows(vd, K, wrow + m * a->nb[1], a->nb[1], nr, panel + (n - n0) * arow, s);
                        for (int64_t r = 0; r < nr; ++r) {
                            put(dst, m + r, n, i2, i3, s[r]);
                        }
                    }
                }
            }
            u = slab * M + m1;
        }
    };
    const int64_t total = M * b->ne[2] * b->ne[3];
    if (N > 1) {
        const row_range units = split_rows(total, p.ith, p.nth);
        run(units.begin, units.end);
        return;
    }
    const int64_t per = decode_chunk(total, p.nth);
    for (int64_t c = next_chunk(p, -1); c * per < total; c = next_chunk(p, c)) {
        run(c * per, (c + 1) * per < total ? (c + 1) * per : total);
    }
}

size_t mul_mat_work_size(const gk_tensor * dst) {
    const gk_tensor *   a  = dst->src[0];
    const tile_kernel * tk = tile_for(dst);
    return scratch_bytes(static_cast<size_t>(a->ne[0]) * sizeof(float)) +
           scratch_bytes(act_row_bytes(a) * static_cast<size_t>(panel_cols(tk))) +
           (tk ? scratch_bytes(tk->work_bytes) : 0);
}

void mul_mat_id(const compute_params & p, gk_tensor * dst) {
    const gk_tensor *      as   = dst->src[0];
    const gk_tensor *      b    = dst->src[1];
    const gk_tensor *      ids  = dst->src[2];
    const vec_dot_traits * vd   = get_vec_dot_traits(as->type);
    const int64_t          K    = as->ne[0];
    const int64_t          M     = as->ne[1];
    const int64_t          cols  = dst->ne[1] * dst->ne[2] * dst->ne[3];
    const int64_t          parts = expert_parts(cols, M, p.nth);
    scratch                w    = p.work();
    float *                bbuf = w.floats(K);
    auto *                 act  = static_cast<char *>(w.take(act_row_bytes(as)));
    int64_t                have  = -1;  // the destination column whose activation `act` holds
    int64_t                e     = 0;   // and its expert
    for (int64_t c = next_chunk(p, -1); c < cols * parts && !p.error->failed(); c = next_chunk(p, c)) {
        const row_index ri = unflatten_row(dst, c / parts);
        const int64_t   u = ri.i1, t = ri.i2;
        if (c / parts != have) {
            e = read_index(ids, u, t, 0, 0);
            if (e < 0 || e >= as->ne[2]) {
                p.error->set(GK_STATUS_OUT_OF_RANGE, "expert id %lld at [%lld, %lld] is outside [0, %lld)",
                             static_cast<long long>(e), static_cast<long long>(u), static_cast<long long>(t),
                             static_cast<long long>(as->ne[2]));
                return;
            }
            vd->from_float(read_row(b, u % b->ne[1], t, 0, bbuf), act, K);
            have = c / parts;
        }
        const int64_t m1 = (c % parts + 1) * M / parts;
        for (int64_t m = c % parts * M / parts, nr; m < m1; m += nr) {
            nr = rows_per_dot(vd, m1 - m);
            float s[2];
            dot_rows(vd, K, element_ptr(as, 0, m, e, 0), as->nb[1], nr, act, s);
            for (int64_t r = 0; r < nr; ++r) {
                put(dst, m + r, u, t, 0, s[r]);
            }
        }
    }
}

void out_prod(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const gk_tensor * b    = dst->src[1];
    const int64_t     r2   = b->ne[2] / a->ne[2];
    const int64_t     r3   = b->ne[3] / a->ne[3];
    scratch           w    = p.work();
    float *           abuf = w.floats(a->ne[0]);
    float *           ybuf = w.floats(dst->ne[0]);
    for_each_row(p, dst, [&](int64_t n, int64_t i2, int64_t i3) {
        float * y = out_row(dst, n, i2, i3, ybuf);
        for (int64_t m = 0; m < dst->ne[0]; ++m) {
            y[m] = 0.0f;
        }
        for (int64_t k = 0; k < a->ne[1]; ++k) {
            const float   bv = read_element(b, n, k, i2, i3);
            const float * x  = read_row(a, k, i2 / r2, i3 / r3, abuf);
            for (int64_t m = 0; m < dst->ne[0]; ++m) {
                y[m] += x[m] * bv;
            }
        }
        store_row(dst, n, i2, i3, y);
    });
}

size_t mul_mat_id_work_size(const gk_tensor * dst) {
    const gk_tensor * as = dst->src[0];
    return scratch_bytes(static_cast<size_t>(as->ne[0]) * sizeof(float)) + scratch_bytes(act_row_bytes(as));
}

} // namespace

void register_matmul(kernel_table & t) {
    t.ops[GK_OP_MUL_MAT]    = {mul_mat, mul_mat_work_size};
    t.ops[GK_OP_MUL_MAT_ID] = {mul_mat_id, mul_mat_id_work_size};
    t.ops[GK_OP_OUT_PROD]   = {out_prod, nullptr};
}

} // namespace gk::cpu
