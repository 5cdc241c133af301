// sampler.cpp - see sampler.h.
#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace gk::run {

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
template <class C, class Better>
void top_k(const std::vector<float> & l, size_t k, std::vector<C> & c, Better better) {
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
template <class C>
void softmax(std::vector<C> & c) {
    float max_l = -INFINITY;
    for (const C & x : c) max_l = std::max(max_l, x.logit);
    double sum = 0.0;
    for (C & x : c) {
        x.p = std::exp(x.logit - max_l);
        sum += x.p;
    }
    for (C & x : c) x.p = static_cast<float>(x.p / sum);
}

/** A uniform number in [0, 1) from 24 bits of `rng` (exact in float and double). */
double uniform24(std::mt19937 & rng) { return static_cast<double>(rng() >> 8) / static_cast<double>(1u << 24); }

struct stage_info {
    sampler_stage stage;
    const char *  name;     // --samplers
    char          letter;   // --sampling-seq
    const char *  printed;  // the chain as llama.cpp prints it
};
constexpr stage_info k_stages[] = {
    {sampler_stage::penalties, "penalties", 'e', "penalties"},
    {sampler_stage::dry, "dry", 'd', "dry"},
    {sampler_stage::top_n_sigma, "top_n_sigma", 's', "top-n-sigma"},
    {sampler_stage::top_k, "top_k", 'k', "top-k"},
    {sampler_stage::typical_p, "typ_p", 'y', "typical"},
    {sampler_stage::top_p, "top_p", 'p', "top-p"},
    {sampler_stage::min_p, "min_p", 'm', "min-p"},
    {sampler_stage::xtc, "xtc", 'x', "xtc"},
    {sampler_stage::temperature, "temperature", 't', "temp-ext"},
};
constexpr std::pair<const char *, sampler_stage> k_alt_names[] = {
    {"top-k", sampler_stage::top_k},         {"top-p", sampler_stage::top_p},
    {"nucleus", sampler_stage::top_p},       {"top-n-sigma", sampler_stage::top_n_sigma},
    {"typical-p", sampler_stage::typical_p}, {"typical", sampler_stage::typical_p},
    {"typ-p", sampler_stage::typical_p},     {"typ", sampler_stage::typical_p},
    {"min-p", sampler_stage::min_p},         {"temp", sampler_stage::temperature},
};

const stage_info & info(sampler_stage s) {
    for (const stage_info & i : k_stages) {
        if (i.stage == s) return i;
    }
    return k_stages[0];  // not reached: k_stages lists every stage
}

}  // namespace

std::vector<sampler_stage> default_sampler_order() {
    std::vector<sampler_stage> order;
    for (const stage_info & i : k_stages) order.push_back(i.stage);
    return order;
}

std::optional<sampler_stage> sampler_stage_from_name(std::string_view name) {
    for (const stage_info & i : k_stages) {
        if (name == i.name) return i.stage;
    }
    for (const auto & [alt, s] : k_alt_names) {
        if (name == alt) return s;
    }
    return std::nullopt;
}

std::optional<sampler_stage> sampler_stage_from_char(char c) {
    for (const stage_info & i : k_stages) {
        if (c == i.letter) return i.stage;
    }
    return std::nullopt;
}

const char * sampler_stage_name(sampler_stage s) { return info(s).name; }

namespace {

/** How many recent tokens a look-back of `n` (0 off, -1 the context) keeps; SIZE_MAX: all. */
size_t window_size(int64_t n, int64_t n_ctx) {
    if (n == -1) return n_ctx > 0 ? static_cast<size_t>(n_ctx) : SIZE_MAX;
    return n > 0 ? static_cast<size_t>(n) : 0;
}

// Largest logit first, the lower id first on a tie: a total order, so the result does
// not depend on the selection or sort algorithm.
template <class C>
bool by_logit(const C & a, const C & b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

}  // namespace

Sampler::Sampler(const sampler_params & params, sampler_context context)
    : params_(params),
      seed_(params.seed == k_random_seed ? std::random_device{}() : params.seed),
      rng_(seed_),
      xtc_rng_(seed_),
      window_(window_size(params.repeat_last_n, context.n_ctx)),
      dry_(params.dry_multiplier, params.dry_base, params.dry_allowed_length,
           static_cast<int64_t>(std::min<size_t>(window_size(params.dry_penalty_last_n, context.n_ctx), INT64_MAX)),
           std::move(context.dry_breakers)),
      mirostat_mu_(2.0f * params.mirostat_tau) {
    for (token_id id : context.banned) params_.logit_biases.push_back({id, -INFINITY});
    for (sampler_stage s : params_.order) {
        if (stage_active(s)) active_.push_back(s);
    }
    // Greedy without a stage that could drop the most likely token (typical, XTC) and
    // without a logit change after a cut: the argmax of the penalised logits.
    const bool has_temperature = std::find(params_.order.begin(), params_.order.end(), sampler_stage::temperature) !=
                                 params_.order.end();
    greedy_fast_ = params_.mirostat == 0 && params_.temp <= 0.0f && params_.dynatemp_range <= 0.0f && has_temperature;
    bool cut     = false;
    for (sampler_stage s : active_) {
        if (s == sampler_stage::temperature) break;
        if (s == sampler_stage::typical_p || s == sampler_stage::xtc) greedy_fast_ = false;
        if (s == sampler_stage::penalties || s == sampler_stage::dry) {
            if (cut) greedy_fast_ = false;
        } else {
            cut = true;
        }
    }
}

size_t Sampler::min_keep() const { return static_cast<size_t>(std::max(params_.min_keep, 0)); }

bool Sampler::stage_active(sampler_stage s) const {
    const sampler_params & p = params_;
    switch (s) {
    case sampler_stage::penalties:
        return window_ != 0 && (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f);
    case sampler_stage::dry: return dry_.enabled();
    case sampler_stage::top_n_sigma: return p.top_n_sigma > 0.0f;
    case sampler_stage::top_k: return p.top_k > 0;
    case sampler_stage::typical_p: return p.typical_p < 1.0f;
    case sampler_stage::top_p: return p.top_p < 1.0f;
    case sampler_stage::min_p: return p.min_p > 0.0f;
    case sampler_stage::xtc: return p.xtc_probability > 0.0f && p.xtc_threshold <= 0.5f;
    case sampler_stage::temperature: return true;
    }
    return false;
}

std::string Sampler::chain() const {
    std::string s = "logits";
    if (!params_.logit_biases.empty()) s += " -> logit-bias";
    if (params_.mirostat != 0) return s + " -> temp -> " + (params_.mirostat == 1 ? "mirostat" : "mirostat-v2");
    for (sampler_stage st : params_.order) s += std::string(" -> ") + info(st).printed;
    return s + " -> dist";
}

void Sampler::accept(token_id id) {
    dry_.accept(id);
    if (window_ == 0) return;
    recent_.push_back(id);
    ++counts_[id];
    if (recent_.size() > window_) {
        const token_id old = recent_.front();
        recent_.pop_front();
        if (--counts_[old] == 0) counts_.erase(old);
    }
}

void Sampler::apply_penalties() {
    // A positive logit is divided by the repeat penalty, a negative one multiplied; then
    // count * frequency + presence is subtracted (llama.cpp's penalties sampler).
    const float r    = params_.repeat_penalty;
    const float freq = params_.frequency_penalty, pres = params_.presence_penalty;
    const auto  penalise = [&](float & l, int count) {
        l = l > 0.0f ? l / r : l * r;
        if (freq != 0.0f || pres != 0.0f) l -= static_cast<float>(count) * freq + pres;
    };
    if (!materialized_) {
        for (const auto & [id, count] : counts_) {
            if (id >= 0 && static_cast<size_t>(id) < logits_.size()) penalise(logits_[static_cast<size_t>(id)], count);
        }
        return;
    }
    for (candidate & c : cand_) {
        const auto it = counts_.find(c.id);
        if (it != counts_.end()) penalise(c.logit, it->second);
    }
    sorted_ = false;
}

void Sampler::apply_dry() {
    const auto & pen = dry_.penalties();
    if (pen.empty()) return;
    if (!materialized_) {
        for (const auto & [id, amount] : pen) {
            if (id >= 0 && static_cast<size_t>(id) < logits_.size()) logits_[static_cast<size_t>(id)] -= amount;
        }
        return;
    }
    for (candidate & c : cand_) {
        const auto it = std::lower_bound(pen.begin(), pen.end(), std::pair<token_id, float>{c.id, -INFINITY});
        if (it != pen.end() && it->first == c.id) c.logit -= it->second;
    }
    sorted_ = false;
}

void Sampler::materialize() {
    if (materialized_) return;
    cand_.resize(logits_.size());
    for (size_t i = 0; i < logits_.size(); ++i) cand_[i] = {static_cast<token_id>(i), logits_[i], 0.0f};
    materialized_ = true;
    sorted_       = false;
}

void Sampler::sort_candidates() {
    materialize();
    if (sorted_) return;
    std::sort(cand_.begin(), cand_.end(), by_logit<candidate>);
    sorted_ = true;
}

void Sampler::stage_top_k() {
    const size_t k = static_cast<size_t>(params_.top_k);
    if (!materialized_) {
        if (k >= logits_.size()) return;
        top_k(logits_, k, cand_, by_logit<candidate>);
        materialized_ = sorted_ = true;
        return;
    }
    if (k >= cand_.size()) return;
    sort_candidates();
    cand_.resize(k);
}

void Sampler::stage_top_n_sigma() {
    // Keep the logits within n standard deviations of the largest (mean and deviation
    // over the finite logits); the others are dropped.
    materialize();
    double max_l = -INFINITY, sum = 0.0;
    size_t n = 0;
    for (const candidate & c : cand_) {
        if (c.logit == -INFINITY) continue;
        max_l = std::max(max_l, static_cast<double>(c.logit));
        sum += c.logit;
        ++n;
    }
    if (n == 0) return;
    const double mean = sum / static_cast<double>(n);
    double       acc  = 0.0;
    for (const candidate & c : cand_) {
        if (c.logit != -INFINITY) acc += (c.logit - mean) * (c.logit - mean);
    }
    const double floor_l = max_l - params_.top_n_sigma * std::sqrt(acc / static_cast<double>(n));
    std::erase_if(cand_, [&](const candidate & c) { return c.logit < floor_l; });
}

void Sampler::stage_typical() {
    // Locally typical sampling (Meister et al. 2022): keep the tokens whose surprise is
    // closest to the entropy until their probability exceeds typical_p; they stay in that
    // order (ties in the order by logit).
    sort_candidates();
    softmax(cand_);
    double entropy = 0.0;
    for (const candidate & c : cand_) {
        if (c.p > 0.0f) entropy -= c.p * std::log(static_cast<double>(c.p));
    }
    std::vector<std::pair<double, size_t>> score(cand_.size());
    for (size_t i = 0; i < cand_.size(); ++i) {
        const double p = cand_[i].p;
        score[i]       = {p > 0.0 ? std::fabs(-std::log(p) - entropy) : INFINITY, i};
    }
    std::stable_sort(score.begin(), score.end(), [](const auto & a, const auto & b) { return a.first < b.first; });
    double cum  = 0.0;
    size_t keep = score.size();
    for (size_t i = 0; i < score.size(); ++i) {
        cum += cand_[score[i].second].p;
        if (cum > params_.typical_p && i + 1 >= min_keep()) {
            keep = i + 1;
            break;
        }
    }
    std::vector<candidate> kept;
    kept.reserve(keep);
    for (size_t i = 0; i < keep; ++i) kept.push_back(cand_[score[i].second]);
    cand_.swap(kept);
    sorted_ = false;
}

void Sampler::stage_top_p() {
    // The smallest prefix whose probability reaches top_p.
    sort_candidates();
    softmax(cand_);
    double cum  = 0.0;
    size_t keep = cand_.size();
    for (size_t i = 0; i < cand_.size(); ++i) {
        cum += cand_[i].p;
        if (cum >= params_.top_p && i + 1 >= min_keep()) {
            keep = i + 1;
            break;
        }
    }
    cand_.resize(keep);
}

void Sampler::stage_min_p() {
    // Keep tokens at least min_p times as likely as the best (the best always stays), and
    // at least min_keep.
    materialize();
    if (!sorted_) {
        float max_l = -INFINITY;
        for (const candidate & c : cand_) max_l = std::max(max_l, c.logit);
        const float  floor_logit = std::min(max_l + std::log(params_.min_p), max_l);
        const size_t n           = static_cast<size_t>(
            std::count_if(cand_.begin(), cand_.end(), [&](const candidate & c) { return c.logit >= floor_logit; }));
        if (n >= min_keep()) {
            std::erase_if(cand_, [&](const candidate & c) { return c.logit < floor_logit; });
            return;
        }
        sort_candidates();
    }
    const float floor_logit = cand_.front().logit + std::log(params_.min_p);
    size_t      keep        = 1;
    while (keep < cand_.size() && (cand_[keep].logit >= floor_logit || keep < min_keep())) ++keep;
    cand_.resize(keep);
}

void Sampler::stage_xtc() {
    // Exclude top choices (XTC): with probability xtc_probability, drop every token at
    // least xtc_threshold likely except the least likely of them.
    materialize();
    if (cand_.size() < 2) return;
    if (uniform24(xtc_rng_) > params_.xtc_probability) return;
    sort_candidates();
    softmax(cand_);
    size_t last = 0;
    while (last + 1 < cand_.size() && cand_[last + 1].p >= params_.xtc_threshold) ++last;
    if (last > 0 && cand_.size() - last >= min_keep()) {
        cand_.erase(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(last));
    }
}

bool Sampler::stage_temperature(bool dynamic) {
    float t = params_.temp;
    if (dynamic && params_.dynatemp_range > 0.0f) {
        // Dynamic temperature (llama.cpp's temp-ext): from temp - range (at least 0) for a
        // certain distribution to temp + range for a uniform one, by the entropy over its
        // largest possible value (ln n), to the power dynatemp_exponent.
        materialize();
        if (cand_.size() <= 1) return false;
        sort_candidates();
        softmax(cand_);
        double entropy = 0.0;
        for (const candidate & c : cand_) {
            if (c.p > 0.0f) entropy -= c.p * std::log(static_cast<double>(c.p));
        }
        const float lo         = std::max(0.0f, params_.temp - params_.dynatemp_range);
        const float hi         = params_.temp + params_.dynatemp_range;
        const float normalised = static_cast<float>(entropy / std::log(static_cast<double>(cand_.size())));
        t                      = lo + (hi - lo) * std::pow(normalised, params_.dynatemp_exponent);
    }
    if (t > 0.0f) {
        materialize();
        // A temperature so small that the best logit / t overflows (1e-38) would leave inf
        // and NaN probabilities: then divide the distances from the best logit instead
        // (the same distribution wherever both are finite).
        float best = -std::numeric_limits<float>::infinity();
        for (const candidate & c : cand_) best = std::max(best, c.logit);
        const float shift = std::isfinite(best / t) ? 0.0f : best;
        for (candidate & c : cand_) c.logit = (c.logit - shift) / t;
        return false;
    }
    // Greedy: only the most likely token (the lowest id on a tie) stays.
    if (!materialized_) {
        const token_id best = argmax(logits_);
        cand_.assign(1, {best, logits_[static_cast<size_t>(best)], 0.0f});
        materialized_ = true;
    } else {
        const auto best = std::min_element(cand_.begin(), cand_.end(), by_logit<candidate>);
        cand_.assign(1, *best);
    }
    sorted_ = true;
    return true;
}

token_id Sampler::draw() {
    // Inverse-CDF draw in the order by logit, with 24 random bits; the last candidate
    // absorbs rounding.
    sort_candidates();
    softmax(cand_);
    const double u   = uniform24(rng_);
    double       cum = 0.0;
    for (const candidate & c : cand_) {
        cum += c.p;
        if (u < cum) return c.id;
    }
    return cand_.back().id;
}

token_id Sampler::sample_mirostat() {
    // llama.cpp's chain for mirostat: temperature, then mirostat over every token. Only
    // the candidates that matter are sorted (the vocabulary may have 262 144).
    materialized_ = false;
    stage_temperature(false);
    materialize();
    softmax(cand_);
    const float tau = params_.mirostat_tau, eta = params_.mirostat_eta;
    if (params_.mirostat == 1) {
        // Mirostat (Basu et al. 2021): estimate the Zipf exponent s from the 100 most
        // likely tokens, then keep the k that give a surprise of mu for it.
        const auto sort_top = [&](size_t n) {
            n = std::min(n, cand_.size());
            std::partial_sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(n), cand_.end(),
                              by_logit<candidate>);
        };
        constexpr size_t m = 100;
        sort_top(m);
        float sum_ti_bi = 0.0f, sum_ti_sq = 0.0f;
        for (size_t i = 0; i + 1 < m && i + 1 < cand_.size() && cand_[i + 1].p > 0.0f; ++i) {
            const float t_i = std::log(static_cast<float>(i + 2) / static_cast<float>(i + 1));
            const float b_i = std::log(cand_[i].p / cand_[i + 1].p);
            sum_ti_bi += t_i * b_i;
            sum_ti_sq += t_i * t_i;
        }
        float k = 1.0f;
        if (sum_ti_sq > 0.0f) {
            const float s_hat   = sum_ti_bi / sum_ti_sq;
            const float epsilon = s_hat - 1.0f;
            k                   = std::pow(epsilon * std::pow(2.0f, mirostat_mu_) /
                                               (1.0f - std::pow(static_cast<float>(logits_.size()), -epsilon)),
                                           1.0f / s_hat);
        }
        const size_t keep = !(k >= 1.0f)                            ? 1
                            : k >= static_cast<float>(cand_.size()) ? cand_.size()
                                                                    : static_cast<size_t>(k);
        if (keep > m) sort_top(keep);
        cand_.resize(keep);
    } else {
        // Mirostat 2.0: keep the tokens whose surprise, -log2 p, is at most mu (at least
        // the most likely one), in the order by logit.
        const candidate best = *std::min_element(cand_.begin(), cand_.end(), by_logit<candidate>);
        std::erase_if(cand_, [&](const candidate & c) { return -std::log2(c.p) > mirostat_mu_; });
        if (cand_.empty()) cand_.push_back(best);
        sorted_ = false;
        sort_candidates();
    }
    softmax(cand_);
    const double u   = uniform24(rng_);
    double       cum = 0.0;
    size_t       at  = cand_.size() - 1;
    for (size_t i = 0; i < cand_.size(); ++i) {
        cum += cand_[i].p;
        if (u < cum) {
            at = i;
            break;
        }
    }
    // The learning step: mu moves against the error of the observed surprise.
    mirostat_mu_ -= eta * (-std::log2(cand_[at].p) - tau);
    return cand_[at].id;
}

token_id Sampler::sample(std::span<const float> logits) {
    if (logits.empty()) return k_no_token;
    logits_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        const float l = logits[i];
        logits_[i]    = l == l ? l : -INFINITY;  // NaN (l != l) would break the ordering
    }
    for (const logit_bias & b : params_.logit_biases) {
        if (b.id >= 0 && static_cast<size_t>(b.id) < logits_.size()) logits_[static_cast<size_t>(b.id)] += b.bias;
    }
    materialized_ = sorted_ = false;
    if (params_.mirostat != 0) return sample_mirostat();
    if (greedy_fast_) {
        for (sampler_stage s : active_) {
            if (s == sampler_stage::temperature) break;
            if (s == sampler_stage::penalties) apply_penalties();
            if (s == sampler_stage::dry) apply_dry();
        }
        return argmax(logits_);
    }
    bool greedy = false;
    for (sampler_stage s : active_) {
        switch (s) {
        case sampler_stage::penalties: apply_penalties(); break;
        case sampler_stage::dry: apply_dry(); break;
        case sampler_stage::top_n_sigma: stage_top_n_sigma(); break;
        case sampler_stage::top_k: stage_top_k(); break;
        case sampler_stage::typical_p: stage_typical(); break;
        case sampler_stage::top_p: stage_top_p(); break;
        case sampler_stage::min_p: stage_min_p(); break;
        case sampler_stage::xtc: stage_xtc(); break;
        case sampler_stage::temperature: greedy |= stage_temperature(true); break;
        }
    }
    if (greedy) {
        sort_candidates();
        return cand_.front().id;
    }
    return draw();
}

}  // namespace gk::run
