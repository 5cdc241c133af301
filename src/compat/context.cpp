// context.cpp - ggml's context functions that gk's context API gives in another form: raw
// arena memory that aborts when it does not fit (ggml_new_buffer) and the arena printouts
// (ggml_print_object(s), through ggml's log callback as ggml's GGML_LOG_INFO).
#include "convert.h"

using compat::log_info;
using compat::to_ggml;
using compat::to_gk;

extern "C" {

void * ggml_new_buffer(struct ggml_context * ctx, size_t nbytes) {
    void * p = gk_new_buffer(to_gk(ctx), nbytes);
    if (!p) {
        ggml_abort(__FILE__, __LINE__, "ggml_new_buffer: %s", ctx ? gk_last_error(to_gk(ctx)) : "no context");
    }
    return p;
}

// A compat ggml_object is gk's arena object header: ggml_print_objects' walk gives them.
void ggml_print_object(const struct ggml_object * obj) {
    const gk_object_info info = gk_object_get_info(to_gk(obj));
    log_info(" - ggml_object: type = %d, offset = %zu, size = %zu, next = %p\n", static_cast<int>(info.kind), info.offs,
             info.size, static_cast<const void *>(info.next));
}

void ggml_print_objects(const struct ggml_context * ctx) {
    log_info("ggml_print_objects: objects in context %p:\n", static_cast<const void *>(ctx));
    for (const gk_object * obj = gk_get_first_object(to_gk(ctx)); obj; obj = gk_object_get_info(obj).next) {
        ggml_print_object(to_ggml(obj));
    }
    log_info("ggml_print_objects: --- end ---\n");
}

} // extern "C"
