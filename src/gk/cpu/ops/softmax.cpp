// softmax.cpp - soft_max along dim 0 with scale, an f16/f32 mask broadcast over dims 2
// and 3, ALiBi slopes per head (dim 2) and attention sinks. Split by destination row.
#include "../dispatch.h"
#include "../rows.h"
#include "alibi.h"

namespace gk::cpu {
namespace {

void soft_max(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a        = dst->src[0];
    const gk_tensor * mask     = dst->src[1];
    const gk_tensor * sinks    = dst->src[2];
    const float       scale    = gk_get_op_params_f32(dst, 0);
    const float       max_bias = gk_get_op_params_f32(dst, 1);
    const int64_t     n        = a->ne[0];
    scratch           w        = p.work();
    float *           mbuf     = mask ? w.floats(n) : nullptr;
    transform_rows(p, w, dst, [&](const float * x, float * y, int64_t i1, int64_t i2, int64_t i3) {
        if (mask) {
            const float   slope = alibi_slope(max_bias, a->ne[2], i2);
            const float * m     = read_row(mask, i1, i2 % mask->ne[2], i3 % mask->ne[3], mbuf);
            for (int64_t i = 0; i < n; ++i) {
                y[i] = x[i] * scale + slope * m[i];
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                y[i] = x[i] * scale;
            }
        }
        float sink = 0.0f;
        if (sinks) {
            sink = read_element(sinks, i2, 0, 0, 0);
        }
        softmax_in_place(y, n, sinks ? &sink : nullptr);
    });
}

} // namespace

void register_softmax(kernel_table & t) { t.ops[GK_OP_SOFT_MAX] = {soft_max, nullptr}; }

} // namespace gk::cpu
