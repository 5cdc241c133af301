/* ref-codec-cli - the reference ggml codec behind the same command line as
 * tests/quant/codec-cli, so that any script can swap one for the other.
 *
 *   ref-codec-cli decode TYPE IN.bin OUT.f32 N_PER_ROW   rows of blocks -> f32 (little-endian)
 *   ref-codec-cli encode TYPE IN.f32 OUT.bin N_PER_ROW [IMATRIX.f32]
 *
 * Built against ggml's public API only (ggml.h): decode through the type traits'
 * to_float, encode through ggml_quantize_chunk (or, for q8_1 and q8_K which these
 * do not cover, the row functions that libggml-base exports for them).
 * Exit status 0 on success, 2 with a message on any error.
 */
#include "ggml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(const char * msg, const char * arg) {
    fprintf(stderr, "ref-codec-cli: %s%s\n", msg, arg ? arg : "");
    return 2;
}

/* Reads a whole file into a malloc'd buffer; returns NULL on error. */
static char * read_all(const char * path, size_t * size) {
    FILE * f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char * buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char * bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    *size = len;
    return buf;
}

static int write_all(const char * path, const void * data, size_t n) {
    FILE * f = fopen(path, "wb");
    if (!f) {
        return 0;
    }
    const int ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* Type id from a ggml type name, case-insensitive; -1 when unknown. */
static int type_from_name(const char * name) {
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
        const struct ggml_type_traits * tr = ggml_get_type_traits((enum ggml_type) t);
        if (tr->blck_size > 0 && tr->type_name && strcasecmp(tr->type_name, name) == 0) {
            return t;
        }
    }
    return -1;
}

/* The row encoders of q8_1 and q8_K and the decoder of q8_K, exported by
 * libggml-base (ggml-quants.h) but reachable through neither ggml_quantize_chunk
 * nor the base type traits. ggml has no q8_1 decoder. */
void quantize_row_q8_1_ref(const float * x, void * y, int64_t k);
void quantize_row_q8_K_ref(const float * x, void * y, int64_t k);
void dequantize_row_q8_K(const void * x, float * y, int64_t k);

/* True for the types ggml_quantize_chunk encodes. */
static int chunk_encodes(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q8_1:
        case GGML_TYPE_Q8_K:
        case GGML_TYPE_I8:
        case GGML_TYPE_I16:
        case GGML_TYPE_I32:
        case GGML_TYPE_I64:
        case GGML_TYPE_F64:
            return 0;
        default:
            return 1;
    }
}

static int decode(enum ggml_type type, const char * in_path, const char * out_path, int64_t n_per_row) {
    size_t size = 0;
    char * in = read_all(in_path, &size);
    if (!in) {
        return fail("cannot read ", in_path);
    }
    const size_t row_size = ggml_row_size(type, n_per_row);
    if (size % row_size != 0) {
        free(in);
        return fail("input is not a whole number of rows", NULL);
    }
    const int64_t nrows = (int64_t) (size / row_size);
    float * out = malloc((size_t) (nrows * n_per_row) * sizeof(float) + 1);
    const ggml_to_float_t to_float = type == GGML_TYPE_Q8_K ? (ggml_to_float_t) dequantize_row_q8_K
                                                            : ggml_get_type_traits(type)->to_float;
    int rc = 0;
    if (!out) {
        rc = fail("out of memory", NULL);
    } else if (type == GGML_TYPE_F32) {
        memcpy(out, in, size);
    } else if (!to_float) {
        rc = fail("no decoder for ", ggml_type_name(type));
    } else {
        for (int64_t r = 0; r < nrows; ++r) {
            to_float(in + r * row_size, out + r * n_per_row, n_per_row);
        }
    }
    if (rc == 0 && !write_all(out_path, out, (size_t) (nrows * n_per_row) * sizeof(float))) {
        rc = fail("write failed: ", out_path);
    }
    free(out);
    free(in);
    return rc;
}

static int encode(enum ggml_type type, const char * in_path, const char * out_path, int64_t n_per_row,
                  const char * imatrix_path) {
    size_t size = 0;
    char * in = read_all(in_path, &size);
    if (!in) {
        return fail("cannot read ", in_path);
    }
    const size_t row_bytes = (size_t) n_per_row * sizeof(float);
    float * imatrix = NULL;
    int rc = 0;
    if (size % row_bytes != 0) {
        rc = fail("input is not a whole number of f32 rows", NULL);
    } else if (imatrix_path) {
        size_t im_size = 0;
        imatrix = (float *) read_all(imatrix_path, &im_size);
        if (!imatrix || im_size != row_bytes) {
            rc = fail("imatrix must hold N_PER_ROW f32 values: ", imatrix_path);
        }
    }
    if (rc == 0 && !imatrix && ggml_quantize_requires_imatrix(type)) {
        rc = fail("ggml needs an imatrix for ", ggml_type_name(type));
    }
    const int64_t nrows = (int64_t) (size / row_bytes);
    const size_t row_size = ggml_row_size(type, n_per_row);
    char * out = rc == 0 ? malloc(row_size * (size_t) nrows + 1) : NULL;
    if (rc == 0 && !out) {
        rc = fail("out of memory", NULL);
    }
    if (rc == 0) {
        const float * src = (const float *) in;
        if (chunk_encodes(type)) {
            ggml_quantize_chunk(type, src, out, 0, nrows, n_per_row, imatrix);
        } else if (type == GGML_TYPE_Q8_1 || type == GGML_TYPE_Q8_K) {
            for (int64_t r = 0; r < nrows; ++r) {
                (type == GGML_TYPE_Q8_1 ? quantize_row_q8_1_ref : quantize_row_q8_K_ref)(
                    src + r * n_per_row, out + r * row_size, n_per_row);
            }
        } else {
            rc = fail("no encoder for ", ggml_type_name(type));
        }
    }
    if (rc == 0 && !write_all(out_path, out, row_size * (size_t) nrows)) {
        rc = fail("write failed: ", out_path);
    }
    free(out);
    free(imatrix);
    free(in);
    return rc;
}

int main(int argc, char ** argv) {
    if (argc < 6) {
        return fail("usage: ref-codec-cli decode|encode TYPE IN OUT N_PER_ROW [IMATRIX]", NULL);
    }
    const int t = type_from_name(argv[2]);
    if (t < 0) {
        return fail("unknown type ", argv[2]);
    }
    const enum ggml_type type = (enum ggml_type) t;
    const long long n_per_row = atoll(argv[5]);
    if (n_per_row <= 0 || n_per_row % ggml_blck_size(type) != 0) {
        return fail("row length is not a whole number of blocks", NULL);
    }
    int rc;
    if (strcmp(argv[1], "decode") == 0) {
        rc = decode(type, argv[3], argv[4], n_per_row);
    } else if (strcmp(argv[1], "encode") == 0) {
        rc = encode(type, argv[3], argv[4], n_per_row, argc > 6 ? argv[6] : NULL);
    } else {
        rc = fail("unknown mode ", argv[1]);
    }
    ggml_quantize_free();
    return rc;
}
