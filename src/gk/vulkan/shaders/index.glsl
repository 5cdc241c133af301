// index.glsl - what the gk Vulkan shaders share: tensors are bound whole (binding = the
// VkBuffer behind the tensor's gk buffer) and addressed in elements: an element offset
// (the tensor's byte offset in its buffer / element size) plus strides in elements.

/// Element (i0, i1, i2, i3) of a tensor at offset `off` with strides `s`.
uint at4(uint off, uvec4 s, uvec4 i) { return off + i.x * s.x + i.y * s.y + i.z * s.z + i.w * s.w; }

/// Index i of a [ne0, ne1, ne2, ne3] walk as (i0, i1, i2, i3), ne0 fastest.
uvec4 unflatten(uint i, uvec4 ne) {
    const uint i0 = i % ne.x;
    i /= ne.x;
    const uint i1 = i % ne.y;
    i /= ne.y;
    return uvec4(i0, i1, i % ne.z, i / ne.z);
}

/// f16 element e of a buffer of 32-bit words (exact).
float half_at(uint word, uint e) { return unpackHalf2x16(word >> (16u * (e & 1u))).x; }

/// Element e of `buf`, 32-bit words holding f16 (half) or f32 elements, as f32 (exact).
#define LOAD_F32_OR_F16(buf, e, half) ((half) ? half_at(buf[(e) >> 1], (e)) : uintBitsToFloat(buf[(e)]))

/// Store f32 `v` as element o of `buf`, 32-bit words holding f16 (half: rounded by
/// f32_to_f16_bits, its 16-bit half written with atomics, as two invocations may share
/// the word) or f32 elements.
#define STORE_F32_OR_F16(buf, o, v, half)                                          \
    if (half) {                                                                   \
        const uint sh_ = 16u * ((o) & 1u);                                        \
        atomicAnd(buf[(o) >> 1], ~(0xFFFFu << sh_));                              \
        atomicOr(buf[(o) >> 1], f32_to_f16_bits(v) << sh_);                        \
    } else {                                                                      \
        buf[(o)] = floatBitsToUint(v);                                            \
    }

/// f32 -> f16 rounded to nearest, ties to even, subnormals kept, overflow to infinity:
/// the CPU's fp32_to_fp16 in integer steps, so that no driver's conversion mode matters.
uint f32_to_f16_bits(float f) {
    const uint x    = floatBitsToUint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint e    = (x >> 23) & 0xFFu;
    uint       m    = x & 0x7FFFFFu;
    if (e == 0xFFu) return sign | 0x7C00u | (m != 0u ? 0x200u | (m >> 13) : 0u);
    const int E = int(e) - 127 + 15;
    if (E >= 31) return sign | 0x7C00u;
    if (E <= 0) {
        if (E < -10) return sign;
        m |= 0x800000u;
        const uint shift = uint(14 - E);
        uint       h     = m >> shift;
        const uint rem   = m & ((1u << shift) - 1u);
        const uint half_ = 1u << (shift - 1u);
        if (rem > half_ || (rem == half_ && (h & 1u) != 0u)) h++;
        return sign | h;
    }
    uint       h   = (uint(E) << 10) | (m >> 13);
    const uint rem = m & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) h++;
    return sign | h;
}

/// a * b + c rounded once (an exact fused multiply-add) from double operations that are
/// each correctly rounded, for devices whose fma() is not fused (lavapipe's is a multiply
/// and an add): the product is exact in double; the sum is turned from round-to-nearest
/// into round-to-odd with its exact error (TwoSum), and round-to-odd in 53 bits followed
/// by rounding to 24 gives the correctly rounded result (Boldo and Melquiond, "Emulation
/// of FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008).
float fma_exact(float a, float b, float c) {
    precise double p  = double(a) * double(b);
    precise double s  = p + double(c);
    precise double bb = s - p;
    precise double e  = (p - (s - bb)) + (double(c) - bb);
    uvec2          u  = unpackDouble2x32(s);
    if (e != 0.0LF && !isinf(s) && (u.x & 1u) == 0u) {
        // toward the exact value: one unit up in magnitude when e has s's sign, else down
        if ((e > 0.0LF) == (s > 0.0LF)) {
            u.x += 1u;
            if (u.x == 0u) u.y += 1u;
        } else {
            if (u.x == 0u) u.y -= 1u;
            u.x -= 1u;
        }
        s = packDouble2x32(u);
    }
    return float(s);
}
