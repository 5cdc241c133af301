// opt_dataset.cpp - ggml-opt's datasets: datapoints and labels in one CPU buffer, copied
// into batches shard by shard in the order of a permutation that training shuffles.
#include "opt_impl.h"

#include "ggml-backend.h"

#include <algorithm>
#include <cstring>

namespace {

void require(bool ok, const char * fn, const char * what) {
    if (!ok) {
        ggml_abort(__FILE__, __LINE__, "%s: %s", fn, what);
    }
}

/// Shards per batch of nb_data bytes; aborts unless the batch is whole shards of the dataset.
int64_t shards_per_batch(const ggml_opt_dataset * d, size_t nb_data, int64_t ibatch, const char * fn) {
    require(nb_data % d->nbs_data == 0, fn, "the batch is not a whole number of shards");
    const auto n = static_cast<int64_t>(nb_data / d->nbs_data);
    require(ibatch >= 0 && (ibatch + 1) * n <= static_cast<int64_t>(d->permutation.size()), fn,
            "batch index out of range");
    return n;
}

}  // namespace

extern "C" {

ggml_opt_dataset_t ggml_opt_dataset_init(enum ggml_type type_data, enum ggml_type type_label, int64_t ne_datapoint,
                                         int64_t ne_label, int64_t ndata, int64_t ndata_shard) {
    const char * fn = "ggml_opt_dataset_init";
    require(ne_datapoint > 0 && ne_label >= 0 && ndata > 0 && ndata_shard > 0, fn,
            "ne_datapoint, ndata and ndata_shard must be > 0, ne_label >= 0");
    require(ndata % ndata_shard == 0, fn, "ndata must be a multiple of ndata_shard");
    auto * d       = new ggml_opt_dataset;
    d->ndata       = ndata;
    d->ndata_shard = ndata_shard;
    d->ctx         = ggml_init({2 * ggml_tensor_overhead(), nullptr, true});
    d->data        = ggml_new_tensor_2d(d->ctx, type_data, ne_datapoint, ndata);
    d->nbs_data    = ggml_nbytes(d->data) / static_cast<size_t>(ndata / ndata_shard);
    if (ne_label > 0) {
        d->labels     = ggml_new_tensor_2d(d->ctx, type_label, ne_label, ndata);
        d->nbs_labels = ggml_nbytes(d->labels) / static_cast<size_t>(ndata / ndata_shard);
    }
    d->buf = ggml_backend_alloc_ctx_tensors_from_buft(d->ctx, ggml_backend_cpu_buffer_type());
    d->permutation.resize(static_cast<size_t>(ndata / ndata_shard));
    for (size_t i = 0; i < d->permutation.size(); ++i) {
        d->permutation[i] = static_cast<int64_t>(i);
    }
    return d;
}

void ggml_opt_dataset_free(ggml_opt_dataset_t dataset) {
    if (dataset) {
        ggml_backend_buffer_free(dataset->buf);
        ggml_free(dataset->ctx);
        delete dataset;
    }
}

int64_t ggml_opt_dataset_ndata(ggml_opt_dataset_t dataset) { return dataset->ndata; }

struct ggml_tensor * ggml_opt_dataset_data(ggml_opt_dataset_t dataset) {
    return dataset->data;
}

struct ggml_tensor * ggml_opt_dataset_labels(ggml_opt_dataset_t dataset) {
    return dataset->labels;
}

void ggml_opt_dataset_shuffle(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, int64_t idata) {
    const char * fn = "ggml_opt_dataset_shuffle";
    require(idata <= dataset->ndata, fn, "idata is past the dataset's end");
    if (idata < 0) {
        std::shuffle(dataset->permutation.begin(), dataset->permutation.end(), opt_ctx->rng);
        return;
    }
    require(idata % dataset->ndata_shard == 0, fn, "idata must be a multiple of the shard size");
    std::shuffle(dataset->permutation.begin(), dataset->permutation.begin() + idata / dataset->ndata_shard,
                 opt_ctx->rng);
}

void ggml_opt_dataset_get_batch(ggml_opt_dataset_t dataset, struct ggml_tensor * data_batch,
                                struct ggml_tensor * labels_batch, int64_t ibatch) {
    const char * fn = "ggml_opt_dataset_get_batch";
    require(data_batch && ggml_is_contiguous(data_batch) && data_batch->type == dataset->data->type, fn,
            "data_batch must be contiguous, of the dataset's type");
    require((labels_batch == nullptr) == (dataset->labels == nullptr), fn,
            "labels_batch must be given exactly when the dataset has labels");
    require(!labels_batch || (ggml_is_contiguous(labels_batch) && labels_batch->type == dataset->labels->type), fn,
            "labels_batch must be contiguous, of the labels' type");
    const int64_t n = shards_per_batch(dataset, ggml_nbytes(data_batch), ibatch, fn);
    require(!labels_batch || ggml_nbytes(labels_batch) == static_cast<size_t>(n) * dataset->nbs_labels, fn,
            "labels_batch does not hold the labels of the batch's shards");
    for (int64_t i = 0; i < n; ++i) {
        const auto shard = static_cast<size_t>(dataset->permutation[static_cast<size_t>(ibatch * n + i)]);
        const auto at    = static_cast<size_t>(i);
        ggml_backend_tensor_set(data_batch, static_cast<const char *>(dataset->data->data) + shard * dataset->nbs_data,
                                at * dataset->nbs_data, dataset->nbs_data);
        if (labels_batch) {
            ggml_backend_tensor_set(labels_batch,
                                    static_cast<const char *>(dataset->labels->data) + shard * dataset->nbs_labels,
                                    at * dataset->nbs_labels, dataset->nbs_labels);
        }
    }
}

void ggml_opt_dataset_get_batch_host(ggml_opt_dataset_t dataset, void * data_batch, size_t nb_data_batch,
                                     void * labels_batch, int64_t ibatch) {
    const char * fn = "ggml_opt_dataset_get_batch_host";
    require((labels_batch == nullptr) == (dataset->labels == nullptr), fn,
            "labels_batch must be given exactly when the dataset has labels");
    const int64_t n = shards_per_batch(dataset, nb_data_batch, ibatch, fn);
    for (int64_t i = 0; i < n; ++i) {
        const auto shard = static_cast<size_t>(dataset->permutation[static_cast<size_t>(ibatch * n + i)]);
        const auto at    = static_cast<size_t>(i);
        std::memcpy(static_cast<char *>(data_batch) + at * dataset->nbs_data,
                    static_cast<const char *>(dataset->data->data) + shard * dataset->nbs_data, dataset->nbs_data);
        if (labels_batch) {
            std::memcpy(static_cast<char *>(labels_batch) + at * dataset->nbs_labels,
                        static_cast<const char *>(dataset->labels->data) + shard * dataset->nbs_labels,
                        dataset->nbs_labels);
        }
    }
}

}  // extern "C"
