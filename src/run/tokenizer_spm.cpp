// SentencePiece-style BPE over token scores, with byte fallback.
#include "tokenizer_impl.h"
#include "tokenizer_merge.h"

namespace gk::run {

token_id hex_byte_token(const vocab & v, unsigned char b) {
    static const char hex[] = "0123456789ABCDEF";
    const char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
    return v.find(std::string_view(name, 6));
}

token_id spm_byte_token(const vocab & v, unsigned char b) {
    const token_id id = hex_byte_token(v, b);
    if (id != k_no_token) return id;
    const char one = static_cast<char>(b);
    return v.find(std::string_view(&one, 1));
}

void encode_spm(const vocab & v, std::string_view text, token_id unk, std::vector<token_id> & out) {
    // a pair merges when together they are a token; the higher its score, the sooner
    auto score = [&](std::string_view left, std::string_view right) -> std::optional<float> {
        const token_id id = v.find(std::string_view(left.data(), left.size() + right.size()));
        if (id == k_no_token) return std::nullopt;
        return v.score[id];
    };
    auto higher = [](float a, float b) { return a > b; };
    for (const std::string_view piece : merge_pairs<float>(text, score, higher)) {
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
