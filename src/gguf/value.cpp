// value.cpp - the metadata value types: names, sizes, bytes in the file.
#include "context.h"

#include "common/keyed_table.h"

namespace gk::gguf {
namespace {

struct type_row {
    gk_gguf_type key;
    const char * name;
    size_t       size;  // 0: variable (string, array)
};

// One row per GGUF value type id, in id order.
constexpr type_row k_types[] = {
    {GK_GGUF_TYPE_UINT8, "uint8", 1},
    {GK_GGUF_TYPE_INT8, "int8", 1},
    {GK_GGUF_TYPE_UINT16, "uint16", 2},
    {GK_GGUF_TYPE_INT16, "int16", 2},
    {GK_GGUF_TYPE_UINT32, "uint32", 4},
    {GK_GGUF_TYPE_INT32, "int32", 4},
    {GK_GGUF_TYPE_FLOAT32, "float32", 4},
    {GK_GGUF_TYPE_BOOL, "bool", 1},
    {GK_GGUF_TYPE_STRING, "string", 0},
    {GK_GGUF_TYPE_ARRAY, "array", 0},
    {GK_GGUF_TYPE_UINT64, "uint64", 8},
    {GK_GGUF_TYPE_INT64, "int64", 8},
    {GK_GGUF_TYPE_FLOAT64, "float64", 8},
};
static_assert(gk::keyed_table_complete(k_types, GK_GGUF_TYPE_COUNT), "k_types must list every gk_gguf_type in order");

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
