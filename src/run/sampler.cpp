// sampler.cpp - see sampler.h.
#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_set>

namespace gk::run {

Sampler::Sampler(const sampler_params & params)
    : params_(params), seed_(params.seed == k_random_seed ? std::random_device{}() : params.seed), rng_(seed_) {}

void Sampler::accept(token_id id) {
    if (params_.repeat_last_n <= 0) return;
    recent_.push_back(id);
    while (recent_.size() > static_cast<size_t>(params_.repeat_last_n)) recent_.pop_front();
}

void Sampler::apply_penalty(std::vector<float> & logits) const {
    if (params_.repeat_penalty == 1.0f || recent_.empty()) return;
    // Each distinct recent token once: a positive logit is divided, a negative one multiplied.
    std::unordered_set<token_id> seen(recent_.begin(), recent_.end());
    for (token_id id : seen) {
        if (id < 0 || static_cast<size_t>(id) >= logits.size()) continue;
        float & l = logits[static_cast<size_t>(id)];
        l         = l > 0.0f ? l / params_.repeat_penalty : l * params_.repeat_penalty;
    }
}

namespace {

constexpr size_t k_lanes = 16;  // elements the scans below look at together (vectorised)

/** The id of the largest logit, the lowest on a tie (l holds no NaN). Lane j keeps the
 *  largest of elements j, j + 16, ... and its first index; the lanes are then combined
 *  (largest, then lowest index) and the tail scanned. */
token_id argmax(const std::vector<float> & l) {
    float    m[k_lanes];
    uint32_t at[k_lanes];  // a vocabulary has fewer than 2^32 entries
    for (uint32_t j = 0; j < k_lanes; ++j) {
        m[j]  = -INFINITY;
        at[j] = j;
    }
    size_t i = 0;
    for (; i + k_lanes <= l.size(); i += k_lanes) {
        for (uint32_t j = 0; j < k_lanes; ++j) {
            const bool gt = l[i + j] > m[j];
            m[j]          = gt ? l[i + j] : m[j];
            at[j]         = gt ? static_cast<uint32_t>(i) + j : at[j];
        }
    }
    size_t best = 0;
    for (size_t j = 1; j < k_lanes; ++j) {
        if (m[j] > m[best] || (m[j] == m[best] && at[j] < at[best])) best = j;
    }
    float  best_l  = m[best];
    size_t best_at = at[best];
    for (; i < l.size(); ++i) {
        if (l[i] > best_l) {
            best_l  = l[i];
            best_at = i;
        }
    }
    return static_cast<token_id>(best_at);
}

/** The k best of logits l (0 < k < l.size()) into c, best first, in the order `better`
 *  (larger logit, then lower id): a heap of the k best so far, its worst in front. Ids
 *  come in increasing order, so a logit equal to the worst kept one never displaces it,
 *  and a run of 16 logits none above the worst kept one is passed over at once. */
template <class C, class Better> void top_k(const std::vector<float> & l, size_t k, std::vector<C> & c, Better better) {
    c.clear();
    size_t i = 0;
    for (; i < k; ++i) {
        c.push_back({static_cast<token_id>(i), l[i], 0.0f});
        std::push_heap(c.begin(), c.end(), better);
    }
    float worst = c.front().logit;
    while (i < l.size()) {
        if (i + k_lanes <= l.size()) {
            bool any = false;
            for (size_t j = 0; j < k_lanes; ++j) any |= l[i + j] > worst;
            if (!any) {
                i += k_lanes;
                continue;
            }
        }
        const size_t end = std::min(i + k_lanes, l.size());
        for (; i < end; ++i) {
            if (l[i] > worst) {
                std::pop_heap(c.begin(), c.end(), better);
                c.back() = {static_cast<token_id>(i), l[i], 0.0f};
                std::push_heap(c.begin(), c.end(), better);
                worst = c.front().logit;
            }
        }
    }
    std::sort_heap(c.begin(), c.end(), better);
}

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
    logits_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        const float l = logits[i];
        logits_[i]    = l == l ? l : -INFINITY;  // NaN (l != l) would break the ordering
    }
    apply_penalty(logits_);
    if (params_.temp <= 0.0f) {
        return argmax(logits_);  // greedy
    }

    // Largest logit first, the lower id first on a tie: a total order, so the result does
    // not depend on the selection or sort algorithm.
    const auto by_logit = [](const candidate & a, const candidate & b) {
        return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    };
    if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < logits_.size()) {
        top_k(logits_, static_cast<size_t>(params_.top_k), cand_, by_logit);
    } else {
        cand_.resize(logits_.size());
        for (size_t i = 0; i < logits_.size(); ++i) cand_[i] = {static_cast<token_id>(i), logits_[i], 0.0f};
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
