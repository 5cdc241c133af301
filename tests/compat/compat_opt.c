/* compat_opt.c - ggml-opt.h on compat: a linear classifier (4 inputs, 3 classes, weights
 * and bias in a CPU backend buffer) trained through the API as llama.cpp's and ggml's
 * examples use it. A dataset of 96 points labelled by which of three linear scores is
 * largest; ggml_opt_epoch with AdamW over static graphs (the loss falls, the accuracy
 * rises), the dataset's batches and shuffle, the results, then ggml_opt_fit with a
 * validation split and SGD on a fresh model, and the NULL-tolerant frees.
 * Exits 1 on the first failure. */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "ggml.h"

#include "check.h"

#include <math.h>
#include <string.h>

#define NDATA 96
#define BATCH 8

static unsigned int seed = 12345u;
static float        uniform(void) {
    seed = seed * 1103515245u + 12345u;
    return (float) ((seed >> 8) & 0xFFFF) / 65536.0f * 2.0f - 1.0f;
}

/* The model: outputs = w x + b, with w [4, 3], b [3] and the inputs [4, BATCH] allocated
 * in a CPU buffer; the graph of outputs in a no_alloc compute context. */
struct model {
    struct ggml_context * ctx_static, *ctx_compute;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *  w, *b, *inputs, *outputs;
};

static void model_init(struct model * m, ggml_backend_t backend) {
    struct ggml_init_params sp = {8 * ggml_tensor_overhead(), NULL, true};
    m->ctx_static              = ggml_init(sp);
    m->w                       = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, 4, 3);
    m->b                       = ggml_new_tensor_1d(m->ctx_static, GGML_TYPE_F32, 3);
    m->inputs                  = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, 4, BATCH);
    ggml_set_param(m->w);
    ggml_set_param(m->b);
    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx_static, backend);
    float w0[12], b0[3] = {0, 0, 0};
    for (int i = 0; i < 12; ++i) {
        w0[i] = 0.1f * uniform();
    }
    ggml_backend_tensor_set(m->w, w0, 0, sizeof w0);
    ggml_backend_tensor_set(m->b, b0, 0, sizeof b0);
    struct ggml_init_params cp = {4 * GGML_DEFAULT_GRAPH_SIZE * ggml_tensor_overhead() +
                                      4 * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true),
                                  NULL, true};
    m->ctx_compute             = ggml_init(cp);
    m->outputs = ggml_add(m->ctx_compute, ggml_mul_mat(m->ctx_compute, m->w, m->inputs), m->b);
}

static void model_free(struct model * m) {
    ggml_backend_buffer_free(m->buf);
    ggml_free(m->ctx_compute);
    ggml_free(m->ctx_static);
}

static ggml_opt_dataset_t make_dataset(void) {
    ggml_opt_dataset_t d      = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 4, 3, NDATA, 1);
    float *            x      = (float *) ggml_opt_dataset_data(d)->data;
    float *            labels = (float *) ggml_opt_dataset_labels(d)->data;
    for (int i = 0; i < NDATA; ++i) {
        float * p = x + 4 * i;
        for (int k = 0; k < 4; ++k) {
            p[k] = uniform();
        }
        const float s[3] = {p[0] + p[1], p[2] - p[3], -p[0] + 0.5f * p[3]};
        const int   c    = s[0] >= s[1] && s[0] >= s[2] ? 0 : s[1] >= s[2] ? 1 : 2;
        for (int k = 0; k < 3; ++k) {
            labels[3 * i + k] = k == c ? 1.0f : 0.0f;
        }
    }
    return d;
}

static struct ggml_opt_optimizer_params fast_adamw(void * userdata) {
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(userdata);
    p.adamw.alpha                      = 0.05f;
    p.sgd.alpha                        = 0.5f;
    return p;
}

int main(void) {
    ggml_opt_free(NULL);
    ggml_opt_result_free(NULL);
    ggml_opt_dataset_free(NULL);
    CHECK(1, "freeing NULL optimisation objects returns");

    ggml_backend_t       backend = ggml_backend_cpu_init();
    ggml_backend_sched_t sched   = ggml_backend_sched_new(&backend, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    ggml_opt_dataset_t   data    = make_dataset();
    CHECK(ggml_opt_dataset_ndata(data) == NDATA, "the dataset holds its datapoints");

    /* batches follow the permutation, which a shuffle changes but keeps whole */
    float batch[4 * BATCH], first[4 * BATCH], labels[3 * BATCH];
    ggml_opt_dataset_get_batch_host(data, first, sizeof first, labels, 0);
    CHECK(memcmp(first, ggml_opt_dataset_data(data)->data, sizeof first) == 0, "batch 0 is the first datapoints");

    struct model m;
    model_init(&m, backend);
    struct ggml_opt_params params = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    params.ctx_compute            = m.ctx_compute;
    params.inputs                 = m.inputs;
    params.outputs                = m.outputs;
    params.get_opt_pars           = fast_adamw;
    ggml_opt_context_t opt        = ggml_opt_init(params);
    CHECK(ggml_opt_static_graphs(opt), "a compute context gives static graphs");
    CHECK(ggml_opt_loss(opt) && ggml_opt_labels(opt) && ggml_opt_pred(opt) && ggml_opt_ncorrect(opt),
          "a cross-entropy context has a loss, labels, predictions and a count");
    CHECK(ggml_opt_context_optimizer_type(opt) == GGML_OPT_OPTIMIZER_TYPE_ADAMW &&
              strcmp(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_SGD), "sgd") == 0,
          "optimizer type and names");
    ggml_opt_dataset_shuffle(opt, data, -1);
    double sum_first = 0, sum_shuffled = 0;
    for (int i = 0; i < NDATA / BATCH; ++i) {
        ggml_opt_dataset_get_batch_host(data, batch, sizeof batch, labels, i);
        for (int k = 0; k < 4 * BATCH; ++k) {
            sum_shuffled += batch[k];
        }
    }
    for (int k = 0; k < 4 * NDATA; ++k) {
        sum_first += ((const float *) ggml_opt_dataset_data(data)->data)[k];
    }
    ggml_opt_dataset_get_batch_host(data, batch, sizeof batch, labels, 0);
    CHECK(memcmp(first, batch, sizeof batch) != 0 && fabs(sum_first - sum_shuffled) < 1e-3,
          "a shuffle reorders the datapoints and keeps them all");

    ggml_opt_result_t train = ggml_opt_result_init(), val = ggml_opt_result_init();
    double            loss0 = 0, loss = 0, unc = 0, acc = 0;
    for (int epoch = 0; epoch < 30; ++epoch) {
        ggml_opt_result_reset(train);
        ggml_opt_result_reset(val);
        ggml_opt_epoch(opt, data, train, val, NDATA - 2 * BATCH, NULL, NULL);
        ggml_opt_result_loss(train, &loss, &unc);
        if (epoch == 0) {
            loss0 = loss;
        }
    }
    int64_t ndata = 0;
    ggml_opt_result_ndata(train, &ndata);
    CHECK(ndata == NDATA - 2 * BATCH, "the training result counts the training datapoints");
    CHECK(loss < 0.5 * loss0 && isfinite(unc), "30 epochs of AdamW more than halve the training loss");
    ggml_opt_result_accuracy(val, &acc, &unc);
    CHECK(acc >= 0.8, "the validation accuracy is at least 80%");
    int32_t pred[2 * BATCH];
    ggml_opt_result_pred(val, pred);
    CHECK(pred[0] >= 0 && pred[0] < 3, "predictions are classes");
    ggml_opt_free(opt);
    model_free(&m);

    /* ggml_opt_fit: a fresh model, SGD, logical batches of two physical ones, a 25%
     * validation split; then a forward-only context measures the loss it reached */
    model_init(&m, backend);
    ggml_opt_fit(sched, m.ctx_compute, m.inputs, m.outputs, data, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY,
                 GGML_OPT_OPTIMIZER_TYPE_SGD, fast_adamw, 20, 2 * BATCH, 0.25f, true);
    ggml_free(m.ctx_compute);
    struct ggml_init_params cp = {GGML_DEFAULT_GRAPH_SIZE * ggml_tensor_overhead() +
                                      ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true),
                                  NULL, true};
    m.ctx_compute              = ggml_init(cp);
    m.outputs                  = ggml_add(m.ctx_compute, ggml_mul_mat(m.ctx_compute, m.w, m.inputs), m.b);
    params                     = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    params.ctx_compute         = m.ctx_compute;
    params.inputs              = m.inputs;
    params.outputs             = m.outputs;
    params.build_type          = GGML_OPT_BUILD_TYPE_FORWARD;
    opt                        = ggml_opt_init(params);
    ggml_opt_result_reset(val);
    ggml_opt_epoch(opt, data, NULL, val, 0, NULL, NULL);
    ggml_opt_result_loss(val, &loss, &unc);
    CHECK(loss < 0.5 * loss0, "ggml_opt_fit with SGD more than halves the loss");
    ggml_opt_free(opt);
    model_free(&m);

    ggml_opt_result_free(train);
    ggml_opt_result_free(val);
    ggml_opt_dataset_free(data);
    ggml_backend_sched_free(sched);
    ggml_backend_free(backend);
    return 0;
}
