// graph.cpp - ggml's graph functions that gk's graph API gives in another form: the
// edits (build_forward_order; add_node, cpy, dup: gk reports a full graph with false,
// ggml asserts), and the printouts (ggml_graph_print through ggml's log callback,
// ggml_graph_dump_dot).
#include "convert.h"

#include <cinttypes>
#include <cstdio>

using compat::log_info;
using compat::to_ggml;
using compat::to_gk;

extern "C" {

// gk has no per-node compute flag: the tensor and its new sources join the graph as
// ggml_build_forward_expand adds them, and are computed (ggml leaves them out of the
// compute set unless a later expand reaches them; mtmd's clip orders q, k, v this way, and
// expands their users right after, so the same nodes run).
void ggml_build_forward_order(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    ggml_build_forward_expand(cgraph, tensor);
}

void ggml_graph_add_node(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    if (!gk_graph_add_node(to_gk(cgraph), to_gk(tensor))) {
        ggml_abort(__FILE__, __LINE__, "ggml_graph_add_node: graph of size %d is full (or the tensor is NULL)",
                   gk_graph_size(to_gk(cgraph)));
    }
}

void ggml_graph_cpy(struct ggml_cgraph * src, struct ggml_cgraph * dst) {
    if (gk_graph_cpy(to_gk(src), to_gk(dst)) != GK_STATUS_SUCCESS) {
        ggml_abort(__FILE__, __LINE__, "ggml_graph_cpy: %s",
                   dst ? gk_last_error(gk_graph_context(to_gk(dst))) : "no destination graph");
    }
}

struct ggml_cgraph * ggml_graph_dup(struct ggml_context * ctx, struct ggml_cgraph * cgraph, bool force_grads) {
    gk_cgraph * g = gk_graph_dup(to_gk(ctx), to_gk(cgraph), force_grads);
    if (!g) {
        ggml_abort(__FILE__, __LINE__, "ggml_graph_dup: %s", gk_last_error(to_gk(ctx)));
    }
    return to_ggml(g);
}

// ggml's layout of the listing: nodes with three dimensions and op name, then leafs.
void ggml_graph_print(const struct ggml_cgraph * cgraph) {
    const gk_cgraph * g = to_gk(cgraph);
    log_info("=== GRAPH ===\n");
    log_info("n_nodes = %d\n", gk_graph_n_nodes(g));
    for (int i = 0; i < gk_graph_n_nodes(g); ++i) {
        const gk_tensor * t = gk_graph_node(g, i);
        log_info(" - %3d: [ %5" PRId64 ", %5" PRId64 ", %5" PRId64 "] %16s %s\n", i, t->ne[0], t->ne[1], t->ne[2],
                 gk_op_name(t->op), (t->flags & GK_TENSOR_FLAG_PARAM) ? "x" : " ");
    }
    log_info("n_leafs = %d\n", gk_graph_n_leafs(g));
    for (int i = 0; i < gk_graph_n_leafs(g); ++i) {
        const gk_tensor * t = gk_graph_leaf(g, i);
        log_info(" - %3d: [ %5" PRId64 ", %5" PRId64 "] %8s %16s\n", i, t->ne[0], t->ne[1], gk_op_name(t->op), t->name);
    }
    log_info("========================================\n");
}

// Graphviz: one record per node (name, op, shape, type) and leaf (name, shape, type), an
// edge from each source to its user labelled with the source slot. gb (the backward graph
// in ggml) is only read for its nodes too.
void ggml_graph_dump_dot(const struct ggml_cgraph * gb, const struct ggml_cgraph * cgraph, const char * filename) {
    FILE * f = filename ? std::fopen(filename, "w") : nullptr;
    if (!f) {
        log_info("ggml_graph_dump_dot: cannot open %s\n", filename ? filename : "(null)");
        return;
    }
    std::fprintf(f, "digraph G {\n  newrank = true;\n  rankdir = TB;\n");
    const gk_cgraph * graphs[2] = {to_gk(cgraph), gb && gb != cgraph ? to_gk(gb) : nullptr};
    for (const gk_cgraph * g : graphs) {
        for (int i = 0; g && i < gk_graph_n_nodes(g); ++i) {
            const gk_tensor * t = gk_graph_node(g, i);
            std::fprintf(f,
                         "  \"%p\" [style = filled; fillcolor = white; shape = record; label=\"%s|%s|[%" PRId64
                         ", %" PRId64 ", %" PRId64 ", %" PRId64 "] %s\"; ]\n",
                         static_cast<const void *>(t), t->name, gk_op_name(t->op), t->ne[0], t->ne[1], t->ne[2],
                         t->ne[3], gk_type_name(t->type));
            for (int s = 0; s < GK_MAX_SRC; ++s) {
                if (t->src[s]) {
                    std::fprintf(f, "  \"%p\" -> \"%p\" [ label = \"%d\"; ]\n", static_cast<const void *>(t->src[s]),
                                 static_cast<const void *>(t), s);
                }
            }
        }
        for (int i = 0; g && i < gk_graph_n_leafs(g); ++i) {
            const gk_tensor * t = gk_graph_leaf(g, i);
            std::fprintf(f,
                         "  \"%p\" [style = filled; fillcolor = pink; shape = record; label=\"<x>%s|[%" PRId64
                         ", %" PRId64 "] %s\"; ]\n",
                         static_cast<const void *>(t), t->name, t->ne[0], t->ne[1], gk_type_name(t->type));
        }
    }
    std::fprintf(f, "}\n");
    std::fclose(f);
    log_info("%s: dot -Tpng %s -o %s.png && open %s.png\n", "ggml_graph_dump_dot", filename, filename, filename);
}

} // extern "C"
