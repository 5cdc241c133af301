// block_row.h - what the CUDA kernels do with block_decode.h over one weight row: an
// element as get_rows decodes it, and the row's dot with quantized activations in the
// CPU's order. C++ only (the Vulkan shaders spell the same loops in GLSL). Included
// inside a reader struct right after block_decode.h - kernels.cu's block_reader, and
// test-block-decode's on the host, so that these loops are checked in every build, with
// or without a GPU - which gives, besides block_decode.h's inputs, its roundings:
//   float fmul(a, b), fadd(a, b), fsub(a, b), ffma(a, b, c)   one IEEE operation each,
//                                                            rounded once
//   float load_f32(const unsigned char * p)                  the f32 at p (any alignment)

/// Element e of the row, as the codec's to_float gives it (not the lattice i-quants,
/// whose to_float is not the dot's form).
GK_DEV float element(uint t, uint e) {
    const uint blk = (e / qk_w(t)) * block_bytes(t), k = e % qk_w(t);
    if (!k_family(t)) {
        const float y = fmul(static_cast<float>(value32(t, blk, k)), unit_scale(t, blk, k / unit_len(t)));
        return has_offset(t) ? fadd(y, whalf(blk + 2)) : y;
    }
    const float dl = fmul(d256(t, blk), static_cast<float>(scale256(t, blk, k / 16)));
    const float y  = fmul(dl, static_cast<float>(value256(t, blk, k)));
    return has_dmin(t) ? fsub(y, fmul(dmin256(t, blk), static_cast<float>(min256(t, blk, k / 16)))) : y;
}

/// The dot of the row (K elements) with the activation row at `ar` in the kernels' layout
/// (quantize_act: per block d as f32, for q8_1 then s as f32, then the quants): per unit
/// an exact integer sum, chain u % 4 += d * float(isum) fused (and the offset or min
/// term), then (c0 + c1) + (c2 + c3) - the order in block_decode.h's comment.
GK_DEV float row_dot(uint t, const unsigned char * ar, uint K) {
    const bool kf = k_family(t);
    const uint hb = q8_1_family(t) ? 8u : 4u;  // activation block header bytes (d, s)
    const uint qa = kf ? 256u : 32u;           // activation block elements
    const uint wb = block_bytes(t), qw = qk_w(t), ul = kf ? 256u : unit_len(t);
    float      c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint u = 0; u < K / ul; ++u) {
        const uint                e0  = u * ul;  // the unit's first element
        const uint                blk = (e0 / qw) * wb, j0 = e0 % qw;
        const unsigned char *     ab = ar + (e0 / qa) * (hb + qa);
        const float               ad = load_f32(ab);
        const signed char * const a  = reinterpret_cast<const signed char *>(ab + hb) + e0 % qa;
        if (kf) {
            int isum = 0, isum_min = 0;
            for (uint g = 0; g < 16; ++g) {
                int dot = 0, asum = 0;
                for (uint k = 16 * g; k < 16 * g + 16; ++k) {
                    dot += value256(t, blk, k) * a[k];
                    asum += a[k];
                }
                isum += scale256(t, blk, g) * dot;
                isum_min += min256(t, blk, g) * asum;
            }
            c[u & 3] = ffma(fmul(fmul(d256(t, blk), ad), factor256(t)), static_cast<float>(isum), c[u & 3]);
            if (has_dmin(t)) c[u & 3] = ffma(-fmul(dmin256(t, blk), ad), static_cast<float>(isum_min), c[u & 3]);
        } else {
            int isum = 0;
            for (uint k = 0; k < ul; ++k) isum += value32(t, blk, j0 + k) * a[k];
            c[u & 3] = ffma(fmul(unit_scale(t, blk, j0 / ul), ad), static_cast<float>(isum), c[u & 3]);
            if (has_offset(t)) c[u & 3] = ffma(whalf(blk + 2), load_f32(ab + 4), c[u & 3]);
        }
    }
    return fadd(fadd(c[0], c[1]), fadd(c[2], c[3]));
}
