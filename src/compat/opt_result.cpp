// opt_result.cpp - ggml-opt's results: the losses, predictions and correct counts of the
// evaluations an epoch made, and their mean and uncertainty.
#include "opt_impl.h"

#include <cmath>

extern "C" {

ggml_opt_result_t ggml_opt_result_init(void) { return new ggml_opt_result; }

void ggml_opt_result_free(ggml_opt_result_t result) { delete result; }

void ggml_opt_result_reset(ggml_opt_result_t result) {
    result->ndata = 0;
    result->loss.clear();
    result->pred.clear();
    result->ncorrect = 0;
}

void ggml_opt_result_ndata(ggml_opt_result_t result, int64_t * ndata) { *ndata = result->ndata; }

/// The mean loss per datapoint (or the summed loss, for a sum loss) over the batches, and
/// the standard error of that estimate (NaN below two batches). A per-datapoint loss was
/// divided by opt_period in the graph; it is scaled back here.
void ggml_opt_result_loss(ggml_opt_result_t result, double * loss, double * unc) {
    const auto n = static_cast<double>(result->loss.size());
    if (result->loss.empty()) {
        *loss = 0.0;
        if (unc) {
            *unc = NAN;
        }
        return;
    }
    double sum = 0.0, sum2 = 0.0;
    for (float l : result->loss) {
        const float x = result->loss_per_datapoint ? l * static_cast<float>(result->opt_period) : l;
        sum += static_cast<double>(x);
        sum2 += static_cast<double>(x * x);  // squared in f32, as ggml
    }
    const double mean = sum / n;
    *loss             = result->loss_per_datapoint ? mean : sum;
    if (!unc) {
        return;
    }
    const double var = sum2 / n - mean * mean;  // without Bessel's correction
    *unc = n < 2 ? NAN : result->loss_per_datapoint ? std::sqrt(var / (n - 1)) : std::sqrt(var * n / (n - 1));
}

void ggml_opt_result_pred(ggml_opt_result_t result, int32_t * pred) {
    for (size_t i = 0; i < result->pred.size(); ++i) {
        pred[i] = result->pred[i];
    }
}

void ggml_opt_result_accuracy(ggml_opt_result_t result, double * accuracy, double * unc) {
    const double n = static_cast<double>(result->ndata);
    *accuracy      = result->ncorrect >= 0 ? static_cast<double>(result->ncorrect) / n : NAN;
    if (unc) {
        *unc = result->ncorrect >= 0 && result->ndata >= 2 ? std::sqrt(*accuracy * (1.0 - *accuracy) / (n - 1)) : NAN;
    }
}

}  // extern "C"
