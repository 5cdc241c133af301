// cpu_traits.cpp - ggml_get_type_traits_cpu on gk's CPU kernels: per type, from_float
// encodes f32 into that type as ggml's CPU backend does when it stores a row (ggml's
// meaning: traits[vec_dot_type].from_float converts activations) - gk's activation encoder
// for a type that is its own vec_dot_type (f32, f16, bf16, q8_0, ...), else the codec's
// CPU row encoder (`from_float_ref`: ggml's) or its file encoder; vec_dot is the dot of a
// weight row with an activation row that gk's mul_mat runs (src/gk/cpu/vec_dot.h). One
// row per call (nrows 1); a type without a dot has no vec_dot.
#include "convert.h"
#include "ggml-cpu.h"

#include "gk/cpu/vec_dot.h"
#include "quant/codec.h"

#include <array>
#include <utility>

namespace {

const gk::cpu::vec_dot_traits * dot_of(int type) { return gk::cpu::get_vec_dot_traits(static_cast<gk_type>(type)); }

/// gk's activation encoder into `type`: that of a type whose dot takes `type` (the type
/// itself first: q8_0's own), or nullptr when no dot takes it.
gk::cpu::act_from_float_fn act_encoder(int type) {
    const gk::cpu::vec_dot_traits * own = dot_of(type);
    if (own && own->vec_dot_type == static_cast<gk_type>(type)) {
        return own->from_float;
    }
    for (int w = 0; w < GK_TYPE_COUNT; ++w) {
        const gk::cpu::vec_dot_traits * d = dot_of(w);
        if (d && d->vec_dot_type == static_cast<gk_type>(type)) {
            return d->from_float;
        }
    }
    return nullptr;
}

template <int Type>
void from_float(const float * x, void * y, int64_t n) {
    static const gk::cpu::act_from_float_fn act = act_encoder(Type);
    if (act) {
        act(x, y, n);
        return;
    }
    const gk::quant::type_traits * q = gk::quant::get_type_traits(Type);
    if (q->from_float_ref) {
        q->from_float_ref(x, y, n);
    } else {
        q->from_float(x, y, n, nullptr);
    }
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
        const gk::quant::type_traits * q = gk::quant::get_type_traits(static_cast<int>(t));
        // As ggml: no row encoder for the types that need an importance matrix.
        const bool needs_imatrix = t == GGML_TYPE_IQ2_XXS || t == GGML_TYPE_IQ2_XS || t == GGML_TYPE_IQ1_S ||
                                   t == GGML_TYPE_IQ1_M;
        out[t].from_float =
            !needs_imatrix && (act_encoder(static_cast<int>(t)) || (q && q->from_float)) ? encoders[t] : nullptr;
        if (const gk::cpu::vec_dot_traits * d = dot_of(static_cast<int>(t))) {
            out[t].vec_dot      = dots[t];
            out[t].vec_dot_type = compat::to_ggml(d->vec_dot_type);
            out[t].nrows        = 1;
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
