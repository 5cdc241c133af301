// value.cpp - the metadata value types: names, sizes, bytes in the file.
#include "context.h"

namespace gk::gguf {
namespace {

struct type_row {
    const char * name;
    size_t       size;  // 0: variable (string, array)
};

// Indexed by gk_gguf_type (GGUF value type ids 0..12).
constexpr type_row k_types[GK_GGUF_TYPE_COUNT] = {
    {"uint8", 1}, {"int8", 1},  {"uint16", 2},  {"int16", 2},  {"uint32", 4},  {"int32", 4},   {"float32", 4},
    {"bool", 1},  {"string", 0}, {"array", 0},  {"uint64", 8}, {"int64", 8},   {"float64", 8},
};

} // namespace

uint64_t value_bytes(const gk_gguf_value & v) {
    if (v.type == GK_GGUF_TYPE_STRING) {
        return 8 + v.str.size();
    }
    if (v.type != GK_GGUF_TYPE_ARRAY) {
        return gk_gguf_type_size(v.type);
    }
    uint64_t n = 4 + 8 + v.packed.size();  // element type, count, fixed-size elements
    for (const std::string & s : v.strs) {
        n += 8 + s.size();
    }
    for (const gk_gguf_value & item : v.items) {
        n += value_bytes(item);
    }
    return n;
}

} // namespace gk::gguf

extern "C" {

const char * gk_gguf_type_name(enum gk_gguf_type type) {
    return type >= 0 && type < GK_GGUF_TYPE_COUNT ? gk::gguf::k_types[type].name : "?";
}

size_t gk_gguf_type_size(enum gk_gguf_type type) {
    return type >= 0 && type < GK_GGUF_TYPE_COUNT ? gk::gguf::k_types[type].size : 0;
}

} // extern "C"
