// buffer.cpp - ggml's buffer rules that gk's buffers do not share: a 0-byte buffer (ggml's
// placeholder, which llama.cpp's no_alloc model load makes and checks) has no base.
#include "convert.h"

extern "C" {

void * ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer) {
    if (!buffer) {
        ggml_abort(__FILE__, __LINE__, "ggml_backend_buffer_get_base: buffer is NULL");
    }
    gk_backend_buffer_t b = compat::to_gk(buffer);
    return gk_backend_buffer_get_size(b) == 0 ? nullptr : gk_backend_buffer_get_base(b);
}

} // extern "C"
