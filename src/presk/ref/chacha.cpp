#include "ref/chacha.h"

namespace presk::ref {
namespace {

uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void quarter(std::array<uint32_t, 16>& s, int a, int b, int c, int d) {
    s[a] += s[b]; s[d] ^= s[a]; s[d] = rotl(s[d], 16);
    s[c] += s[d]; s[b] ^= s[c]; s[b] = rotl(s[b], 12);
    s[a] += s[b]; s[d] ^= s[a]; s[d] = rotl(s[d], 8);
    s[c] += s[d]; s[b] ^= s[c]; s[b] = rotl(s[b], 7);
}

} // namespace

std::array<uint32_t, 16> ChaCha::block(const std::array<uint32_t, 8>& key, uint32_t counter,
                                       const std::array<uint32_t, 3>& nonce) {
    std::array<uint32_t, 16> s = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    for (int i = 0; i < 8; ++i) s[4 + i] = key[i];
    s[12] = counter;
    for (int i = 0; i < 3; ++i) s[13 + i] = nonce[i];
    std::array<uint32_t, 16> w = s;
    for (int r = 0; r < 10; ++r) {
        quarter(w, 0, 4, 8, 12); quarter(w, 1, 5, 9, 13); quarter(w, 2, 6, 10, 14); quarter(w, 3, 7, 11, 15);
        quarter(w, 0, 5, 10, 15); quarter(w, 1, 6, 11, 12); quarter(w, 2, 7, 8, 13); quarter(w, 3, 4, 9, 14);
    }
    for (int i = 0; i < 16; ++i) w[i] += s[i];
    return w;
}

uint64_t fnv1a64(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) { h ^= c; h *= 0x100000001b3ull; }
    return h;
}

ChaCha::ChaCha(uint64_t seed, const std::string& path) {
    key_[0] = (uint32_t)seed;
    key_[1] = (uint32_t)(seed >> 32);
    uint64_t h = fnv1a64(path);
    nonce_ = {0, (uint32_t)h, (uint32_t)(h >> 32)};
}

uint32_t ChaCha::next_u32() {
    if (used_ == 16) {
        buf_ = block(key_, counter_++, nonce_);
        used_ = 0;
    }
    return buf_[used_++];
}

uint64_t ChaCha::next_u64() {
    uint64_t lo = next_u32();
    return lo | (uint64_t)next_u32() << 32;
}

double ChaCha::next_unit() { return (double)(next_u64() >> 11) * 0x1p-53; }

} // namespace presk::ref
