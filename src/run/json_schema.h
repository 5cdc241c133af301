// json_schema.h - a JSON Schema turned into a GBNF grammar (grammar.h) whose sentences are
// the JSON texts the schema accepts (-j / --json-schema, as llama.cpp's json-schema-to-grammar).
//
// Supported: type (one or a list) object / array / string / number / integer / boolean /
// null; properties with required (the properties appear in the schema's order, optional
// ones may be left out), additionalProperties (false, true or a schema; extra members come
// after the declared ones and must have other names; absent means none when properties are
// given, as llama.cpp does); items, prefixItems, minItems, maxItems; minLength, maxLength;
// pattern (json_schema_pattern.h); format date, time, date-time, uuid; minimum / maximum
// (also exclusive) on integers; enum, const (the values that type, the bounds and
// minLength / maxLength refuse are dropped, none left is refused as `false` is, and other
// keywords that apply to a value are refused by name); anyOf, oneOf (oneOf is not checked for
// exclusivity); $ref to "#", "#/$defs/NAME" or "#/definitions/NAME" (recursive schemas
// work). Annotations (title, description, default, examples, $schema, $id, $comment,
// readOnly, writeOnly, deprecated) are ignored. Any other keyword (allOf, not, contains,
// minProperties, minimum on numbers, ...) is refused by name.
//
// The JSON written has optional whitespace after each token, bounded (at most one newline
// and 20 spaces or tabs), and numbers of at most 16 integer and 16 fraction digits, so a
// schema of bounded strings and arrays describes a finite language.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gk::run {

/** GBNF text (start rule `root`) for the JSON Schema `schema` (JSON text). nullopt and a
 *  message in `*error` (may be null) for text that is not JSON (an empty one too), a schema
 *  that is not an object or boolean, an unsupported keyword, a bad $ref, a bound out of
 *  range, or a schema that accepts nothing; all but the first begin "at POINTER: " (the JSON
 *  pointer of the schema concerned, "/" for the whole). */
std::optional<std::string> json_schema_to_grammar(std::string_view schema, std::string * error);

} // namespace gk::run
