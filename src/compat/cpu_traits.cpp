// cpu_traits.cpp - ggml_get_type_traits_cpu on gk's CPU dot products (src/gk/cpu/vec_dot.h):
// per weight type, the encoder of the activation row (from_float, to vec_dot_type) and the
// dot of a weight row with an activation row - the kernels gk's mul_mat runs, in the active
// kernel set. One row per call (nrows 1); types without a dot have an empty entry.
#include "convert.h"
#include "ggml-cpu.h"

#include "gk/cpu/vec_dot.h"

#include <array>
#include <utility>

namespace {

const gk::cpu::vec_dot_traits * dot_of(int type) { return gk::cpu::get_vec_dot_traits(static_cast<gk_type>(type)); }

template <int Type>
void from_float(const float * x, void * y, int64_t n) {
    dot_of(Type)->from_float(x, y, n);
}

// ggml's vec_dot with its row strides, which matter only for nrc > 1 (never asked: nrows 1).
template <int Type>
void vec_dot(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc) {
    if (nrc != 1) {
        ggml_abort(__FILE__, __LINE__, "vec_dot of %s: nrc %d, but gk's rows are one at a time (nrows 1)",
                   ggml_type_name(static_cast<ggml_type>(Type)), nrc);
    }
    dot_of(Type)->vec_dot(n, s, x, y);
}

template <std::size_t... I>
std::array<ggml_type_traits_cpu, GGML_TYPE_COUNT> make_traits(std::index_sequence<I...>) {
    std::array<ggml_type_traits_cpu, GGML_TYPE_COUNT> out{};
    constexpr ggml_from_float_t encoders[] = {&from_float<static_cast<int>(I)>...};
    constexpr ggml_vec_dot_t    dots[]     = {&vec_dot<static_cast<int>(I)>...};
    for (std::size_t t = 0; t < out.size(); ++t) {
        if (const gk::cpu::vec_dot_traits * d = dot_of(static_cast<int>(t))) {
            out[t] = {encoders[t], dots[t], compat::to_ggml(d->vec_dot_type), 1};
        }
    }
    return out;
}

} // namespace

extern "C" {

const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type type) {
    static const std::array<ggml_type_traits_cpu, GGML_TYPE_COUNT> traits =
        make_traits(std::make_index_sequence<GGML_TYPE_COUNT>{});
    if (static_cast<unsigned>(type) >= GGML_TYPE_COUNT) {
        ggml_abort(__FILE__, __LINE__, "ggml_get_type_traits_cpu: type %d out of range", static_cast<int>(type));
    }
    return &traits[static_cast<std::size_t>(type)];
}

} // extern "C"
