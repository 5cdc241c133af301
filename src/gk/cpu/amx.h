// amx.h - the AMX tile instructions the tile kernels use (Intel 64 and IA-32 Architectures
// Software Developer's Manual, vol. 1, ch. 18 "Programming with Intel AMX"): a tile
// configuration, and the integer tile dot that adds exact four-byte products.
//
// TDPBUSD / TDPBSUD tmm_c, tmm_a, tmm_b: for m < rows(a), n < colsb(c) / 4,
//   c[m][n] += sum over k < colsb(a) / 4 of sum over t < 4 of a[m][4k + t] * b[k][4n + t]
// in int32 with wrap-around, a's bytes unsigned and b's signed (TDPBUSD) or the reverse
// (TDPBSUD): the sums VPDPBUSD forms, four products at a time, so a tile kernel that takes
// them from AMX computes the same integers as its VNNI twin. b's layout is the one the
// VNNI tiles already keep (64 bytes: bytes 4k .. 4k + 3 of 16 rows), so a weight span
// unpacked for VPDPBUSD is a b operand as it stands; a holds the activation columns, one
// per row, and c's row m is column m's sixteen weight-row sums, a VNNI accumulator.
//
// A thread must load a configuration before its first tile instruction; the kernels load
// theirs at the start of a call and release the tiles at its end. The instructions are
// written as asm statements (GNU as knows them; no compiler target flag is needed). Only
// call these where cpu_features' amx_usable says the host grants the tile state. Internal
// to the AVX-512 tile kernels.
#pragma once

#include <cstdint>
#include <utility>

namespace gk::cpu::detail {

/// A palette-1 tile configuration (LDTILECFG's 64-byte operand).
struct alignas(64) amx_config {
    uint8_t  palette      = 1;
    uint8_t  start_row    = 0;
    uint8_t  reserved[14] = {};
    uint16_t colsb[16]    = {};  // bytes per row of tile t
    uint8_t  rows[16]     = {};  // rows of tile t

    /// Tile t: `r` rows of `cb` bytes.
    constexpr amx_config & tile(int t, int r, int cb) {
        rows[t]  = static_cast<uint8_t>(r);
        colsb[t] = static_cast<uint16_t>(cb);
        return *this;
    }
};

/// LDTILECFG: this thread's tiles as `cfg` describes them, zeroed.
inline void amx_load_config(const amx_config & cfg) { __asm__ volatile("ldtilecfg %0" : : "m"(cfg)); }

/// TILERELEASE: the tiles back to their initial state.
inline void amx_release() { __asm__ volatile("tilerelease" ::: "memory"); }

// The tile instructions as asm statements with the tile numbers as immediates (AT&T
// operand order: sources first). Each names memory as clobbered, so that stores before a
// tile load and loads after a tile store stay where the code puts them.

/// TILEZERO tmm T.
template <int T>
inline void amx_zero() {
    __asm__ volatile("tilezero %%tmm%c0" : : "i"(T));
}

/// TILELOADD: tile T's rows from base, `stride` bytes apart.
template <int T>
inline void amx_load(const void * base, long stride) {
    __asm__ volatile("tileloadd (%0,%1,1), %%tmm%c2" : : "r"(base), "r"(stride), "i"(T) : "memory");
}

/// TILESTORED: tile T's rows to base, `stride` bytes apart.
template <int T>
inline void amx_store(void * base, long stride) {
    __asm__ volatile("tilestored %%tmm%c2, (%0,%1,1)" : : "r"(base), "r"(stride), "i"(T) : "memory");
}

/// f.template operator()<T>() for T = 0 .. N - 1 in order: the tile number of each call a
/// constant, as the instructions need.
template <int N, class F>
inline void amx_each(F && f) {
    [&]<int... T>(std::integer_sequence<int, T...>) { (f.template operator()<T>(), ...); }
    (std::make_integer_sequence<int, N>{});
}

/// TDPBUSD: tile C += the four-byte sums of tile A (unsigned) by tile B (signed).
template <int C, int A, int B>
inline void amx_dpbusd() {
    __asm__ volatile("tdpbusd %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
}

/// TDPBSSD: tile C += the four-byte sums of tile A (signed) by tile B (signed).
template <int C, int A, int B>
inline void amx_dpbssd() {
    __asm__ volatile("tdpbssd %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
}

/// TDPBSUD: tile C += the four-byte sums of tile A (signed) by tile B (unsigned).
template <int C, int A, int B>
inline void amx_dpbsud() {
    __asm__ volatile("tdpbsud %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
}

}  // namespace gk::cpu::detail
