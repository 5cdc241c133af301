// gguf.cpp - ggml's gguf_* API on gk's GGUF reader and writer. A gguf_context owns one
// gk_gguf; hostile files are refused by gk's reader (NULL and a message on stderr, as
// ggml does). Getters given a wrong key id or type abort through ggml's abort path, as
// ggml's assertions do.
#include "convert.h"
#include "gguf.h"

#include "gk/gguf.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

struct gguf_context {
    gk_gguf * g = nullptr;
};

namespace {

const gk_gguf_value * kv_of(const gguf_context * ctx, int64_t key_id, const char * fn) {
    const gk_gguf_value * v = ctx ? gk_gguf_kv_value(ctx->g, key_id) : nullptr;
    if (!v) {
        ggml_abort(__FILE__, __LINE__, "%s: key id %lld out of range", fn, static_cast<long long>(key_id));
    }
    return v;
}

template <typename T, typename Get>
T scalar(const gguf_context * ctx, int64_t key_id, Get get, const char * fn) {
    T out{};
    if (!get(kv_of(ctx, key_id, fn), &out)) {
        ggml_abort(__FILE__, __LINE__, "%s: key '%s' holds a %s", fn, gk_gguf_kv_key(ctx->g, key_id),
                   gk_gguf_type_name(gk_gguf_value_type(kv_of(ctx, key_id, fn))));
    }
    return out;
}

void checked(gk_gguf_status status, const gk_gguf_error & err, const char * fn) {
    if (status != GK_GGUF_OK) {
        ggml_abort(__FILE__, __LINE__, "%s: %s", fn, err.message);
    }
}

// The ggml context gguf_init_* fills when params.ctx is set, laid out as ggml lays it
// out: with data (not no_alloc), first an I8 tensor "GGUF tensor data binary blob" holding
// the data section, every tensor padded to the alignment, then one tensor per GGUF tensor
// whose data points into the blob; without, the tensors alone, without data.
bool make_tensors(gguf_context * ctx, gguf_init_params params) {
    gk_gguf *      gg    = ctx->g;
    const int64_t  n     = gk_gguf_tensor_count(gg);
    const uint32_t align = gk_gguf_alignment(gg);
    uint64_t       blob  = 0;  // bytes of the data blob
    if (!params.no_alloc) {
        // ggml reads the data section as one blob of every tensor padded to the alignment,
        // so it refuses a file that ends inside the last tensor's padding; so does compat.
        uint64_t need = 0;
        for (int64_t i = 0; i < n; ++i) {
            need += GGML_PAD(gk_gguf_tensor_size(gg, i), align);
            blob = std::max<uint64_t>(blob, GGML_PAD(gk_gguf_tensor_offset(gg, i) + gk_gguf_tensor_size(gg, i), align));
        }
        const uint64_t have = gk_gguf_source_size(gg) - gk_gguf_data_offset(gg);
        if (n > 0 && have < need) {
            std::fprintf(stderr, "gguf_init: the data section holds %llu bytes, its tensors padded to the alignment %u "
                                 "need %llu\n", static_cast<unsigned long long>(have), align,
                         static_cast<unsigned long long>(need));
            return false;
        }
    }
    const size_t   bytes = static_cast<size_t>(n + 1) * ggml_tensor_overhead() + static_cast<size_t>(blob);
    ggml_context * g     = ggml_init({bytes, nullptr, params.no_alloc});
    if (!g) {
        return false;
    }
    gk_tensor * data = nullptr;
    if (!params.no_alloc) {
        data = gk_new_tensor_1d(compat::to_gk(g), GK_TYPE_I8, static_cast<int64_t>(blob));
        if (!data) {
            std::fprintf(stderr, "gguf_init: data blob: %s\n", gk_last_error(compat::to_gk(g)));
            ggml_free(g);
            return false;
        }
        gk_set_name(data, "GGUF tensor data binary blob");
        std::memset(data->data, 0, static_cast<size_t>(blob));
        gk_set_no_alloc(compat::to_gk(g), true);
    }
    for (int64_t i = 0; i < n; ++i) {
        const int64_t * ne = gk_gguf_tensor_ne(gg, i);
        gk_tensor * t = gk_new_tensor_4d(compat::to_gk(g), gk_gguf_tensor_type(gg, i), ne[0], ne[1], ne[2], ne[3]);
        if (!t) {
            std::fprintf(stderr, "gguf_init: tensor '%s': %s\n", gk_gguf_tensor_name(gg, i), gk_last_error(compat::to_gk(g)));
            ggml_free(g);
            return false;
        }
        gk_set_name(t, gk_gguf_tensor_name(gg, i));
        if (data) {
            t->data = static_cast<char *>(data->data) + gk_gguf_tensor_offset(gg, i);
            std::memcpy(t->data, gk_gguf_tensor_data(gg, i), gk_gguf_tensor_size(gg, i));
        }
    }
    gk_set_no_alloc(compat::to_gk(g), params.no_alloc);
    *params.ctx = g;
    return true;
}

/** How ggml reads a file for `params`: any non-zero bool byte is true, and the tensors'
 *  data is only needed when it is copied into params.ctx. */
unsigned read_flags(gguf_init_params params) {
    return GK_GGUF_READ_BOOL_NONZERO | (params.ctx && !params.no_alloc ? 0u : GK_GGUF_READ_DATA_OPTIONAL);
}

gguf_context * opened(gk_gguf * g, const gk_gguf_error & err, gguf_init_params params, const char * fn) {
    if (!g) {
        std::fprintf(stderr, "%s: %s\n", fn, err.message);
        return nullptr;
    }
    auto * ctx = new gguf_context{g};
    if (params.ctx && !make_tensors(ctx, params)) {
        gguf_free(ctx);
        return nullptr;
    }
    return ctx;
}

} // namespace

extern "C" {

struct gguf_context * gguf_init_empty(void) {
    gk_gguf * g = gk_gguf_create();
    return g ? new gguf_context{g} : nullptr;
}

struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params) {
    gk_gguf_error err{};
    return opened(fname ? gk_gguf_open_ex(fname, read_flags(params), &err) : nullptr, err, params, "gguf_init_from_file");
}

struct gguf_context * gguf_init_from_buffer(const void * data, size_t size, struct gguf_init_params params) {
    gk_gguf_error err{};
    return opened(data ? gk_gguf_open_memory_ex(data, size, read_flags(params), &err) : nullptr, err, params, "gguf_init_from_buffer");
}

struct gguf_context * gguf_init_from_file_ptr(FILE * file, struct gguf_init_params params) {
    if (!file) {
        return nullptr;
    }
    std::vector<char> bytes;
    char              chunk[1 << 16];
    size_t            got;
    while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) {
        bytes.insert(bytes.end(), chunk, chunk + got);
    }
    return gguf_init_from_buffer(bytes.data(), bytes.size(), params);
}

// Reads every byte the callback gives from offset 0 (at most max_expected_size when that
// is not 0, in reads of at most max_chunk_read bytes), then parses them as a buffer. A
// callback may give nothing for a read that passes its end (test-gguf's does): a read
// that gets nothing is asked again for half as much, down to one byte, before it is taken
// as the end.
struct gguf_context * gguf_init_from_callback(gguf_reader_callback_t callback, void * userdata, size_t max_chunk_read,
                                              uint64_t max_expected_size, struct gguf_init_params params) {
    if (!callback) {
        return nullptr;
    }
    const size_t      chunk = std::min<size_t>(max_chunk_read == 0 ? SIZE_MAX : max_chunk_read, size_t(1) << 20);
    std::vector<char> bytes;
    size_t            want = chunk;
    for (;;) {
        if (max_expected_size != 0) {
            if (bytes.size() >= max_expected_size) break;
            want = static_cast<size_t>(std::min<uint64_t>(want, max_expected_size - bytes.size()));
        }
        const size_t at = bytes.size();
        bytes.resize(at + want);
        const size_t got = std::min(callback(userdata, bytes.data() + at, at, want), want);
        bytes.resize(at + got);
        if (got == 0 && want == 1) break;
        want = got == 0 ? want / 2 : chunk;
    }
    return gguf_init_from_buffer(bytes.data(), bytes.size(), params);
}

void gguf_free(struct gguf_context * ctx) {
    if (ctx) {
        gk_gguf_free(ctx->g);
        delete ctx;
    }
}

// ggml's short names ("u32", "str", "arr", ...; gk's reader says "uint32", "string", ...);
// NULL for a value out of range, as ggml. The switch names every value (-Wswitch).
const char * gguf_type_name(enum gguf_type type) {
    switch (type) {
        case GGUF_TYPE_UINT8: return "u8";
        case GGUF_TYPE_INT8: return "i8";
        case GGUF_TYPE_UINT16: return "u16";
        case GGUF_TYPE_INT16: return "i16";
        case GGUF_TYPE_UINT32: return "u32";
        case GGUF_TYPE_INT32: return "i32";
        case GGUF_TYPE_FLOAT32: return "f32";
        case GGUF_TYPE_BOOL: return "bool";
        case GGUF_TYPE_STRING: return "str";
        case GGUF_TYPE_ARRAY: return "arr";
        case GGUF_TYPE_UINT64: return "u64";
        case GGUF_TYPE_INT64: return "i64";
        case GGUF_TYPE_FLOAT64: return "f64";
        case GGUF_TYPE_COUNT: break;
    }
    return nullptr;
}

uint32_t gguf_get_version(const struct gguf_context * ctx) { return gk_gguf_version(ctx->g); }
size_t   gguf_get_alignment(const struct gguf_context * ctx) { return gk_gguf_alignment(ctx->g); }
size_t   gguf_get_data_offset(const struct gguf_context * ctx) { return gk_gguf_data_offset(ctx->g); }

int64_t gguf_get_n_kv(const struct gguf_context * ctx) { return gk_gguf_kv_count(ctx->g); }
int64_t gguf_find_key(const struct gguf_context * ctx, const char * key) { return gk_gguf_find_key(ctx->g, key); }
const char * gguf_get_key(const struct gguf_context * ctx, int64_t key_id) {
    kv_of(ctx, key_id, "gguf_get_key");
    return gk_gguf_kv_key(ctx->g, key_id);
}

enum gguf_type gguf_get_kv_type(const struct gguf_context * ctx, int64_t key_id) {
    return static_cast<gguf_type>(gk_gguf_value_type(kv_of(ctx, key_id, "gguf_get_kv_type")));
}

enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id) {
    const gk_gguf_value * v = kv_of(ctx, key_id, "gguf_get_arr_type");
    if (gk_gguf_value_type(v) != GK_GGUF_TYPE_ARRAY) {
        ggml_abort(__FILE__, __LINE__, "gguf_get_arr_type: key '%s' is not an array", gk_gguf_kv_key(ctx->g, key_id));
    }
    return static_cast<gguf_type>(gk_gguf_array_type(v));
}

uint8_t  gguf_get_val_u8(const struct gguf_context * c, int64_t k) { return scalar<uint8_t>(c, k, gk_gguf_value_u8, "gguf_get_val_u8"); }
int8_t   gguf_get_val_i8(const struct gguf_context * c, int64_t k) { return scalar<int8_t>(c, k, gk_gguf_value_i8, "gguf_get_val_i8"); }
uint16_t gguf_get_val_u16(const struct gguf_context * c, int64_t k) { return scalar<uint16_t>(c, k, gk_gguf_value_u16, "gguf_get_val_u16"); }
int16_t  gguf_get_val_i16(const struct gguf_context * c, int64_t k) { return scalar<int16_t>(c, k, gk_gguf_value_i16, "gguf_get_val_i16"); }
uint32_t gguf_get_val_u32(const struct gguf_context * c, int64_t k) { return scalar<uint32_t>(c, k, gk_gguf_value_u32, "gguf_get_val_u32"); }
int32_t  gguf_get_val_i32(const struct gguf_context * c, int64_t k) { return scalar<int32_t>(c, k, gk_gguf_value_i32, "gguf_get_val_i32"); }
float    gguf_get_val_f32(const struct gguf_context * c, int64_t k) { return scalar<float>(c, k, gk_gguf_value_f32, "gguf_get_val_f32"); }
uint64_t gguf_get_val_u64(const struct gguf_context * c, int64_t k) { return scalar<uint64_t>(c, k, gk_gguf_value_u64, "gguf_get_val_u64"); }
int64_t  gguf_get_val_i64(const struct gguf_context * c, int64_t k) { return scalar<int64_t>(c, k, gk_gguf_value_i64, "gguf_get_val_i64"); }
double   gguf_get_val_f64(const struct gguf_context * c, int64_t k) { return scalar<double>(c, k, gk_gguf_value_f64, "gguf_get_val_f64"); }
bool     gguf_get_val_bool(const struct gguf_context * c, int64_t k) { return scalar<bool>(c, k, gk_gguf_value_bool, "gguf_get_val_bool"); }

const char * gguf_get_val_str(const struct gguf_context * ctx, int64_t key_id) {
    const char * s = gk_gguf_value_str(kv_of(ctx, key_id, "gguf_get_val_str"), nullptr);
    if (!s) {
        ggml_abort(__FILE__, __LINE__, "gguf_get_val_str: key '%s' is not a string", gk_gguf_kv_key(ctx->g, key_id));
    }
    return s;
}

const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id) {
    const gk_gguf_value * v = kv_of(ctx, key_id, "gguf_get_val_data");
    const gk_gguf_type    t = gk_gguf_value_type(v);
    if (t == GK_GGUF_TYPE_ARRAY || t == GK_GGUF_TYPE_STRING) {
        ggml_abort(__FILE__, __LINE__, "gguf_get_val_data: key '%s' is not a scalar", gk_gguf_kv_key(ctx->g, key_id));
    }
    return gk_gguf_value_data(v);
}

size_t gguf_get_arr_n(const struct gguf_context * ctx, int64_t key_id) {
    gguf_get_arr_type(ctx, key_id);
    return gk_gguf_array_len(kv_of(ctx, key_id, "gguf_get_arr_n"));
}

const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id) {
    if (gguf_get_arr_type(ctx, key_id) == GGUF_TYPE_STRING) {
        ggml_abort(__FILE__, __LINE__, "gguf_get_arr_data: key '%s' is an array of strings", gk_gguf_kv_key(ctx->g, key_id));
    }
    return gk_gguf_array_data(kv_of(ctx, key_id, "gguf_get_arr_data"));
}

const char * gguf_get_arr_str(const struct gguf_context * ctx, int64_t key_id, size_t i) {
    const char * s = gk_gguf_array_str(kv_of(ctx, key_id, "gguf_get_arr_str"), i, nullptr);
    if (!s) {
        ggml_abort(__FILE__, __LINE__, "gguf_get_arr_str: key '%s' has no string %zu", gk_gguf_kv_key(ctx->g, key_id), i);
    }
    return s;
}

int64_t gguf_get_n_tensors(const struct gguf_context * ctx) { return gk_gguf_tensor_count(ctx->g); }
int64_t gguf_find_tensor(const struct gguf_context * ctx, const char * name) { return gk_gguf_find_tensor(ctx->g, name); }

// The id of the tensor called `name`; aborts, as ggml does, when there is none.
static int64_t tensor_id(const struct gguf_context * ctx, const char * name, const char * fn) {
    const int64_t id = gk_gguf_find_tensor(ctx->g, name);
    if (id < 0) {
        ggml_abort(__FILE__, __LINE__, "%s: tensor not found: %s", fn, name ? name : "(null)");
    }
    return id;
}

static void check_tensor_id(const struct gguf_context * ctx, int64_t id, const char * fn) {
    if (id < 0 || id >= gk_gguf_tensor_count(ctx->g)) {
        ggml_abort(__FILE__, __LINE__, "%s: tensor id %lld out of range", fn, static_cast<long long>(id));
    }
}
size_t gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t id) {
    check_tensor_id(ctx, id, "gguf_get_tensor_offset");
    return gk_gguf_tensor_offset(ctx->g, id);
}
const char * gguf_get_tensor_name(const struct gguf_context * ctx, int64_t id) {
    check_tensor_id(ctx, id, "gguf_get_tensor_name");
    return gk_gguf_tensor_name(ctx->g, id);
}
const int64_t * gguf_get_tensor_ne(const struct gguf_context * ctx, int64_t id) {
    check_tensor_id(ctx, id, "gguf_get_tensor_ne");
    return gk_gguf_tensor_ne(ctx->g, id);
}
enum ggml_type gguf_get_tensor_type(const struct gguf_context * ctx, int64_t id) {
    check_tensor_id(ctx, id, "gguf_get_tensor_type");
    return compat::to_ggml(gk_gguf_tensor_type(ctx->g, id));
}
size_t gguf_get_tensor_size(const struct gguf_context * ctx, int64_t id) {
    check_tensor_id(ctx, id, "gguf_get_tensor_size");
    return gk_gguf_tensor_size(ctx->g, id);
}

int64_t gguf_remove_key(struct gguf_context * ctx, const char * key) {
    const int64_t id = gk_gguf_find_key(ctx->g, key);
    if (id >= 0) {
        gk_gguf_error err{};
        checked(gk_gguf_remove_key(ctx->g, key, &err), err, "gguf_remove_key");
    }
    return id;
}

#define GK_COMPAT_SETTER(suffix, type, gkfn)                                              \
    void gguf_set_val_##suffix(struct gguf_context * ctx, const char * key, type val) {   \
        gk_gguf_error err{};                                                              \
        checked(gkfn(ctx->g, key, val, &err), err, "gguf_set_val_" #suffix);               \
    }
GK_COMPAT_SETTER(u8, uint8_t, gk_gguf_set_u8)
GK_COMPAT_SETTER(i8, int8_t, gk_gguf_set_i8)
GK_COMPAT_SETTER(u16, uint16_t, gk_gguf_set_u16)
GK_COMPAT_SETTER(i16, int16_t, gk_gguf_set_i16)
GK_COMPAT_SETTER(u32, uint32_t, gk_gguf_set_u32)
GK_COMPAT_SETTER(i32, int32_t, gk_gguf_set_i32)
GK_COMPAT_SETTER(f32, float, gk_gguf_set_f32)
GK_COMPAT_SETTER(u64, uint64_t, gk_gguf_set_u64)
GK_COMPAT_SETTER(i64, int64_t, gk_gguf_set_i64)
GK_COMPAT_SETTER(f64, double, gk_gguf_set_f64)
GK_COMPAT_SETTER(bool, bool, gk_gguf_set_bool)
#undef GK_COMPAT_SETTER

void gguf_set_val_str(struct gguf_context * ctx, const char * key, const char * val) {
    gk_gguf_error err{};
    checked(gk_gguf_set_str(ctx->g, key, val, val ? std::strlen(val) : 0, &err), err, "gguf_set_val_str");
}

void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data, size_t n) {
    gk_gguf_error err{};
    checked(gk_gguf_set_array(ctx->g, key, static_cast<gk_gguf_type>(type), data, n, &err), err, "gguf_set_arr_data");
}

void gguf_set_arr_str(struct gguf_context * ctx, const char * key, const char ** data, size_t n) {
    gk_gguf_error err{};
    checked(gk_gguf_set_array_str(ctx->g, key, data, nullptr, n, &err), err, "gguf_set_arr_str");
}

void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src) {
    for (int64_t i = 0; i < gk_gguf_kv_count(src->g); ++i) {
        gk_gguf_error err{};
        checked(gk_gguf_set_value(ctx->g, gk_gguf_kv_key(src->g, i), gk_gguf_kv_value(src->g, i), &err), err, "gguf_set_kv");
    }
}

void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor) {
    const gk_tensor * t = compat::to_gk(tensor);
    gk_gguf_error     err{};
    checked(gk_gguf_add_tensor(ctx->g, t->name, t->type, static_cast<uint32_t>(gk_n_dims(t)), t->ne, t->data, gk_nbytes(t),
                               &err),
            err, "gguf_add_tensor");
}

void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type) {
    gk_gguf_error err{};
    checked(gk_gguf_set_tensor_type(ctx->g, tensor_id(ctx, name, "gguf_set_tensor_type"), compat::to_gk(type), &err), err,
            "gguf_set_tensor_type");
}

void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data) {
    const int64_t id = tensor_id(ctx, name, "gguf_set_tensor_data");
    gk_gguf_error err{};
    checked(gk_gguf_set_tensor_data(ctx->g, id, data, gk_gguf_tensor_size(ctx->g, id), &err), err, "gguf_set_tensor_data");
}

size_t gguf_get_meta_size(const struct gguf_context * ctx) { return gk_gguf_data_offset(ctx->g); }

void gguf_get_meta_data(const struct gguf_context * ctx, void * data) {
    gk_gguf_error err{};
    checked(gk_gguf_write_meta_memory(ctx->g, data, gguf_get_meta_size(ctx), &err), err, "gguf_get_meta_data");
}

bool gguf_write_to_file_ptr(const struct gguf_context * ctx, FILE * file, bool only_meta) {
    std::vector<uint8_t> bytes(only_meta ? gguf_get_meta_size(ctx) : gk_gguf_write_size(ctx->g));
    gk_gguf_error        err{};
    const gk_gguf_status status = only_meta ? gk_gguf_write_meta_memory(ctx->g, bytes.data(), bytes.size(), &err)
                                            : gk_gguf_write_memory(ctx->g, bytes.data(), bytes.size(), &err);
    if (status != GK_GGUF_OK) {
        std::fprintf(stderr, "gguf_write_to_file: %s\n", err.message);
        return false;
    }
    return std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
}

bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta) {
    FILE * f = std::fopen(fname, "wb");
    if (!f) {
        std::fprintf(stderr, "gguf_write_to_file: cannot open '%s'\n", fname);
        return false;
    }
    const bool ok = gguf_write_to_file_ptr(ctx, f, only_meta);
    return std::fclose(f) == 0 && ok;
}

} // extern "C"

// ggml's private gguf_type_size (declared with C++ linkage in its ggml-impl.h, not in
// gguf.h): llama.cpp's test-gguf calls it. Bytes of a fixed-size value type; 0 for
// string, array and invalid ids, as ggml.
size_t gguf_type_size(enum gguf_type type);
size_t gguf_type_size(enum gguf_type type) { return gk_gguf_type_size(static_cast<gk_gguf_type>(type)); }
