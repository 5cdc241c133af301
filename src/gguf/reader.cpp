// reader.cpp - parse and validate a GGUF file (v2/v3) into a gk_gguf context.
//
// Order of the file: magic, version, n_tensors, n_kv, the pairs, the tensor infos,
// padding to the alignment, the data. Every count and length is checked against the
// bytes that remain before it is used; containers of entries grow only as entries are
// read (never reserved from a count, whose in-memory size could be many times the bytes
// it claims); every refusal names a byte offset.
#include "context.h"
#include "cursor.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace gk::gguf {
namespace {

constexpr uint64_t k_int64_max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// The fewest bytes an entry can take, to bound counts by the bytes that remain.
constexpr uint64_t k_min_kv_bytes     = 8 + 1 + 4 + 1;      // key length, 1-byte key, type, 1-byte value
constexpr uint64_t k_min_tensor_bytes = 8 + 4 + 8 + 4 + 8;  // empty name, n_dims, one ne, type, offset

// A count field: refused when even the smallest entries would not fit.
uint64_t read_count(cursor & c, const char * what, uint64_t min_each) {
    const uint64_t at = c.pos();
    const uint64_t n  = c.read<uint64_t>(what);
    if (n > c.remaining() / min_each) {
        fail_at(at, std::string(what) + " " + std::to_string(n) + " cannot fit: the " +
                        std::to_string(c.remaining()) + " bytes that remain hold at most " +
                        std::to_string(c.remaining() / min_each));
    }
    return n;
}

void read_magic_and_version(cursor & c, gk_gguf & ctx) {
    if (c.remaining() < 4) {
        fail_at(0, "file is " + std::to_string(c.remaining()) + " bytes, too short for the GGUF magic");
    }
    const std::string_view magic = c.bytes(4, "magic");
    if (magic == "FUGG") {
        fail_at(0, "pre-release GGUF (magic 'FUGG', mid-2023 draft layout) is not supported");
    }
    if (magic != "GGUF") {
        fail_at(0, "not a GGUF file: magic is " + quoted(magic) + ", expected 'GGUF'");
    }
    const uint64_t at = c.pos();
    const uint32_t v  = c.read<uint32_t>("version");
    if (v == 1) {
        fail_at(at, "GGUF version 1 is not supported (2023 layout with 32-bit counts and lengths); "
                    "convert the model again with a current tool");
    }
    if (v != 2 && v != 3) {
        const uint32_t swapped = __builtin_bswap32(v);
        if (swapped >= 1 && swapped <= 3) {
            fail_at(at, "big-endian GGUF (version " + std::to_string(swapped) + " byte-swapped) is not supported");
        }
        fail_at(at, "unsupported GGUF version " + std::to_string(v) + " (this reader reads versions 2 and 3)");
    }
    ctx.version = v;
}

class value_reader {
public:
    value_reader(cursor & c, const std::string & key, unsigned flags) : c_(c), key_(key), flags_(flags) {}

    gk_gguf_value read(gk_gguf_type type, int depth) {
        gk_gguf_value v;
        v.type = type;
        if (type == GK_GGUF_TYPE_STRING) {
            v.str = c_.string("string value");
        } else if (type == GK_GGUF_TYPE_ARRAY) {
            read_array(v, depth + 1);
        } else {
            const size_t size = gk_gguf_type_size(type);
            const uint8_t * p = c_.here();
            c_.bytes(size, "value");
            std::memcpy(&v.bits, p, size);
            if (type == GK_GGUF_TYPE_BOOL) {
                check_bools(reinterpret_cast<uint8_t *>(&v.bits), 1, c_.pos() - 1);
            }
        }
        return v;
    }

    gk_gguf_type read_type(const char * what) {
        const uint64_t at = c_.pos();
        const uint32_t t  = c_.read<uint32_t>(what);
        if (t >= GK_GGUF_TYPE_COUNT) {
            fail_at(at, std::string(what) + " " + std::to_string(t) + " of key " + quoted(key_) +
                            " is not a GGUF value type (0..12)");
        }
        return static_cast<gk_gguf_type>(t);
    }

private:
    // Array body: element type, count, elements. `depth` counts array levels (1 = a
    // plain array) so that hostile nesting cannot exhaust the stack.
    void read_array(gk_gguf_value & v, int depth) {
        const uint64_t at = c_.pos();
        if (depth > GK_GGUF_MAX_ARRAY_DEPTH) {
            fail_at(at, "arrays of key " + quoted(key_) + " nest deeper than " +
                            std::to_string(GK_GGUF_MAX_ARRAY_DEPTH) + " levels");
        }
        v.elem = read_type("array element type");
        const size_t   fixed    = gk_gguf_type_size(v.elem);
        const uint64_t min_each = fixed ? fixed : v.elem == GK_GGUF_TYPE_STRING ? 8 : 12;
        const uint64_t n_at     = c_.pos();
        v.n = c_.read<uint64_t>("array length");
        if (v.n > c_.remaining() / min_each) {
            fail_at(n_at, "array length " + std::to_string(v.n) + " of key " + quoted(key_) + " needs at least " +
                              std::to_string(min_each) + " bytes per " + gk_gguf_type_name(v.elem) + " but only " +
                              std::to_string(c_.remaining()) + " bytes remain");
        }
        if (fixed) {
            const uint8_t * p = c_.here();
            c_.bytes(v.n * fixed, "array");
            v.packed.assign(p, p + v.n * fixed);
            if (v.elem == GK_GGUF_TYPE_BOOL) {
                check_bools(v.packed.data(), v.n, c_.pos() - v.n);
            }
        } else if (v.elem == GK_GGUF_TYPE_STRING) {
            for (uint64_t j = 0; j < v.n; ++j) {
                v.strs.emplace_back(c_.string("array string"));
            }
        } else {
            for (uint64_t j = 0; j < v.n; ++j) {
                gk_gguf_value & item = v.items.emplace_back();
                item.type = GK_GGUF_TYPE_ARRAY;
                read_array(item, depth + 1);
            }
        }
    }

    // `p`: a copy of the n bools read from file offset `start`. A byte above 1 is an
    // error, or with GK_GGUF_READ_BOOL_NONZERO true (stored as 1).
    void check_bools(uint8_t * p, uint64_t n, uint64_t start) const {
        for (uint64_t j = 0; j < n; ++j) {
            if (p[j] <= 1) continue;
            if (!(flags_ & GK_GGUF_READ_BOOL_NONZERO)) {
                fail_at(start + j, "bool of key " + quoted(key_) + " is " + std::to_string(p[j]) + ", not 0 or 1");
            }
            p[j] = 1;
        }
    }

    cursor &            c_;
    const std::string & key_;
    unsigned            flags_;
};

void read_pairs(cursor & c, gk_gguf & ctx, uint64_t n_kv, unsigned flags) {
    for (uint64_t i = 0; i < n_kv; ++i) {
        const uint64_t at = c.pos();
        kv_pair pair;
        pair.key = c.string("key");
        if (pair.key.empty()) {
            fail_at(at, "key " + std::to_string(i) + " is empty");
        }
        if (pair.key.size() > GK_GGUF_MAX_KEY) {
            fail_at(at, "key " + quoted(pair.key) + " is " + std::to_string(pair.key.size()) + " bytes, more than " +
                            std::to_string(GK_GGUF_MAX_KEY));
        }
        if (pair.key.find('\0') != std::string::npos) {
            fail_at(at, "key " + quoted(pair.key) + " contains a NUL byte");
        }
        const auto [it, fresh] = ctx.key_index.emplace(pair.key, static_cast<int64_t>(i));
        if (!fresh) {
            fail_at(at, "duplicate key " + quoted(pair.key) + " (first as pair " + std::to_string(it->second) + ")");
        }
        value_reader values(c, pair.key, flags);
        const gk_gguf_type type = values.read_type("value type");
        pair.value_at = c.pos();
        pair.value    = values.read(type, 0);
        pair.nbytes   = c.pos() - at;
        ctx.kv.push_back(std::move(pair));
    }
}

void read_alignment(gk_gguf & ctx) {
    const auto it = ctx.key_index.find("general.alignment");
    if (it == ctx.key_index.end()) {
        return;
    }
    const kv_pair & pair = ctx.kv[static_cast<size_t>(it->second)];
    if (pair.value.type != GK_GGUF_TYPE_UINT32) {
        fail_at(pair.value_at, std::string("general.alignment has type ") + gk_gguf_type_name(pair.value.type) +
                                   ", must be uint32");
    }
    const uint64_t a = pair.value.bits;
    if (a == 0 || (a & (a - 1)) != 0) {
        fail_at(pair.value_at, "general.alignment " + std::to_string(a) + " is not a non-zero power of two");
    }
    ctx.alignment = static_cast<uint32_t>(a);
}

// One tensor info record: name, n_dims, ne[], type, offset.
tensor_info read_tensor_info(cursor & c, gk_gguf & ctx, int64_t index) {
    tensor_info t;
    const uint64_t at = c.pos();
    t.name = c.string("tensor name");
    const std::string q = quoted(t.name);
    if (t.name.size() > GK_GGUF_MAX_NAME) {
        fail_at(at, "tensor name " + q + " is " + std::to_string(t.name.size()) + " bytes, more than " +
                        std::to_string(GK_GGUF_MAX_NAME));
    }
    if (t.name.find('\0') != std::string::npos) {
        fail_at(at, "tensor name " + q + " contains a NUL byte");
    }
    const auto [it, fresh] = ctx.tensor_index.emplace(t.name, index);
    if (!fresh) {
        fail_at(at, "duplicate tensor name " + q + " (first as tensor " + std::to_string(it->second) + ")");
    }

    const uint64_t dims_at = c.pos();
    t.n_dims = c.read<uint32_t>("tensor n_dims");
    if (t.n_dims < 1 || t.n_dims > GK_GGUF_MAX_DIMS) {
        fail_at(dims_at, "tensor " + q + " has n_dims " + std::to_string(t.n_dims) + ", must be 1..4");
    }
    const uint64_t ne_at = c.pos();
    for (uint32_t j = 0; j < t.n_dims; ++j) {
        const uint64_t u = c.read<uint64_t>("tensor dimension");
        if (u > k_int64_max) {
            fail_at(c.pos() - 8, "dimension " + std::to_string(j) + " of tensor " + q + " is " +
                                     std::to_string(static_cast<int64_t>(u)) + ", negative");
        }
        t.ne[j] = static_cast<int64_t>(u);
    }
    const uint64_t type_at = c.pos();
    const uint32_t type    = c.read<uint32_t>("tensor type");
    if (!gk_type_is_valid(static_cast<int>(type))) {
        fail_at(type_at, "tensor " + q + " has type id " + std::to_string(type) +
                             ", which is not a ggml type (unknown or removed)");
    }
    t.type = static_cast<gk_type>(type);
    const std::string problem = size_tensor(t);
    if (!problem.empty()) {
        fail_at(ne_at, "tensor " + q + ": " + problem);
    }

    const uint64_t off_at = c.pos();
    t.offset = c.read<uint64_t>("tensor offset");
    if (t.offset % ctx.alignment != 0) {
        fail_at(off_at, "tensor " + q + " offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                            std::to_string(ctx.alignment));
    }
    return t;
}

// The data of every tensor must lie inside the file, after the tensor infos.
void place_data(const byte_source & src, gk_gguf & ctx, uint64_t meta_end, const std::vector<uint64_t> & info_at,
                unsigned flags) {
    ctx.data_offset = pad_to(meta_end, ctx.alignment);
    const uint64_t size     = src.size();
    const bool     optional = flags & GK_GGUF_READ_DATA_OPTIONAL;
    if (ctx.tensors.empty() || (optional && ctx.data_offset > size)) {
        ctx.tail_padded = size != meta_end;
        return;
    }
    if (ctx.data_offset > size) {
        fail_at(meta_end, "the data section starts at byte " + std::to_string(ctx.data_offset) +
                              ", past the end of the file (" + std::to_string(size) + " bytes)");
    }
    uint64_t end_of_data = ctx.data_offset;
    for (size_t i = 0; i < ctx.tensors.size(); ++i) {
        tensor_info & t = ctx.tensors[i];
        const uint64_t room = size - ctx.data_offset;
        if (t.offset > room || t.nbytes > room - t.offset) {
            if (optional) continue;  // a tensor without data
            fail_at(info_at[i], "data of tensor " + quoted(t.name) + " (" + std::to_string(t.nbytes) +
                                    " bytes at data offset " + std::to_string(t.offset) +
                                    ") lies outside the file of " + std::to_string(size) + " bytes");
        }
        t.mapped = src.data() + ctx.data_offset + t.offset;
        end_of_data = std::max(end_of_data, ctx.data_offset + t.offset + t.nbytes);
    }
    ctx.tail_padded = size != end_of_data;
}

// Everything before the data section: header, pairs, tensor infos. Returns the offset
// of the end of the tensor infos; tensors are not yet placed.
uint64_t read_meta(cursor & c, gk_gguf & ctx, std::vector<uint64_t> & info_at, unsigned flags) {
    read_magic_and_version(c, ctx);
    const uint64_t tensors_at = c.pos();
    const uint64_t n_tensors  = read_count(c, "tensor count", k_min_tensor_bytes);
    const uint64_t n_kv       = read_count(c, "key/value count", k_min_kv_bytes);
    read_pairs(c, ctx, n_kv, flags);
    read_alignment(ctx);

    if (n_tensors > c.remaining() / k_min_tensor_bytes) {
        fail_at(tensors_at, "tensor count " + std::to_string(n_tensors) + " cannot fit in the " +
                                std::to_string(c.remaining()) + " bytes after the key/value pairs");
    }
    for (uint64_t i = 0; i < n_tensors; ++i) {
        info_at.push_back(c.pos());
        ctx.tensors.push_back(read_tensor_info(c, ctx, static_cast<int64_t>(i)));
    }
    return c.pos();
}

} // namespace

std::unique_ptr<gk_gguf> parse(std::unique_ptr<byte_source> src, unsigned flags) {
    auto ctx = std::make_unique<gk_gguf>();
    cursor c(src->data(), src->size());
    std::vector<uint64_t> info_at;
    const uint64_t meta_end = read_meta(c, *ctx, info_at, flags);
    place_data(*src, *ctx, meta_end, info_at, flags);
    ctx->source = std::move(src);
    return ctx;
}

uint64_t extent_of_prefix(const uint8_t * data, uint64_t size, uint64_t limit) {
    gk_gguf ctx;
    cursor c(data, size, limit);
    std::vector<uint64_t> info_at;
    uint64_t meta_end = 0;
    try {
        meta_end = read_meta(c, ctx, info_at, GK_GGUF_READ_BOOL_NONZERO);  // only the extent matters
    } catch (const more_bytes &) {
        return 0;
    }
    const uint64_t data_offset = pad_to(meta_end, ctx.alignment);
    uint64_t       end         = data_offset;
    for (size_t i = 0; i < ctx.tensors.size(); ++i) {
        const tensor_info & t    = ctx.tensors[i];
        const uint64_t      room = limit > data_offset ? limit - data_offset : 0;
        if (t.offset > room || t.nbytes > room - t.offset) {
            fail_at(info_at[i], "data of tensor " + quoted(t.name) + " (" + std::to_string(t.nbytes) +
                                    " bytes at data offset " + std::to_string(t.offset) + ") ends past the " +
                                    std::to_string(limit) + " bytes the input may hold");
        }
        end = std::max(end, pad_to(data_offset + t.offset + t.nbytes, ctx.alignment));
    }
    return std::min(end, limit);
}

} // namespace gk::gguf
