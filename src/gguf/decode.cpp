// decode.cpp - rows of a tensor decoded to f32 through the codec (src/quant).
#include "context.h"
#include "quant/codec.h"

namespace gk::gguf {

int64_t tensor_rows(const tensor_info & t) { return t.ne[1] * t.ne[2] * t.ne[3]; }

void tensor_to_f32(const tensor_info & t, int64_t first_row, int64_t n_rows, float * dst) {
    const int64_t rows = tensor_rows(t);
    if (first_row < 0 || n_rows < 0 || first_row > rows || n_rows > rows - first_row) {
        fail(GK_GGUF_ERR_ARG, "rows " + std::to_string(first_row) + " + " + std::to_string(n_rows) + " of tensor " +
                                  quoted(t.name) + " are outside its " + std::to_string(rows) + " rows");
    }
    const gk::quant::type_traits * tt = gk::quant::get_type_traits(t.type);
    if (!tt || !tt->to_float) {
        fail(GK_GGUF_ERR_CODEC, std::string("no decoder for ") + gk_type_name(t.type));
    }
    if (n_rows == 0 || t.ne[0] == 0) {
        return;
    }
    if (!t.data()) {
        fail(GK_GGUF_ERR_ARG, "tensor " + quoted(t.name) + " has no data (not set since it was added or retyped)");
    }
    const uint8_t * src = t.data() + static_cast<uint64_t>(first_row) * gk_row_size(t.type, t.ne[0]);
    if (!gk::quant::dequantize_rows(t.type, src, dst, n_rows, t.ne[0])) {
        fail(GK_GGUF_ERR_CODEC, std::string("cannot decode ") + gk_type_name(t.type) + " tensor " + quoted(t.name));
    }
}

} // namespace gk::gguf
