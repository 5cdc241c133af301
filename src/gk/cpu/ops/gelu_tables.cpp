// gelu_tables.cpp - GELU and GELU_QUICK over the 65536 f16 inputs, as ggml's CPU backend
// tabulates them (see activations.h). Each table is built on first use (a function-local
// static, so concurrent first calls are safe) and holds, for every f16 bit pattern h,
// f16(act(f32(h))) widened to f32, so a lookup needs one conversion instead of two.
#include "activations.h"

#include "../vec_dot.h"

#include "quant/fp16.h"

#include <array>
#include <cstdint>

namespace gk::cpu {
namespace {

using f16_table = std::array<float, 1u << 16>;

f16_table tabulate(act_fn act) {
    f16_table t{};
    for (uint32_t h = 0; h < t.size(); ++h) {
        t[h] = fp16_to_fp32(fp32_to_fp16(act(fp16_to_fp32(static_cast<fp16_t>(h)))));
    }
    return t;
}

} // namespace

void f16_table_bits(act_fn act, uint16_t * out) {
    for (uint32_t h = 0; h < (1u << 16); ++h) out[h] = fp32_to_fp16(act(fp16_to_fp32(static_cast<fp16_t>(h))));
}

const float * gelu_f16_table() {
    static const f16_table table = tabulate(act_gelu);
    return table.data();
}

float act_gelu_f16(float x) { return gelu_f16_table()[fp32_to_fp16(x)]; }

void gelu_f32_row(float * y, const float * x, int64_t n, fp16_t * h) {
    get_vec_dot_traits(GK_TYPE_F16)->from_float(x, h, n);
    const float * table = gelu_f16_table();
    for (int64_t i = 0; i < n; ++i) {
        y[i] = gelu_f32_at(x[i], h[i], table);
    }
}

float act_gelu_quick_f16(float x) {
    static const f16_table table = tabulate(act_gelu_quick);
    return table[fp32_to_fp16(x)];
}

} // namespace gk::cpu
