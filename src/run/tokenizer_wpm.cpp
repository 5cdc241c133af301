// WordPiece (BERT): the basic tokenizer's normalisation and split, then greedy longest
// match. Unicode properties, decomposition and case mapping come from utf8proc.
#include "tokenizer_impl.h"
#include "tokenizer_utf8.h"

#include <utf8proc.h>

#include <algorithm>

namespace gk::run {

namespace {

bool is_white_space(uint32_t cp, utf8proc_category_t cat) {
    // Unicode White_Space: the Z categories, TAB..CR and NEXT LINE
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cat == UTF8PROC_CATEGORY_ZS ||
           cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

bool is_control(utf8proc_category_t cat) {
    return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CO ||
           cat == UTF8PROC_CATEGORY_CS;
}

bool is_mark(utf8proc_category_t cat) {
    return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME;
}

bool is_punctuation(utf8proc_category_t cat) {
    return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool is_symbol(utf8proc_category_t cat) {
    return cat >= UTF8PROC_CATEGORY_SM && cat <= UTF8PROC_CATEGORY_SO;
}

// The CJK blocks BERT isolates (as Hugging Face's BertNormalizer lists them; its
// Extension E/F range starts at U+2B920, so U+2B820..U+2B91F are not in it).
bool is_cjk_ideograph(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

} // namespace

std::vector<std::string> wordpiece_words(std::string_view text, bool lowercase, bool strip_accents) {
    std::vector<std::string> words(1);
    auto end_word = [&] {
        if (!words.back().empty()) words.emplace_back();
    };
    auto take = [&](uint32_t cp) {
        const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
        if (is_white_space(cp, cat)) {
            end_word();
            return;
        }
        if (cp == 0 || cp == utf8::k_replacement || is_control(cat)) return;
        if (strip_accents && is_mark(cat)) return;
        const uint32_t c = lowercase ? static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))) : cp;
        if (is_punctuation(cat) || (cp < 0x7F && is_symbol(cat)) || is_cjk_ideograph(cp)) {
            end_word();
            utf8::append(c, words.back());
            words.emplace_back();
        } else {
            utf8::append(c, words.back());
        }
    };

    for (size_t pos = 0; pos < text.size();) {
        const uint32_t cp = utf8::next(text, pos);
        if (!strip_accents) {
            take(cp);
            continue;
        }
        // canonical decomposition (NFD), so that accents come apart from their letters
        utf8proc_int32_t parts[8];
        const utf8proc_ssize_t n =
            utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), parts, 8, UTF8PROC_DECOMPOSE, nullptr);
        if (n < 1 || n > 8) {
            take(cp);
            continue;
        }
        for (utf8proc_ssize_t k = 0; k < n; ++k) take(static_cast<uint32_t>(parts[k]));
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

void encode_wpm_word(const vocab & v, std::string_view word, token_id unk, std::vector<token_id> & out) {
    if (word.empty()) return;
    const std::string marked = "\xE2\x96\x81" + std::string(word);  // U+2581: word start
    const size_t first = out.size();
    for (size_t i = 0; i < marked.size();) {
        token_id found = k_no_token;
        size_t end = std::min(marked.size(), i + v.max_text_len);
        for (; end > i; --end) {
            found = v.find(std::string_view(marked).substr(i, end - i));
            if (found != k_no_token) break;
        }
        if (found == k_no_token) {  // the word cannot be covered: all of it is unknown
            out.resize(first);
            if (unk != k_no_token) out.push_back(unk);
            return;
        }
        out.push_back(found);
        i = end;
    }
}

} // namespace gk::run
