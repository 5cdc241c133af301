// internal.h - what the files of src/gk share: the context struct, arena allocation,
// error recording, and the small toolkit every op builder uses (null propagation, type
// and shape checks that record a message, result creation).
#pragma once

#include "gk/gk.h"

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <string>

/// One arena allocation: a header followed (at the next GK_MEM_ALIGN boundary) by the
/// object. The headers form a singly linked list in creation order.
struct gk_object {
    enum kind_t : int32_t { tensor = GK_OBJECT_TENSOR, graph = GK_OBJECT_GRAPH, data = GK_OBJECT_DATA } kind;
    size_t      offs;   // offset of the object (after the header) from the arena's start
    size_t      size;   // bytes of the object after the header
    gk_object * next;
};

struct gk_context {
    unsigned char * mem      = nullptr;
    size_t          mem_size = 0;
    bool            mem_owned = false;
    bool            no_alloc  = false;
    size_t          used      = 0;      // bytes of the arena in use (offset of the cursor)
    gk_object *     first     = nullptr;
    gk_object *     last      = nullptr;
    char            error[512] = {};
};

namespace gk {

/// Record a printf-style message as ctx's last error (no-op for a null ctx).
void set_error(gk_context * ctx, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
void set_error_v(gk_context * ctx, const char * fmt, va_list ap);

/// Carve `size` bytes for an object of `kind` out of ctx's arena; nullptr (with an
/// error recorded) when it does not fit.
void * arena_alloc(gk_context * ctx, gk_object::kind_t kind, size_t size);

/// flash_attn_back's result layout (gk_flash_attn_back): the element offset of part
/// `part` (0 dq, 1 dk, 2 dv) in the result, or with part 3 the result's length: each part
/// starts at a 16-byte boundary (ggml's GGML_MEM_ALIGN), as ggml lays it out.
int64_t flash_attn_back_offset(const gk_tensor * q, const gk_tensor * k, const gk_tensor * v, int part);

/// Bytes an object of `size` costs in the arena, header and alignment included.
size_t arena_cost(size_t size);

/// A tensor struct (no data) with the given type, shape and default strides; nullptr
/// with an error on a bad shape or a full arena. Data is allocated unless no_alloc or
/// `with_data` is false.
gk_tensor * new_tensor(gk_context * ctx, gk_type type, const int64_t ne[4], bool with_data);

/// ne[0]*ne[1]*ne[2]*ne[3] into *out; false when it overflows int64 (ne[i] >= 0).
bool checked_nelements(const int64_t ne[4], int64_t * out);

/// gk_nbytes() of a tensor of `type` with shape ne and strides nb, into *out; false when
/// it overflows size_t.
bool checked_nbytes(gk_type type, const int64_t ne[4], const size_t nb[4], size_t * out);

/// Set dst's strides to the default for its type and shape.
void set_default_strides(gk_tensor * t);

/// "[4, 3, 1, 1] f32" (for messages).
std::string describe(const gk_tensor * t);

/// True for the ops that only alias memory (none, view, reshape, permute, transpose):
/// every backend skips them at compute time (view.cpp).
bool is_layout_op(gk_op op);

/// F32, F16 or BF16.
bool is_float_type(gk_type type);
/// The codec has a row decoder / encoder for this type.
bool has_decoder(gk_type type);
bool has_encoder(gk_type type);

/// The first nb[...] == default contiguity test for dims >= `from` (ggml's
/// is_contiguous_n): dims below `from` may have any stride.
bool is_contiguous_from(const gk_tensor * t, int from);

/// Builder context: the op's name for messages and the checks every builder uses. Each
/// check returns false after recording "<op>: <message>" in ctx.
class builder {
public:
    builder(gk_context * ctx, const char * op) : ctx_(ctx), op_(op) {}

    /// All given tensors are non-null. A null source means an earlier builder failed and
    /// already recorded why, so this keeps that message unless ctx has none.
    template <class... T>
    bool inputs(const T *... ts) {
        if (!ctx_) {
            return false;
        }
        const bool ok = ((ts != nullptr) && ...);
        if (!ok && gk_last_error(ctx_)[0] == '\0') {
            fail("a source tensor is NULL");
        }
        return ok;
    }

    bool fail(const char * fmt, ...) __attribute__((format(printf, 2, 3)));

    bool float_type(const gk_tensor * t, const char * what);
    bool type_is(const gk_tensor * t, gk_type type, const char * what);
    bool decodable(const gk_tensor * t, const char * what);
    bool encodable(const gk_tensor * t, const char * what);
    bool dense_rows(const gk_tensor * t, const char * what);  // nb[0] == type size
    bool contiguous(const gk_tensor * t, const char * what);
    bool same_shape(const gk_tensor * a, const gk_tensor * b);
    bool dims_at_most(const gk_tensor * t, int n_dims, const char * what);
    bool plain_type(const gk_tensor * t, const char * what);  // one element per block (ops that move elements)

    /// A new result tensor of `type` and shape ne, with op and sources set.
    gk_tensor * result(gk_type type, const int64_t ne[4], gk_op op, gk_tensor * s0 = nullptr,
                       gk_tensor * s1 = nullptr, gk_tensor * s2 = nullptr, gk_tensor * s3 = nullptr);
    /// A view of `a` (for _inplace forms and set_rows) with op and sources set.
    gk_tensor * alias(gk_tensor * a, gk_op op, gk_tensor * s0 = nullptr, gk_tensor * s1 = nullptr,
                      gk_tensor * s2 = nullptr);

    gk_context * ctx() const { return ctx_; }

private:
    gk_context * ctx_;
    const char * op_;
};

void set_op_param_i32(gk_tensor * t, int i, int32_t v);
void set_op_param_f32(gk_tensor * t, int i, float v);

} // namespace gk
