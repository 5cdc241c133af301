// opt.cpp - ggml-opt's optimisation contexts on compat (ggml's semantics, our code): from a
// model's forward graph gf it builds the loss, gb_grad (gf and the gradients, by
// ggml_build_backward_expand: gk's automatic differentiation) and gb_opt (gb_grad and one
// optimizer step per parameter), and evaluates one of them per batch through a backend
// scheduler. With static graphs (a compute context given to ggml_opt_init) the graphs are
// built once and a copy of the one to run is given to the scheduler, so that its
// allocation never sticks to the graphs themselves; otherwise the caller builds gf for
// every batch (ggml_opt_prepare_alloc) and the graphs are rebuilt around it.
#include "convert.h"
#include "opt_impl.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

namespace {

void require(bool ok, const char * fn, const char * what) {
    if (!ok) {
        ggml_abort(__FILE__, __LINE__, "%s: %s", fn, what);
    }
}

/// t's copy in ctx (made once, with copies of what it views and reads): t's op, strides,
/// flags, parameters, name and storage (its data and buffer, NULL for a node the scheduler
/// places).
ggml_tensor * copy_tensor(std::map<ggml_tensor *, ggml_tensor *> & copies, ggml_context * ctx, ggml_tensor * t) {
    if (!t) {
        return nullptr;
    }
    const auto found = copies.find(t);
    if (found != copies.end()) {
        return found->second;
    }
    ggml_tensor * c = ggml_dup_tensor(ctx, t);
    copies[t]       = c;
    c->op           = t->op;
    std::memcpy(c->nb, t->nb, sizeof(c->nb));
    std::memcpy(c->op_params, t->op_params, sizeof(c->op_params));
    std::memcpy(c->name, t->name, sizeof(c->name));
    c->flags     = t->flags;
    c->data      = t->data;
    c->buffer    = t->buffer;
    c->extra     = t->extra;
    c->view_offs = t->view_offs;
    c->view_src  = copy_tensor(copies, ctx, t->view_src);
    for (int i = 0; i < GGML_MAX_SRC; ++i) {
        c->src[i] = copy_tensor(copies, ctx, t->src[i]);
    }
    return c;
}

/// A copy of g in ctx, tensor for tensor, in g's order.
ggml_cgraph * copy_graph(ggml_context * ctx, ggml_cgraph * g) {
    const gk_cgraph *                      gg = compat::to_gk(g);
    std::map<ggml_tensor *, ggml_tensor *> copies;
    ggml_cgraph * r = ggml_new_graph_custom(ctx, static_cast<size_t>(ggml_graph_size(g)), false);
    for (int i = 0; i < gk_graph_n_leafs(gg); ++i) {
        ggml_build_forward_expand(r, copy_tensor(copies, ctx, compat::to_ggml(gk_graph_leaf(gg, i))));
    }
    for (int i = 0; i < ggml_graph_n_nodes(g); ++i) {
        ggml_build_forward_expand(r, copy_tensor(copies, ctx, ggml_graph_node(g, i)));
    }
    return r;
}

/// A no_alloc context for n tensors.
ggml_context * meta_context(size_t n) { return ggml_init({n * ggml_tensor_overhead(), nullptr, true}); }

/// The loss of the outputs by the context's loss type (ggml's graphs and scales: a
/// per-datapoint loss is divided by opt_period, so that a period's accumulated gradient is
/// that of the mean), in ctx.
void build_loss(ggml_opt_context * o, ggml_context * ctx) {
    const float n      = static_cast<float>(ggml_nelements(o->outputs));
    const float p      = static_cast<float>(o->opt_period);
    const auto  named  = [](ggml_tensor * t, const char * name) { return ggml_set_name(t, name); };
    const auto  labels = [&] {
        o->labels = named(ggml_dup_tensor(ctx, o->outputs), "labels");
        ggml_set_input(o->labels);
        return o->labels;
    };
    switch (o->loss_type) {
    case GGML_OPT_LOSS_TYPE_MEAN:
        o->loss = named(ggml_scale(ctx, named(ggml_sum(ctx, o->outputs), "loss_sum"), 1.0f / (p * n)), "loss_mean");
        o->loss_per_datapoint = true;
        break;
    case GGML_OPT_LOSS_TYPE_SUM:
        o->loss               = named(ggml_sum(ctx, o->outputs), "loss_sum");
        o->loss_per_datapoint = false;
        break;
    case GGML_OPT_LOSS_TYPE_CROSS_ENTROPY:
        o->loss = named(ggml_cross_entropy_loss(ctx, o->outputs, labels()), "loss_cross_entropy");
        if (o->opt_period > 1) {
            o->loss = named(ggml_scale(ctx, o->loss, 1.0f / p), "loss_cross_entropy_scaled");
        }
        o->loss_per_datapoint = true;
        break;
    case GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR: {
        ggml_tensor * err     = named(ggml_sub(ctx, o->outputs, labels()), "loss_error");
        ggml_tensor * sum     = named(ggml_sum(ctx, named(ggml_sqr(ctx, err), "loss_squared_error")),
                                      "loss_sum_squared_error");
        o->loss               = named(ggml_scale(ctx, sum, 1.0f / (p * n)), "loss_mean_squared_error");
        o->loss_per_datapoint = true;
        break;
    }
    default: ggml_abort(__FILE__, __LINE__, "ggml_opt_init: unknown loss type %d", static_cast<int>(o->loss_type));
    }
}

/// Gradient accumulators (parameters when gradients accumulate, and the loss) and AdamW's
/// moments, once per context, in ctx_static.
void make_static_state(ggml_opt_context * o, bool accumulate, bool need_momenta) {
    const int n = ggml_graph_n_nodes(o->gf);
    o->grad_accs.assign(static_cast<size_t>(n), nullptr);
    for (int i = 0; i < n; ++i) {
        ggml_tensor * node = ggml_graph_node(o->gf, i);
        if ((accumulate && (node->flags & GGML_TENSOR_FLAG_PARAM)) || (node->flags & GGML_TENSOR_FLAG_LOSS)) {
            o->grad_accs[static_cast<size_t>(i)] = ggml_new_tensor(o->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS,
                                                                   node->ne);
        }
    }
    if (!need_momenta) {
        return;
    }
    o->grad_m.assign(static_cast<size_t>(n), nullptr);
    o->grad_v.assign(static_cast<size_t>(n), nullptr);
    for (int i = 0; i < n; ++i) {
        ggml_tensor * node = ggml_graph_node(o->gf, i);
        if (node->flags & GGML_TENSOR_FLAG_PARAM) {
            o->grad_m[static_cast<size_t>(i)] = ggml_format_name(
                ggml_new_tensor(o->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne), "AdamW m for %s", node->name);
            o->grad_v[static_cast<size_t>(i)] = ggml_format_name(
                ggml_new_tensor(o->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne), "AdamW v for %s", node->name);
        }
    }
}

/// Allocates ctx_static on the scheduler's first backend.
void alloc_static(ggml_opt_context * o) {
    o->buf_static = ggml_backend_alloc_ctx_tensors(o->ctx_static, ggml_backend_sched_get_backend(o->backend_sched, 0));
}

/// gb_opt: gb_grad and an optimizer step of every parameter that has a gradient.
void build_opt_graph(ggml_opt_context * o, bool need_momenta) {
    o->gb_opt          = ggml_graph_dup(o->ctx_compute, o->gb_grad, true);
    o->opt_step_params = ggml_new_tensor_1d(o->ctx_cpu, GGML_TYPE_F32, need_momenta ? 7 : 2);
    ggml_set_input(o->opt_step_params);
    const char * name = ggml_opt_optimizer_name(o->optimizer);
    ggml_format_name(o->opt_step_params, "%s_params", name);
    for (int i = ggml_graph_n_nodes(o->gf) - 1; i >= 0; --i) {
        ggml_tensor * node = ggml_graph_node(o->gb_opt, i);
        ggml_tensor * grad = ggml_graph_get_grad(o->gb_opt, node);
        if (!grad || !(node->flags & GGML_TENSOR_FLAG_PARAM)) {
            continue;
        }
        ggml_tensor * step = o->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW
                                 ? ggml_opt_step_adamw(o->ctx_compute, node, grad, o->grad_m[static_cast<size_t>(i)],
                                                       o->grad_v[static_cast<size_t>(i)], o->opt_step_params)
                                 : ggml_opt_step_sgd(o->ctx_compute, node, grad, o->opt_step_params);
        ggml_format_name(step, "%s step for %s", name, node->name);
        ggml_build_forward_expand(o->gb_opt, step);
    }
}

/// Builds the loss and the graphs up to build_type_alloc around gf (ggml's ggml_opt_build);
/// the static state is allocated the first time.
void build(ggml_opt_context * o) {
    const char * fn = "ggml_opt_alloc";
    require(o->ctx_compute, fn, "no compute context: give one to ggml_opt_init or to ggml_opt_prepare_alloc");
    require(!o->static_graphs || o->inputs->data, fn, "with static graphs the inputs must be allocated");
    require(o->build_type <= o->build_type_alloc, fn, "a larger graph than the context was made for");
    const bool accumulate = o->build_type_alloc >= GGML_OPT_BUILD_TYPE_GRAD &&
                            !(o->static_graphs && o->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT && o->opt_period == 1);
    const bool need_momenta = o->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT &&
                              o->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    ggml_set_input(o->inputs);
    ggml_set_output(o->outputs);

    size_t n_param = 0;
    for (int i = 0; i < ggml_graph_n_nodes(o->gf); ++i) {
        const ggml_tensor * node = ggml_graph_node(o->gf, i);
        n_param += (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        require(!(node->flags & GGML_TENSOR_FLAG_LOSS), fn, "the model's graph already has a loss");
    }
    if (!o->ctx_static) {
        // one loss accumulator, per parameter an accumulator and two moments, and with
        // static graphs the labels, the loss (up to 5 nodes), the prediction and the count
        const size_t per_param = (accumulate ? 1 : 0) + (need_momenta ? 2 : 0);
        o->ctx_static          = meta_context(1 + per_param * n_param + (o->static_graphs ? 9 : 0));
    }
    ggml_free(o->ctx_cpu);
    o->ctx_cpu = meta_context(1);
    ggml_backend_buffer_free(o->buf_cpu);
    o->buf_cpu = nullptr;

    ggml_context * ctx_results = o->static_graphs ? o->ctx_static : o->ctx_compute;
    build_loss(o, ctx_results);
    ggml_set_output(o->loss);
    ggml_set_loss(o->loss);
    ggml_build_forward_expand(o->gf, o->loss);
    if (o->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY) {
        o->pred = ggml_set_name(ggml_argmax(ctx_results, o->outputs), "pred");
        ggml_set_output(o->pred);
        ggml_build_forward_expand(o->gf, o->pred);
        o->ncorrect = ggml_set_name(ggml_count_equal(ctx_results, o->pred, ggml_argmax(ctx_results, o->labels)),
                                    "ncorrect");
        ggml_set_output(o->ncorrect);
        ggml_build_forward_expand(o->gf, o->ncorrect);
    }

    // each stage stops here when it is the one to run (its state already allocated) or the
    // largest one the context was made for (its state allocated now)
    if (o->build_type_alloc == GGML_OPT_BUILD_TYPE_FORWARD ||
        (o->buf_static && o->build_type == GGML_OPT_BUILD_TYPE_FORWARD)) {
        if (!o->buf_static) {
            alloc_static(o);
        }
        return;
    }
    if (o->grad_accs.empty()) {
        make_static_state(o, accumulate, need_momenta);
    }
    o->gb_grad = ggml_graph_dup(o->ctx_compute, o->gf, true);
    ggml_build_backward_expand(o->ctx_compute, o->gb_grad, o->grad_accs.data());
    if (o->build_type_alloc == GGML_OPT_BUILD_TYPE_GRAD ||
        (o->buf_static && o->build_type == GGML_OPT_BUILD_TYPE_GRAD)) {
        if (!o->buf_static) {
            alloc_static(o);
            ggml_graph_reset(o->gb_grad);
        }
        return;
    }
    build_opt_graph(o, need_momenta);
    if (!o->buf_static) {
        alloc_static(o);
        ggml_graph_reset(o->gb_opt);
    }
    o->buf_cpu = ggml_backend_alloc_ctx_tensors_from_buft(o->ctx_cpu, ggml_backend_cpu_buffer_type());
}

/// Writes the optimizer's parameters for step o->iter (AdamW's bias corrections
/// 1/(1 - beta^t) computed here, as ggml-opt does) into opt_step_params.
void set_step_params(ggml_opt_context * o) {
    const char *                    fn = "ggml_opt_eval";
    const ggml_opt_optimizer_params p  = o->get_opt_pars(o->get_opt_pars_ud);
    float *                         v  = ggml_get_data_f32(o->opt_step_params);
    if (o->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW) {
        const auto & a = p.adamw;
        require(a.alpha > 0.0f && a.beta1 >= 0.0f && a.beta1 <= 1.0f && a.beta2 >= 0.0f && a.beta2 <= 1.0f &&
                    a.eps >= 0.0f && a.wd >= 0.0f && a.wd <= 1.0f,
                fn, "AdamW needs alpha > 0, beta1, beta2 and wd in [0, 1], eps >= 0");
        const float t    = static_cast<float>(o->iter);
        const float w[7] = {a.alpha,
                            a.beta1,
                            a.beta2,
                            a.eps,
                            a.wd,
                            1.0f / (1.0f - std::pow(a.beta1, t)),
                            1.0f / (1.0f - std::pow(a.beta2, t))};
        std::memcpy(v, w, sizeof w);
    } else {
        require(p.sgd.alpha > 0.0f && p.sgd.wd >= 0.0f && p.sgd.wd <= 1.0f, fn, "SGD needs alpha > 0, wd in [0, 1]");
        v[0] = p.sgd.alpha;
        v[1] = p.sgd.wd;
    }
}

/// Adds the evaluation's loss, predictions and correct count to result.
void record(ggml_opt_context * o, ggml_opt_result * result) {
    const char * fn = "ggml_opt_eval";
    if (result->ndata == 0) {
        result->loss_per_datapoint = o->loss_per_datapoint;
        result->opt_period         = o->opt_period;
    }
    require(result->loss_per_datapoint == o->loss_per_datapoint && result->opt_period == o->opt_period, fn,
            "a result gathers the evaluations of one kind of context");
    const int64_t ndata = o->outputs->ne[1];
    require(result->ndata == ndata * static_cast<int64_t>(result->loss.size()), fn, "varying batch size not supported");
    result->ndata += ndata;
    float loss = 0.0f;
    ggml_backend_tensor_get(o->loss, &loss, 0, sizeof loss);
    result->loss.push_back(loss);
    if (o->pred) {
        std::vector<int32_t> pred(static_cast<size_t>(ndata));
        ggml_backend_tensor_get(o->pred, pred.data(), 0, ggml_nbytes(o->pred));
        result->pred.insert(result->pred.end(), pred.begin(), pred.end());
    }
    if (!o->ncorrect || result->ncorrect < 0) {
        result->ncorrect = -1;
        return;
    }
    int64_t ncorrect = 0;
    ggml_backend_tensor_get(o->ncorrect, &ncorrect, 0, sizeof ncorrect);
    result->ncorrect += ncorrect;
}

/// "hh:mm:ss" of a duration in microseconds.
void print_hms(const char * label, int64_t us) {
    const int64_t s = us / 1000000;
    std::fprintf(stderr, " %s=%02" PRId64 ":%02" PRId64 ":%02" PRId64, label, s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

extern "C" {

struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void * userdata) {
    (void)userdata;
    ggml_opt_optimizer_params p{};
    p.adamw = {0.001f, 0.9f, 0.999f, 1e-8f, 0.0f};
    p.sgd   = {1e-3f, 0.0f};
    return p;
}

struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void * userdata) {
    return *static_cast<const ggml_opt_optimizer_params *>(userdata);
}

struct ggml_opt_params ggml_opt_default_params(ggml_backend_sched_t backend_sched, enum ggml_opt_loss_type loss_type) {
    ggml_opt_params p{};
    p.backend_sched = backend_sched;
    p.loss_type     = loss_type;
    p.build_type    = GGML_OPT_BUILD_TYPE_OPT;
    p.opt_period    = 1;
    p.get_opt_pars  = ggml_opt_get_default_optimizer_params;
    p.optimizer     = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    return p;
}

ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params) {
    const char * fn = "ggml_opt_init";
    require(params.opt_period >= 1, fn, "opt_period must be >= 1");
    require(params.optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW || params.optimizer == GGML_OPT_OPTIMIZER_TYPE_SGD, fn,
            "unknown optimizer");
    require(params.get_opt_pars, fn, "get_opt_pars is NULL");
    auto * o            = new ggml_opt_context;
    o->backend_sched    = params.backend_sched;
    o->ctx_compute      = params.ctx_compute;
    o->loss_type        = params.loss_type;
    o->build_type       = params.build_type;
    o->build_type_alloc = params.build_type;
    o->inputs           = params.inputs;
    o->outputs          = params.outputs;
    o->opt_period       = params.opt_period;
    o->get_opt_pars     = params.get_opt_pars;
    o->get_opt_pars_ud  = params.get_opt_pars_ud;
    o->optimizer        = params.optimizer;
    o->static_graphs    = o->ctx_compute != nullptr;
    if (!o->static_graphs) {
        require(!o->inputs && !o->outputs, fn,
                "without a compute context inputs and outputs come with ggml_opt_prepare_alloc");
        return o;
    }
    require(o->inputs && o->outputs, fn, "static graphs need inputs and outputs");
    o->gf = ggml_new_graph_custom(o->ctx_compute, GGML_DEFAULT_GRAPH_SIZE, true);
    ggml_build_forward_expand(o->gf, o->outputs);
    build(o);
    return o;
}

void ggml_opt_free(ggml_opt_context_t opt_ctx) {
    if (!opt_ctx) {
        return;
    }
    ggml_backend_buffer_free(opt_ctx->buf_static);
    ggml_backend_buffer_free(opt_ctx->buf_cpu);
    ggml_free(opt_ctx->ctx_static);
    ggml_free(opt_ctx->ctx_cpu);
    ggml_free(opt_ctx->ctx_copy);
    delete opt_ctx;
}

void ggml_opt_reset(ggml_opt_context_t opt_ctx, bool optimizer) {
    if (optimizer) {
        ggml_graph_reset(opt_ctx->gb_opt);
        opt_ctx->iter = 1;
    } else {
        ggml_graph_reset(opt_ctx->gb_grad);
    }
}

bool                 ggml_opt_static_graphs(ggml_opt_context_t opt_ctx) { return opt_ctx->static_graphs; }
struct ggml_tensor * ggml_opt_inputs(ggml_opt_context_t opt_ctx) {
    return opt_ctx->inputs;
}
struct ggml_tensor * ggml_opt_outputs(ggml_opt_context_t opt_ctx) {
    return opt_ctx->outputs;
}
struct ggml_tensor * ggml_opt_labels(ggml_opt_context_t opt_ctx) {
    return opt_ctx->labels;
}
struct ggml_tensor * ggml_opt_loss(ggml_opt_context_t opt_ctx) {
    return opt_ctx->loss;
}
struct ggml_tensor * ggml_opt_pred(ggml_opt_context_t opt_ctx) {
    return opt_ctx->pred;
}
struct ggml_tensor * ggml_opt_ncorrect(ggml_opt_context_t opt_ctx) {
    return opt_ctx->ncorrect;
}

struct ggml_tensor * ggml_opt_grad_acc(ggml_opt_context_t opt_ctx, struct ggml_tensor * node) {
    return ggml_graph_get_grad_acc(opt_ctx->gb_opt, node);
}

enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t opt_ctx) { return opt_ctx->optimizer; }

const char * ggml_opt_optimizer_name(enum ggml_opt_optimizer_type type) {
    return type == GGML_OPT_OPTIMIZER_TYPE_ADAMW ? "adamw" : type == GGML_OPT_OPTIMIZER_TYPE_SGD ? "sgd" : "undefined";
}

void ggml_opt_prepare_alloc(ggml_opt_context_t opt_ctx, struct ggml_context * ctx_compute, struct ggml_cgraph * gf,
                            struct ggml_tensor * inputs, struct ggml_tensor * outputs) {
    require(!opt_ctx->static_graphs, "ggml_opt_prepare_alloc", "the context has static graphs");
    opt_ctx->ctx_compute = ctx_compute;
    opt_ctx->gf          = gf;
    opt_ctx->inputs      = inputs;
    opt_ctx->outputs     = outputs;
}

void ggml_opt_alloc(ggml_opt_context_t opt_ctx, bool backward) {
    ggml_opt_context * o = opt_ctx;
    require(!o->eval_ready, "ggml_opt_alloc", "the allocated graph has not been evaluated yet");
    if (o->build_type == GGML_OPT_BUILD_TYPE_OPT && o->opt_period > 1 && o->opt_i == 0) {
        ggml_graph_reset(o->gb_grad);  // a new period: the accumulated gradients start from 0
    }
    o->build_type = !backward                             ? GGML_OPT_BUILD_TYPE_FORWARD
                    : (o->opt_i + 1) % o->opt_period == 0 ? GGML_OPT_BUILD_TYPE_OPT
                                                          : GGML_OPT_BUILD_TYPE_GRAD;
    if (!o->static_graphs) {
        build(o);
    }
    ggml_cgraph * graph = o->build_type == GGML_OPT_BUILD_TYPE_FORWARD ? o->gf
                          : o->build_type == GGML_OPT_BUILD_TYPE_GRAD  ? o->gb_grad
                                                                       : o->gb_opt;
    require(graph != nullptr, "ggml_opt_alloc", "the context was not made for this graph (its build type)");
    if (o->allocated_graph != graph) {
        ggml_backend_sched_reset(o->backend_sched);
        if (o->static_graphs) {
            const auto size = static_cast<size_t>(ggml_graph_size(graph));
            ggml_free(o->ctx_copy);
            o->ctx_copy = ggml_init(
                {size * ggml_tensor_overhead() + ggml_graph_overhead_custom(size, false), nullptr, true});
            o->allocated_graph_copy = copy_graph(o->ctx_copy, graph);
        } else {
            o->allocated_graph_copy = graph;
        }
        require(ggml_backend_sched_alloc_graph(o->backend_sched, o->allocated_graph_copy), "ggml_opt_alloc",
                "the scheduler could not allocate the graph");
        o->allocated_graph = graph;
    }
    o->eval_ready = true;
}

void ggml_opt_eval(ggml_opt_context_t opt_ctx, ggml_opt_result_t result) {
    ggml_opt_context * o = opt_ctx;
    require(o->eval_ready, "ggml_opt_eval", "no graph allocated: call ggml_opt_alloc first");
    const bool step = o->allocated_graph == o->gb_opt;
    if (step) {
        set_step_params(o);
    }
    require(ggml_backend_sched_graph_compute(o->backend_sched, o->allocated_graph_copy) == GGML_STATUS_SUCCESS,
            "ggml_opt_eval", "the graph's computation failed");
    o->iter += step;
    o->opt_i      = (o->opt_i + 1) % o->opt_period;
    o->eval_ready = false;
    if (!o->static_graphs) {
        o->gf = o->gb_grad = o->gb_opt = nullptr;
        o->allocated_graph = o->allocated_graph_copy = nullptr;
    }
    if (result) {
        record(o, result);
    }
}

void ggml_opt_epoch(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, ggml_opt_result_t result_train,
                    ggml_opt_result_t result_eval, int64_t idata_split, ggml_opt_epoch_callback callback_train,
                    ggml_opt_epoch_callback callback_eval) {
    const char * fn = "ggml_opt_epoch";
    require(ggml_opt_static_graphs(opt_ctx), fn, "ggml_opt_epoch needs static graphs");
    ggml_tensor * inputs = ggml_opt_inputs(opt_ctx);
    ggml_tensor * labels = ggml_opt_labels(opt_ctx);
    ggml_tensor * data   = ggml_opt_dataset_data(dataset);
    require(data->ne[0] == inputs->ne[0] && data->ne[1] % inputs->ne[1] == 0, fn,
            "the inputs must hold datapoints of the dataset and a whole number of batches make it");
    const int64_t ndata_batch = inputs->ne[1];
    const int64_t nbatches    = data->ne[1] / ndata_batch;
    idata_split               = idata_split < 0 ? data->ne[1] : idata_split;
    require(idata_split % ndata_batch == 0, fn, "idata_split must be a multiple of the batch size");
    const int64_t ibatch_split = idata_split / ndata_batch;
    int64_t       t_start      = ggml_time_us();
    for (int64_t ibatch = 0; ibatch < ibatch_split; ++ibatch) {
        ggml_opt_alloc(opt_ctx, true);
        ggml_opt_dataset_get_batch(dataset, inputs, labels, ibatch);
        ggml_opt_eval(opt_ctx, result_train);
        if (callback_train) {
            callback_train(true, opt_ctx, dataset, result_train, ibatch + 1, ibatch_split, t_start);
        }
    }
    t_start = ggml_time_us();
    for (int64_t ibatch = ibatch_split; ibatch < nbatches; ++ibatch) {
        ggml_opt_alloc(opt_ctx, false);
        ggml_opt_dataset_get_batch(dataset, inputs, labels, ibatch);
        ggml_opt_eval(opt_ctx, result_eval);
        if (callback_eval) {
            callback_eval(false, opt_ctx, dataset, result_eval, ibatch + 1 - ibatch_split, nbatches - ibatch_split,
                          t_start);
        }
    }
}

void ggml_opt_epoch_callback_progress_bar(bool train, ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset,
                                          ggml_opt_result_t result, int64_t ibatch, int64_t ibatch_max,
                                          int64_t t_start_us) {
    (void)dataset;
    constexpr int width = 20;
    const int64_t done  = ibatch_max > 0 ? ibatch * width / ibatch_max : width;
    std::fprintf(stderr, "%s[", train ? "train: " : "val:   ");
    for (int64_t j = 0; j < width; ++j) {
        std::fputc(j < done ? '#' : ' ', stderr);
    }
    const int64_t batch = ggml_opt_inputs(opt_ctx)->ne[1];
    double        loss = 0, loss_unc = 0, acc = 0, acc_unc = 0;
    ggml_opt_result_loss(result, &loss, &loss_unc);
    ggml_opt_result_accuracy(result, &acc, &acc_unc);
    std::fprintf(stderr, "] data=%07" PRId64 "/%07" PRId64 " loss=%.5f+-%.5f acc=%.2f+-%.2f%%", ibatch * batch,
                 ibatch_max * batch, loss, loss_unc, 100.0 * acc, 100.0 * acc_unc);
    const int64_t elapsed = ggml_time_us() - t_start_us;
    print_hms("t", elapsed);
    print_hms("ETA", ibatch > 0 ? elapsed * (ibatch_max - ibatch) / ibatch : 0);
    std::fputs(ibatch == ibatch_max ? " \n" : " \r", stderr);
    std::fflush(stderr);
}

void ggml_opt_fit(ggml_backend_sched_t backend_sched, struct ggml_context * ctx_compute, struct ggml_tensor * inputs,
                  struct ggml_tensor * outputs, ggml_opt_dataset_t dataset, enum ggml_opt_loss_type loss_type,
                  enum ggml_opt_optimizer_type optimizer, ggml_opt_get_optimizer_params get_opt_pars, int64_t nepoch,
                  int64_t nbatch_logical, float val_split, bool silent) {
    const char * fn = "ggml_opt_fit";
    ggml_time_init();
    const int64_t t_start         = ggml_time_us();
    const int64_t ndata           = ggml_opt_dataset_data(dataset)->ne[1];
    const int64_t nbatch_physical = inputs->ne[1];
    require(nbatch_logical > 0 && ndata % nbatch_logical == 0 && nbatch_logical % nbatch_physical == 0, fn,
            "the data must be whole logical batches, and a logical batch whole physical ones");
    require(val_split >= 0.0f && val_split < 1.0f, fn, "val_split must be in [0, 1)");
    const int64_t opt_period       = nbatch_logical / nbatch_physical;
    const int64_t nbatches_logical = ndata / nbatch_logical;
    // the train / validation split, in physical batches, then in datapoints
    const int64_t ibatch_split = static_cast<int64_t>((1.0f - val_split) * static_cast<float>(nbatches_logical)) *
                                 opt_period;
    const int64_t idata_split = ibatch_split * nbatch_physical;

    int64_t         epoch      = 1;
    ggml_opt_params params     = ggml_opt_default_params(backend_sched, loss_type);
    params.ctx_compute         = ctx_compute;
    params.inputs              = inputs;
    params.outputs             = outputs;
    params.opt_period          = static_cast<int32_t>(opt_period);
    params.get_opt_pars        = get_opt_pars;
    params.get_opt_pars_ud     = &epoch;  // the callback may follow the epoch
    params.optimizer           = optimizer;
    ggml_opt_context_t opt_ctx = ggml_opt_init(params);
    if (nbatch_logical < ndata) {
        ggml_opt_dataset_shuffle(opt_ctx, dataset, -1);
    }
    ggml_opt_result_t       train    = ggml_opt_result_init();
    ggml_opt_result_t       val      = ggml_opt_result_init();
    ggml_opt_epoch_callback callback = silent ? nullptr : ggml_opt_epoch_callback_progress_bar;
    for (; epoch <= nepoch; ++epoch) {
        if (nbatch_logical < idata_split) {
            ggml_opt_dataset_shuffle(opt_ctx, dataset, idata_split);
        }
        ggml_opt_result_reset(train);
        ggml_opt_result_reset(val);
        if (!silent) {
            std::fprintf(stderr, "%s: epoch %04" PRId64 "/%04" PRId64 ":\n", fn, epoch, nepoch);
        }
        ggml_opt_epoch(opt_ctx, dataset, train, val, idata_split, callback, callback);
        if (!silent) {
            std::fputc('\n', stderr);
        }
    }
    if (!silent) {
        std::fprintf(stderr, "%s: training took", fn);
        print_hms("", ggml_time_us() - t_start);
        std::fputc('\n', stderr);
    }
    ggml_opt_free(opt_ctx);
    ggml_opt_result_free(train);
    ggml_opt_result_free(val);
}

}  // extern "C"
