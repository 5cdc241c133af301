// mul_mat_push.glsl - the push constants of mul_mat.comp, quantize_act.comp and
// mul_mat_q.comp (ops.cpp's mul_mat_push): each reads the fields it needs; and the rows
// a dst element of mul_mat or mul_mat_id reads (weight_row, act_row).

layout(push_constant) uniform P {
    uint M, N, ne2, ne3;  // dst
    uint K, r2, r3, aoff; // dot length; activation slabs per weight slab; the quantized
                          // activations' first word at binding 3
    uint ws1, ws2, ws3;   // weights' strides, in elements (in bytes for block formats)
    uint xs1, xs2, xs3;   // activations' strides in elements (rows dense)
    uint ds1, ds2, ds3;   // dst's (rows dense)
    uint woff, xoff, doff;
    uint xN;              // activation rows per slab (N for mul_mat; mul_mat_id's dst row u reads row u % xN)
    uint E, ioff, is0;    // mul_mat_id: experts (weight slabs), the ids' offset and strides in elements
    uint is1, eoff;       // ... and the word at binding 3 set to 1 when an id is outside [0, E)
    uint toff;            // mul_mat_q's codebook: its first word at binding 3
} p;

// mul_mat_id's expert ids (src[2]): dst[:, u, t] takes weight slab ids[u, t].
layout(std430, set = 0, binding = 4) readonly buffer I { int ids[]; };

const uint k_bad_row = 0xFFFFFFFFu;

/// The first weight element (byte, for block formats) of the row dst element j = (m, n,
/// i2, i3) dots: row m of slab (i2 / r2, i3 / r3), or for mul_mat_id (id) of slab
/// ids[n, i2]; k_bad_row for an id outside [0, E).
uint weight_row(uvec4 j, bool id) {
    if (!id) return p.woff + j.x * p.ws1 + (j.z / p.r2) * p.ws2 + (j.w / p.r3) * p.ws3;
    const int e = ids[p.ioff + j.y * p.is0 + j.z * p.is1];
    return e < 0 || uint(e) >= p.E ? k_bad_row : p.woff + j.x * p.ws1 + uint(e) * p.ws2;
}

/// The activation row dst element j dots, counted in rows: (n % xN, i2, i3).
uint act_row(uvec4 j) { return j.y % p.xN + p.xN * (j.z + p.ne2 * j.w); }
