// Private to realize/: the file and strict JSON reading the realization and plan files share
// (realization.cpp defines them).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace presk::realize::detail {

/// The contents of the file at `path`; throws presk::Error "<path>: cannot read <what>" when
/// it is a directory or cannot be read.
std::string read_text(const std::string& path, const std::string& what);

/// A JSON value as it appears in the text, for messages; cut after 80 characters.
std::string shown(const nlohmann::json& v);

/// "<function>/%<k>": a function name, then "/%" and a let number.
bool is_site(const std::string& s);

/// Parses `text`, refusing (presk::Error "<origin>: ...") malformed JSON, nesting deeper than
/// 32 levels and an object that repeats a key (the JSON library would keep the last one).
nlohmann::json parse_strict(const std::string& text, const std::string& origin);

} // namespace presk::realize::detail
