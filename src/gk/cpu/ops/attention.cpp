// attention.cpp - flash_attn_ext: fused softmax(softcap(scale q k^T) + slope*mask) v,
// with grouped heads (H query heads over Hk key/value heads), ALiBi and sinks.
//
// Split by destination row: dst row (h, iq, s) is query iq of head h in sequence s,
// computed by one thread: the scores of all keys in key order (each a dot of f32 rows
// summed left to right), the softmax of alibi.h, then the weighted sum of the value
// rows in key order.
#include "../dispatch.h"
#include "../rows.h"
#include "alibi.h"

#include <cmath>

namespace gk::cpu {
namespace {

void flash_attn_ext(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * q        = dst->src[0];
    const gk_tensor * k        = dst->src[1];
    const gk_tensor * v        = dst->src[2];
    const gk_tensor * mask     = dst->src[3];
    const gk_tensor * sinks    = dst->src[4];
    const float       scale    = gk_get_op_params_f32(dst, 0);
    const float       max_bias = gk_get_op_params_f32(dst, 1);
    const float       softcap  = gk_get_op_params_f32(dst, 2);
    const int64_t     D        = q->ne[0];
    const int64_t     Dv       = v->ne[0];
    const int64_t     n_kv     = k->ne[1];
    const int64_t     group    = q->ne[2] / k->ne[2];  // query heads per kv head
    scratch           w        = p.work();
    float *           qbuf     = w.floats(D);
    float *           kbuf     = w.floats(D);
    float *           vbuf     = w.floats(Dv);
    float *           mbuf     = mask ? w.floats(n_kv) : nullptr;
    float *           score    = w.floats(n_kv);
    float *           ybuf     = w.floats(Dv);
    for_each_row(p, dst, [&](int64_t h, int64_t iq, int64_t s) {
        const float * qr    = read_row(q, iq, h, s, qbuf);
        const int64_t hk    = h / group;
        const float   slope = alibi_slope(max_bias, q->ne[2], h);
        const float * m     = mask ? read_row(mask, iq, h % mask->ne[2], s % mask->ne[3], mbuf) : nullptr;
        for (int64_t j = 0; j < n_kv; ++j) {
            const float * kr  = read_row(k, j, hk, s, kbuf);
            float         dot = 0.0f;
            for (int64_t i = 0; i < D; ++i) {
                dot += qr[i] * kr[i];
            }
            float x = dot * scale;
            if (softcap > 0.0f) {
                x = softcap * std::tanh(x / softcap);
            }
            score[j] = m ? x + slope * m[j] : x;
        }
        const float sink = sinks ? read_element(sinks, h, 0, 0, 0) : 0.0f;
        softmax_in_place(score, n_kv, sinks ? &sink : nullptr);
        float * y = out_row(dst, h, iq, s, ybuf);
        for (int64_t i = 0; i < Dv; ++i) {
            y[i] = 0.0f;
        }
        for (int64_t j = 0; j < n_kv; ++j) {
            if (score[j] == 0.0f) {
                continue;  // a masked key adds nothing (and its value row need not be read)
            }
            const float * vr = read_row(v, j, hk, s, vbuf);
            for (int64_t i = 0; i < Dv; ++i) {
                y[i] += score[j] * vr[i];
            }
        }
        store_row(dst, h, iq, s, y);
    });
}

size_t flash_attn_ext_work_size(const gk_tensor * dst) {
    const size_t D    = static_cast<size_t>(dst->src[0]->ne[0]);
    const size_t Dv   = static_cast<size_t>(dst->src[2]->ne[0]);
    const size_t n_kv = static_cast<size_t>(dst->src[1]->ne[1]);
    return 2 * scratch_bytes(D * sizeof(float)) + 2 * scratch_bytes(Dv * sizeof(float)) +
           2 * scratch_bytes(n_kv * sizeof(float));
}

} // namespace

void register_attention(kernel_table & t) { t.ops[GK_OP_FLASH_ATTN_EXT] = {flash_attn_ext, flash_attn_ext_work_size}; }

} // namespace gk::cpu
