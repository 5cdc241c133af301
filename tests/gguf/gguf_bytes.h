// gguf_bytes.h - GGUF files assembled byte by byte for the tests, independently of
// the library's writer, with named marks at the fields a hostile test patches.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gguf_test {

class bytes {
public:
    template <class T>
    bytes & put(T v) {
        const auto * p = reinterpret_cast<const uint8_t *>(&v);
        b_.insert(b_.end(), p, p + sizeof v);
        return *this;
    }
    bytes & str(std::string_view s) {
        put<uint64_t>(s.size());
        b_.insert(b_.end(), s.begin(), s.end());
        return *this;
    }
    bytes & raw(const void * p, size_t n) {
        const auto * q = static_cast<const uint8_t *>(p);
        b_.insert(b_.end(), q, q + n);
        return *this;
    }
    bytes & pad_to(size_t alignment) {
        while (b_.size() % alignment) {
            b_.push_back(0);
        }
        return *this;
    }
    bytes & mark(const std::string & name) {
        marks_[name] = b_.size();
        return *this;
    }
    size_t at(const std::string & name) const { return marks_.at(name); }
    template <class T>
    void patch(size_t offset, T v) {
        std::memcpy(b_.data() + offset, &v, sizeof v);
    }
    std::vector<uint8_t> & data() { return b_; }
    const std::vector<uint8_t> & data() const { return b_; }
    size_t size() const { return b_.size(); }

private:
    std::vector<uint8_t>          b_;
    std::map<std::string, size_t> marks_;
};

// GGUF value type ids.
enum : uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 };

/// A small valid v3 file: one pair of every value type (an array of arrays among
/// them), `general.alignment` 32, and three tensors: "a" f32 [4, 3], "b" q8_0 [32, 2]
/// and "empty" f32 [0, 5]. Marks: "n_tensors", "n_kv", "key0" (length field of the
/// first key), "u8.type", "str.len", "arr.elem", "arr.len", "strs.len", "nested",
/// "bool.value", "align.type", "align.value", and per tensor T: "T.name",
/// "T.n_dims", "T.ne", "T.type", "T.offset"; "meta_end", "data".
inline bytes tiny_file() {
    bytes f;
    f.raw("GGUF", 4).put<uint32_t>(3).mark("n_tensors").put<uint64_t>(3).mark("n_kv").put<uint64_t>(17);
    f.mark("key0").str("general.architecture").put<uint32_t>(STR).str("llama");
    f.str("t.u8").mark("u8.type").put<uint32_t>(U8).put<uint8_t>(200);
    f.str("t.i8").put<uint32_t>(I8).put<int8_t>(-100);
    f.str("t.u16").put<uint32_t>(U16).put<uint16_t>(60000);
    f.str("t.i16").put<uint32_t>(I16).put<int16_t>(-30000);
    f.str("t.u32").put<uint32_t>(U32).put<uint32_t>(4000000000u);
    f.str("t.i32").put<uint32_t>(I32).put<int32_t>(-2000000000);
    f.str("t.f32").put<uint32_t>(F32).put<float>(0.25f);
    f.str("t.bool").put<uint32_t>(BOOL).mark("bool.value").put<uint8_t>(1);
    f.str("t.str").put<uint32_t>(STR).mark("str.len").str("hello");
    f.str("t.u64").put<uint32_t>(U64).put<uint64_t>(18000000000000000000ull);
    f.str("t.i64").put<uint32_t>(I64).put<int64_t>(-9000000000000000000ll);
    f.str("t.f64").put<uint32_t>(F64).put<double>(-1.5);
    f.str("t.arr").put<uint32_t>(ARR).mark("arr.elem").put<uint32_t>(I32).mark("arr.len").put<uint64_t>(3);
    f.put<int32_t>(1).put<int32_t>(-2).put<int32_t>(3);
    f.str("t.strs").put<uint32_t>(ARR).put<uint32_t>(STR).mark("strs.len").put<uint64_t>(2).str("x").str("yz");
    // [[1, 2], []] as arrays of u16
    f.str("t.nested").put<uint32_t>(ARR).mark("nested").put<uint32_t>(ARR).put<uint64_t>(2);
    f.put<uint32_t>(U16).put<uint64_t>(2).put<uint16_t>(1).put<uint16_t>(2);
    f.put<uint32_t>(U16).put<uint64_t>(0);
    f.str("general.alignment").mark("align.type").put<uint32_t>(U32).mark("align.value").put<uint32_t>(32);

    f.mark("a.name").str("a").mark("a.n_dims").put<uint32_t>(2).mark("a.ne").put<int64_t>(4).put<int64_t>(3);
    f.mark("a.type").put<uint32_t>(0).mark("a.offset").put<uint64_t>(0);
    f.mark("b.name").str("b").mark("b.n_dims").put<uint32_t>(2).mark("b.ne").put<int64_t>(32).put<int64_t>(2);
    f.mark("b.type").put<uint32_t>(8).mark("b.offset").put<uint64_t>(64);
    f.mark("empty.name").str("empty").mark("empty.n_dims").put<uint32_t>(2).mark("empty.ne");
    f.put<int64_t>(0).put<int64_t>(5).mark("empty.type").put<uint32_t>(0).mark("empty.offset").put<uint64_t>(160);
    f.mark("meta_end").pad_to(32).mark("data");
    for (int i = 0; i < 12; ++i) {  // a: 48 bytes, padded to 64
        f.put<float>(static_cast<float>(i) - 5.5f);
    }
    f.pad_to(32);
    for (int r = 0; r < 2; ++r) {  // b: two q8_0 blocks of 34 bytes (f16 scale 1.0, then 32 int8)
        f.put<uint16_t>(0x3C00);
        for (int i = 0; i < 32; ++i) {
            f.put<int8_t>(static_cast<int8_t>(i - 16 + r));
        }
    }
    f.pad_to(32);
    return f;
}

} // namespace gguf_test
