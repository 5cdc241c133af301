// sampler_dry.cpp - see sampler_dry.h.
#include "sampler_dry.h"

#include <algorithm>
#include <cmath>

namespace gk::run {

namespace {

constexpr size_t k_max_breaker_bytes = 40;  // llama.cpp's limits on a breaker
constexpr size_t k_max_tail_tokens   = 20;

void add_unique(std::vector<dry_breaker> & out, dry_breaker b) {
    // Entries of the same head are at the end (the vocabulary is scanned in id order).
    for (auto it = out.rbegin(); it != out.rend() && it->head == b.head; ++it) {
        if (*it == b) return;
    }
    out.push_back(std::move(b));
}

}  // namespace

std::vector<dry_breaker> dry_breakers_from_text(const Tokenizer & tok, const std::vector<std::string> & breakers) {
    std::vector<std::string> texts;
    for (const std::string & b : breakers) {
        if (!b.empty()) texts.push_back(b.substr(0, k_max_breaker_bytes));
    }
    std::vector<dry_breaker> out;
    for (token_id id = 0; id < tok.n_tokens(); ++id) {
        const std::string & piece = tok.token_to_piece(id, true);
        for (const std::string & s : texts) {
            if (piece.find(s) != std::string::npos) {
                add_unique(out, {id, {}});
                continue;
            }
            // Each place where the piece's end is a proper prefix of the breaker.
            for (size_t pos = piece.find(s[0]); pos != std::string::npos; pos = piece.find(s[0], pos + 1)) {
                const size_t n = piece.size() - pos;  // < s.size(): else find() had matched
                if (piece.compare(pos, n, s, 0, n) != 0) continue;
                std::vector<token_id> tail = tok.encode(std::string_view(s).substr(n), false, false);
                if (tail.size() > k_max_tail_tokens) tail.resize(k_max_tail_tokens);
                add_unique(out, {id, std::move(tail)});
            }
        }
    }
    return out;
}

DryPenalty::DryPenalty(float multiplier, float base, int32_t allowed_length, int64_t window,
                       std::vector<dry_breaker> breakers)
    : multiplier_(multiplier),
      base_(base),
      allowed_length_(allowed_length),
      window_(window > 0 ? static_cast<size_t>(window) : 0),
      enabled_(multiplier != 0.0f && base >= 1.0f && window_ > 0),
      breakers_(std::move(breakers)) {
    std::stable_sort(breakers_.begin(), breakers_.end(),
                     [](const dry_breaker & a, const dry_breaker & b) { return a.head < b.head; });
}

void DryPenalty::accept(token_id id) {
    if (!enabled_) return;
    last_.push_back(id);
    if (last_.size() > window_) last_.pop_front();
}

const std::vector<std::pair<token_id, float>> & DryPenalty::penalties() {
    out_.clear();
    const size_t n = last_.size();
    if (!enabled_ || n <= static_cast<size_t>(std::max(allowed_length_, 0))) return out_;
    rev_.assign(last_.rbegin(), last_.rend());

    const auto heads = [&](token_id t) {
        return std::equal_range(breakers_.begin(), breakers_.end(), dry_breaker{t, {}},
                                [](const dry_breaker & a, const dry_breaker & b) { return a.head < b.head; });
    };

    // A repeat may reach back only to the most recent breaker: rep_limit tokens are newer
    // than its last token.
    size_t rep_limit = n;
    for (size_t i = 0; i < n; ++i) {
        const auto [first, last] = heads(rev_[i]);
        long longest             = -1;
        for (auto it = first; it != last; ++it) {
            const size_t len = it->tail.size();
            if (static_cast<long>(len) <= longest || len > i) continue;
            bool match = true;
            for (size_t o = 0; o < len && match; ++o) match = it->tail[o] == rev_[i - o - 1];
            if (match) longest = static_cast<long>(len);
        }
        if (longest >= 0) {
            rep_limit = i - static_cast<size_t>(longest);
            break;
        }
    }
    if (rep_limit < static_cast<size_t>(std::max(allowed_length_, 0))) return out_;

    // z_[k]: how many of the newest tokens equal the tokens from k back (the Z-function of
    // the window read newest first, O(n)).
    z_.assign(n, 0);
    z_[0] = static_cast<int32_t>(n);
    for (size_t k = 1, l = 0, r = 0; k < n; ++k) {
        size_t m = 0;
        if (k < r) m = std::min(r - k, static_cast<size_t>(z_[k - l]));
        while (k + m < n && rev_[m] == rev_[k + m]) ++m;
        z_[k] = static_cast<int32_t>(m);
        if (k + m > r) {
            l = k;
            r = k + m;
        }
    }
    // The earlier occurrence ending k back was followed by rev_[k - 1]: emitting that token
    // makes the repeat one longer.
    longest_.clear();
    for (size_t k = 1; k < n; ++k) {
        const int32_t len = static_cast<int32_t>(std::min(static_cast<size_t>(z_[k]), rep_limit));
        if (len < allowed_length_) continue;
        int32_t & best = longest_[rev_[k - 1]];
        best           = std::max(best, len);
    }

    // base^exponent stays below FLT_MAX (llama.cpp's clamp).
    int32_t max_exponent = 0;
    if (base_ > 1.000001f) max_exponent = static_cast<int32_t>(88.7228391f / std::log(base_));
    for (const auto & [id, len] : longest_) {
        bool alone               = false;  // a breaker by itself is never penalised
        const auto [first, last] = heads(id);
        for (auto it = first; it != last; ++it) alone |= it->tail.empty();
        if (alone) continue;
        int32_t e = len - allowed_length_;
        if (max_exponent > 0 && e > max_exponent) e = max_exponent;
        out_.emplace_back(id, static_cast<float>(multiplier_ * std::pow(static_cast<double>(base_), e)));
    }
    std::sort(out_.begin(), out_.end());
    return out_;
}

}  // namespace gk::run
