// listing.h - a GGUF file's header, pairs and tensors as text or JSON (gk-gguf).
#pragma once

#include "gk/gguf.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace gk_gguf_tool {

/// A value as one line of text: strings quoted and escaped, long strings and arrays
/// abbreviated ("... N more").
std::string value_text(const gk_gguf_value * v);

/// The value's type as text: "uint32", "string", "array[string; 512]".
std::string type_text(const gk_gguf_value * v);

/// A value in full as JSON (arrays complete, nested arrays nested).
nlohmann::json value_json(const gk_gguf_value * v);

/// "[64, 512]": ne[0..n_dims).
std::string shape_text(const gk_gguf * ctx, int64_t i);

/// The listing of `ctx` read from `path`: header line, every pair, every tensor, and
/// a summary by type.
void print_listing(FILE * out, const gk_gguf * ctx, const std::string & path);

/// The same as one JSON object: file, version, alignment, data_offset, kv[], tensors[],
/// types{}.
nlohmann::json listing_json(const gk_gguf * ctx, const std::string & path);

/// The first line of the listing (file, version, counts, alignment, data offset).
std::string header_text(const gk_gguf * ctx, const std::string & path);

} // namespace gk_gguf_tool
