// tensor_info.cpp - the element and byte counts of a tensor, checked for overflow.
#include "context.h"

namespace gk::gguf {
namespace {

std::string shape_string(const tensor_info & t) {
    std::string s = "[";
    for (uint32_t j = 0; j < t.n_dims; ++j) {
        s += (j ? ", " : "") + std::to_string(t.ne[j]);
    }
    return s + "]";
}

} // namespace

std::string size_tensor(tensor_info & t) {
    for (uint32_t j = t.n_dims; j < GK_GGUF_MAX_DIMS; ++j) {
        t.ne[j] = 1;
    }
    // Elements, and strides in elements: the product of the sizes, a zero size counted
    // as one (an empty tensor still has strides), must fit in int64.
    int64_t span = 1;
    for (uint32_t j = 0; j < t.n_dims; ++j) {
        if (__builtin_mul_overflow(span, t.ne[j] ? t.ne[j] : 1, &span)) {
            return "shape " + shape_string(t) + " has more than 2^63-1 elements";
        }
    }
    const int64_t blck = gk_blck_size(t.type);
    if (t.ne[0] % blck != 0) {
        return std::string("row length ne[0] = ") + std::to_string(t.ne[0]) + " is not a multiple of the " +
               gk_type_name(t.type) + " block size " + std::to_string(blck);
    }
    // Bytes: whole blocks per row times rows, a zero size again counted as one, so
    // that the byte strides nb[] fit in int64 too.
    int64_t bytes = 0;
    bool    over  = __builtin_mul_overflow(t.ne[0] / blck, static_cast<int64_t>(gk_type_size(t.type)), &bytes);
    for (uint32_t j = 1; j < t.n_dims && !over; ++j) {
        over = __builtin_mul_overflow(bytes, t.ne[j] ? t.ne[j] : 1, &bytes);
    }
    if (over) {
        return std::string("shape ") + shape_string(t) + " of type " + gk_type_name(t.type) +
               " has more than 2^63-1 bytes";
    }
    t.nelements = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];  // at most `span`: no overflow
    t.nbytes    = t.nelements == 0 ? 0 : static_cast<uint64_t>(bytes);
    return "";
}

} // namespace gk::gguf
