// Byte-level BPE (and gemma4's BPE over raw UTF-8): ranked merges over the characters of
// one pre-tokenized word.
#include "tokenizer_impl.h"
#include "tokenizer_merge.h"

namespace gk::run {

namespace {

uint64_t pair_key(token_id left, token_id right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

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

void encode_bpe_word(const vocab & v, const bpe_ranks & ranks, std::string_view word, bool ignore_merges, bool raw_utf8,
                     std::vector<token_id> & out) {
    if (ignore_merges) {
        const token_id whole = v.find(word);
        if (whole != k_no_token) {
            out.push_back(whole);
            return;
        }
    }
    // a pair merges when a merge line names its two tokens; the lower the rank, the sooner
    auto rank = [&](std::string_view left, std::string_view right) -> std::optional<int32_t> {
        const token_id l = v.find(left), r = v.find(right);
        const int32_t k = l == k_no_token || r == k_no_token ? -1 : ranks.rank(l, r);
        if (k < 0) return std::nullopt;
        return k;
    };
    auto lower = [](int32_t a, int32_t b) { return a < b; };
    for (const std::string_view piece : merge_pairs<int32_t>(word, rank, lower)) {
        const token_id id = v.find(piece);
        if (id != k_no_token) {
            out.push_back(id);
            continue;
        }
        if (raw_utf8) {  // a character outside the vocabulary: its bytes
            for (const char c : piece) {
                const token_id b = hex_byte_token(v, static_cast<unsigned char>(c));
                if (b != k_no_token) out.push_back(b);
            }
            continue;
        }
        // a merge result that is not a token (a broken vocabulary): its characters
        for (size_t k = 0; k < piece.size();) {
            const size_t n = std::min(utf8::sequence_length(static_cast<unsigned char>(piece[k])), piece.size() - k);
            const token_id c = v.find(piece.substr(k, n));
            if (c != k_no_token) out.push_back(c);
            k += n;
        }
    }
}

} // namespace gk::run
