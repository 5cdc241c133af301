// tokenizer_merge.h - the pairwise merge loop that SentencePiece and byte-level BPE
// share (internal): start from the UTF-8 characters of a text and keep merging the best
// pair of neighbouring pieces until no pair may merge.
#pragma once

#include "tokenizer_utf8.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

namespace gk::run {

/** The pieces of `text` after merging. `priority(left, right)` (two adjacent pieces)
 *  gives the merge's key, or nothing when the pair may not merge; `before(a, b)` is
 *  true when key `a` merges before key `b`. Among equal keys the leftmost pair merges
 *  first. O(n log n) in the characters of `text`. */
template <class Key, class Priority, class Before>
std::vector<std::string_view> merge_pairs(std::string_view text, Priority priority, Before before) {
    // A run of the text; runs form a list in text order, and a run merged into its left
    // neighbour has len 0.
    struct run {
        size_t off, len;
        int    prev, next;
    };
    // Merging run `left` with run `right` would make a piece of `len` bytes.
    struct candidate {
        Key    key;
        int    left, right;
        size_t len;
    };

    std::vector<run> runs;
    for (size_t off = 0; off < text.size();) {
        const size_t len = std::min(utf8::sequence_length(static_cast<unsigned char>(text[off])), text.size() - off);
        const int i = static_cast<int>(runs.size());
        runs.push_back({off, len, i - 1, off + len < text.size() ? i + 1 : -1});
        off += len;
    }

    auto later = [&](const candidate & a, const candidate & b) {
        if (before(b.key, a.key)) return true;
        if (before(a.key, b.key)) return false;
        return a.left > b.left;
    };
    std::priority_queue<candidate, std::vector<candidate>, decltype(later)> queue(later);
    auto consider = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const run & l = runs[left];
        const run & r = runs[right];
        if (const std::optional<Key> key = priority(text.substr(l.off, l.len), text.substr(r.off, r.len))) {
            queue.push({*key, left, right, l.len + r.len});
        }
    };
    for (int i = 0; i + 1 < static_cast<int>(runs.size()); ++i) consider(i, i + 1);

    while (!queue.empty()) {
        const candidate c = queue.top();
        queue.pop();
        run & l = runs[c.left];
        run & r = runs[c.right];
        if (l.len == 0 || r.len == 0 || l.len + r.len != c.len) continue;  // a side has changed since
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) runs[r.next].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }

    std::vector<std::string_view> pieces;
    for (int i = runs.empty() ? -1 : 0; i >= 0; i = runs[i].next) pieces.push_back(text.substr(runs[i].off, runs[i].len));
    return pieces;
}

} // namespace gk::run
