// grammar_matcher.cpp - see grammar_matcher.h.
#include "grammar_matcher.h"

#include <algorithm>
#include <utility>

namespace gk::run {

namespace {

bool ends_alternative(grammar_op op) { return op == grammar_op::end || op == grammar_op::alt; }

/** Sort and deduplicate; false when the stacks together pass the size bound. */
bool normalise(std::vector<std::vector<uint32_t>> & stacks) {
    std::sort(stacks.begin(), stacks.end());
    stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
    size_t n = 0;
    for (const auto & s : stacks) n += s.size();
    return stacks.size() <= k_grammar_max_stacks && n <= k_grammar_max_stack_elements;
}

/** Calls visit(lo, hi) on each range of the character set at `pos` (not chr_any; its
 *  first element is chr or chr_not), in order, until visit returns true. Returns the
 *  position past the set, or past the last range visited when visit stopped. */
template <class Visit>
uint32_t visit_ranges(const std::vector<grammar_element> & el, uint32_t pos, Visit && visit) {
    uint32_t p = pos;
    do {
        const uint32_t lo = el[p].value;
        uint32_t       hi = lo;
        if (el[p + 1].op == grammar_op::chr_range_upper) {
            hi = el[p + 1].value;
            p += 2;
        } else {
            p += 1;
        }
        if (visit(lo, hi)) break;
    } while (el[p].op == grammar_op::chr_alt);
    return p;
}

} // namespace

/** Push `stack` expanded (every top a character set, or empty) onto `out`. False on overflow. */
bool GrammarMatcher::expand(std::vector<uint32_t> stack, std::vector<std::vector<uint32_t>> & out) const {
    const auto &                       el = g_.elements();
    std::vector<std::vector<uint32_t>> work;
    work.push_back(std::move(stack));
    size_t n_work = 0;
    while (!work.empty()) {
        std::vector<uint32_t> s = std::move(work.back());
        work.pop_back();
        if (++n_work > 16 * k_grammar_max_stacks || out.size() > k_grammar_max_stacks) return false;
        if (s.empty() || el[s.back()].op != grammar_op::rule_ref) {
            out.push_back(std::move(s));
            continue;
        }
        const uint32_t top = s.back();
        s.pop_back();
        if (!ends_alternative(el[top + 1].op)) s.push_back(top + 1);
        for (uint32_t p = g_.rule_start(el[top].value);;) {
            std::vector<uint32_t> alt = s;
            if (!ends_alternative(el[p].op)) alt.push_back(p);
            work.push_back(std::move(alt));
            while (!ends_alternative(el[p].op)) ++p;
            if (el[p].op == grammar_op::end) break;
            ++p;
        }
    }
    return true;
}

/** Whether the set at `pos` holds `cp`; `after`: the position past the set. */
bool GrammarMatcher::set_contains(uint32_t pos, uint32_t cp, uint32_t & after) const {
    const auto & el = g_.elements();
    if (el[pos].op == grammar_op::chr_any) {
        after = pos + 1;
        return true;
    }
    const bool negated = el[pos].op == grammar_op::chr_not;
    bool       found   = false;
    after              = visit_ranges(el, pos, [&](uint32_t lo, uint32_t hi) {
        found = found || (cp >= lo && cp <= hi);
        return false;  // every range, to find the position past the set
    });
    return found != negated;
}

/** Whether the set at `pos` holds some code point in [lo, hi]. */
bool GrammarMatcher::set_meets(uint32_t pos, uint32_t lo, uint32_t hi) const {
    const auto & el = g_.elements();
    if (el[pos].op == grammar_op::chr_any) return true;
    const bool                                 negated = el[pos].op == grammar_op::chr_not;
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    bool                                       met = false;
    visit_ranges(el, pos, [&](uint32_t a, uint32_t b) {
        met = !negated && a <= hi && b >= lo;
        ranges.emplace_back(a, b);
        return met;
    });
    if (!negated) return met;
    // Negated: some code point of [lo, hi] is outside every range.
    std::sort(ranges.begin(), ranges.end());
    uint64_t next = lo;  // the lowest code point not yet known to be covered
    for (const auto & [a, b] : ranges) {
        if (a > next) break;
        next = std::max<uint64_t>(next, static_cast<uint64_t>(b) + 1);
        if (next > hi) return false;
    }
    return next <= hi;
}

grammar_step GrammarMatcher::initial(grammar_state & out) const {
    out             = grammar_state{};
    const auto & el = g_.elements();  // the root's alternatives, each expanded
    for (uint32_t p = g_.rule_start(g_.root());;) {
        std::vector<uint32_t> s;
        if (!ends_alternative(el[p].op)) s.push_back(p);
        if (!expand(std::move(s), out.stacks)) return grammar_step::overflow;
        while (!ends_alternative(el[p].op)) ++p;
        if (el[p].op == grammar_op::end) break;
        ++p;
    }
    return normalise(out.stacks) ? grammar_step::ok : grammar_step::overflow;
}

grammar_step GrammarMatcher::step(const grammar_state & in, uint8_t b, grammar_state & out) const {
    uint32_t cp   = 0;
    uint8_t  need = 0, len = 0;
    if (in.partial_need == 0) {
        if (b < 0x80) {
            cp  = b;
            len = 1;
        } else if (b >= 0xC2 && b <= 0xDF) {
            cp = b & 0x1Fu, need = 1, len = 2;
        } else if (b >= 0xE0 && b <= 0xEF) {
            cp = b & 0x0Fu, need = 2, len = 3;
        } else if (b >= 0xF0 && b <= 0xF4) {
            cp = b & 0x07u, need = 3, len = 4;
        } else {
            return grammar_step::rejected;
        }
    } else {
        if ((b & 0xC0) != 0x80) return grammar_step::rejected;
        cp   = (in.partial_cp << 6) | (b & 0x3Fu);
        need = static_cast<uint8_t>(in.partial_need - 1);
        len  = in.partial_len;
    }
    const auto & el = g_.elements();
    if (need > 0) {
        // The valid code points that start with these bytes: [lo, hi] without overlong
        // forms, surrogates and values past U+10FFFF (else a token could lead into a
        // sequence that no byte completes).
        uint32_t lo = cp << (6 * need);
        uint32_t hi = lo | ((1u << (6 * need)) - 1);
        lo          = std::max(lo, len == 3 ? 0x800u : len == 4 ? 0x10000u : 0x80u);
        hi          = std::min(hi, 0x10FFFFu);
        bool ok     = false;
        for (const auto & s : in.stacks) {
            if (s.empty()) continue;
            if ((lo <= std::min(hi, 0xD7FFu) && set_meets(s.back(), lo, std::min(hi, 0xD7FFu))) ||
                (std::max(lo, 0xE000u) <= hi && set_meets(s.back(), std::max(lo, 0xE000u), hi))) {
                ok = true;
                break;
            }
        }
        if (!ok) return grammar_step::rejected;
        out.stacks       = in.stacks;
        out.partial_cp   = cp;
        out.partial_need = need;
        out.partial_len  = len;
        return grammar_step::ok;
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return grammar_step::rejected;  // overlong, beyond Unicode, or a surrogate
    }
    out.stacks.clear();
    out.partial_cp = 0, out.partial_need = 0, out.partial_len = 0;
    for (const auto & s : in.stacks) {
        uint32_t after = 0;
        if (s.empty() || !set_contains(s.back(), cp, after)) continue;
        std::vector<uint32_t> next(s.begin(), s.end() - 1);
        if (!ends_alternative(el[after].op)) next.push_back(after);
        if (!expand(std::move(next), out.stacks)) return grammar_step::overflow;
    }
    if (out.stacks.empty()) return grammar_step::rejected;
    return normalise(out.stacks) ? grammar_step::ok : grammar_step::overflow;
}

grammar_step GrammarMatcher::advance(grammar_state & state, std::string_view bytes) const {
    grammar_state next;
    for (char c : bytes) {
        const grammar_step r = step(state, static_cast<uint8_t>(c), next);
        if (r != grammar_step::ok) return r;
        std::swap(state, next);
    }
    return grammar_step::ok;
}

bool GrammarMatcher::is_complete(const grammar_state & s) {
    if (s.partial_need) return false;
    return std::any_of(s.stacks.begin(), s.stacks.end(), [](const auto & st) { return st.empty(); });
}

bool GrammarMatcher::can_continue(const grammar_state & s) {
    return s.partial_need || std::any_of(s.stacks.begin(), s.stacks.end(), [](const auto & st) { return !st.empty(); });
}

bool GrammarMatcher::matches(std::string_view text) const {
    grammar_state s;
    if (initial(s) != grammar_step::ok) return false;
    return advance(s, text) == grammar_step::ok && is_complete(s);
}

} // namespace gk::run
