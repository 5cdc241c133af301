// writer.cpp - lay out and serialize a gk_gguf context as a GGUF file.
//
// Layout (as ggml's gguf.cpp and gguf-py write it): header, pairs, tensor infos, zero
// padding to the alignment, then the tensors in order, each at the next multiple of
// the alignment. The only freedom real writers take is the very end: gguf-py leaves
// a file without tensors unpadded, ggml pads it. `tail_padded` records which the file
// read did (created contexts pad), so that a file read and written back is identical.
// A tensor whose data is not set is written as zeros.
#include "context.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace gk::gguf {
namespace {

constexpr uint64_t k_header_bytes = 4 + 4 + 8 + 8;  // magic, version, n_tensors, n_kv

class serializer {
public:
    explicit serializer(sink & out) : out_(out) {}

    template <class T>
    void put(T v) {
        out_.put(&v, sizeof v);
        written_ += sizeof v;
    }
    void bytes(const void * p, uint64_t n) {
        if (n) {
            out_.put(p, static_cast<size_t>(n));
            written_ += n;
        }
    }
    void string(const std::string & s) {
        put<uint64_t>(s.size());
        bytes(s.data(), s.size());
    }
    void zeros_to(uint64_t offset) {
        static constexpr uint8_t k_zeros[256] = {};
        while (written_ < offset) {
            const uint64_t n = std::min<uint64_t>(offset - written_, sizeof k_zeros);
            bytes(k_zeros, n);
        }
    }
    // A value after its type id; an array's items are array bodies (no type id).
    void value(const gk_gguf_value & v) {
        if (v.type == GK_GGUF_TYPE_STRING) {
            string(v.str);
        } else if (v.type == GK_GGUF_TYPE_ARRAY) {
            put<uint32_t>(v.elem);
            put<uint64_t>(v.n);
            bytes(v.packed.data(), v.packed.size());
            for (const std::string & s : v.strs) {
                string(s);
            }
            for (const gk_gguf_value & item : v.items) {
                value(item);
            }
        } else {
            bytes(&v.bits, gk_gguf_type_size(v.type));
        }
    }

private:
    sink &   out_;
    uint64_t written_ = 0;
};

} // namespace

uint64_t meta_bytes(const gk_gguf & ctx) {
    uint64_t n = k_header_bytes;
    for (const kv_pair & p : ctx.kv) {
        n += p.nbytes;
    }
    for (const tensor_info & t : ctx.tensors) {
        n += t.info_bytes();
    }
    return n;
}

// Tensor offsets as the writer lays them out: in order, each at the next multiple of
// the alignment. (A file read may have placed them otherwise; the writer does not.)
std::vector<uint64_t> canonical_offsets(const gk_gguf & ctx) {
    std::vector<uint64_t> offsets;
    offsets.reserve(ctx.tensors.size());
    uint64_t offset = 0;
    for (const tensor_info & t : ctx.tensors) {
        offsets.push_back(offset);
        offset = pad_to(offset + t.nbytes, ctx.alignment);
    }
    return offsets;
}

void relayout(gk_gguf & ctx) {
    ctx.data_offset = pad_to(meta_bytes(ctx), ctx.alignment);
    const std::vector<uint64_t> offsets = canonical_offsets(ctx);
    for (size_t i = 0; i < ctx.tensors.size(); ++i) {
        ctx.tensors[i].offset = offsets[i];
    }
}

uint64_t file_bytes(const gk_gguf & ctx) {
    const uint64_t meta = meta_bytes(ctx);
    uint64_t end = meta;
    if (!ctx.tensors.empty()) {
        end = pad_to(meta, ctx.alignment) + canonical_offsets(ctx).back() + ctx.tensors.back().nbytes;
    }
    return ctx.tail_padded ? pad_to(end, ctx.alignment) : end;
}

void write_to(const gk_gguf & ctx, sink & out, bool meta_only) {
    const std::vector<uint64_t> offsets = canonical_offsets(ctx);
    serializer s(out);
    s.bytes("GGUF", 4);
    s.put<uint32_t>(ctx.version);
    s.put<uint64_t>(ctx.tensors.size());
    s.put<uint64_t>(ctx.kv.size());
    for (const kv_pair & p : ctx.kv) {
        s.string(p.key);
        s.put<uint32_t>(p.value.type);
        s.value(p.value);
    }
    for (size_t i = 0; i < ctx.tensors.size(); ++i) {
        const tensor_info & t = ctx.tensors[i];
        s.string(t.name);
        s.put<uint32_t>(t.n_dims);
        for (uint32_t j = 0; j < t.n_dims; ++j) {
            s.put<int64_t>(t.ne[j]);
        }
        s.put<uint32_t>(t.type);
        s.put<uint64_t>(offsets[i]);
    }
    const uint64_t data_offset = pad_to(meta_bytes(ctx), ctx.alignment);
    if (meta_only) {
        s.zeros_to(data_offset);
        return;
    }
    for (size_t i = 0; i < ctx.tensors.size(); ++i) {
        const tensor_info & t = ctx.tensors[i];
        s.zeros_to(data_offset + offsets[i]);
        if (t.data()) {
            s.bytes(t.data(), t.nbytes);
        } else {  // data not set: zeros
            s.zeros_to(data_offset + offsets[i] + t.nbytes);
        }
    }
    s.zeros_to(file_bytes(ctx));
}

} // namespace gk::gguf
