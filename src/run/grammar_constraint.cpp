// grammar_constraint.cpp - see grammar_constraint.h.
#include "grammar_constraint.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gk::run {

namespace {

std::string state_key(const grammar_state & s) {
    std::string key;
    key.push_back(static_cast<char>(s.partial_need));
    key.push_back(static_cast<char>(s.partial_len));
    key.append(reinterpret_cast<const char *>(&s.partial_cp), sizeof s.partial_cp);
    for (const auto & st : s.stacks) {
        const auto n = static_cast<uint32_t>(st.size());
        key.append(reinterpret_cast<const char *>(&n), sizeof n);
        key.append(reinterpret_cast<const char *>(st.data()), st.size() * sizeof(uint32_t));
    }
    return key;
}

std::string too_ambiguous() {
    return "the grammar is too ambiguous to follow (more than " + std::to_string(k_grammar_max_stacks) +
           " parse stacks at once)";
}

} // namespace

GrammarConstraint::GrammarConstraint(const Grammar & grammar, const Tokenizer & tok) : tok_(tok), matcher_(grammar) {
    start_ok_ = matcher_.initial(start_) == grammar_step::ok;
    std::vector<std::pair<std::string_view, token_id>> sorted;
    for (token_id id = 0; id < tok.n_tokens(); ++id) {
        if (tok.is_eog(id)) {
            eog_.push_back(id);
            continue;
        }
        const std::string & piece = tok.token_to_piece(id, false);
        if (!piece.empty()) sorted.emplace_back(piece, id);
    }
    std::sort(sorted.begin(), sorted.end());
    pieces_.reserve(sorted.size());
    for (size_t i = 0; i < sorted.size(); ++i) {
        const std::string_view b = sorted[i].first;
        uint32_t               n = 0;
        if (i > 0) {
            const std::string_view a = sorted[i - 1].first;
            while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
        }
        pieces_.push_back({static_cast<uint32_t>(bytes_.size()), static_cast<uint32_t>(b.size()), n, sorted[i].second});
        bytes_.append(b);
    }
    reset_cache(nullptr);
}

int32_t GrammarConstraint::intern(grammar_state && s) {
    std::string key = state_key(s);
    auto        it  = index_.find(key);
    if (it != index_.end()) return it->second;
    const auto id = static_cast<int32_t>(states_.size());
    states_.push_back(std::move(s));
    trans_.emplace_back();
    trans_.back().fill(k_unknown);
    index_.emplace(std::move(key), id);
    return id;
}

int32_t GrammarConstraint::transition(int32_t state, uint8_t byte) {
    int32_t & t = trans_[static_cast<size_t>(state)][byte];
    if (t != k_unknown) return t;
    grammar_state      next;
    const grammar_step r                     = matcher_.step(states_[static_cast<size_t>(state)], byte, next);
    const int32_t      v                     = r == grammar_step::ok         ? intern(std::move(next))
                                               : r == grammar_step::rejected ? k_dead
                                                                             : k_overflow;
    trans_[static_cast<size_t>(state)][byte] = v;  // `t` may dangle: intern() grows trans_
    return v;
}

/** Drop the cached states but the current one (they are rebuilt as needed). */
bool GrammarConstraint::reset_cache(std::string * error) {
    grammar_state cur = states_.empty() ? start_ : states_[static_cast<size_t>(cur_)];
    states_.clear();
    trans_.clear();
    index_.clear();
    cur_ = intern(std::move(cur));
    if (!start_ok_ && error) *error = too_ambiguous();
    return start_ok_;
}

bool GrammarConstraint::reset(std::string * error) {
    states_.clear();
    trans_.clear();
    index_.clear();
    return reset_cache(error);
}

bool GrammarConstraint::complete() const { return GrammarMatcher::is_complete(states_[static_cast<size_t>(cur_)]); }

bool GrammarConstraint::finished() const {
    return complete() && !GrammarMatcher::can_continue(states_[static_cast<size_t>(cur_)]);
}

bool GrammarConstraint::apply(std::span<float> logits, std::string * error) {
    if (!start_ok_) {
        if (error) *error = too_ambiguous();
        return false;
    }
    if (states_.size() > k_max_cached_states && !reset_cache(error)) return false;
    allowed_.assign(logits.size(), 0);
    size_t n_allowed = 0;
    path_.assign(1, cur_);      // path_[k]: the state after k bytes of the piece before
    size_t dead_at = SIZE_MAX;  // where the piece before was rejected
    for (const piece & p : pieces_) {
        if (dead_at != SIZE_MAX && p.shared > dead_at) continue;  // shares the rejected byte
        dead_at = SIZE_MAX;
        path_.resize(std::min<size_t>(path_.size(), p.shared + 1));
        const char * bytes = bytes_.data() + p.offset;
        for (size_t j = path_.size() - 1; j < p.size; ++j) {
            const int32_t next = transition(path_.back(), static_cast<uint8_t>(bytes[j]));
            if (next == k_overflow) {
                if (error) *error = too_ambiguous();
                return false;
            }
            if (next == k_dead) {
                dead_at = j;
                break;
            }
            path_.push_back(next);
        }
        if (dead_at == SIZE_MAX && static_cast<size_t>(p.id) < allowed_.size()) {
            allowed_[static_cast<size_t>(p.id)] = 1;
            ++n_allowed;
        }
    }
    if (complete()) {
        for (token_id id : eog_) {
            if (static_cast<size_t>(id) < allowed_.size()) {
                allowed_[static_cast<size_t>(id)] = 1;
                ++n_allowed;
            }
        }
    }
    if (n_allowed == 0) {
        if (error) {
            *error = complete() ? "the grammar is complete but the vocabulary has no end-of-generation token"
                                : "no token of the vocabulary can continue the grammar";
        }
        return false;
    }
    for (size_t i = 0; i < logits.size(); ++i) {
        if (!allowed_[i]) logits[i] = -INFINITY;
    }
    return true;
}

bool GrammarConstraint::accept(token_id id, std::string * error) {
    if (tok_.is_eog(id)) {
        if (complete()) return true;
        if (error) *error = "the grammar does not allow end of generation here";
        return false;
    }
    const std::string & piece = tok_.token_to_piece(id, false);
    int32_t             s     = piece.empty() ? k_dead : cur_;
    for (size_t j = 0; j < piece.size() && s >= 0; ++j) s = transition(s, static_cast<uint8_t>(piece[j]));
    if (s < 0) {
        if (error) {
            *error = s == k_overflow ? too_ambiguous() : "the grammar does not allow token " + std::to_string(id);
        }
        return false;
    }
    cur_ = s;
    return true;
}

} // namespace gk::run
