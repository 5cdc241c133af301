// SentencePiece-style BPE over token scores, with byte fallback.
#include "tokenizer_impl.h"
#include "tokenizer_utf8.h"

#include <queue>

namespace gk::run {

namespace {

// A run of the text; runs form a doubly linked list in text order, and a run that has
// been merged into its left neighbour has len 0.
struct run {
    size_t off, len;
    int    prev, next;
};

// Merging run `left` with the run after it gives a token of score `score` and `len` bytes.
struct candidate {
    float  score;
    int    left, right;
    size_t len;
};

struct lower_priority {
    bool operator()(const candidate & a, const candidate & b) const {
        if (a.score != b.score) return a.score < b.score;  // higher score first
        return a.left > b.left;                             // then the leftmost
    }
};

} // namespace

token_id spm_byte_token(const vocab & v, unsigned char b) {
    static const char hex[] = "0123456789ABCDEF";
    const char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
    const token_id id = v.find(std::string_view(name, 6));
    if (id != k_no_token) return id;
    const char one = static_cast<char>(b);
    return v.find(std::string_view(&one, 1));
}

void encode_spm(const vocab & v, std::string_view text, token_id unk, std::vector<token_id> & out) {
    std::vector<run> runs;
    for (size_t off = 0; off < text.size();) {
        const size_t len = std::min(utf8::sequence_length(static_cast<unsigned char>(text[off])), text.size() - off);
        const int i = static_cast<int>(runs.size());
        runs.push_back({off, len, i - 1, off + len < text.size() ? i + 1 : -1});
        off += len;
    }

    std::priority_queue<candidate, std::vector<candidate>, lower_priority> queue;
    auto consider = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const size_t len = runs[left].len + runs[right].len;
        const token_id id = v.find(text.substr(runs[left].off, len));
        if (id != k_no_token) queue.push({v.score[id], left, right, len});
    };
    for (int i = 0; i + 1 < static_cast<int>(runs.size()); ++i) consider(i, i + 1);

    while (!queue.empty()) {
        const candidate c = queue.top();
        queue.pop();
        run & l = runs[c.left];
        run & r = runs[c.right];
        if (l.len == 0 || r.len == 0 || l.len + r.len != c.len) continue;  // stale
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) runs[r.next].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }

    for (int i = runs.empty() ? -1 : 0; i >= 0; i = runs[i].next) {
        const std::string_view piece = text.substr(runs[i].off, runs[i].len);
        const token_id id = v.find(piece);
        if (id != k_no_token) {
            out.push_back(id);
            continue;
        }
        for (const char ch : piece) {
            const token_id b = spm_byte_token(v, static_cast<unsigned char>(ch));
            if (b != k_no_token) {
                out.push_back(b);
            } else if (unk != k_no_token) {
                out.push_back(unk);
            }
        }
    }
}

} // namespace gk::run
