// plain.cpp - the one-element "block" types: f32, f16, bf16, f64, i8, i16, i32, i64.
//
// Decoding to f32:
//   f32 copy; f16 and bf16 exact (fp16.h); f64 rounded to the nearest f32 (ties to even;
//   out of range gives +-Inf); integers converted to the nearest f32 (ties to even; exact
//   for |v| <= 2^24).
// Encoding from f32:
//   f32 copy; f16 and bf16 rounded to nearest even (fp16.h); f64 exact widening;
//   integers: rounded to the nearest integer with halves away from zero, saturated to the
//   type's range (+-Inf saturate too), NaN -> 0.
// Elements are read and written with memcpy, so buffers need no particular alignment.
#include "codec.h"
#include "fp16.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace gk::quant {
namespace {

template <class T>
T load(const void * base, int64_t i) {
    T v;
    std::memcpy(&v, static_cast<const unsigned char *>(base) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    return v;
}

template <class T>
void store(void * base, int64_t i, T v) {
    std::memcpy(static_cast<unsigned char *>(base) + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

/// The f32 -> Stored conversion of this type, and Stored -> f32.
template <class Stored, float (*Decode)(Stored), Stored (*Encode)(float)>
struct plain_codec {
    static void to_float(const void * src, float * dst, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
            dst[i] = Decode(load<Stored>(src, i));
        }
    }
    static void from_float(const float * src, void * dst, int64_t n, const float *) {
        for (int64_t i = 0; i < n; ++i) {
            store<Stored>(dst, i, Encode(src[i]));
        }
    }
};

float f32_decode(float v) { return v; }
float f32_encode(float v) { return v; }
float f16_decode(fp16_t h) { return fp16_to_fp32(h); }
fp16_t f16_encode(float v) { return fp32_to_fp16(v); }
float bf16_decode(bf16_t h) { return bf16_to_fp32(h); }
bf16_t bf16_encode(float v) { return fp32_to_bf16(v); }
float f64_decode(double v) { return static_cast<float>(v); }
double f64_encode(float v) { return v; }

template <class I>
float int_decode(I v) {
    return static_cast<float>(v);
}

/// Nearest integer (halves away from zero), saturated to I's range; NaN -> 0.
template <class I>
I int_encode(float v) {
    if (std::isnan(v)) {
        return 0;
    }
    const float r = std::round(v);
    // -2^(bits-1) is exact in f32, and so is the first value past the top, 2^(bits-1).
    constexpr float lowest = static_cast<float>(std::numeric_limits<I>::min());
    if (r >= -lowest) {
        return std::numeric_limits<I>::max();
    }
    if (r <= lowest) {
        return std::numeric_limits<I>::min();
    }
    return static_cast<I>(r);
}

template <class Codec>
void set(codec_table & t, gk_type type) {
    t.rows[type].to_float   = &Codec::to_float;
    t.rows[type].from_float = &Codec::from_float;
}

} // namespace

void register_plain(codec_table & t) {
    set<plain_codec<float, f32_decode, f32_encode>>(t, GK_TYPE_F32);
    set<plain_codec<fp16_t, f16_decode, f16_encode>>(t, GK_TYPE_F16);
    set<plain_codec<bf16_t, bf16_decode, bf16_encode>>(t, GK_TYPE_BF16);
    set<plain_codec<double, f64_decode, f64_encode>>(t, GK_TYPE_F64);
    set<plain_codec<int8_t, int_decode<int8_t>, int_encode<int8_t>>>(t, GK_TYPE_I8);
    set<plain_codec<int16_t, int_decode<int16_t>, int_encode<int16_t>>>(t, GK_TYPE_I16);
    set<plain_codec<int32_t, int_decode<int32_t>, int_encode<int32_t>>>(t, GK_TYPE_I32);
    set<plain_codec<int64_t, int_decode<int64_t>, int_encode<int64_t>>>(t, GK_TYPE_I64);
}

} // namespace gk::quant
