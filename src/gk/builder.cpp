// builder.cpp - the checks and result constructors shared by every op builder.
#include "internal.h"

#include <cstdio>

namespace gk {

bool builder::fail(const char * fmt, ...) {
    char    msg[400];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    set_error(ctx_, "%s: %s", op_, msg);
    return false;
}

bool builder::float_type(const gk_tensor * t, const char * what) {
    return is_float_type(t->type) || fail("%s must be f32, f16 or bf16, got %s", what, gk_type_name(t->type));
}

bool builder::type_is(const gk_tensor * t, gk_type type, const char * what) {
    return t->type == type || fail("%s must be %s, got %s", what, gk_type_name(type), gk_type_name(t->type));
}

bool builder::decodable(const gk_tensor * t, const char * what) {
    return has_decoder(t->type) || fail("%s has type %s, which has no row decoder", what, gk_type_name(t->type));
}

bool builder::encodable(const gk_tensor * t, const char * what) {
    return has_encoder(t->type) || fail("%s has type %s, which has no row encoder", what, gk_type_name(t->type));
}

bool builder::dense_rows(const gk_tensor * t, const char * what) {
    return gk_is_contiguous_rows(t) || fail("%s %s must have dense rows (nb[0] == type size)", what, describe(t).c_str());
}

bool builder::contiguous(const gk_tensor * t, const char * what) {
    return gk_is_contiguous(t) || fail("%s %s must be contiguous", what, describe(t).c_str());
}

bool builder::same_shape(const gk_tensor * a, const gk_tensor * b) {
    return gk_are_same_shape(a, b) ||
           fail("shapes differ: %s and %s", describe(a).c_str(), describe(b).c_str());
}

bool builder::dims_at_most(const gk_tensor * t, int n_dims, const char * what) {
    for (int i = n_dims; i < 4; ++i) {
        if (t->ne[i] != 1) {
            return fail("%s %s must have at most %d dimensions", what, describe(t).c_str(), n_dims);
        }
    }
    return true;
}

bool builder::plain_type(const gk_tensor * t, const char * what) {
    return gk_blck_size(t->type) == 1 ||
           fail("%s has block type %s; this op moves single elements", what, gk_type_name(t->type));
}

gk_tensor * builder::result(gk_type type, const int64_t ne[4], gk_op op, gk_tensor * s0, gk_tensor * s1,
                            gk_tensor * s2, gk_tensor * s3) {
    gk_tensor * r = new_tensor(ctx_, type, ne, true);
    if (r) {
        r->op     = op;
        r->src[0] = s0;
        r->src[1] = s1;
        r->src[2] = s2;
        r->src[3] = s3;
    }
    return r;
}

gk_tensor * builder::alias(gk_tensor * a, gk_op op, gk_tensor * s0, gk_tensor * s1, gk_tensor * s2) {
    gk_tensor * r = gk_view_tensor(ctx_, a);
    if (r) {
        r->op     = op;
        r->src[0] = s0;
        r->src[1] = s1;
        r->src[2] = s2;
    }
    return r;
}

} // namespace gk
