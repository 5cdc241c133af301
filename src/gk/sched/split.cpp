// split.cpp - cutting an assigned graph into splits, and the staging tensors of each.
//
// A split is a run of nodes on one backend; layout nodes do no work and join the split
// they fall in. A split whose backend cannot address the memory a source's storage
// lives in gets one staging copy of that storage (per split and storage, however many
// of its nodes read it) and, for a source that is a view, a view of the copy with the
// source's shape, strides and offset.
#include "sched.h"

#include "../backend/impl.h"
#include "../graph.h"
#include "../internal.h"

#include <algorithm>

namespace gk::sched {
namespace {

/// Split boundaries only: where the backend of a node that does work changes.
void cut(const gk_cgraph * g, const assignment & a, std::vector<split> & out) {
    for (int i = 0; i < g->n_nodes; ++i) {
        const int  b      = a.node_backend[static_cast<size_t>(i)];
        const bool layout = is_layout_op(g->nodes[i]->op);
        if (out.empty() || (!layout && out.back().backend >= 0 && out.back().backend != b)) {
            out.push_back({layout ? -1 : b, i, 0, {}, {}, {}});
        } else if (!layout && out.back().backend < 0) {
            out.back().backend = b;  // the first node that does work names a leading split
        }
        out.back().n++;
    }
    if (!out.empty() && out.back().backend < 0) {  // no node does work
        out.back().backend = a.node_backend[static_cast<size_t>(out.back().first)];
    }
}

/// A source a split cannot read where it lies.
struct staged_read {
    size_t      split;
    gk_tensor * node;
    int         index;
};

} // namespace

gk_status make_splits(gk_sched & s, const gk_cgraph * g, const assignment & a, std::vector<split> & out) {
    out.clear();
    cut(g, a, out);
    std::vector<staged_read> reads;
    for (size_t k = 0; k < out.size(); ++k) {
        gk_backend_t backend = s.backends[static_cast<size_t>(out[k].backend)];
        for (int i = out[k].first; i < out[k].first + out[k].n; ++i) {
            gk_tensor * node = g->nodes[i];
            if (is_layout_op(node->op)) {
                continue;
            }
            for (int j = 0; j < GK_MAX_SRC; ++j) {
                if (node->src[j] && !gk_backend_supports_buft(backend, memory_of(s, a, node->src[j]))) {
                    reads.push_back({k, node, j});
                }
            }
        }
    }
    gk_free(s.ctx);
    s.ctx = nullptr;
    if (reads.empty()) {
        return GK_STATUS_SUCCESS;
    }
    // At most two tensors per staged read (a copy and a view of it).
    s.ctx = gk_init({(2 * reads.size() + 1) * gk_tensor_overhead(), nullptr, true});
    if (!s.ctx) {
        backend_error("sched: out of memory for %zu staging tensors", 2 * reads.size());
        return GK_STATUS_ALLOC_FAILED;
    }
    for (const staged_read & r : reads) {
        split &     sp   = out[r.split];
        gk_tensor * src  = r.node->src[r.index];
        gk_tensor * root = const_cast<gk_tensor *>(storage(src));
        auto        it   = std::find_if(sp.stages.begin(), sp.stages.end(),
                                        [root](const stage & st) { return st.root == root; });
        if (it == sp.stages.end()) {
            gk_tensor * copy = gk_new_tensor(s.ctx, root->type, 4, root->ne);
            if (!copy) {
                backend_error("sched: staging '%s': %s", root->name, gk_last_error(s.ctx));
                return GK_STATUS_ALLOC_FAILED;
            }
            gk_format_name(copy, "%.40s (staged, split %zu)", root->name, r.split);
            copy->op     = GK_OP_DUP;  // for the allocator: written from root when the split starts
            copy->src[0] = root;
            sp.stages.push_back({root, copy});
            it = sp.stages.end() - 1;
        }
        gk_tensor * with = it->copy;
        if (src != root) {
            with = gk_view_4d(s.ctx, it->copy, src->ne[0], src->ne[1], src->ne[2], src->ne[3], src->nb[1], src->nb[2],
                              src->nb[3], src->view_offs);
            if (!with) {
                backend_error("sched: a view of staged '%s': %s", root->name, gk_last_error(s.ctx));
                return GK_STATUS_ALLOC_FAILED;
            }
            std::copy(src->nb, src->nb + 4, with->nb);  // nb[0] too: a permuted view's is not the element size
            sp.views.push_back(with);
        }
        sp.redirects.push_back({r.node, r.index, with});
    }
    return GK_STATUS_SUCCESS;
}

} // namespace gk::sched
