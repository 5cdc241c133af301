// listing.cpp - text and JSON views of a GGUF file for gk-gguf (listing.h).
#include "listing.h"

#include <cinttypes>
#include <cstring>
#include <filesystem>
#include <map>

namespace gk_gguf_tool {
namespace {

constexpr uint64_t k_shown_elements = 8;    // array elements shown before "... N more"
constexpr size_t   k_shown_bytes    = 120;  // string bytes shown before "..."

std::string quoted_text(const char * s, size_t len) {
    std::string out = "\"";
    const size_t shown = std::min(len, k_shown_bytes);
    for (size_t i = 0; i < shown; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (c < 0x20 || c == 0x7F) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02X", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    out += '"';
    if (len > shown) {
        out += "... (" + std::to_string(len) + " bytes)";
    }
    return out;
}

// A fixed-size scalar of type `t` at `p` (little-endian bytes) as text.
std::string scalar_text(gk_gguf_type t, const void * p) {
    char buf[64];
    switch (t) {
    case GK_GGUF_TYPE_UINT8: return std::to_string(*static_cast<const uint8_t *>(p));
    case GK_GGUF_TYPE_INT8: return std::to_string(*static_cast<const int8_t *>(p));
    case GK_GGUF_TYPE_UINT16: return std::to_string(*static_cast<const uint16_t *>(p));
    case GK_GGUF_TYPE_INT16: return std::to_string(*static_cast<const int16_t *>(p));
    case GK_GGUF_TYPE_UINT32: return std::to_string(*static_cast<const uint32_t *>(p));
    case GK_GGUF_TYPE_INT32: return std::to_string(*static_cast<const int32_t *>(p));
    case GK_GGUF_TYPE_UINT64: return std::to_string(*static_cast<const uint64_t *>(p));
    case GK_GGUF_TYPE_INT64: return std::to_string(*static_cast<const int64_t *>(p));
    case GK_GGUF_TYPE_BOOL: return *static_cast<const uint8_t *>(p) ? "true" : "false";
    case GK_GGUF_TYPE_FLOAT32:
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(*static_cast<const float *>(p)));
        return buf;
    case GK_GGUF_TYPE_FLOAT64:
        std::snprintf(buf, sizeof buf, "%.17g", *static_cast<const double *>(p));
        return buf;
    default: return "?";
    }
}

nlohmann::json scalar_json(gk_gguf_type t, const void * p) {
    switch (t) {
    case GK_GGUF_TYPE_UINT8: return *static_cast<const uint8_t *>(p);
    case GK_GGUF_TYPE_INT8: return *static_cast<const int8_t *>(p);
    case GK_GGUF_TYPE_UINT16: return *static_cast<const uint16_t *>(p);
    case GK_GGUF_TYPE_INT16: return *static_cast<const int16_t *>(p);
    case GK_GGUF_TYPE_UINT32: return *static_cast<const uint32_t *>(p);
    case GK_GGUF_TYPE_INT32: return *static_cast<const int32_t *>(p);
    case GK_GGUF_TYPE_UINT64: return *static_cast<const uint64_t *>(p);
    case GK_GGUF_TYPE_INT64: return *static_cast<const int64_t *>(p);
    case GK_GGUF_TYPE_BOOL: return *static_cast<const uint8_t *>(p) != 0;
    case GK_GGUF_TYPE_FLOAT32: return *static_cast<const float *>(p);
    case GK_GGUF_TYPE_FLOAT64: return *static_cast<const double *>(p);
    default: return nullptr;
    }
}

// Element j of an array value as text.
std::string element_text(const gk_gguf_value * v, uint64_t j) {
    const gk_gguf_type elem = gk_gguf_array_type(v);
    if (elem == GK_GGUF_TYPE_STRING) {
        size_t len = 0;
        const char * s = gk_gguf_array_str(v, j, &len);
        return quoted_text(s, len);
    }
    if (elem == GK_GGUF_TYPE_ARRAY) {
        return value_text(gk_gguf_array_item(v, j));
    }
    const auto * p = static_cast<const uint8_t *>(gk_gguf_array_data(v));
    return scalar_text(elem, p + j * gk_gguf_type_size(elem));
}

} // namespace

std::string value_text(const gk_gguf_value * v) {
    const gk_gguf_type t = gk_gguf_value_type(v);
    if (t == GK_GGUF_TYPE_STRING) {
        size_t len = 0;
        const char * s = gk_gguf_value_str(v, &len);
        return quoted_text(s, len);
    }
    if (t != GK_GGUF_TYPE_ARRAY) {
        return scalar_text(t, gk_gguf_value_data(v));
    }
    const uint64_t n = gk_gguf_array_len(v);
    std::string out = "[";
    for (uint64_t j = 0; j < n && j < k_shown_elements; ++j) {
        out += (j ? ", " : "") + element_text(v, j);
    }
    if (n > k_shown_elements) {
        out += ", ... " + std::to_string(n - k_shown_elements) + " more";
    }
    return out + "]";
}

std::string type_text(const gk_gguf_value * v) {
    const gk_gguf_type t = gk_gguf_value_type(v);
    if (t != GK_GGUF_TYPE_ARRAY) {
        return gk_gguf_type_name(t);
    }
    return std::string("array[") + gk_gguf_type_name(gk_gguf_array_type(v)) + "; " +
           std::to_string(gk_gguf_array_len(v)) + "]";
}

nlohmann::json value_json(const gk_gguf_value * v) {
    const gk_gguf_type t = gk_gguf_value_type(v);
    if (t == GK_GGUF_TYPE_STRING) {
        size_t len = 0;
        const char * s = gk_gguf_value_str(v, &len);
        return std::string(s, len);
    }
    if (t != GK_GGUF_TYPE_ARRAY) {
        return scalar_json(t, gk_gguf_value_data(v));
    }
    nlohmann::json out = nlohmann::json::array();
    const gk_gguf_type elem = gk_gguf_array_type(v);
    const auto * p = static_cast<const uint8_t *>(gk_gguf_array_data(v));
    for (uint64_t j = 0; j < gk_gguf_array_len(v); ++j) {
        if (elem == GK_GGUF_TYPE_STRING) {
            size_t len = 0;
            const char * s = gk_gguf_array_str(v, j, &len);
            out.push_back(std::string(s, len));
        } else if (elem == GK_GGUF_TYPE_ARRAY) {
            out.push_back(value_json(gk_gguf_array_item(v, j)));
        } else {
            out.push_back(scalar_json(elem, p + j * gk_gguf_type_size(elem)));
        }
    }
    return out;
}

std::string shape_text(const gk_gguf * ctx, int64_t i) {
    const int64_t * ne = gk_gguf_tensor_ne(ctx, i);
    std::string s = "[";
    for (uint32_t j = 0; j < gk_gguf_tensor_n_dims(ctx, i); ++j) {
        s += (j ? ", " : "") + std::to_string(ne[j]);
    }
    return s + "]";
}

std::string header_text(const gk_gguf * ctx, const std::string & path) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    char buf[256];
    std::snprintf(buf, sizeof buf, "GGUF v%u, %" PRId64 " key/value pairs, %" PRId64 " tensors, alignment %u, data at byte %" PRIu64,
                  gk_gguf_version(ctx), gk_gguf_kv_count(ctx), gk_gguf_tensor_count(ctx), gk_gguf_alignment(ctx),
                  gk_gguf_data_offset(ctx));
    std::string out = path + ": " + buf;
    if (!ec) {
        out += ", " + std::to_string(size) + " bytes";
    }
    return out;
}

namespace {

struct type_total {
    int64_t  tensors = 0;
    uint64_t bytes   = 0;
};

std::map<std::string, type_total> totals_by_type(const gk_gguf * ctx) {
    std::map<std::string, type_total> totals;
    for (int64_t i = 0; i < gk_gguf_tensor_count(ctx); ++i) {
        type_total & t = totals[gk_type_name(gk_gguf_tensor_type(ctx, i))];
        ++t.tensors;
        t.bytes += gk_gguf_tensor_size(ctx, i);
    }
    return totals;
}

} // namespace

void print_listing(FILE * out, const gk_gguf * ctx, const std::string & path) {
    std::fprintf(out, "%s\n\n%" PRId64 " key/value pairs:\n", header_text(ctx, path).c_str(), gk_gguf_kv_count(ctx));
    for (int64_t i = 0; i < gk_gguf_kv_count(ctx); ++i) {
        const gk_gguf_value * v = gk_gguf_kv_value(ctx, i);
        std::fprintf(out, "  %-40s %-20s %s\n", gk_gguf_kv_key(ctx, i), type_text(v).c_str(), value_text(v).c_str());
    }
    std::fprintf(out, "\n%" PRId64 " tensors:\n  %5s  %-40s %-8s %-24s %14s %14s\n", gk_gguf_tensor_count(ctx), "#", "name",
                 "type", "shape", "offset", "bytes");
    uint64_t total = 0;
    for (int64_t i = 0; i < gk_gguf_tensor_count(ctx); ++i) {
        std::fprintf(out, "  %5" PRId64 "  %-40s %-8s %-24s %14" PRIu64 " %14" PRIu64 "\n", i, gk_gguf_tensor_name(ctx, i),
                     gk_type_name(gk_gguf_tensor_type(ctx, i)), shape_text(ctx, i).c_str(),
                     gk_gguf_tensor_offset(ctx, i), gk_gguf_tensor_size(ctx, i));
        total += gk_gguf_tensor_size(ctx, i);
    }
    std::fprintf(out, "\ntypes:\n");
    for (const auto & [name, t] : totals_by_type(ctx)) {
        std::fprintf(out, "  %-8s %6" PRId64 " tensors %14" PRIu64 " bytes (%5.1f%%)\n", name.c_str(), t.tensors, t.bytes,
                     total ? 100.0 * static_cast<double>(t.bytes) / static_cast<double>(total) : 0.0);
    }
}

nlohmann::json listing_json(const gk_gguf * ctx, const std::string & path) {
    nlohmann::json j;
    j["file"]        = path;
    j["version"]     = gk_gguf_version(ctx);
    j["alignment"]   = gk_gguf_alignment(ctx);
    j["data_offset"] = gk_gguf_data_offset(ctx);
    nlohmann::json kv = nlohmann::json::array();
    for (int64_t i = 0; i < gk_gguf_kv_count(ctx); ++i) {
        const gk_gguf_value * v = gk_gguf_kv_value(ctx, i);
        nlohmann::json e = {{"key", gk_gguf_kv_key(ctx, i)}, {"type", gk_gguf_type_name(gk_gguf_value_type(v))}};
        if (gk_gguf_value_type(v) == GK_GGUF_TYPE_ARRAY) {
            e["element_type"] = gk_gguf_type_name(gk_gguf_array_type(v));
        }
        e["value"] = value_json(v);
        kv.push_back(std::move(e));
    }
    j["kv"] = std::move(kv);
    nlohmann::json tensors = nlohmann::json::array();
    for (int64_t i = 0; i < gk_gguf_tensor_count(ctx); ++i) {
        const int64_t * ne = gk_gguf_tensor_ne(ctx, i);
        tensors.push_back({{"name", gk_gguf_tensor_name(ctx, i)},
                           {"type", gk_type_name(gk_gguf_tensor_type(ctx, i))},
                           {"ne", std::vector<int64_t>(ne, ne + gk_gguf_tensor_n_dims(ctx, i))},
                           {"offset", gk_gguf_tensor_offset(ctx, i)},
                           {"bytes", gk_gguf_tensor_size(ctx, i)}});
    }
    j["tensors"] = std::move(tensors);
    nlohmann::json types = nlohmann::json::object();
    for (const auto & [name, t] : totals_by_type(ctx)) {
        types[name] = {{"tensors", t.tensors}, {"bytes", t.bytes}};
    }
    j["types"] = std::move(types);
    return j;
}

} // namespace gk_gguf_tool
