// api.cpp - the C API of include/gk/gguf.h over the context of context.h. Every
// entry point that can fail catches the library's failures (and allocation errors)
// here and reports them through gk_gguf_error; nothing throws past this file.
#include "context.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

using gk::gguf::failure;
using gk::gguf::kv_pair;
using gk::gguf::tensor_info;

namespace {

gk_gguf_status report(gk_gguf_error * err, gk_gguf_status status, uint64_t offset, const std::string & msg) {
    if (err) {
        err->status = status;
        err->offset = offset;
        std::snprintf(err->message, sizeof err->message, "%s", msg.c_str());
    }
    return status;
}

// Run `f`; turn whatever it throws into a status and a message.
template <class F>
gk_gguf_status guarded(gk_gguf_error * err, F && f) {
    try {
        f();
        return report(err, GK_GGUF_OK, UINT64_MAX, "");
    } catch (const failure & e) {
        return report(err, e.status, e.offset, e.message);
    } catch (const std::bad_alloc &) {
        return report(err, GK_GGUF_ERR_NOMEM, UINT64_MAX, "out of memory");
    } catch (const std::exception & e) {  // length_error and kin: allocation limits
        return report(err, GK_GGUF_ERR_NOMEM, UINT64_MAX, std::string("out of memory: ") + e.what());
    }
}

void require(bool ok, const char * what) {
    if (!ok) {
        gk::gguf::fail(GK_GGUF_ERR_ARG, what);
    }
}

const kv_pair * kv_at(const gk_gguf * ctx, int64_t i) {
    return ctx && i >= 0 && i < static_cast<int64_t>(ctx->kv.size()) ? &ctx->kv[static_cast<size_t>(i)] : nullptr;
}

const tensor_info * tensor_at(const gk_gguf * ctx, int64_t i) {
    return ctx && i >= 0 && i < static_cast<int64_t>(ctx->tensors.size()) ? &ctx->tensors[static_cast<size_t>(i)]
                                                                           : nullptr;
}

int64_t find(const std::unordered_map<std::string, int64_t> & index, const char * name) {
    if (!name) {
        return -1;
    }
    const auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
}

template <class T>
bool get_scalar(const gk_gguf_value * v, gk_gguf_type type, T * out) {
    static_assert(sizeof(T) <= sizeof(uint64_t));
    if (!v || v->type != type) {
        return false;
    }
    if (out) {
        std::memcpy(out, &v->bits, sizeof(T));
    }
    return true;
}

// Data given for tensor `t` must be exactly its bytes.
void require_size(const tensor_info & t, uint64_t size) {
    if (size != t.nbytes) {
        gk::gguf::fail(GK_GGUF_ERR_ARG, "tensor " + gk::gguf::quoted(t.name) + " has " + std::to_string(t.nbytes) +
                                            " bytes, " + std::to_string(size) + " given");
    }
}

bool is_power_of_two(uint64_t a) { return a != 0 && (a & (a - 1)) == 0; }

// Add `key` at the end or replace its value in place; keep the layout current.
void put_kv(gk_gguf * ctx, const char * key, gk_gguf_value v) {
    require(ctx != nullptr, "context is NULL");
    require(key != nullptr, "key is NULL");
    const std::string k = key;
    require(!k.empty(), "key is empty");
    require(k.size() <= GK_GGUF_MAX_KEY, "key is longer than 65535 bytes");
    if (k == "general.alignment") {
        require(v.type == GK_GGUF_TYPE_UINT32, "general.alignment must be a uint32");
        require(is_power_of_two(v.bits), "general.alignment must be a non-zero power of two");
    }
    kv_pair p;
    p.key    = k;
    p.nbytes = 8 + k.size() + 4 + gk::gguf::value_bytes(v);
    p.value  = std::move(v);
    const auto it = ctx->key_index.find(k);
    if (it != ctx->key_index.end()) {
        ctx->kv[static_cast<size_t>(it->second)] = std::move(p);
    } else {
        ctx->kv.push_back(std::move(p));
        try {
            ctx->key_index.emplace(k, static_cast<int64_t>(ctx->kv.size() - 1));
        } catch (...) {
            ctx->kv.pop_back();
            throw;
        }
    }
    if (k == "general.alignment") {
        ctx->alignment = static_cast<uint32_t>(ctx->kv[static_cast<size_t>(ctx->key_index[k])].value.bits);
    }
    gk::gguf::relayout(*ctx);
}

template <class T>
gk_gguf_status set_scalar(gk_gguf * ctx, const char * key, gk_gguf_type type, T x, gk_gguf_error * err) {
    return guarded(err, [&] {
        gk_gguf_value v;
        v.type = type;
        std::memcpy(&v.bits, &x, sizeof x);
        put_kv(ctx, key, std::move(v));
    });
}

} // namespace

extern "C" {

// ---- opening and closing ----------------------------------------------------------

gk_gguf * gk_gguf_open(const char * path, gk_gguf_error * err) { return gk_gguf_open_ex(path, 0, err); }

gk_gguf * gk_gguf_open_ex(const char * path, unsigned flags, gk_gguf_error * err) {
    gk_gguf * out = nullptr;
    guarded(err, [&] {
        require(path != nullptr, "path is NULL");
        out = gk::gguf::parse(gk::gguf::open_file(path), flags).release();
    });
    return out;
}

gk_gguf * gk_gguf_open_memory(const void * data, size_t size, gk_gguf_error * err) {
    return gk_gguf_open_memory_ex(data, size, 0, err);
}

gk_gguf * gk_gguf_open_memory_ex(const void * data, size_t size, unsigned flags, gk_gguf_error * err) {
    gk_gguf * out = nullptr;
    guarded(err, [&] {
        require(data != nullptr || size == 0, "data is NULL");
        out = gk::gguf::parse(gk::gguf::copy_bytes(data, size), flags).release();
    });
    return out;
}

gk_gguf * gk_gguf_create(void) {
    gk_gguf * out = nullptr;
    guarded(nullptr, [&] {
        auto ctx = std::make_unique<gk_gguf>();
        gk::gguf::relayout(*ctx);
        out = ctx.release();
    });
    return out;
}

void gk_gguf_free(gk_gguf * ctx) { delete ctx; }

// ---- header --------------------------------------------------------------------------

uint32_t gk_gguf_version(const gk_gguf * ctx) { return ctx ? ctx->version : 0; }
uint32_t gk_gguf_alignment(const gk_gguf * ctx) { return ctx ? ctx->alignment : 0; }
uint64_t gk_gguf_data_offset(const gk_gguf * ctx) { return ctx ? ctx->data_offset : 0; }

uint64_t gk_gguf_source_size(const gk_gguf * ctx) { return ctx && ctx->source ? ctx->source->size() : 0; }

// ---- key/value pairs -----------------------------------------------------------------

int64_t gk_gguf_kv_count(const gk_gguf * ctx) { return ctx ? static_cast<int64_t>(ctx->kv.size()) : 0; }

int64_t gk_gguf_find_key(const gk_gguf * ctx, const char * key) { return ctx ? find(ctx->key_index, key) : -1; }

const char * gk_gguf_kv_key(const gk_gguf * ctx, int64_t i) {
    const kv_pair * p = kv_at(ctx, i);
    return p ? p->key.c_str() : nullptr;
}

const gk_gguf_value * gk_gguf_kv_value(const gk_gguf * ctx, int64_t i) {
    const kv_pair * p = kv_at(ctx, i);
    return p ? &p->value : nullptr;
}

const gk_gguf_value * gk_gguf_get(const gk_gguf * ctx, const char * key) {
    return gk_gguf_kv_value(ctx, gk_gguf_find_key(ctx, key));
}

enum gk_gguf_type gk_gguf_value_type(const gk_gguf_value * v) { return v ? v->type : GK_GGUF_TYPE_COUNT; }

bool gk_gguf_value_u8(const gk_gguf_value * v, uint8_t * out) { return get_scalar(v, GK_GGUF_TYPE_UINT8, out); }
bool gk_gguf_value_i8(const gk_gguf_value * v, int8_t * out) { return get_scalar(v, GK_GGUF_TYPE_INT8, out); }
bool gk_gguf_value_u16(const gk_gguf_value * v, uint16_t * out) { return get_scalar(v, GK_GGUF_TYPE_UINT16, out); }
bool gk_gguf_value_i16(const gk_gguf_value * v, int16_t * out) { return get_scalar(v, GK_GGUF_TYPE_INT16, out); }
bool gk_gguf_value_u32(const gk_gguf_value * v, uint32_t * out) { return get_scalar(v, GK_GGUF_TYPE_UINT32, out); }
bool gk_gguf_value_i32(const gk_gguf_value * v, int32_t * out) { return get_scalar(v, GK_GGUF_TYPE_INT32, out); }
bool gk_gguf_value_f32(const gk_gguf_value * v, float * out) { return get_scalar(v, GK_GGUF_TYPE_FLOAT32, out); }
bool gk_gguf_value_bool(const gk_gguf_value * v, bool * out) { return get_scalar(v, GK_GGUF_TYPE_BOOL, out); }
bool gk_gguf_value_u64(const gk_gguf_value * v, uint64_t * out) { return get_scalar(v, GK_GGUF_TYPE_UINT64, out); }
bool gk_gguf_value_i64(const gk_gguf_value * v, int64_t * out) { return get_scalar(v, GK_GGUF_TYPE_INT64, out); }
bool gk_gguf_value_f64(const gk_gguf_value * v, double * out) { return get_scalar(v, GK_GGUF_TYPE_FLOAT64, out); }

const void * gk_gguf_value_data(const gk_gguf_value * v) {
    return v && gk_gguf_type_size(v->type) ? &v->bits : nullptr;
}

const char * gk_gguf_value_str(const gk_gguf_value * v, size_t * len) {
    if (!v || v->type != GK_GGUF_TYPE_STRING) {
        return nullptr;
    }
    if (len) {
        *len = v->str.size();
    }
    return v->str.c_str();
}

enum gk_gguf_type gk_gguf_array_type(const gk_gguf_value * v) {
    return v && v->type == GK_GGUF_TYPE_ARRAY ? v->elem : GK_GGUF_TYPE_COUNT;
}

uint64_t gk_gguf_array_len(const gk_gguf_value * v) { return v && v->type == GK_GGUF_TYPE_ARRAY ? v->n : 0; }

const void * gk_gguf_array_data(const gk_gguf_value * v) {
    return v && v->type == GK_GGUF_TYPE_ARRAY && gk_gguf_type_size(v->elem) ? v->packed.data() : nullptr;
}

const char * gk_gguf_array_str(const gk_gguf_value * v, uint64_t j, size_t * len) {
    if (!v || v->type != GK_GGUF_TYPE_ARRAY || v->elem != GK_GGUF_TYPE_STRING || j >= v->strs.size()) {
        return nullptr;
    }
    if (len) {
        *len = v->strs[j].size();
    }
    return v->strs[j].c_str();
}

const gk_gguf_value * gk_gguf_array_item(const gk_gguf_value * v, uint64_t j) {
    if (!v || v->type != GK_GGUF_TYPE_ARRAY || v->elem != GK_GGUF_TYPE_ARRAY || j >= v->items.size()) {
        return nullptr;
    }
    return &v->items[j];
}

// ---- tensors ---------------------------------------------------------------------------

int64_t gk_gguf_tensor_count(const gk_gguf * ctx) { return ctx ? static_cast<int64_t>(ctx->tensors.size()) : 0; }

int64_t gk_gguf_find_tensor(const gk_gguf * ctx, const char * name) { return ctx ? find(ctx->tensor_index, name) : -1; }

const char * gk_gguf_tensor_name(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? t->name.c_str() : nullptr;
}

enum gk_type gk_gguf_tensor_type(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? t->type : GK_TYPE_COUNT;
}

uint32_t gk_gguf_tensor_n_dims(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? t->n_dims : 0;
}

const int64_t * gk_gguf_tensor_ne(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? t->ne : nullptr;
}

int64_t gk_gguf_tensor_nelements(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? t->nelements : 0;
}

uint64_t gk_gguf_tensor_offset(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? t->offset : 0;
}

uint64_t gk_gguf_tensor_size(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? t->nbytes : 0;
}

const void * gk_gguf_tensor_data(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t && t->nbytes > 0 ? t->data() : nullptr;  // a file's empty tensor points at its neighbour
}

int64_t gk_gguf_tensor_nrows(const gk_gguf * ctx, int64_t i) {
    const tensor_info * t = tensor_at(ctx, i);
    return t ? gk::gguf::tensor_rows(*t) : 0;
}

enum gk_gguf_status gk_gguf_tensor_to_f32(const gk_gguf * ctx, int64_t i, int64_t first_row, int64_t n_rows,
                                          float * dst, gk_gguf_error * err) {
    return guarded(err, [&] {
        const tensor_info * t = tensor_at(ctx, i);
        require(t != nullptr, "tensor index out of range");
        require(dst != nullptr || n_rows == 0 || t->ne[0] == 0, "destination is NULL");
        gk::gguf::tensor_to_f32(*t, first_row, n_rows, dst);
    });
}

// ---- writing ---------------------------------------------------------------------------

enum gk_gguf_status gk_gguf_set_u8(gk_gguf * ctx, const char * key, uint8_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_UINT8, v, err);
}
enum gk_gguf_status gk_gguf_set_i8(gk_gguf * ctx, const char * key, int8_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_INT8, v, err);
}
enum gk_gguf_status gk_gguf_set_u16(gk_gguf * ctx, const char * key, uint16_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_UINT16, v, err);
}
enum gk_gguf_status gk_gguf_set_i16(gk_gguf * ctx, const char * key, int16_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_INT16, v, err);
}
enum gk_gguf_status gk_gguf_set_u32(gk_gguf * ctx, const char * key, uint32_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_UINT32, v, err);
}
enum gk_gguf_status gk_gguf_set_i32(gk_gguf * ctx, const char * key, int32_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_INT32, v, err);
}
enum gk_gguf_status gk_gguf_set_f32(gk_gguf * ctx, const char * key, float v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_FLOAT32, v, err);
}
enum gk_gguf_status gk_gguf_set_bool(gk_gguf * ctx, const char * key, bool v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_BOOL, static_cast<uint8_t>(v ? 1 : 0), err);
}
enum gk_gguf_status gk_gguf_set_u64(gk_gguf * ctx, const char * key, uint64_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_UINT64, v, err);
}
enum gk_gguf_status gk_gguf_set_i64(gk_gguf * ctx, const char * key, int64_t v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_INT64, v, err);
}
enum gk_gguf_status gk_gguf_set_f64(gk_gguf * ctx, const char * key, double v, gk_gguf_error * err) {
    return set_scalar(ctx, key, GK_GGUF_TYPE_FLOAT64, v, err);
}

enum gk_gguf_status gk_gguf_set_str(gk_gguf * ctx, const char * key, const char * s, size_t len,
                                    gk_gguf_error * err) {
    return guarded(err, [&] {
        require(s != nullptr || len == 0, "string is NULL");
        gk_gguf_value v;
        v.type = GK_GGUF_TYPE_STRING;
        v.str.assign(s ? s : "", len);
        put_kv(ctx, key, std::move(v));
    });
}

enum gk_gguf_status gk_gguf_set_array(gk_gguf * ctx, const char * key, enum gk_gguf_type elem, const void * data,
                                      uint64_t n, gk_gguf_error * err) {
    // From C any int can arrive here: it is range-checked as an integer before it is read
    // as the enum (a value outside the enum's range is undefined behaviour in C++).
    const auto elem_id = static_cast<uint32_t>(elem);
    return guarded(err, [&] {
        require(elem_id < GK_GGUF_TYPE_COUNT, "the element type is not a gk_gguf_type");
        const auto   type = static_cast<gk_gguf_type>(elem_id);
        const size_t size = gk_gguf_type_size(type);
        require(size != 0, "gk_gguf_set_array takes fixed-size element types (use set_array_str for strings)");
        require(data != nullptr || n == 0, "array data is NULL");
        require(n <= SIZE_MAX / size, "array too long");
        const auto * p = static_cast<const uint8_t *>(data);
        gk_gguf_value v;
        v.type = GK_GGUF_TYPE_ARRAY;
        v.elem = type;
        v.n    = n;
        v.packed.assign(p, p + n * size);
        if (type == GK_GGUF_TYPE_BOOL) {
            for (uint8_t b : v.packed) {
                require(b <= 1, "bool array element is neither 0 nor 1");
            }
        }
        put_kv(ctx, key, std::move(v));
    });
}

enum gk_gguf_status gk_gguf_set_array_str(gk_gguf * ctx, const char * key, const char * const * s,
                                          const size_t * lens, uint64_t n, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(s != nullptr || n == 0, "string array is NULL");
        gk_gguf_value v;
        v.type = GK_GGUF_TYPE_ARRAY;
        v.elem = GK_GGUF_TYPE_STRING;
        v.n    = n;
        v.strs.reserve(n);
        for (uint64_t j = 0; j < n; ++j) {
            require(s[j] != nullptr, "string array element is NULL");
            v.strs.emplace_back(s[j], lens ? lens[j] : std::strlen(s[j]));
        }
        put_kv(ctx, key, std::move(v));
    });
}

enum gk_gguf_status gk_gguf_set_value(gk_gguf * ctx, const char * key, const gk_gguf_value * v, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(v != nullptr, "value is NULL");
        put_kv(ctx, key, *v);
    });
}

enum gk_gguf_status gk_gguf_remove_key(gk_gguf * ctx, const char * key, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(ctx != nullptr, "context is NULL");
        const int64_t i = find(ctx->key_index, key);
        require(i >= 0, "no such key");
        const std::string k = key;  // `key` may point into the pair erased next
        ctx->kv.erase(ctx->kv.begin() + i);
        ctx->key_index.erase(k);
        for (auto & [k, index] : ctx->key_index) {
            index -= index > i ? 1 : 0;
        }
        if (k == "general.alignment") {
            ctx->alignment = GK_GGUF_DEFAULT_ALIGNMENT;
        }
        gk::gguf::relayout(*ctx);
    });
}

enum gk_gguf_status gk_gguf_add_tensor(gk_gguf * ctx, const char * name, enum gk_type type, uint32_t n_dims,
                                       const int64_t * ne, const void * data, uint64_t size, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(ctx != nullptr, "context is NULL");
        require(name != nullptr, "tensor name is NULL");
        require(std::strlen(name) <= GK_GGUF_MAX_NAME, "tensor name is longer than 64 bytes");
        require(ctx->tensor_index.count(name) == 0, "a tensor of that name exists already");
        require(gk_type_is_valid(type), "not a tensor type");
        require(n_dims >= 1 && n_dims <= GK_GGUF_MAX_DIMS, "n_dims must be 1..4");
        require(ne != nullptr, "ne is NULL");
        tensor_info t;
        t.name   = name;
        t.type   = type;
        t.n_dims = n_dims;
        for (uint32_t j = 0; j < n_dims; ++j) {
            require(ne[j] >= 0, "a tensor dimension is negative");
            t.ne[j] = ne[j];
        }
        const std::string problem = gk::gguf::size_tensor(t);
        if (!problem.empty()) {
            gk::gguf::fail(GK_GGUF_ERR_ARG, "tensor " + gk::gguf::quoted(t.name) + ": " + problem);
        }
        require_size(t, size);
        if (data) {
            const auto * p = static_cast<const uint8_t *>(data);
            t.owned.assign(p, p + size);
        }
        ctx->tensors.push_back(std::move(t));
        try {
            ctx->tensor_index.emplace(ctx->tensors.back().name, static_cast<int64_t>(ctx->tensors.size() - 1));
        } catch (...) {
            ctx->tensors.pop_back();
            throw;
        }
        gk::gguf::relayout(*ctx);
    });
}

enum gk_gguf_status gk_gguf_set_tensor_type(gk_gguf * ctx, int64_t i, enum gk_type type, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(tensor_at(ctx, i) != nullptr, "tensor index out of range");
        require(gk_type_is_valid(type), "not a tensor type");
        tensor_info & t = ctx->tensors[static_cast<size_t>(i)];
        if (type == t.type) {
            return;
        }
        tensor_info retyped;
        retyped.name   = t.name;
        retyped.type   = type;
        retyped.n_dims = t.n_dims;
        std::copy(t.ne, t.ne + GK_GGUF_MAX_DIMS, retyped.ne);
        const std::string problem = gk::gguf::size_tensor(retyped);
        if (!problem.empty()) {
            gk::gguf::fail(GK_GGUF_ERR_ARG, "tensor " + gk::gguf::quoted(t.name) + " as " + gk_type_name(type) + ": " +
                                                problem);
        }
        t = std::move(retyped);
        gk::gguf::relayout(*ctx);
    });
}

enum gk_gguf_status gk_gguf_set_tensor_data(gk_gguf * ctx, int64_t i, const void * data, uint64_t size,
                                            gk_gguf_error * err) {
    return guarded(err, [&] {
        require(tensor_at(ctx, i) != nullptr, "tensor index out of range");
        tensor_info & t = ctx->tensors[static_cast<size_t>(i)];
        require_size(t, size);
        require(data != nullptr || size == 0, "tensor data is NULL");
        const auto * p = static_cast<const uint8_t *>(data);
        t.owned.assign(p, p + size);
        t.mapped = nullptr;
    });
}

uint64_t gk_gguf_write_size(const gk_gguf * ctx) { return ctx ? gk::gguf::file_bytes(*ctx) : 0; }

enum gk_gguf_status gk_gguf_write(const gk_gguf * ctx, const char * path, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(ctx != nullptr, "context is NULL");
        require(path != nullptr, "path is NULL");
        gk::gguf::write_file(*ctx, path);
    });
}

enum gk_gguf_status gk_gguf_write_fd(const gk_gguf * ctx, int fd, const char * name, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(ctx != nullptr, "context is NULL");
        require(fd >= 0, "descriptor is negative");
        gk::gguf::write_descriptor(*ctx, fd, name ? name : ("descriptor " + std::to_string(fd)).c_str());
    });
}

enum gk_gguf_status gk_gguf_write_memory(const gk_gguf * ctx, void * dst, uint64_t size, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(ctx != nullptr, "context is NULL");
        require(dst != nullptr || size == 0, "destination is NULL");
        gk::gguf::write_memory(*ctx, dst, size, false);
    });
}

enum gk_gguf_status gk_gguf_write_meta_memory(const gk_gguf * ctx, void * dst, uint64_t size, gk_gguf_error * err) {
    return guarded(err, [&] {
        require(ctx != nullptr, "context is NULL");
        require(dst != nullptr || size == 0, "destination is NULL");
        gk::gguf::write_memory(*ctx, dst, size, true);
    });
}

} // extern "C"
