// rows.cpp - the row access of rows.h, over the codec's to_float / from_float (f16 and
// bf16 rows stored by the kernel set's conversion, which writes the codec's bytes).
#include "rows.h"

#include "vec_dot.h"

#include "quant/codec.h"

#include <cstring>

namespace gk::cpu {

bool row_is_direct_f32(const gk_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return t->type == GK_TYPE_F32 && (t->nb[0] == sizeof(float) || t->ne[0] <= 1) &&
           reinterpret_cast<uintptr_t>(element_ptr(t, 0, i1, i2, i3)) % alignof(float) == 0;
}

const float * read_row(const gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * buf) {
    if (row_is_direct_f32(t, i1, i2, i3)) {
        return reinterpret_cast<const float *>(element_ptr(t, 0, i1, i2, i3));
    }
    const auto * tt = quant::get_type_traits(t->type);  // decodable: checked at build time
    if (t->nb[0] == gk_type_size(t->type) && (t->type == GK_TYPE_F16 || t->type == GK_TYPE_BF16)) {
        // the kernel set's widening: the codec's values, vectorised (act_convert.cpp); a
        // flash attention mask's rows are read through here
        get_vec_dot_traits(t->type)->to_float(element_ptr(t, 0, i1, i2, i3), buf, t->ne[0]);
    } else if (t->nb[0] == gk_type_size(t->type)) {
        tt->to_float(element_ptr(t, 0, i1, i2, i3), buf, t->ne[0]);
    } else {
        for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) {
            tt->to_float(element_ptr(t, i0, i1, i2, i3), buf + i0, 1);
        }
    }
    return buf;
}

float * out_row(gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * buf) {
    return row_is_direct_f32(t, i1, i2, i3) ? reinterpret_cast<float *>(element_ptr(t, 0, i1, i2, i3)) : buf;
}

void store_row(gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, const float * row) {
    char * dst = element_ptr(t, 0, i1, i2, i3);
    if (reinterpret_cast<const char *>(row) == dst) {
        return;
    }
    const auto * tt = quant::get_type_traits(t->type);  // encodable: checked at build time
    if (t->nb[0] == gk_type_size(t->type) && (t->type == GK_TYPE_F16 || t->type == GK_TYPE_BF16)) {
        // the kernel set's conversion: the codec's bytes, vectorised (act_convert.cpp); a
        // KV cache's rows are stored through here
        get_vec_dot_traits(t->type)->from_float(row, dst, t->ne[0]);
    } else if (t->nb[0] == gk_type_size(t->type)) {
        tt->from_float(row, dst, t->ne[0], nullptr);
    } else {
        for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) {
            tt->from_float(row + i0, element_ptr(t, i0, i1, i2, i3), 1, nullptr);
        }
    }
}

void store_row_ref(gk_tensor * t, int64_t i1, int64_t i2, int64_t i3, const float * row) {
    const auto * tt = quant::get_type_traits(t->type);
    if (tt->from_float_ref && t->nb[0] == gk_type_size(t->type)) {
        tt->from_float_ref(row, element_ptr(t, 0, i1, i2, i3), t->ne[0]);
        return;
    }
    store_row(t, i1, i2, i3, row);
}

float read_element(const gk_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    float v;
    quant::get_type_traits(t->type)->to_float(element_ptr(t, i0, i1, i2, i3), &v, 1);
    return v;
}

int64_t read_index(const gk_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = element_ptr(t, i0, i1, i2, i3);
    if (t->type == GK_TYPE_I64) {
        int64_t v;
        std::memcpy(&v, p, sizeof(v));
        return v;
    }
    int32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

} // namespace gk::cpu
