// ChaCha20 (RFC 8439 block function) streams keyed by (seed, path): every random number of
// presk (initializers, sample, dropout, input synthesis) is drawn from one of these.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace presk::ref {

/// The FNV-1a 64-bit hash of `s`'s bytes (a stream's nonce; presk train's data and checkpoint
/// checksums).
uint64_t fnv1a64(const std::string& s);

/// The stream of (seed, path): key = seed as 8 little-endian bytes then 24 zero bytes; nonce =
/// 4 zero bytes then the FNV-1a 64-bit hash of `path`, little-endian; block counter from 0.
class ChaCha {
public:
    ChaCha(uint64_t seed, const std::string& path);
    uint32_t next_u32();
    uint64_t next_u64();  // low word first
    /// A uniform double in [0, 1): the top 53 bits of next_u64() times 2^-53 (exact).
    double next_unit();

    /// One 64-byte block for `counter` (exposed for the RFC test vector).
    static std::array<uint32_t, 16> block(const std::array<uint32_t, 8>& key, uint32_t counter,
                                          const std::array<uint32_t, 3>& nonce);

private:
    std::array<uint32_t, 8> key_{};
    std::array<uint32_t, 3> nonce_{};
    uint32_t counter_ = 0;
    std::array<uint32_t, 16> buf_{};
    int used_ = 16;
};

} // namespace presk::ref
