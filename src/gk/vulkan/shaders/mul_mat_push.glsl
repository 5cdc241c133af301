// mul_mat_push.glsl - the push constants of mul_mat.comp, quantize_act.comp and
// mul_mat_q.comp (ops.cpp's mul_mat_push): each reads the fields it needs.

layout(push_constant) uniform P {
    uint M, N, ne2, ne3;  // dst
    uint K, r2, r3, aoff; // dot length; activation slabs per weight slab; the quantized
                          // activations' first word at binding 3
    uint ws1, ws2, ws3;   // weights' strides, in elements (in bytes for block formats)
    uint xs1, xs2, xs3;   // activations' strides in elements (rows dense)
    uint ds1, ds2, ds3;   // dst's (rows dense)
    uint woff, xoff, doff;
    uint toff;            // mul_mat_q's codebook: its first word at binding 3
} p;
