// check_input.h - what must hold for any input to the GGUF reader, checked by the
// fuzz target (fuzz-gguf.cpp) and by the replay of the corpus and the regressions
// (test-gguf-corpus.cpp).
//
// An input is either refused (a status, a message naming the byte offset, inside the
// input) or accepted; an accepted one exposes consistent values and in-bounds tensor
// data, and writing it out gives a file that reads back and writes out identically.
#pragma once

#include "gk/gguf.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gguf_check {

inline volatile uint64_t sink;  // where the checksums go, so that every read happens

// Visit every element of a value, nested arrays included; returns a checksum so that
// the reads cannot be optimised away.
inline uint64_t walk(const gk_gguf_value * v, std::string & why) {
    uint64_t sum = 0;
    const gk_gguf_type t = gk_gguf_value_type(v);
    if (t == GK_GGUF_TYPE_STRING) {
        size_t len = 0;
        const char * s = gk_gguf_value_str(v, &len);
        for (size_t i = 0; i < len; ++i) {
            sum += static_cast<uint8_t>(s[i]);
        }
        return sum;
    }
    if (t != GK_GGUF_TYPE_ARRAY) {
        const auto * p = static_cast<const uint8_t *>(gk_gguf_value_data(v));
        for (size_t i = 0; i < gk_gguf_type_size(t); ++i) {
            sum += p[i];
        }
        return sum;
    }
    const gk_gguf_type elem = gk_gguf_array_type(v);
    const uint64_t n = gk_gguf_array_len(v);
    if (gk_gguf_type_size(elem)) {
        const auto * p = static_cast<const uint8_t *>(gk_gguf_array_data(v));
        for (uint64_t i = 0; i < n * gk_gguf_type_size(elem); ++i) {
            sum += p[i];
        }
    } else {
        for (uint64_t j = 0; j < n; ++j) {
            if (elem == GK_GGUF_TYPE_STRING) {
                size_t len = 0;
                const char * s = gk_gguf_array_str(v, j, &len);
                if (!s) {
                    why = "string array element missing";
                    return sum;
                }
                sum += len + (len ? static_cast<uint8_t>(s[len - 1]) : 0);
            } else {
                sum += walk(gk_gguf_array_item(v, j), why);
            }
        }
    }
    return sum;
}

inline std::string check_accepted(const gk_gguf * ctx) {
    std::string why;
    uint64_t sum = 0;
    for (int64_t i = 0; i < gk_gguf_kv_count(ctx); ++i) {
        if (gk_gguf_find_key(ctx, gk_gguf_kv_key(ctx, i)) != i) {
            return "key index disagrees with pair " + std::to_string(i);
        }
        sum += walk(gk_gguf_kv_value(ctx, i), why);
    }
    const uint32_t a = gk_gguf_alignment(ctx);
    if (a == 0 || (a & (a - 1)) || gk_gguf_data_offset(ctx) % a) {
        return "bad alignment or data offset";
    }
    for (int64_t i = 0; i < gk_gguf_tensor_count(ctx); ++i) {
        const uint32_t nd = gk_gguf_tensor_n_dims(ctx, i);
        const int64_t * ne = gk_gguf_tensor_ne(ctx, i);
        if (nd < 1 || nd > 4 || ne[0] < 0 || ne[1] < 0 || ne[2] < 0 || ne[3] < 0 ||
            gk_gguf_tensor_offset(ctx, i) % a || gk_gguf_find_tensor(ctx, gk_gguf_tensor_name(ctx, i)) != i) {
            return "inconsistent tensor " + std::to_string(i);
        }
        const auto * p = static_cast<const uint8_t *>(gk_gguf_tensor_data(ctx, i));
        for (uint64_t j = 0; j < gk_gguf_tensor_size(ctx, i); ++j) {  // in bounds: ASan watches
            sum += p[j];
        }
    }
    sink = sum;
    return why;
}

/// The largest written file the round trip of check_input makes (bytes).
constexpr uint64_t k_max_round_trip = 64ull << 20;

inline std::vector<uint8_t> write_out(const gk_gguf * ctx, std::string & why) {
    std::vector<uint8_t> out(gk_gguf_write_size(ctx));
    gk_gguf_error err;
    if (gk_gguf_write_memory(ctx, out.data(), out.size(), &err) != GK_GGUF_OK) {
        why = std::string("write failed: ") + err.message;
    }
    return out;
}

/// "" when `data` behaves, else what went wrong.
inline std::string check_input(const uint8_t * data, size_t size) {
    gk_gguf_error err;
    gk_gguf * ctx = gk_gguf_open_memory(data, size, &err);
    if (!ctx) {
        if (err.status == GK_GGUF_OK || err.message[0] == '\0') {
            return "refused without status or message";
        }
        if (err.status == GK_GGUF_ERR_FORMAT &&
            (err.offset > size || !std::strstr(err.message, ("(at byte " + std::to_string(err.offset) + ")").c_str()))) {
            return std::string("refusal without a byte offset inside the input: ") + err.message;
        }
        return "";
    }
    std::string why = check_accepted(ctx);
    // A valid file may ask for a huge alignment (general.alignment = 2^30 is a power of two,
    // as the format wants): writing it back is padding, gigabytes of it from a few bytes
    // of input. The round trip is checked where the written file stays small.
    const bool round_trip = gk_gguf_write_size(ctx) <= k_max_round_trip;
    std::vector<uint8_t> first;
    if (why.empty() && round_trip) {
        first = write_out(ctx, why);
    }
    gk_gguf_free(ctx);
    if (!why.empty() || !round_trip) {
        return why;
    }
    gk_gguf * again = gk_gguf_open_memory(first.data(), first.size(), &err);
    if (!again) {
        return std::string("written file refused: ") + err.message;
    }
    const std::vector<uint8_t> second = write_out(again, why);
    gk_gguf_free(again);
    if (why.empty() && second != first) {
        why = "written file does not write back identically";
    }
    return why;
}

} // namespace gguf_check
