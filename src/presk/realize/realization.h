// Realizations (--realize f64|f32|bf16|@FILE): the machine types a program runs in, per site
// (../shared/seeds/presk-native.txt, "The realization"). A site is "<function>/%<let>", the
// root of a fusion group as `presk dump --stage core` prints it.
#pragma once
#include <map>
#include <string>

#include "kernel/ir.h"

namespace presk::realize {

/// A contraction's declared reduction order: sequential, blocked(width) (bit-identical to
/// sequential) or interleaved(partials) (reassociates).
struct Order {
    enum Kind { Sequential, Blocked, Interleaved } kind = Sequential;
    int64_t width = 0;  // blocked: the block width; interleaved: the number of partials
};

/// The seed's realization object. `--realize f64` is {default: f64} with empty maps and a
/// sequential order.
struct Realization {
    kernel::DType default_type = kernel::DType::F64;
    std::map<std::string, kernel::DType> storage;  // site -> storage type
    std::map<std::string, kernel::DType> accum;    // site -> accumulation type
    Order order;
    std::string envelope;                          // a file naming magnitude measurements
    std::map<std::string, kernel::DType> params;   // parameter path -> f32 | bf16 at rest
    std::map<std::string, kernel::DType> quant;    // parameter path -> I8 | I4 (kernel/quant.h)
    std::string spelling;                          // "f32", or "@file.json", for messages

    /// The storage type of `site`.
    kernel::DType storage_of(const std::string& site) const;
};

/// Parses `f64`, `f32`, `bf16` or `@FILE` (a JSON object with the keys default, storage,
/// accum, order, envelope, params, quant: {"head": "int8", "blocks.up.w": "int4"}). Throws
/// presk::Error naming the file, key and value on an unreadable file, malformed JSON, an
/// unknown key or type, a malformed order, or a path in both params and quant.
Realization parse_realization(const std::string& arg);
/// The same from JSON text; `origin` names it in messages.
Realization parse_realization_json(const std::string& text, const std::string& origin);

} // namespace presk::realize
