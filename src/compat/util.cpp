// util.cpp - ggml's small utilities composed from gk's queries: versions, clocks, shape
// predicates, and the context accessors gk spells differently.
#include "convert.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace {

const auto g_start = std::chrono::steady_clock::now();

} // namespace

extern "C" {

const char * ggml_version(void) { return GK_COMPAT_GGML_VERSION; }
const char * ggml_commit(void) { return "gk-compat"; }

void    ggml_time_init(void) {}
int64_t ggml_time_us(void) {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - g_start).count();
}
int64_t ggml_time_ms(void) { return ggml_time_us() / 1000; }
int64_t ggml_cycles(void) { return ggml_time_us(); }
int64_t ggml_cycles_per_ms(void) { return 1000; }

FILE * ggml_fopen(const char * fname, const char * mode) { return std::fopen(fname, mode); }

bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b) { return std::memcmp(guid_a, guid_b, sizeof(ggml_guid)) == 0; }

double ggml_type_sizef(enum ggml_type type) {
    return static_cast<double>(ggml_type_size(type)) / static_cast<double>(ggml_blck_size(type));
}

const char * ggml_op_desc(const struct ggml_tensor * t) {
    return t->op == GGML_OP_UNARY ? ggml_unary_op_name(ggml_get_unary_op(t))
         : t->op == GGML_OP_GLU   ? ggml_glu_op_name(ggml_get_glu_op(t))
                                  : ggml_op_name(t->op);
}

size_t ggml_nbytes_pad(const struct ggml_tensor * t) { return GGML_PAD(ggml_nbytes(t), GGML_MEM_ALIGN); }

bool ggml_is_scalar(const struct ggml_tensor * t) { return t->ne[0] == 1 && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_vector(const struct ggml_tensor * t) { return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_matrix(const struct ggml_tensor * t) { return t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_3d(const struct ggml_tensor * t) { return t->ne[3] == 1; }

bool ggml_are_same_stride(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    return std::memcmp(a->nb, b->nb, sizeof a->nb) == 0;
}

struct ggml_tensor * ggml_format_name(struct ggml_tensor * tensor, const char * fmt, ...) {
    char    name[GGML_MAX_NAME];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(name, sizeof name, fmt, args);
    va_end(args);
    return ggml_set_name(tensor, name);
}

void ggml_set_loss(struct ggml_tensor * tensor) { tensor->flags |= GGML_TENSOR_FLAG_LOSS; }

} // extern "C"
