/* compat_cpu_traits.c - ggml_get_type_traits_cpu (what llama.cpp's test-quantize-fns
 * and test-quantize-perf call): for f32, f16, q8_0, q4_0 and q4_K weights, the weight
 * row encoded with the type's own from_float, the activations with the from_float of its
 * vec_dot_type, and vec_dot close to the f32 dot of the decoded weights. */
#include "check.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { N = 256 };

int main(void) {
    float w[N], x[N], wd[N];
    for (int i = 0; i < N; ++i) {
        w[i] = sinf(0.37f * (float) i);
        x[i] = cosf(0.11f * (float) i) - 0.25f;
    }
    const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
        const struct ggml_type_traits_cpu * cpu = ggml_get_type_traits_cpu(types[t]);
        char                                what[96];
        snprintf(what, sizeof what, "%s has a dot and an activation encoder, one row a call", ggml_type_name(types[t]));
        CHECK(cpu->vec_dot && cpu->from_float && cpu->nrows == 1, what);
        static unsigned char wq[N * 4], xq[N * 4];
        cpu->from_float(w, wq, N);  /* into the type itself, as ggml's CPU stores a row */
        if (types[t] == GGML_TYPE_F32) {
            memcpy(wd, wq, sizeof wd);
        } else {
            ggml_get_type_traits(types[t])->to_float(wq, wd, N);
        }
        ggml_get_type_traits_cpu(cpu->vec_dot_type)->from_float(x, xq, N);
        float  s   = 0.0f;
        double ref = 0.0, mag = 0.0;
        cpu->vec_dot(N, &s, 0, wq, 0, xq, 0, 1);
        for (int i = 0; i < N; ++i) {
            ref += (double) wd[i] * x[i];
            mag += fabs((double) wd[i] * x[i]);
        }
        snprintf(what, sizeof what, "%s vec_dot %.5f against %.5f", ggml_type_name(types[t]), s, ref);
        CHECK(fabs(s - ref) <= 0.02 * mag, what);
    }
    CHECK(ggml_get_type_traits_cpu(GGML_TYPE_I32)->vec_dot == NULL, "i32 has no dot");
    return 0;
}
