// block_decode.h - gk's block formats as the device dots read them, written once in the
// subset of C that GLSL and CUDA share: included by the Vulkan shader mul_mat_q.comp and
// by the CUDA kernels (mul_mat_q.cu). Each function takes the weight type t (gk_type's
// value, ggml's) and the byte offset of a weight block; what a block decodes to is the
// integer of the CPU's dot (cpu/vec_dot_*.cpp's scalar twins), so that the device's
// integer sums are the CPU's exactly.
//
// CUDA includes it inside a struct whose members are the functions below (kernels.cu's
// block_reader), GLSL at global scope. The includer defines, before including:
//   GK_DEV              the qualifier of a device function (CUDA: __device__; GLSL: empty)
//   GK_CONST            that of the type constants (CUDA, in a struct: static constexpr;
//                       GLSL: const)
//   uint                an unsigned 32-bit type (GLSL's own; CUDA: a typedef)
//   uint  wbyte(uint o) the weight byte at byte offset o
//   float whalf(uint o) the f16 at byte offset o, as f32 (exact)
//   uint  wtable(uint i) word i of the format's table, as the host put it there
//                       (device/block_formats.h's block_table: quant/fp4.h's codebook
//                       for iq4_nl / iq4_xs, k_iq4nl_values, and mxfp4 / nvfp4,
//                       k_e2m1_doubled, one entry a word; quant/iq_quants.h's grid for
//                       the lattice formats, its bytes)
//   float bits_to_float(uint b), float half_bits_to_float(uint h)
//
// Two families (cpu/vec_dot.cpp's act_type):
// - against q8_0 / q8_1 activations (blocks of 32): a weight block of qk_w(t) elements
//   splits into units of unit_len(t) (32, or nvfp4's 16); the dot sums, per unit u, the
//   exact isum of value(t, blk, j) * a, then chain u % 4 += (unit_scale * activation d) *
//   float(isum), fused; q4_1 / q5_1 then chain u % 4 += f32(m) * f32(activation s), fused.
// - against q8_K activations (super-blocks of 256): isum = sum over the groups g of 16 of
//   sc_g * (sum of value * a over g), isum_min = sum over g of m_g * (sum of a over g);
//   chain b % 4 += ((f32(d) * activation d) * factor) * float(isum), fused (factor: the
//   lattice formats' power of two, cpu/vec_dot_iq.h; 1 for the others, where the product
//   is then the CPU's unchanged), and for q2_K / q4_K / q5_K
//   chain b % 4 += -(f32(dmin) * activation d) * float(isum_min), fused.
// The dot is (c0 + c1) + (c2 + c3).

// gk_type's values of the block formats.
GK_CONST uint T_Q4_0 = 2u, T_Q4_1 = 3u, T_Q5_0 = 6u, T_Q5_1 = 7u, T_Q8_0 = 8u, T_Q8_1 = 9u;
GK_CONST uint T_Q2_K = 10u, T_Q3_K = 11u, T_Q4_K = 12u, T_Q5_K = 13u, T_Q6_K = 14u;
GK_CONST uint T_IQ2_XXS = 16u, T_IQ2_XS = 17u, T_IQ3_XXS = 18u, T_IQ1_S = 19u, T_IQ4_NL = 20u, T_IQ3_S = 21u;
GK_CONST uint T_IQ2_S = 22u, T_IQ4_XS = 23u, T_IQ1_M = 29u, T_TQ1_0 = 34u, T_TQ2_0 = 35u;
GK_CONST uint T_MXFP4 = 39u, T_NVFP4 = 40u, T_Q1_0 = 41u, T_Q2_0 = 42u;

/// Whether t is one of the lattice i-quants (a grid table; cpu/vec_dot_iq.h).
GK_DEV bool lattice(uint t) {
    return t == T_IQ2_XXS || t == T_IQ2_XS || t == T_IQ2_S || t == T_IQ3_XXS || t == T_IQ3_S || t == T_IQ1_S ||
           t == T_IQ1_M;
}

/// Whether t's activations are q8_K (super-blocks of 256); else q8_0 / q8_1 (blocks of 32).
GK_DEV bool k_family(uint t) {
    return t == T_Q2_K || t == T_Q3_K || t == T_Q4_K || t == T_Q5_K || t == T_Q6_K || t == T_IQ4_XS || t == T_TQ1_0 ||
           t == T_TQ2_0 || lattice(t);
}

/// Whether t's activations are q8_1 (with the block's f16 sum s).
GK_DEV bool q8_1_family(uint t) { return t == T_Q4_1 || t == T_Q5_1 || t == T_Q8_1; }

/// Whether t adds the offset term f32(m) * f32(s) per unit (q4_1, q5_1).
GK_DEV bool has_offset(uint t) { return t == T_Q4_1 || t == T_Q5_1; }

/// Whether t adds the min term -(f32(dmin) * d) * isum_min per super-block.
GK_DEV bool has_dmin(uint t) { return t == T_Q2_K || t == T_Q4_K || t == T_Q5_K; }

/// Elements of one weight block.
GK_DEV uint qk_w(uint t) { return k_family(t) ? 256u : t == T_Q1_0 ? 128u : (t == T_Q2_0 || t == T_NVFP4) ? 64u : 32u; }

/// Bytes of one weight block (quant/*.h's static_asserts).
GK_DEV uint block_bytes(uint t) {
    switch (t) {
    case T_Q4_0: return 18u;
    case T_Q4_1: return 20u;
    case T_Q5_0: return 22u;
    case T_Q5_1: return 24u;
    case T_Q8_0: return 34u;
    case T_Q8_1: return 36u;
    case T_Q2_K: return 84u;
    case T_Q3_K: return 110u;
    case T_Q4_K: return 144u;
    case T_Q5_K: return 176u;
    case T_Q6_K: return 210u;
    case T_IQ4_NL: return 18u;
    case T_IQ4_XS: return 136u;
    case T_TQ1_0: return 54u;
    case T_TQ2_0: return 66u;
    case T_MXFP4: return 17u;
    case T_IQ2_XXS: return 66u;
    case T_IQ2_XS: return 74u;
    case T_IQ2_S: return 82u;
    case T_IQ3_XXS: return 98u;
    case T_IQ3_S: return 110u;
    case T_IQ1_S: return 50u;
    case T_IQ1_M: return 56u;
    case T_NVFP4: return 36u;
    case T_Q1_0: return 18u;
    default: return 18u;  // T_Q2_0
    }
}

/// Elements of one unit (the q8_0 / q8_1 family's chain step).
GK_DEV uint unit_len(uint t) { return t == T_NVFP4 ? 16u : 32u; }

/// Code j < g of a group of g 4-bit codes at byte o: low nibbles j < g / 2, high the rest.
GK_DEV uint group_nibble(uint o, uint g, uint j) {
    return j < g / 2u ? wbyte(o + j) & 15u : wbyte(o + j - g / 2u) >> 4;
}

/// Bit j of a little-endian bit field at byte o.
GK_DEV uint bit_at(uint o, uint j) { return (wbyte(o + j / 8u) >> (j % 8u)) & 1u; }

/// The signed byte at o.
GK_DEV int sbyte(uint o) { return int(wbyte(o) << 24) >> 24; }

/// Codebook entry c (the table's word c, a signed value).
GK_DEV int wcode(uint c) { return int(wtable(c)); }

/// The little-endian u16 at o.
GK_DEV uint wu16(uint o) { return wbyte(o) | (wbyte(o + 1u) << 8); }

// ---- the q8_0 / q8_1 family -------------------------------------------------------------

/// The integer of element j of the block at blk (vec_dot_legacy.cpp, vec_dot_fp4.cpp,
/// vec_dot_low_bit.cpp: the formats' value()).
GK_DEV int value32(uint t, uint blk, uint j) {
    switch (t) {
    case T_Q4_0: return int(group_nibble(blk + 2u, 32u, j)) - 8;
    case T_Q4_1: return int(group_nibble(blk + 4u, 32u, j));
    case T_Q5_0: return int(group_nibble(blk + 6u, 32u, j) | (bit_at(blk + 2u, j) << 4)) - 16;
    case T_Q5_1: return int(group_nibble(blk + 8u, 32u, j) | (bit_at(blk + 4u, j) << 4));
    case T_Q8_0: return sbyte(blk + 2u + j);
    case T_Q8_1: return sbyte(blk + 4u + j);
    case T_IQ4_NL: return wcode(group_nibble(blk + 2u, 32u, j));
    case T_MXFP4: return wcode(group_nibble(blk + 1u, 32u, j));
    case T_NVFP4: return wcode(group_nibble(blk + 4u + 8u * (j / 16u), 16u, j % 16u));
    case T_Q1_0: return bit_at(blk + 2u, j) != 0u ? 1 : -1;
    default: return int((wbyte(blk + 2u + j / 4u) >> (2u * (j % 4u))) & 3u) - 1;  // T_Q2_0
    }
}

/// quant/fp4.h's e8m0_to_fp32_half: 2^(e - 128), exactly.
GK_DEV float e8m0_half(uint e) { return bits_to_float(e < 2u ? (0x00200000u << e) : (e - 1u) << 23); }

/// quant/fp4.h's ue4m3_to_fp32_half: half the UE4M3 code's value, exactly.
GK_DEV float ue4m3_half(uint x) {
    if (x == 0u || x == 0x7Fu) return 0.0f;
    const uint e = (x >> 3) & 15u, m = x & 7u;
    // m / 512 and 2^(e - 7) (1 + m / 8) are exact in f32, and halving them too
    const float raw = e == 0u ? float(m) * (1.0f / 512.0f) : bits_to_float(((e + 120u) << 23) | (m << 20));
    return raw * 0.5f;
}

/// The f32 scale of unit s of the block at blk (f32(d), or the formats' wscale()).
GK_DEV float unit_scale(uint t, uint blk, uint s) {
    if (t == T_MXFP4) return e8m0_half(wbyte(blk));
    if (t == T_NVFP4) return ue4m3_half(wbyte(blk + s));
    return whalf(blk);
}

// ---- the q8_K family --------------------------------------------------------------------

/// q4_K / q5_K's 6-bit scale (min = false) or min of sub-block j (unpack_scale_min_k4).
GK_DEV int k4_scale(uint sc, uint j, bool want_min) {
    if (j < 4u) return int(wbyte(sc + j + (want_min ? 4u : 0u)) & 63u);
    const uint lo = want_min ? wbyte(sc + j + 4u) >> 4 : wbyte(sc + j + 4u) & 15u;
    return int(lo | ((wbyte(sc + j - (want_min ? 0u : 4u)) >> 6) << 4));
}

/// The 2-bit field of element i at qs (q2_K, q3_K, tq2_0): i = 128h + 32k + l sits at
/// bits 2k of qs[32h + l].
GK_DEV uint crumb(uint qs, uint i) { return (wbyte(qs + 32u * (i / 128u) + i % 32u) >> (2u * ((i / 32u) % 4u))) & 3u; }

/// Digit n (0 = most significant) of a base-3 packed byte b (quant/low_bit.h).
GK_DEV uint trit(uint b, uint n) {
    const uint p = n == 0u ? 1u : n == 1u ? 3u : n == 2u ? 9u : n == 3u ? 27u : 81u;
    return (((b * p) & 255u) * 3u) >> 8;
}

// ---- the lattice i-quants (cpu/vec_dot_iq.h, vec_dot_iq1/2/3.cpp) ------------------------
// Sub-block k (32 values) is 4 grid rows of 8 coordinates (iq3: 8 rows of 4); group l (8
// values) has 8 negation bits; half h (16 values) the scale ls = 2 code + 1.

/// The grid index of row r of the super-block at blk.
GK_DEV uint grid_index(uint t, uint blk, uint r) {
    switch (t) {
    case T_IQ2_XXS: return wbyte(blk + 2u + 8u * (r / 4u) + r % 4u);
    case T_IQ2_XS: return wu16(blk + 2u + 2u * r) & 511u;
    case T_IQ2_S: return wbyte(blk + 2u + r) | (((wbyte(blk + 66u + r / 4u) >> (2u * (r % 4u))) & 3u) << 8);
    case T_IQ3_XXS: return wbyte(blk + 2u + r);
    case T_IQ3_S: return wbyte(blk + 2u + r) | (((wbyte(blk + 66u + r / 8u) >> (r % 8u)) & 1u) << 8);
    case T_IQ1_S: return wbyte(blk + 2u + r) | (((wu16(blk + 34u + 2u * (r / 4u)) >> (3u * (r % 4u))) & 7u) << 8);
    default: return wbyte(blk + r) | (((wbyte(blk + 32u + r / 2u) >> (4u * (r % 2u))) & 7u) << 8);  // T_IQ1_M
    }
}

/// The 8 negation bits of group l of sub-block k (iq1: the shift signs, one for all 8).
GK_DEV uint neg_bits(uint t, uint blk, uint k, uint l) {
    uint s7;  // the formats with 7 stored signs and their parity
    switch (t) {
    case T_IQ2_XXS: s7 = (wu16(blk + 6u + 8u * k) | (wu16(blk + 8u + 8u * k) << 16)) >> (7u * l); break;
    case T_IQ2_XS: s7 = wu16(blk + 2u + 2u * (4u * k + l)) >> 9; break;
    case T_IQ3_XXS: s7 = (wu16(blk + 66u + 4u * k) | (wu16(blk + 68u + 4u * k) << 16)) >> (7u * l); break;
    case T_IQ2_S: return wbyte(blk + 34u + 4u * k + l);
    case T_IQ3_S: return wbyte(blk + 74u + 4u * k + l);
    case T_IQ1_S: return (wu16(blk + 34u + 2u * k) >> 15) != 0u ? 255u : 0u;
    default: return ((wbyte(blk + 32u + 2u * k + l / 2u) >> (4u * (l % 2u) + 3u)) & 1u) != 0u ? 255u : 0u;  // T_IQ1_M
    }
    s7 &= 127u;
    uint p = s7 ^ (s7 >> 4);
    p ^= p >> 2;
    p ^= p >> 1;
    return s7 | ((p & 1u) << 7);
}

/// The scale code of half h of sub-block k.
GK_DEV uint half_code(uint t, uint blk, uint k, uint h) {
    switch (t) {
    case T_IQ2_XXS: return wbyte(blk + 9u + 8u * k) >> 4;
    case T_IQ3_XXS: return wbyte(blk + 69u + 4u * k) >> 4;
    case T_IQ2_XS: return (wbyte(blk + 66u + k) >> (4u * h)) & 15u;
    case T_IQ2_S: return (wbyte(blk + 74u + k) >> (4u * h)) & 15u;
    case T_IQ3_S: return (wbyte(blk + 106u + k / 2u) >> (4u * (k % 2u))) & 15u;
    case T_IQ1_S: return (wu16(blk + 34u + 2u * k) >> 12) & 7u;
    default: return (wu16(blk + 48u + 2u * (k / 2u)) >> (3u * (2u * (k % 2u) + h))) & 7u;  // T_IQ1_M
    }
}

/// The integer weight of value i of the super-block at blk: the grid coordinate g,
/// negated where its bit is set; iq1: 8 g + delta, delta = -1 where the shift is negative.
GK_DEV int lattice_value(uint t, uint blk, uint i) {
    const uint k = i / 32u, e = i % 32u;
    uint       g;
    if (t == T_IQ3_XXS || t == T_IQ3_S) {
        g = (wtable(grid_index(t, blk, 8u * k + e / 4u)) >> (8u * (e % 4u))) & 255u;
    } else {
        g = (wtable(2u * grid_index(t, blk, 4u * k + e / 8u) + (e % 8u) / 4u) >> (8u * (e % 4u))) & 255u;
    }
    const bool neg = ((neg_bits(t, blk, k, e / 8u) >> (e % 8u)) & 1u) != 0u;
    if (t == T_IQ1_S || t == T_IQ1_M) return 8 * (int(g << 24) >> 24) + (neg ? -1 : 1);
    return neg ? -int(g) : int(g);
}

/// The integer level of element i of the super-block at blk (the twins' unpacked_sb q).
GK_DEV int value256(uint t, uint blk, uint i) {
    const uint j = i / 32u, l = i % 32u;
    if (lattice(t)) return lattice_value(t, blk, i);
    switch (t) {
    case T_Q2_K: return int(crumb(blk + 16u, i));
    case T_Q3_K: return int(crumb(blk + 32u, i)) - (((wbyte(blk + l) >> j) & 1u) != 0u ? 0 : 4);
    case T_Q4_K: {
        const uint b = wbyte(blk + 16u + 32u * (j / 2u) + l);
        return int(j % 2u != 0u ? b >> 4 : b & 15u);
    }
    case T_Q5_K: {
        const uint b = wbyte(blk + 48u + 32u * (j / 2u) + l);
        return int((j % 2u != 0u ? b >> 4 : b & 15u) | (((wbyte(blk + 16u + l) >> j) & 1u) << 4));
    }
    case T_Q6_K: {
        const uint h = i / 128u, k = (i / 32u) % 4u;
        const uint lo = wbyte(blk + 64u * h + l + 32u * (k % 2u));
        const uint hi = (wbyte(blk + 128u + 32u * h + l) >> (2u * k)) & 3u;
        return int((k < 2u ? lo & 15u : lo >> 4) | (hi << 4)) - 32;
    }
    case T_IQ4_XS: return wcode(group_nibble(blk + 8u + 16u * j, 32u, l));
    case T_TQ1_0: {
        // qs[0..31] hold digits 0..4 of elements 0..159, qs[32..47] of 160..239, qh of 240..255
        if (i < 160u) return int(trit(wbyte(blk + i % 32u), i / 32u)) - 1;
        if (i < 240u) return int(trit(wbyte(blk + 32u + (i - 160u) % 16u), (i - 160u) / 16u)) - 1;
        return int(trit(wbyte(blk + 48u + (i - 240u) % 4u), (i - 240u) / 4u)) - 1;
    }
    default: return int(crumb(blk, i)) - 1;  // T_TQ2_0
    }
}

/// The integer scale of group g (16 elements) of the super-block at blk.
GK_DEV int scale256(uint t, uint blk, uint g) {
    if (lattice(t)) return 2 * int(half_code(t, blk, g / 2u, g % 2u)) + 1;
    switch (t) {
    case T_Q2_K: return int(wbyte(blk + g) & 15u);
    case T_Q3_K: {
        const uint lo = (wbyte(blk + 96u + g % 8u) >> (4u * (g / 8u))) & 15u;
        const uint hi = (wbyte(blk + 104u + g % 4u) >> (2u * (g / 4u))) & 3u;
        return int(lo | (hi << 4)) - 32;
    }
    case T_Q4_K: return k4_scale(blk + 4u, g / 2u, false);
    case T_Q5_K: return k4_scale(blk + 4u, g / 2u, false);
    case T_Q6_K: return sbyte(blk + 192u + g);
    case T_IQ4_XS: {
        const uint j = g / 2u, sh = wu16(blk + 2u);
        return int(((wbyte(blk + 4u + j / 2u) >> (4u * (j % 2u))) & 15u) | (((sh >> (2u * j)) & 3u) << 4)) - 32;
    }
    default: return 1;  // T_TQ1_0, T_TQ2_0
    }
}

/// The integer min of group g (formats with a dmin; 0 for the others).
GK_DEV int min256(uint t, uint blk, uint g) {
    if (t == T_Q2_K) return int(wbyte(blk + g) >> 4);
    if (t == T_Q4_K || t == T_Q5_K) return k4_scale(blk + 4u, g / 2u, true);
    return 0;
}

/// f32(d) of the super-block at blk.
GK_DEV float d256(uint t, uint blk) {
    switch (t) {
    case T_Q2_K: return whalf(blk + 80u);
    case T_Q3_K: return whalf(blk + 108u);
    case T_Q6_K: return whalf(blk + 208u);
    case T_TQ1_0: return whalf(blk + 52u);
    case T_TQ2_0: return whalf(blk + 64u);
    case T_IQ1_M: {  // the top nibbles of the four scale words
        uint bits = 0u;
        for (uint w = 0u; w < 4u; ++w) bits |= (wu16(blk + 48u + 2u * w) >> 12) << (4u * w);
        return half_bits_to_float(bits);
    }
    default: return whalf(blk);  // q4_K, q5_K, iq4_xs, the other lattice formats
    }
}

/// The power of two the lattice formats' sums are taken at (folded into d; 1 elsewhere).
GK_DEV float factor256(uint t) { return t == T_IQ3_XXS ? 0.25f : t == T_IQ3_S ? 1.0f : lattice(t) ? 0.125f : 1.0f; }

/// f32(dmin) of the super-block at blk (has_dmin formats).
GK_DEV float dmin256(uint t, uint blk) { return t == T_Q2_K ? whalf(blk + 82u) : whalf(blk + 2u); }
