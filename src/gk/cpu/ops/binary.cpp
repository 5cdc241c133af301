// binary.cpp - add, sub, mul, div with b broadcast to a, and add_id (a row of b chosen per row
// of a by ids). Split by destination row:
// row (i1, i2, i3) of dst reads row (i1, i2, i3) of a and row (i1 % b.ne1, i2 % b.ne2,
// i3 % b.ne3) of b, element i0 of b being i0 % b.ne0.
#include "../dispatch.h"
#include "../rows.h"

namespace gk::cpu {
namespace {

float op_add(float x, float y) { return x + y; }
float op_sub(float x, float y) { return x - y; }
float op_mul(float x, float y) { return x * y; }
float op_div(float x, float y) { return x / y; }

template <float (*Op)(float, float)>
void binary(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * a    = dst->src[0];
    const gk_tensor * b    = dst->src[1];
    scratch           w    = p.work();
    float *           abuf = w.floats(a->ne[0]);
    float *           bbuf = w.floats(b->ne[0]);
    float *           ybuf = w.floats(dst->ne[0]);
    const int64_t     n    = dst->ne[0];
    const int64_t     nb0  = b->ne[0];
    for_each_row(p, dst, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float * x = read_row(a, i1, i2, i3, abuf);
        const float * y = read_row(b, i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3], bbuf);
        float *       z = out_row(dst, i1, i2, i3, ybuf);
        if (nb0 == n) {
            for (int64_t i = 0; i < n; ++i) {
                z[i] = Op(x[i], y[i]);
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                z[i] = Op(x[i], y[i % nb0]);
            }
        }
        store_row(dst, i1, i2, i3, z);
    });
}

/// Row (i1, i2, i3) of a plus row ids[i1, i2] of b (an id outside b's rows fails the compute).
void add_id(const compute_params & p, gk_tensor * dst) {
    const gk_tensor * b    = dst->src[1];
    const gk_tensor * ids  = dst->src[2];
    scratch           w    = p.work();
    float *           bbuf = w.floats(b->ne[0]);
    transform_rows(p, w, dst, [&](const float * x, float * z, int64_t i1, int64_t i2, int64_t) {
        const int64_t id = read_index(ids, i1, i2, 0, 0);
        if (id < 0 || id >= b->ne[1]) {
            p.error->set(GK_STATUS_OUT_OF_RANGE, "add_id: id %lld outside [0, %lld)", static_cast<long long>(id),
                         static_cast<long long>(b->ne[1]));
            for (int64_t i = 0; i < dst->ne[0]; ++i) {
                z[i] = 0.0f;
            }
            return;
        }
        const float * y = read_row(b, id, 0, 0, bbuf);
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            z[i] = x[i] + y[i];
        }
    });
}

} // namespace

void register_binary(kernel_table & t) {
    t.ops[GK_OP_ADD_ID] = {add_id, nullptr};
    t.ops[GK_OP_ADD] = {binary<op_add>, nullptr};
    t.ops[GK_OP_SUB] = {binary<op_sub>, nullptr};
    t.ops[GK_OP_MUL] = {binary<op_mul>, nullptr};
    t.ops[GK_OP_DIV] = {binary<op_div>, nullptr};
}

} // namespace gk::cpu
