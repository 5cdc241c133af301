// tiny_gguf.h - just enough of a GGUF (v2/v3) reader for the encode-quality tests to
// take real f32 weights from the bundled stories260K model, independent of src/gguf.
// Layout: header (magic "GGUF", version, n_tensors, n_kv), key/value pairs, tensor
// infos (name, n_dims, ne[], type, offset), then the data section at the alignment
// (general.alignment, default 32). Every read is bounds-checked.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gk::test {

namespace tiny_gguf_detail {

struct cursor {
    const std::vector<char> & buf;
    size_t                    pos = 0;
    bool                      ok  = true;

    bool take(void * dst, size_t n) {
        if (!ok || n > buf.size() - pos) {
            ok = false;
            return false;
        }
        std::memcpy(dst, buf.data() + pos, n);
        pos += n;
        return true;
    }
    template <typename T> T get() {
        T v{};
        take(&v, sizeof v);
        return v;
    }
    std::string str() {
        const uint64_t n = get<uint64_t>();
        if (!ok || n > buf.size() - pos) {
            ok = false;
            return {};
        }
        std::string s(buf.data() + pos, static_cast<size_t>(n));
        pos += static_cast<size_t>(n);
        return s;
    }
    void skip(uint64_t n) {
        if (!ok || n > buf.size() - pos) {
            ok = false;
            return;
        }
        pos += static_cast<size_t>(n);
    }
};

// Byte size of a scalar GGUF value type; 0 for string (8) and array (9).
inline uint64_t scalar_size(uint32_t type) {
    static constexpr uint64_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < 13 ? sizes[type] : 0;
}

// Skips one value of `type`; returns its u32 value when it is one (for the alignment).
inline bool skip_value(cursor & c, uint32_t type, uint32_t * u32_out) {
    if (type == 8) {
        c.str();
    } else if (type == 9) {
        const uint32_t item = c.get<uint32_t>();
        const uint64_t n    = c.get<uint64_t>();
        if (item == 8) {
            for (uint64_t i = 0; c.ok && i < n; ++i) {
                c.str();
            }
        } else if (scalar_size(item) != 0 && n <= c.buf.size()) {
            c.skip(n * scalar_size(item));
        } else {
            return false;  // nested arrays or bad type: not in this model
        }
    } else if (type == 4 && u32_out) {
        *u32_out = c.get<uint32_t>();
    } else if (scalar_size(type) != 0) {
        c.skip(scalar_size(type));
    } else {
        return false;
    }
    return c.ok;
}

} // namespace tiny_gguf_detail

/// Appends the values of the f32 tensors `names` of the GGUF file at `path`, in that
/// order, to `out`. False with `err` set on a read error, a missing tensor, a tensor of
/// another type, or a malformed file.
inline bool read_f32_tensors(const std::string & path, const std::vector<std::string> & names,
                             std::vector<float> & out, std::string & err) {
    using tiny_gguf_detail::cursor;
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        err = "cannot open " + path;
        return false;
    }
    const std::vector<char> buf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    cursor c{buf};
    const uint32_t magic    = c.get<uint32_t>();
    const uint32_t version  = c.get<uint32_t>();
    const uint64_t n_tensor = c.get<uint64_t>();
    const uint64_t n_kv     = c.get<uint64_t>();
    if (!c.ok || magic != 0x46554747u || version < 2 || n_tensor > buf.size() || n_kv > buf.size()) {
        err = path + ": not a GGUF v2/v3 file";
        return false;
    }
    uint32_t alignment = 32;
    for (uint64_t i = 0; i < n_kv; ++i) {
        const std::string key  = c.str();
        const uint32_t    type = c.get<uint32_t>();
        uint32_t          u32  = 0;
        if (!tiny_gguf_detail::skip_value(c, type, &u32)) {
            err = path + ": bad key/value " + key;
            return false;
        }
        if (key == "general.alignment" && type == 4) {
            alignment = u32;
        }
    }
    struct info {
        std::string name;
        uint64_t    n = 1, offset = 0;
        uint32_t    type = 0;
    };
    std::vector<info> infos;
    for (uint64_t i = 0; c.ok && i < n_tensor; ++i) {
        info t;
        t.name              = c.str();
        const uint32_t dims = c.get<uint32_t>();
        for (uint32_t d = 0; c.ok && d < dims && d < 8; ++d) {
            t.n *= c.get<uint64_t>();
        }
        t.type   = c.get<uint32_t>();
        t.offset = c.get<uint64_t>();
        infos.push_back(t);
    }
    if (!c.ok || alignment == 0) {
        err = path + ": truncated tensor infos";
        return false;
    }
    const uint64_t data = (c.pos + alignment - 1) / alignment * alignment;
    for (const std::string & name : names) {
        const info * t = nullptr;
        for (const info & i : infos) {
            if (i.name == name) {
                t = &i;
            }
        }
        if (!t || t->type != 0) {
            err = path + ": no f32 tensor " + name;
            return false;
        }
        if (t->n > buf.size() / 4 || data + t->offset > buf.size() || t->n * 4 > buf.size() - data - t->offset) {
            err = path + ": tensor " + name + " runs past the end of the file";
            return false;
        }
        const size_t old = out.size();
        out.resize(old + static_cast<size_t>(t->n));
        std::memcpy(out.data() + old, buf.data() + data + t->offset, static_cast<size_t>(t->n) * 4);
    }
    return true;
}

} // namespace gk::test
