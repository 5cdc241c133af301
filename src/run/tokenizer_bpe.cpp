// Byte-level BPE: ranked merges over the characters of one pre-tokenized word.
#include "tokenizer_impl.h"
#include "tokenizer_utf8.h"

#include <queue>

namespace gk::run {

namespace {

uint64_t pair_key(token_id left, token_id right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// A run of the word: its bytes, its token (k_no_token if its text is none) and its
// neighbours; a run merged into its left neighbour has len 0.
struct run {
    size_t   off, len;
    token_id id;
    int      prev, next;
};

struct candidate {
    int32_t rank;
    int     left, right;
    size_t  len;
};

struct lower_priority {
    bool operator()(const candidate & a, const candidate & b) const {
        if (a.rank != b.rank) return a.rank > b.rank;  // lowest rank first
        return a.left > b.left;                         // then the leftmost
    }
};

} // namespace

bool bpe_ranks::add(const vocab & v, std::string_view line, int32_t rank) {
    const size_t space = line.size() > 1 ? line.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos) return false;
    const token_id left = v.find(line.substr(0, space));
    const token_id right = v.find(line.substr(space + 1));
    if (left != k_no_token && right != k_no_token) {
        ranks_.emplace(pair_key(left, right), rank);  // the first line of a pair counts
    }
    return true;
}

int32_t bpe_ranks::rank(token_id left, token_id right) const {
    const auto it = ranks_.find(pair_key(left, right));
    return it == ranks_.end() ? -1 : it->second;
}

void encode_bpe_word(const vocab & v, const bpe_ranks & ranks, std::string_view word, bool ignore_merges,
                     std::vector<token_id> & out) {
    if (word.empty()) return;
    if (ignore_merges) {
        const token_id whole = v.find(word);
        if (whole != k_no_token) {
            out.push_back(whole);
            return;
        }
    }

    std::vector<run> runs;
    for (size_t off = 0; off < word.size();) {
        const size_t len = std::min(utf8::sequence_length(static_cast<unsigned char>(word[off])), word.size() - off);
        const int i = static_cast<int>(runs.size());
        runs.push_back({off, len, v.find(word.substr(off, len)), i - 1, off + len < word.size() ? i + 1 : -1});
        off += len;
    }

    std::priority_queue<candidate, std::vector<candidate>, lower_priority> queue;
    auto consider = [&](int left, int right) {
        if (left < 0 || right < 0 || runs[left].id == k_no_token || runs[right].id == k_no_token) return;
        const int32_t r = ranks.rank(runs[left].id, runs[right].id);
        if (r >= 0) queue.push({r, left, right, runs[left].len + runs[right].len});
    };
    for (int i = 0; i + 1 < static_cast<int>(runs.size()); ++i) consider(i, i + 1);

    while (!queue.empty()) {
        const candidate c = queue.top();
        queue.pop();
        run & l = runs[c.left];
        run & r = runs[c.right];
        if (l.len == 0 || r.len == 0 || l.len + r.len != c.len) continue;  // stale
        l.len += r.len;
        l.id = v.find(word.substr(l.off, l.len));
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) runs[r.next].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }

    for (int i = 0; i >= 0; i = runs[i].next) {
        if (runs[i].id != k_no_token) {
            out.push_back(runs[i].id);
            continue;
        }
        // a merge result that is not a token (a broken vocabulary): its characters
        const std::string_view piece = word.substr(runs[i].off, runs[i].len);
        for (size_t k = 0; k < piece.size();) {
            const size_t n = std::min(utf8::sequence_length(static_cast<unsigned char>(piece[k])), piece.size() - k);
            const token_id id = v.find(piece.substr(k, n));
            if (id != k_no_token) out.push_back(id);
            k += n;
        }
    }
}

} // namespace gk::run
