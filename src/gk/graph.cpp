// graph.cpp - compute graphs: the node and leaf lists, a visited set, and the
// topological walk of gk_build_forward_expand, and the edits of ggml's graph API (add_node, cpy, dup).
//
// The walk is an iterative depth-first post-order over src[0..GK_MAX_SRC) with an
// explicit stack, so its depth is bounded by the graph's size and not by the machine
// stack. Everything a graph needs lives in one arena object sized at creation:
//   struct | nodes[size] | leafs[size] | visited hash[hash_size] | stack[2*size]
//          | grads[hash_size] | grad_accs[hash_size]   (a graph with gradients only)
#include "graph.h"

#include "internal.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

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

size_t graph_bytes(size_t size, bool grads) {
    return sizeof(gk_cgraph) + 2 * size * sizeof(gk_tensor *) + hash_size_for(size) * sizeof(gk_tensor *) +
           2 * size * sizeof(graph_frame) + (grads ? 2 * hash_size_for(size) * sizeof(gk_tensor *) : 0);
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

/// One key's gradients, kept across a rebuild of the visited set (which moves slots).
struct kept_grad {
    const gk_tensor * key;
    gk_tensor *       grad;
    gk_tensor *       grad_acc;
};

/// The visited set refilled from the node and leaf lists; the gradients of the keys that
/// are still in the graph move with them to their new slots.
void rebuild_visited(gk_cgraph * g) {
    std::vector<kept_grad> kept;
    if (g->grads) {
        for (size_t i = 0; i < g->hash_size; ++i) {
            if (g->hash[i] && (g->grads[i] || g->grad_accs[i])) {
                kept.push_back({g->hash[i], g->grads[i], g->grad_accs[i]});
            }
        }
        std::memset(g->grads, 0, g->hash_size * sizeof(g->grads[0]));
        std::memset(g->grad_accs, 0, g->hash_size * sizeof(g->grad_accs[0]));
    }
    std::memset(g->hash, 0, g->hash_size * sizeof(g->hash[0]));
    for (int i = 0; i < g->n_nodes; ++i) {
        visit(g, g->nodes[i]);
    }
    for (int i = 0; i < g->n_leafs; ++i) {
        visit(g, g->leafs[i]);
    }
    for (const kept_grad & k : kept) {
        const size_t slot = graph_slot(g, k.key);
        if (slot != SIZE_MAX) {
            g->grads[slot]     = k.grad;
            g->grad_accs[slot] = k.grad_acc;
        }
    }
}

bool is_leaf(const gk_tensor * t) { return t->op == GK_OP_NONE && !(t->flags & GK_TENSOR_FLAG_PARAM); }

} // namespace

size_t graph_slot(const gk_cgraph * g, const gk_tensor * t) {
    for (size_t i = hash_slot(g, t);; i = (i + 1) & (g->hash_size - 1)) {
        if (g->hash[i] == t) {
            return i;
        }
        if (!g->hash[i]) {
            return SIZE_MAX;
        }
    }
}

void graph_truncate(gk_cgraph * g, int n_nodes, int n_leafs) {
    g->n_nodes = n_nodes;
    g->n_leafs = n_leafs;
    rebuild_visited(g);
}

} // namespace gk

using gk::graph_frame;

extern "C" {

size_t gk_graph_overhead_custom(size_t size, bool grads) {
    // A size gk_new_graph_custom refuses has no cost to give (and 4 * size would wrap).
    return size > INT_MAX / 4 ? SIZE_MAX : gk::arena_cost(gk::graph_bytes(size, grads));
}

size_t gk_graph_overhead(void) { return gk_graph_overhead_custom(GK_DEFAULT_GRAPH_SIZE, false); }

gk_cgraph * gk_new_graph_custom(gk_context * ctx, size_t size, bool grads) {
    if (!ctx) {
        return nullptr;
    }
    if (size == 0 || size > INT_MAX / 4) {
        gk::set_error(ctx, "new graph: size %zu is out of range (1..%d)", size, INT_MAX / 4);
        return nullptr;
    }
    auto * mem = static_cast<unsigned char *>(gk::arena_alloc(ctx, gk_object::graph, gk::graph_bytes(size, grads)));
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
    if (grads) {
        g->grads     = reinterpret_cast<gk_tensor **>(g->stack + 2 * size);
        g->grad_accs = g->grads + g->hash_size;
        std::memset(g->grads, 0, 2 * g->hash_size * sizeof(g->grads[0]));
    }
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
        gk::graph_truncate(g, n_nodes0, n_leafs0);
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

gk_status gk_graph_cpy(const gk_cgraph * src, gk_cgraph * dst) {
    if (!src || !dst) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (dst->size < src->n_nodes || dst->size < src->n_leafs || (src->grads && !dst->grads)) {
        gk::set_error(dst->ctx, "graph_cpy: the destination (size %d%s) cannot hold %d nodes and %d leafs%s", dst->size,
                      dst->grads ? "" : ", no gradients", src->n_nodes, src->n_leafs,
                      src->grads ? " with gradients" : "");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    std::memcpy(dst->nodes, src->nodes, static_cast<size_t>(src->n_nodes) * sizeof(dst->nodes[0]));
    std::memcpy(dst->leafs, src->leafs, static_cast<size_t>(src->n_leafs) * sizeof(dst->leafs[0]));
    dst->n_nodes = src->n_nodes;
    dst->n_leafs = src->n_leafs;
    if (dst->grads) {
        std::memset(dst->grads, 0, 2 * dst->hash_size * sizeof(dst->grads[0]));
    }
    gk::rebuild_visited(dst);
    for (size_t i = 0; src->grads && i < src->hash_size; ++i) {
        if (src->hash[i] && (src->grads[i] || src->grad_accs[i])) {
            const size_t slot    = gk::graph_slot(dst, src->hash[i]);
            dst->grads[slot]     = src->grads[i];
            dst->grad_accs[slot] = src->grad_accs[i];
        }
    }
    return GK_STATUS_SUCCESS;
}

gk_cgraph * gk_graph_dup(gk_context * ctx, const gk_cgraph * g, bool force_grads) {
    if (!g) {
        gk::set_error(ctx, "graph_dup: graph is NULL");
        return nullptr;
    }
    gk_cgraph * r = gk_new_graph_custom(ctx, static_cast<size_t>(g->size), g->grads || force_grads);
    return r && gk_graph_cpy(g, r) == GK_STATUS_SUCCESS ? r : nullptr;
}

bool gk_graph_add_node(gk_cgraph * g, gk_tensor * tensor) {
    if (!g || !tensor || g->n_nodes == g->size) {
        return false;
    }
    g->nodes[g->n_nodes++] = tensor;
    return true;
}

} // extern "C"
