// gallocr.cpp - the graph allocator.
//
// Two passes over the graph:
//
// 1. Measure (plan()): walk the nodes in execution order with a use count per tensor
//    (how many source slots of nodes not yet run name it) and a view count (how many
//    views still need its storage). A node is given an offset just before it runs; a
//    tensor whose counts both reach zero after a node has run gives its range back to
//    its buffer's free list, where a later node can take it. A view has no storage of
//    its own: it holds its source until its own counts reach zero. A node that the device of
//    its buffer type says can run in place (gk_backend_dev_can_run_in_place) takes over
//    its src[0]'s range instead when nothing else needs that source any more. Nothing is written to
//    the graph; the result is a plan (an offset per placed tensor) and a size per buffer.
//
// 2. Apply: grow each buffer to its size if it is smaller, then point every placed
//    tensor at buffer base + offset and every view at its source.
//
// Each buffer is presented to tensors through a proxy buffer that lives as long as the
// allocator: tensor->buffer == proxy is how a later call recognises the tensors it
// placed (to place them again), even after the memory behind the proxy was replaced.
#include "gk/gk-alloc.h"

#include "../backend/impl.h"
#include "../debug.h"
#include "../graph.h"
#include "free_list.h"
#include "gallocr.h"

#include <cstring>
#include <new>
#include <unordered_map>
#include <vector>

using gk::backend_error;

namespace gk::alloc {
namespace {

/// One buffer of the allocator: its type, the memory currently behind it, and the
/// proxy tensors point at.
struct slot {
    gk_backend_buffer_type_t buft  = nullptr;
    gk_backend_buffer_t      inner = nullptr;
    gk_backend_buffer_t      proxy = nullptr;
};

// ---- the proxy buffer: forwards everything to the slot's current memory ---------------

slot & slot_of(gk_backend_buffer_t proxy) { return *static_cast<slot *>(proxy->context); }

/// The memory behind the proxy; nullptr (with a message) when a failed growth left none.
gk_backend_buffer_t inner_of(gk_backend_buffer_t proxy) {
    gk_backend_buffer_t in = slot_of(proxy).inner;
    if (!in) {
        backend_error("gallocr buffer: no memory behind it (a growth failed); allocate the graph again");
    }
    return in;
}

void proxy_free(gk_backend_buffer_t proxy) {
    gk_backend_buffer_free(slot_of(proxy).inner);
    slot_of(proxy).inner = nullptr;
}

void * proxy_base(gk_backend_buffer_t proxy) { return gk_backend_buffer_get_base(slot_of(proxy).inner); }

gk_status proxy_init_tensor(gk_backend_buffer_t proxy, gk_tensor * t) {
    gk_backend_buffer_t in = inner_of(proxy);
    return in ? gk_backend_buffer_init_tensor(in, t) : GK_STATUS_ALLOC_FAILED;
}

void proxy_memset_tensor(gk_backend_buffer_t proxy, gk_tensor * t, uint8_t value, size_t offset, size_t size) {
    if (gk_backend_buffer_t in = inner_of(proxy)) {
        in->iface.memset_tensor(in, t, value, offset, size);
    }
}

void proxy_set_tensor(gk_backend_buffer_t proxy, gk_tensor * t, const void * data, size_t offset, size_t size) {
    if (gk_backend_buffer_t in = inner_of(proxy)) {
        in->iface.set_tensor(in, t, data, offset, size);
    }
}

void proxy_get_tensor(gk_backend_buffer_t proxy, const gk_tensor * t, void * data, size_t offset, size_t size) {
    if (gk_backend_buffer_t in = inner_of(proxy)) {
        in->iface.get_tensor(in, t, data, offset, size);
    }
}

void proxy_clear(gk_backend_buffer_t proxy, uint8_t value) { gk_backend_buffer_clear(slot_of(proxy).inner, value); }

void proxy_reset(gk_backend_buffer_t proxy) { gk_backend_buffer_reset(slot_of(proxy).inner); }

gk_backend_buffer_t proxy_memory(gk_backend_buffer_t proxy) { return slot_of(proxy).inner; }

constexpr gk_backend_buffer_i proxy_iface{proxy_free,       proxy_base,       proxy_init_tensor, proxy_memset_tensor,
                                          proxy_set_tensor, proxy_get_tensor, proxy_clear,       proxy_reset,
                                          proxy_memory};

// ---- measure --------------------------------------------------------------------------

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

bool same_layout(const gk_tensor * a, const gk_tensor * b) {
    return a->type == b->type && std::memcmp(a->ne, b->ne, sizeof(a->ne)) == 0 &&
           std::memcmp(a->nb, b->nb, sizeof(a->nb)) == 0;
}

/// What the measure pass knows about one tensor.
struct tensor_state {
    int    slot       = 0;
    int    n_children = 0;      // source slots of nodes not yet run that name it
    int    n_views    = 0;      // views of it whose counts have not reached zero
    bool   ours       = false;  // not a view, and placed by this allocator
    bool   held       = false;  // keeps its range for the whole graph
    bool   placed     = false;  // has a range in this plan
    bool   owns       = false;  // the range is its own to give back
    size_t offset     = 0;
    size_t size       = 0;
};

/// One measure of one graph.
class planner {
public:
    planner(const std::vector<slot> & slots, bool reuse) : slots_(slots), reuse_(reuse), lists_(slots.size()) {}

    /// Measure graph, slot of node i = node_ids[i] (leaf_ids for leafs).
    void run(const gk_cgraph * g, const int * node_ids, const int * leaf_ids);

    size_t needed(size_t s) const { return lists_[s].high_water(); }

    /// Every tensor met, in the order met.
    const std::vector<gk_tensor *> & tensors() const { return order_; }
    const tensor_state &             state(const gk_tensor * t) const { return states_.at(t); }

private:
    tensor_state & add(gk_tensor * t, int slot_id, bool held);
    tensor_state & at(const gk_tensor * t) { return states_.at(t); }
    void           place(gk_tensor * t);
    bool           place_in_place(gk_tensor * node);
    void           consume(gk_tensor * t);
    void           release(gk_tensor * t);
    bool           is_ours(const gk_tensor * t) const;

    const std::vector<slot> &                        slots_;
    bool                                             reuse_;
    std::vector<free_list>                           lists_;
    std::unordered_map<const gk_tensor *, tensor_state> states_;
    std::vector<gk_tensor *>                         order_;
};

bool planner::is_ours(const gk_tensor * t) const {
    if (t->view_src) {
        return false;
    }
    if (!t->data) {
        return true;
    }
    for (const slot & s : slots_) {
        if (t->buffer == s.proxy) {
            return true;
        }
    }
    return false;
}

tensor_state & planner::add(gk_tensor * t, int slot_id, bool held) {
    auto [it, fresh] = states_.try_emplace(t);
    if (fresh) {
        it->second.slot = slot_id;
        it->second.ours = is_ours(t);
        it->second.held = held;
        order_.push_back(t);
    }
    return it->second;
}

void planner::place(gk_tensor * t) {
    tensor_state & st = at(t);
    if (!st.ours || st.placed) {
        return;
    }
    const slot & s = slots_[static_cast<size_t>(st.slot)];
    st.size        = align_up(gk_backend_buft_get_alloc_size(s.buft, t), gk_backend_buft_get_alignment(s.buft));
    st.offset      = st.size > 0 ? lists_[static_cast<size_t>(st.slot)].take(st.size) : 0;
    st.placed      = true;
    st.owns        = st.size > 0;
}

bool planner::place_in_place(gk_tensor * node) {
    gk_tensor * p = node->src[0];
    if (!reuse_ || !p) {
        return false;
    }
    gk_tensor *    o  = p->view_src ? p->view_src : p;
    tensor_state & ps = at(p);
    tensor_state & os = at(o);
    tensor_state & ns = at(node);
    if (!os.ours || !os.owns || os.held || os.slot != ns.slot || (p->flags & (GK_TENSOR_FLAG_INPUT | GK_TENSOR_FLAG_OUTPUT)) ||
        !same_layout(node, p)) {
        return false;
    }
    int uses = 0;  // the node's own source slots naming p are the consumers it may ignore
    for (const gk_tensor * s : node->src) {
        uses += s == p;
    }
    if (ps.n_children != uses || ps.n_views != 0) {
        return false;
    }
    if (p != o && (p->view_offs != 0 || os.n_children != 0 || os.n_views != 1)) {
        return false;  // through a view: only when the view is the source's last holder
    }
    const slot & s = slots_[static_cast<size_t>(ns.slot)];
    if (!gk_backend_dev_can_run_in_place(gk_backend_buft_get_device(s.buft), node)) {
        return false;
    }
    const size_t need = align_up(gk_backend_buft_get_alloc_size(s.buft, node), gk_backend_buft_get_alignment(s.buft));
    if (need > os.size) {
        return false;
    }
    ns.offset = os.offset;
    ns.size   = os.size;
    ns.placed = true;
    ns.owns   = true;
    os.owns   = false;
    return true;
}

void planner::consume(gk_tensor * t) {
    tensor_state & st = at(t);
    if (--st.n_children == 0 && st.n_views == 0) {
        release(t);
    }
}

void planner::release(gk_tensor * t) {
    if (t->view_src) {
        tensor_state & os = at(t->view_src);
        if (--os.n_views == 0 && os.n_children == 0) {
            release(t->view_src);
        }
        return;
    }
    tensor_state & st = at(t);
    if (st.owns && !st.held && reuse_) {
        lists_[static_cast<size_t>(st.slot)].give_back(st.offset, st.size);
        st.owns = false;
    }
}

void planner::run(const gk_cgraph * g, const int * node_ids, const int * leaf_ids) {
    const int32_t keep = GK_TENSOR_FLAG_INPUT | GK_TENSOR_FLAG_OUTPUT;
    states_.reserve(static_cast<size_t>(2 * (g->n_nodes + g->n_leafs)));
    for (int i = 0; i < g->n_leafs; ++i) {
        add(g->leafs[i], leaf_ids ? leaf_ids[i] : 0, true);  // a leaf's values come from outside
    }
    for (int i = 0; i < g->n_nodes; ++i) {  // a node with no op (a param) is set from outside, like a leaf
        gk_tensor * n = g->nodes[i];
        add(n, node_ids ? node_ids[i] : 0, (n->flags & keep) != 0 || n->op == GK_OP_NONE);
    }
    // Counts. Sources and view sources outside the node and leaf lists are held.
    for (int i = 0; i < g->n_nodes; ++i) {
        gk_tensor * node = g->nodes[i];
        for (gk_tensor * s : node->src) {
            if (s) {
                add(s, at(node).slot, true).n_children++;
            }
        }
    }
    for (size_t i = 0; i < order_.size(); ++i) {  // order_ may grow here
        gk_tensor * t = order_[i];
        if (t->view_src) {
            add(t->view_src, at(t).slot, true).n_views++;
        }
    }
    // Leafs (and anything else held) first, so inputs sit together at the start.
    for (int i = 0; i < g->n_leafs; ++i) {
        place(g->leafs[i]);
    }
    for (int i = 0; i < g->n_nodes; ++i) {
        gk_tensor * node = g->nodes[i];
        for (gk_tensor * s : node->src) {
            if (s) {
                place(s->view_src ? s->view_src : s);
            }
        }
        if (node->view_src) {
            place(node->view_src);
        } else if (!place_in_place(node)) {
            place(node);
        }
        for (gk_tensor * s : node->src) {
            if (s) {
                consume(s);
            }
        }
    }
}

} // namespace
} // namespace gk::alloc

struct gk_gallocr {
    std::vector<gk::alloc::slot> slots;  // never resized: proxies point into it
    std::vector<int>             node_ids;
    std::vector<int>             leaf_ids;
    int                          ids_n_nodes = -1;  // graph counts the ids were given for
    int                          ids_n_leafs = -1;
};

namespace gk::alloc {

bool owns_buffer(const gk_gallocr * galloc, const gk_backend_buffer * buffer) {
    if (!galloc || !buffer) {
        return false;
    }
    for (const slot & s : galloc->slots) {
        if (s.proxy == buffer) {
            return true;
        }
    }
    return false;
}

namespace {

/// Grow slot s to `size` bytes if it is smaller (or has no memory yet).
bool ensure_size(slot & s, size_t size) {
    if (s.inner && s.inner->size >= size) {
        return true;
    }
    gk_backend_buffer_free(s.inner);  // before allocating: do not hold both
    s.inner       = nullptr;
    s.proxy->size = 0;
    s.inner       = gk_backend_buft_alloc_buffer(s.buft, size);
    if (!s.inner) {
        backend_error("gallocr: cannot allocate a %s buffer of %zu bytes: %s", gk_backend_buft_name(s.buft), size,
                      gk_backend_last_error());
        return false;
    }
    gk_backend_buffer_set_usage(s.inner, GK_BACKEND_BUFFER_USAGE_COMPUTE);
    s.proxy->size = s.inner->size;
    return true;
}

/// Validate the ids and measure; false with a message on bad input.
bool measure(gk_gallocr * ga, const gk_cgraph * g, const int * node_ids, const int * leaf_ids, planner & plan) {
    const int n_slots = static_cast<int>(ga->slots.size());
    const auto bad_id = [n_slots](const int * ids, int n) {
        for (int i = 0; ids && i < n; ++i) {
            if (ids[i] < 0 || ids[i] >= n_slots) {
                return i;
            }
        }
        return -1;
    };
    const int bad_node = bad_id(node_ids, g->n_nodes);
    const int bad_leaf = bad_id(leaf_ids, g->n_leafs);
    if (bad_node >= 0 || bad_leaf >= 0) {
        backend_error("gallocr: %s %d has buffer id %d (the allocator has %d buffers)", bad_node >= 0 ? "node" : "leaf",
                      bad_node >= 0 ? bad_node : bad_leaf, bad_node >= 0 ? node_ids[bad_node] : leaf_ids[bad_leaf],
                      n_slots);
        return false;
    }
    plan.run(g, node_ids, leaf_ids);
    return true;
}

bool reserve(gk_gallocr * ga, const gk_cgraph * g, const int * node_ids, const int * leaf_ids, planner & plan) {
    if (!measure(ga, g, node_ids, leaf_ids, plan)) {
        return false;
    }
    for (size_t s = 0; s < ga->slots.size(); ++s) {
        if (!ensure_size(ga->slots[s], plan.needed(s))) {
            return false;
        }
    }
    return true;
}

bool apply(gk_gallocr * ga, const planner & plan) {
    if (debug().nan_fill) {
        for (slot & s : ga->slots) {
            gk_backend_buffer_clear(s.inner, 0xFF);  // storage handed out is fresh storage
        }
    }
    for (gk_tensor * t : plan.tensors()) {
        const tensor_state & st = plan.state(t);
        if (!st.ours) {
            continue;
        }
        slot & s = ga->slots[static_cast<size_t>(st.slot)];
        if (gk_backend_tensor_alloc(s.proxy, t, static_cast<char *>(gk_backend_buffer_get_base(s.proxy)) + st.offset) !=
            GK_STATUS_SUCCESS) {
            return false;
        }
    }
    for (gk_tensor * t : plan.tensors()) {
        if (!t->view_src || (t->data && t->buffer && !plan.state(t->view_src).ours)) {
            continue;  // not a view, or a view of storage placed elsewhere that already has data and its buffer
        }
        if (gk_backend_view_init(t) != GK_STATUS_SUCCESS) {
            return false;
        }
    }
    return true;
}

} // namespace
} // namespace gk::alloc

extern "C" {

gk_gallocr_t gk_gallocr_new_n(gk_backend_buffer_type_t * bufts, int n_bufs) {
    if (!bufts || n_bufs < 1) {
        backend_error("gallocr_new_n: need at least one buffer type (got %d)", n_bufs);
        return nullptr;
    }
    for (int i = 0; i < n_bufs; ++i) {
        if (!bufts[i]) {
            backend_error("gallocr_new_n: buffer type %d is NULL", i);
            return nullptr;
        }
    }
    auto * ga = new (std::nothrow) gk_gallocr;
    if (!ga) {
        backend_error("gallocr_new: out of memory");
        return nullptr;
    }
    try {
        ga->slots.resize(static_cast<size_t>(n_bufs));
    } catch (const std::bad_alloc &) {
        delete ga;
        backend_error("gallocr_new: out of memory");
        return nullptr;
    }
    for (int i = 0; i < n_bufs; ++i) {
        gk::alloc::slot & s = ga->slots[static_cast<size_t>(i)];
        s.buft              = bufts[i];
        s.proxy             = gk::buffer_init(bufts[i], gk::alloc::proxy_iface, &s, 0);
        if (!s.proxy) {
            gk_gallocr_free(ga);
            return nullptr;
        }
        s.proxy->usage = GK_BACKEND_BUFFER_USAGE_COMPUTE;
    }
    return ga;
}

gk_gallocr_t gk_gallocr_new(gk_backend_buffer_type_t buft) { return gk_gallocr_new_n(&buft, 1); }

void gk_gallocr_free(gk_gallocr_t galloc) {
    if (!galloc) {
        return;
    }
    for (gk::alloc::slot & s : galloc->slots) {
        gk_backend_buffer_free(s.proxy);  // frees the memory behind it too
    }
    delete galloc;
}

} // extern "C"

namespace {

/// gk_gallocr_reserve_n (sizes NULL: grow the buffers) or gk_gallocr_reserve_n_size (the
/// bytes each buffer needs into sizes, nothing allocated).
bool reserve_ids(gk_gallocr_t galloc, gk_cgraph * graph, const int * node_buffer_ids, const int * leaf_buffer_ids,
                 size_t * sizes) {
    if (!gk::graph_call_args_ok(galloc, "allocator", graph, "gallocr_reserve")) {
        return false;
    }
    try {
        gk::alloc::planner plan(galloc->slots, !gk::debug().alloc_no_reuse);
        if (sizes ? !gk::alloc::measure(galloc, graph, node_buffer_ids, leaf_buffer_ids, plan)
                  : !gk::alloc::reserve(galloc, graph, node_buffer_ids, leaf_buffer_ids, plan)) {
            return false;
        }
        for (size_t s = 0; sizes && s < galloc->slots.size(); ++s) {
            sizes[s] = plan.needed(s);
        }
        galloc->node_ids.clear();
        galloc->leaf_ids.clear();
        if (node_buffer_ids) {
            galloc->node_ids.assign(node_buffer_ids, node_buffer_ids + graph->n_nodes);
        }
        if (leaf_buffer_ids) {
            galloc->leaf_ids.assign(leaf_buffer_ids, leaf_buffer_ids + graph->n_leafs);
        }
        galloc->ids_n_nodes = graph->n_nodes;
        galloc->ids_n_leafs = graph->n_leafs;
        return true;
    } catch (const std::bad_alloc &) {
        backend_error("gallocr_reserve: out of memory");
        return false;
    }
}

} // namespace

extern "C" {

bool gk_gallocr_reserve_n(gk_gallocr_t galloc, gk_cgraph * graph, const int * node_buffer_ids,
                          const int * leaf_buffer_ids) {
    return reserve_ids(galloc, graph, node_buffer_ids, leaf_buffer_ids, nullptr);
}

bool gk_gallocr_reserve_n_size(gk_gallocr_t galloc, gk_cgraph * graph, const int * node_buffer_ids,
                               const int * leaf_buffer_ids, size_t * sizes) {
    if (!sizes) {
        backend_error("gallocr_reserve_n_size: sizes is NULL");
        return false;
    }
    return reserve_ids(galloc, graph, node_buffer_ids, leaf_buffer_ids, sizes);
}

bool gk_gallocr_reserve(gk_gallocr_t galloc, gk_cgraph * graph) {
    return gk_gallocr_reserve_n(galloc, graph, nullptr, nullptr);
}

bool gk_gallocr_alloc_graph(gk_gallocr_t galloc, gk_cgraph * graph) {
    if (!gk::graph_call_args_ok(galloc, "allocator", graph, "gallocr_alloc_graph")) {
        return false;
    }
    const int * node_ids = nullptr;
    const int * leaf_ids = nullptr;
    if (galloc->slots.size() > 1) {
        if (graph->n_nodes != galloc->ids_n_nodes || graph->n_leafs != galloc->ids_n_leafs) {
            backend_error("gallocr_alloc_graph: the graph has %d nodes and %d leafs but the buffer ids of the last "
                          "gk_gallocr_reserve_n were for %d and %d",
                          graph->n_nodes, graph->n_leafs, galloc->ids_n_nodes, galloc->ids_n_leafs);
            return false;
        }
        node_ids = galloc->node_ids.empty() ? nullptr : galloc->node_ids.data();
        leaf_ids = galloc->leaf_ids.empty() ? nullptr : galloc->leaf_ids.data();
    }
    try {
        gk::alloc::planner plan(galloc->slots, !gk::debug().alloc_no_reuse);
        return gk::alloc::reserve(galloc, graph, node_ids, leaf_ids, plan) && gk::alloc::apply(galloc, plan);
    } catch (const std::bad_alloc &) {
        backend_error("gallocr_alloc_graph: out of memory");
        return false;
    }
}

size_t gk_gallocr_get_buffer_size(gk_gallocr_t galloc, int buffer_id) {
    if (!galloc || buffer_id < 0 || static_cast<size_t>(buffer_id) >= galloc->slots.size()) {
        return 0;
    }
    return gk_backend_buffer_get_size(galloc->slots[static_cast<size_t>(buffer_id)].inner);
}

} // extern "C"
