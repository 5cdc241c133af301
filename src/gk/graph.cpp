// graph.cpp - compute graphs: the node and leaf lists, a visited set, and the
// topological walk of gk_build_forward_expand, and the edits of ggml's graph API (add_node, cpy, dup).
//
// The walk is an iterative depth-first post-order over src[0..GK_MAX_SRC) with an
// explicit stack, so its depth is bounded by the graph's size and not by the machine
// stack. Everything a graph needs lives in one arena object sized at creation:
//   struct | nodes[size] | leafs[size] | visited hash[hash_size] | stack[2*size]
#include "graph.h"

#include "internal.h"

#include <climits>
#include <cstring>
#include <new>

namespace gk {
namespace {

/// Smallest power of two >= 4*size (the visited set is at most half full: it holds at
/// most the 2*size nodes and leafs).
size_t hash_size_for(size_t size) {
    size_t n = 16;
    while (n < 4 * size) {
        n *= 2;
    }
    return n;
}

size_t graph_bytes(size_t size) {
    return sizeof(gk_cgraph) + 2 * size * sizeof(gk_tensor *) + hash_size_for(size) * sizeof(gk_tensor *) +
           2 * size * sizeof(graph_frame);
}

size_t hash_slot(const gk_cgraph * g, const gk_tensor * t) {
    const uint64_t h = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t)) >> 4) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> 17) & (g->hash_size - 1);
}

/// Insert t into the visited set; false when it was already there.
bool visit(gk_cgraph * g, const gk_tensor * t) {
    for (size_t i = hash_slot(g, t);; i = (i + 1) & (g->hash_size - 1)) {
        if (g->hash[i] == t) {
            return false;
        }
        if (!g->hash[i]) {
            g->hash[i] = t;
            return true;
        }
    }
}

void rebuild_visited(gk_cgraph * g) {
    std::memset(g->hash, 0, g->hash_size * sizeof(g->hash[0]));
    for (int i = 0; i < g->n_nodes; ++i) {
        visit(g, g->nodes[i]);
    }
    for (int i = 0; i < g->n_leafs; ++i) {
        visit(g, g->leafs[i]);
    }
}

bool is_leaf(const gk_tensor * t) { return t->op == GK_OP_NONE && !(t->flags & GK_TENSOR_FLAG_PARAM); }

} // namespace
} // namespace gk

using gk::graph_frame;

extern "C" {

size_t gk_graph_overhead_custom(size_t size, bool grads) { return gk::arena_cost(gk::graph_bytes(size)); }

size_t gk_graph_overhead(void) { return gk_graph_overhead_custom(GK_DEFAULT_GRAPH_SIZE, false); }

gk_cgraph * gk_new_graph_custom(gk_context * ctx, size_t size, bool grads) {
    if (!ctx) {
        return nullptr;
    }
    if (grads) {
        gk::set_error(ctx, "new graph: gradients are not supported");
        return nullptr;
    }
    if (size == 0 || size > INT_MAX / 4) {
        gk::set_error(ctx, "new graph: size %zu is out of range (1..%d)", size, INT_MAX / 4);
        return nullptr;
    }
    auto * mem = static_cast<unsigned char *>(gk::arena_alloc(ctx, gk_object::graph, gk::graph_bytes(size)));
    if (!mem) {
        return nullptr;
    }
    auto * g      = new (mem) gk_cgraph{};
    g->ctx        = ctx;
    g->size       = static_cast<int>(size);
    g->hash_size  = gk::hash_size_for(size);
    auto * cursor = mem + sizeof(gk_cgraph);
    g->nodes      = reinterpret_cast<gk_tensor **>(cursor);
    g->leafs      = g->nodes + size;
    g->hash       = const_cast<const gk_tensor **>(g->leafs + size);
    g->stack      = reinterpret_cast<graph_frame *>(g->hash + g->hash_size);
    std::memset(g->hash, 0, g->hash_size * sizeof(g->hash[0]));
    return g;
}

gk_cgraph * gk_new_graph(gk_context * ctx) { return gk_new_graph_custom(ctx, GK_DEFAULT_GRAPH_SIZE, false); }

gk_status gk_build_forward_expand(gk_cgraph * g, gk_tensor * tensor) {
    if (!g) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (!tensor) {
        if (gk_last_error(g->ctx)[0] == '\0') {
            gk::set_error(g->ctx, "build_forward_expand: tensor is NULL");
        }
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (!gk::visit(g, tensor)) {
        return GK_STATUS_SUCCESS;
    }
    const int n_nodes0    = g->n_nodes;
    const int n_leafs0    = g->n_leafs;
    const int stack_limit = 2 * g->size;
    int       depth       = 0;
    g->stack[depth++]     = {tensor, 0};
    while (depth > 0) {
        graph_frame & top = g->stack[depth - 1];
        gk_tensor *   next = nullptr;
        while (top.next_src < GK_MAX_SRC && !next) {
            gk_tensor * s = top.t->src[top.next_src++];
            if (s && gk::visit(g, s)) {
                next = s;
            }
        }
        if (next) {
            if (depth == stack_limit) {
                break;  // more new tensors than the graph can hold
            }
            g->stack[depth++] = {next, 0};
            continue;
        }
        gk_tensor * done = top.t;
        const bool  leaf = gk::is_leaf(done);
        if ((leaf ? g->n_leafs : g->n_nodes) == g->size) {
            break;
        }
        (leaf ? g->leafs[g->n_leafs++] : g->nodes[g->n_nodes++]) = done;
        --depth;
    }
    if (depth > 0) {
        g->n_nodes = n_nodes0;
        g->n_leafs = n_leafs0;
        gk::rebuild_visited(g);
        gk::set_error(g->ctx, "build_forward_expand: graph of size %d is too small for '%s' and its sources", g->size,
                      tensor->name);
        return GK_STATUS_INVALID_ARGUMENT;
    }
    return GK_STATUS_SUCCESS;
}

int gk_graph_size(const gk_cgraph * g) { return g ? g->size : 0; }

int gk_graph_n_nodes(const gk_cgraph * g) { return g ? g->n_nodes : 0; }

gk_tensor * gk_graph_node(const gk_cgraph * g, int i) {
    if (!g) {
        return nullptr;
    }
    if (i < 0) {
        i += g->n_nodes;
    }
    return i >= 0 && i < g->n_nodes ? g->nodes[i] : nullptr;
}

gk_tensor ** gk_graph_nodes(const gk_cgraph * g) { return g ? g->nodes : nullptr; }

int gk_graph_n_leafs(const gk_cgraph * g) { return g ? g->n_leafs : 0; }

gk_tensor * gk_graph_leaf(const gk_cgraph * g, int i) {
    return g && i >= 0 && i < g->n_leafs ? g->leafs[i] : nullptr;
}

gk_tensor * gk_graph_get_tensor(const gk_cgraph * g, const char * name) {
    if (!g || !name) {
        return nullptr;
    }
    for (int i = 0; i < g->n_leafs; ++i) {
        if (std::strcmp(g->leafs[i]->name, name) == 0) {
            return g->leafs[i];
        }
    }
    for (int i = 0; i < g->n_nodes; ++i) {
        if (std::strcmp(g->nodes[i]->name, name) == 0) {
            return g->nodes[i];
        }
    }
    return nullptr;
}

void gk_graph_clear(gk_cgraph * g) {
    if (g) {
        g->n_nodes = 0;
        g->n_leafs = 0;
        gk::rebuild_visited(g);
    }
}

gk_context * gk_graph_context(const gk_cgraph * g) { return g ? g->ctx : nullptr; }


bool gk_graph_add_node(gk_cgraph * g, gk_tensor * tensor) {
    if (!g || !tensor || g->n_nodes == g->size) {
        return false;
    }
    g->nodes[g->n_nodes++] = tensor;
    return true;
}

bool gk_graph_cpy(const gk_cgraph * src, gk_cgraph * dst) {
    if (!src || !dst || src->n_nodes > dst->size || src->n_leafs > dst->size || dst->hash_size < src->hash_size) {
        return false;
    }
    if (src == dst) {
        return true;
    }
    dst->n_nodes = src->n_nodes;
    dst->n_leafs = src->n_leafs;
    std::memcpy(dst->nodes, src->nodes, static_cast<size_t>(src->n_nodes) * sizeof(src->nodes[0]));
    std::memcpy(dst->leafs, src->leafs, static_cast<size_t>(src->n_leafs) * sizeof(src->leafs[0]));
    std::memset(dst->hash, 0, dst->hash_size * sizeof(dst->hash[0]));
    for (size_t i = 0; i < src->hash_size; ++i) {  // the visited set as it is (add_node's nodes are not in it)
        if (src->hash[i]) {
            gk::visit(dst, src->hash[i]);
        }
    }
    return true;
}

gk_cgraph * gk_graph_dup(gk_context * ctx, const gk_cgraph * src) {
    if (!src) {
        return nullptr;
    }
    gk_cgraph * g = gk_new_graph_custom(ctx, static_cast<size_t>(src->size), false);
    return g && gk_graph_cpy(src, g) ? g : nullptr;
}

} // extern "C"
