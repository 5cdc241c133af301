// decode.cpp - a tensor's data decoded to f32 through the codec (src/quant).
#include "context.h"
#include "quant/codec.h"

namespace gk::gguf {

void tensor_to_f32(const gk::gguf::tensor_info & t, float * dst, int64_t n_dst) {
    if (n_dst != t.nelements) {
        fail(GK_GGUF_ERR_ARG, "tensor " + quoted(t.name) + " has " + std::to_string(t.nelements) +
                                  " elements, the destination holds " + std::to_string(n_dst));
    }
    const gk::quant::type_traits * tt = gk::quant::get_type_traits(t.type);
    if (!tt || !tt->to_float) {
        fail(GK_GGUF_ERR_CODEC, std::string("no decoder for ") + gk_type_name(t.type));
    }
    if (t.nelements == 0) {
        return;
    }
    if (!gk::quant::dequantize_rows(t.type, t.data(), dst, t.nelements / t.ne[0], t.ne[0])) {
        fail(GK_GGUF_ERR_CODEC, std::string("cannot decode ") + gk_type_name(t.type) + " tensor " + quoted(t.name));
    }
}

} // namespace gk::gguf
