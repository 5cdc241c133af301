// pooling.cpp - see pooling.h.
#include "pooling.h"

#include <cmath>
#include <string>

namespace gk::run {

namespace {

struct pooling_entry {
    pooling      p;
    const char * name;
};

constexpr pooling_entry k_poolings[] = {
    {pooling::none, "none"}, {pooling::mean, "mean"}, {pooling::cls, "cls"},
    {pooling::last, "last"}, {pooling::rank, "rank"},
};

constexpr bool poolings_keyed() {
    for (size_t i = 0; i < std::size(k_poolings); ++i) {
        if (static_cast<size_t>(k_poolings[i].p) != i) return false;
    }
    return true;
}
static_assert(poolings_keyed(), "k_poolings must list every pooling type in its value's place");

}  // namespace

std::optional<pooling> pooling_from_name(std::string_view name) {
    for (const pooling_entry & e : k_poolings) {
        if (name == e.name) return e.p;
    }
    return std::nullopt;
}

const char * pooling_name(pooling p) { return k_poolings[static_cast<size_t>(p)].name; }

std::vector<float> pool_hidden(std::span<const float> hidden, int64_t n_embd, pooling p, bool normalize) {
    if (n_embd < 1 || hidden.empty() || hidden.size() % static_cast<size_t>(n_embd) != 0) return {};
    const size_t        d        = static_cast<size_t>(n_embd);
    const size_t        n_tokens = hidden.size() / d;
    std::vector<double> sum(d, 0.0);
    switch (p) {
    case pooling::mean:
        for (size_t t = 0; t < n_tokens; ++t) {
            for (size_t i = 0; i < d; ++i) sum[i] += hidden[t * d + i];
        }
        for (double & v : sum) v /= static_cast<double>(n_tokens);
        break;
    case pooling::cls:
    case pooling::last: {
        const size_t t = p == pooling::cls ? 0 : n_tokens - 1;
        for (size_t i = 0; i < d; ++i) sum[i] = hidden[t * d + i];
        break;
    }
    case pooling::none:
    case pooling::rank: return {};
    }
    std::vector<float> out(d);
    for (size_t i = 0; i < d; ++i) out[i] = static_cast<float>(sum[i]);
    if (normalize) {
        double norm = 0.0;
        for (float v : out) norm += static_cast<double>(v) * v;
        norm = std::sqrt(norm);
        if (norm > 0.0) {
            for (float & v : out) v = static_cast<float>(v / norm);
        }
    }
    return out;
}

}  // namespace gk::run
