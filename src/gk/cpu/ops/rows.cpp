// rows.cpp - get_rows and set_rows. An index outside the table is reported as
// GK_STATUS_OUT_OF_RANGE and nothing is read or written through it.
//
// set_rows encodes a row with the destination type's stored-row encoder where the codec
// has one (store_row_ref: ggml's CPU from_float on x86, so that a quantized KV cache holds
// the bytes llama.cpp's would), else with its row encoder.
//
// get_rows splits by destination row. set_rows splits by destination row too: every
// thread scans all source rows and writes only those whose index falls in its own
// range of destination rows, in source order - so when two source rows name the same
// destination row the later one wins, at every thread count.
#include "../dispatch.h"
#include "../rows.h"

#include <cstring>

namespace gk::cpu {
namespace {

void get_rows(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const gk_tensor * idx  = dst->src[1];
    scratch           w    = p.work();
    float *           buf  = w.floats(a->ne[0]);
    const bool        raw  = dst->type == a->type;  // i32 -> i32: copy the bytes
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        if (p.error->failed()) {
            return;
        }
        const int64_t r = read_index(idx, i1, i2, i3, 0);
        if (r < 0 || r >= a->ne[1]) {
            p.error->set(GK_STATUS_OUT_OF_RANGE, "row index %lld at [%lld, %lld, %lld] is outside [0, %lld)",
                         static_cast<long long>(r), static_cast<long long>(i1), static_cast<long long>(i2),
                         static_cast<long long>(i3), static_cast<long long>(a->ne[1]));
            return;
        }
        if (raw) {
            for (int64_t i0 = 0; i0 < a->ne[0]; ++i0) {
                std::memcpy(element_ptr(dst, i0, i1, i2, i3), element_ptr(a, i0, r, i2, i3), gk_type_size(a->type));
            }
            return;
        }
        const float * x = read_row(a, r, i2, i3, buf);
        store_row(dst, i1, i2, i3, x);
    });
}

void set_rows(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * b    = dst->src[0];
    const gk_tensor * idx  = dst->src[1];
    const int64_t     rows = dst->ne[1];
    const row_range   mine = split_rows(rows, p.ith, p.nth);
    scratch           w    = p.work();
    float *           buf  = w.floats(b->ne[0]);
    for (int64_t i3 = 0; i3 < b->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < b->ne[2]; ++i2) {
            for (int64_t i1 = 0; i1 < b->ne[1]; ++i1) {
                const int64_t r = read_index(idx, i1, i2 % idx->ne[1], i3 % idx->ne[2], 0);
                if (r < 0 || r >= rows) {
                    p.error->set(GK_STATUS_OUT_OF_RANGE,
                                 "row index %lld for source row [%lld, %lld, %lld] is outside [0, %lld)",
                                 static_cast<long long>(r), static_cast<long long>(i1), static_cast<long long>(i2),
                                 static_cast<long long>(i3), static_cast<long long>(rows));
                    return;
                }
                if (r >= mine.begin && r < mine.end) {
                    store_row_ref(dst, r, i2, i3, read_row(b, i1, i2, i3, buf));
                }
            }
        }
    }
}

} // namespace

void register_rows(kernel_table & t) {
    t.ops[GK_OP_GET_ROWS] = {get_rows, nullptr};
    t.ops[GK_OP_SET_ROWS] = {set_rows, nullptr};
}

} // namespace gk::cpu
