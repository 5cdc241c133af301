// set.cpp - set and acc (b written or added into a view of a, op_params i32 nb1, nb2,
// nb3, offset, inplace) and add1 (a plus a scalar).
//
// set / acc split a's elements (dst is a's shape, contiguous) into one range per thread;
// a thread copies a's values of its range into dst (unless in place) and then walks b's
// rows, writing the part of each view row that falls in its range. The builder checked
// that view rows never overlap, so each element gets at most one value from b and every
// element of dst is written by exactly one thread.
#include "../dispatch.h"
#include "../rows.h"

#include <algorithm>
#include <cstring>

namespace gk::cpu {
namespace {

template <bool Acc>
void write_view(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a      = dst->src[0];
    const gk_tensor * b      = dst->src[1];
    const int64_t     esz    = static_cast<int64_t>(gk_type_size(dst->type));
    const int64_t     nb[4]  = {esz, gk_get_op_params_i32(dst, 0), gk_get_op_params_i32(dst, 1),
                                gk_get_op_params_i32(dst, 2)};
    const int64_t     offset = gk_get_op_params_i32(dst, 3);
    const row_range   mine   = split_rows(gk_nelements(dst), p.ith, p.nth);
    auto *            out    = static_cast<char *>(dst->data);
    const auto *      in     = static_cast<const char *>(a->data);
    if (out != in && mine.end > mine.begin) {
        std::memcpy(out + mine.begin * esz, in + mine.begin * esz, static_cast<size_t>((mine.end - mine.begin) * esz));
    }
    for (int64_t i3 = 0; i3 < b->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < b->ne[2]; ++i2) {
            for (int64_t i1 = 0; i1 < b->ne[1]; ++i1) {
                const int64_t first = (offset + i1 * nb[1] + i2 * nb[2] + i3 * nb[3]) / esz;  // element index in a
                const int64_t lo    = std::max(first, mine.begin);
                const int64_t hi    = std::min(first + b->ne[0], mine.end);
                for (int64_t e = lo; e < hi; ++e) {
                    if (Acc) {
                        float x;
                        std::memcpy(&x, in + e * esz, sizeof(x));
                        x += read_element(b, e - first, i1, i2, i3);
                        std::memcpy(out + e * esz, &x, sizeof(x));
                    } else {
                        std::memcpy(out + e * esz, element_ptr(b, e - first, i1, i2, i3), static_cast<size_t>(esz));
                    }
                }
            }
        }
    }
}

void add1(const compute_params & p, gk_tensor * dst) {
    const float s = read_element(dst->src[1], 0, 0, 0, 0);
    map_rows(p, dst, [s](float x, int64_t, int64_t) { return x + s; });
}

} // namespace

void register_set(kernel_table & t) {
    t.ops[GK_OP_SET]  = {write_view<false>, nullptr};
    t.ops[GK_OP_ACC]  = {write_view<true>, nullptr};
    t.ops[GK_OP_ADD1] = {add1, nullptr};
}

} // namespace gk::cpu
