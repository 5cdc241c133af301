// sampler.cpp - see sampler.h.
#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace gk::run {

Sampler::Sampler(const sampler_params & params)
    : params_(params), seed_(params.seed == k_random_seed ? std::random_device{}() : params.seed), rng_(seed_) {}

void Sampler::accept(token_id id) {
    if (params_.repeat_last_n <= 0) return;
    recent_.push_back(id);
    while (recent_.size() > static_cast<size_t>(params_.repeat_last_n)) recent_.pop_front();
}

void Sampler::apply_penalty(std::vector<candidate> & c) const {
    if (params_.repeat_penalty == 1.0f || recent_.empty()) return;
    // Each distinct recent token once: a positive logit is divided, a negative one multiplied.
    std::unordered_set<token_id> seen(recent_.begin(), recent_.end());
    for (token_id id : seen) {
        if (id < 0 || static_cast<size_t>(id) >= c.size()) continue;
        float & l = c[static_cast<size_t>(id)].logit;
        l         = l > 0.0f ? l / params_.repeat_penalty : l * params_.repeat_penalty;
    }
}

namespace {

/** p = softmax(logit) over the candidates, in place. */
template <class C> void softmax(std::vector<C> & c) {
    float max_l = -INFINITY;
    for (const C & x : c) max_l = std::max(max_l, x.logit);
    double sum = 0.0;
    for (C & x : c) {
        x.p = std::exp(x.logit - max_l);
        sum += x.p;
    }
    for (C & x : c) x.p = static_cast<float>(x.p / sum);
}

} // namespace

token_id Sampler::sample(std::span<const float> logits) {
    cand_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        const float l = std::isnan(logits[i]) ? -INFINITY : logits[i];  // NaN would break the ordering
        cand_[i]      = {static_cast<token_id>(i), l, 0.0f};
    }
    apply_penalty(cand_);

    // Largest logit first, the lower id first on a tie: a total order, so the result does
    // not depend on the sort algorithm.
    const auto by_logit = [](const candidate & a, const candidate & b) {
        return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    };
    if (params_.temp <= 0.0f) {
        return std::min_element(cand_.begin(), cand_.end(), by_logit)->id;  // greedy
    }
    if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < cand_.size()) {
        std::partial_sort(cand_.begin(), cand_.begin() + params_.top_k, cand_.end(), by_logit);
        cand_.resize(static_cast<size_t>(params_.top_k));
    } else {
        std::sort(cand_.begin(), cand_.end(), by_logit);
    }
    softmax(cand_);
    if (params_.top_p < 1.0f) {
        // The smallest prefix whose probability reaches top_p.
        double cum  = 0.0;
        size_t keep = cand_.size();
        for (size_t i = 0; i < cand_.size(); ++i) {
            cum += cand_[i].p;
            if (cum >= params_.top_p) {
                keep = i + 1;
                break;
            }
        }
        cand_.resize(keep);
    }
    if (params_.min_p > 0.0f) {
        // Keep tokens at least min_p times as likely as the best (the best always stays).
        const float floor_logit = cand_.front().logit + std::log(params_.min_p);
        size_t      keep        = 1;
        while (keep < cand_.size() && cand_[keep].logit >= floor_logit) ++keep;
        cand_.resize(keep);
    }
    for (candidate & c : cand_) c.logit /= params_.temp;
    softmax(cand_);

    // Inverse-CDF draw with 24 random bits; the last candidate absorbs rounding.
    const double u   = static_cast<double>(rng_() >> 8) / static_cast<double>(1u << 24);
    double       cum = 0.0;
    for (const candidate & c : cand_) {
        cum += c.p;
        if (u < cum) return c.id;
    }
    return cand_.back().id;
}

} // namespace gk::run
