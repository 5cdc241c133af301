// backward.cpp - ggml's automatic differentiation entry points on gk's
// (gk_build_backward_expand, gk_graph_reset): where ggml asserts, compat aborts with gk's
// message; ggml_graph_reset(NULL) does nothing, as in ggml.
#include "convert.h"
#include "gk/gk-backend.h"

extern "C" {

void ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * cgraph,
                                struct ggml_tensor ** grad_accs) {
    gk_context * gctx = compat::to_gk(ctx);
    if (gk_build_backward_expand(gctx, compat::to_gk(cgraph), compat::to_gk(grad_accs)) != GK_STATUS_SUCCESS) {
        ggml_abort(__FILE__, __LINE__, "ggml_build_backward_expand: %s", gctx ? gk_last_error(gctx) : "ctx is NULL");
    }
}

void ggml_graph_reset(struct ggml_cgraph * cgraph) {
    if (cgraph && gk_graph_reset(compat::to_gk(cgraph)) != GK_STATUS_SUCCESS) {
        ggml_abort(__FILE__, __LINE__, "ggml_graph_reset: %s", gk_last_error(gk_graph_context(compat::to_gk(cgraph))));
    }
}

}  // extern "C"
