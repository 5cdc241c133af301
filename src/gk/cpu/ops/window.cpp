// window.cpp - SAM's windowed-attention ops: win_part, win_unpart, get_rel_pos (element
// copies) and add_rel_pos. All split by destination row.
#include "../dispatch.h"
#include "../rows.h"

#include <cstring>

namespace gk::cpu {
namespace {

void copy_row(gk_tensor * dst, int64_t i1, int64_t i2, int64_t i3, const gk_tensor * src, int64_t j1, int64_t j2,
              int64_t j3) {
    const size_t esz = gk_type_size(dst->type);
    for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
        std::memcpy(element_ptr(dst, i0, i1, i2, i3), element_ptr(src, i0, j1, j2, j3), esz);
    }
}

/// Window p = py*npx + px of dst [C, w, w, npx*npy]: dst[c, i1, i2, p] = a[c, px*w + i1,
/// py*w + i2], zero (all-zero bytes) past a's edge.
void win_part(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a   = dst->src[0];
    const int64_t     npx = gk_get_op_params_i32(dst, 0);
    const int64_t     w   = gk_get_op_params_i32(dst, 2);
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int64_t j1 = (i3 % npx) * w + i1, j2 = (i3 / npx) * w + i2;
        if (j1 < a->ne[1] && j2 < a->ne[2]) {
            copy_row(dst, i1, i2, i3, a, j1, j2, 0);
        } else {
            for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
                std::memset(element_ptr(dst, i0, i1, i2, i3), 0, gk_type_size(dst->type));
            }
        }
    });
}

/// dst [C, w0, h0]: dst[c, i1, i2] = a[c, i1 % w, i2 % w, (i2 / w) * ceil(w0 / w) + i1 / w].
void win_unpart(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a   = dst->src[0];
    const int64_t     w   = gk_get_op_params_i32(dst, 0);
    const int64_t     npx = (dst->ne[1] + w - 1) / w;
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t) {
        copy_row(dst, i1, i2, 0, a, i1 % w, i2 % w, (i2 / w) * npx + i1 / w);
    });
}

/// dst [C, kh, qh]: dst[c, k, q] = a[c, (kh - 1 - k) + q].
void get_rel_pos(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a = dst->src[0];
    for_each_row(p, dst,
                 [&](int64_t k, int64_t q, int64_t) { copy_row(dst, k, q, 0, a, dst->ne[1] - 1 - k + q, 0, 0); });
}

/// a viewed as [kw, kh, q, n] (kw, kh < k = pw->ne[0]; row (q, n) of a is one query):
/// dst[kw, kh, q, n] = a + ph[kh, q, n] + pw[kw, q, n], the two terms added in ggml's
/// order (ph first when kh <= kw).
void add_rel_pos(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a  = dst->src[0];
    const auto *      pw = static_cast<const float *>(dst->src[1]->data);
    const auto *      ph = static_cast<const float *>(dst->src[2]->data);
    const int64_t     k  = dst->src[1]->ne[0];
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t) {
        const auto *  x   = reinterpret_cast<const float *>(element_ptr(a, 0, i1, i2, 0));
        auto *        y   = reinterpret_cast<float *>(element_ptr(dst, 0, i1, i2, 0));
        const int64_t row = (i2 * a->ne[1] + i1) * k;  // this query's k entries of pw and ph
        for (int64_t kh = 0; kh < k; ++kh) {
            for (int64_t kw = 0; kw < k; ++kw) {
                const float h = ph[row + kh], v = pw[row + kw], x0 = x[kh * k + kw];
                y[kh * k + kw] = kh <= kw ? (x0 + h) + v : (x0 + v) + h;
            }
        }
    });
}

} // namespace

void register_window(kernel_table & t) {
    t.ops[GK_OP_WIN_PART]    = {win_part, nullptr};
    t.ops[GK_OP_WIN_UNPART]  = {win_unpart, nullptr};
    t.ops[GK_OP_GET_REL_POS] = {get_rel_pos, nullptr};
    t.ops[GK_OP_ADD_REL_POS] = {add_rel_pos, nullptr};
}

} // namespace gk::cpu
