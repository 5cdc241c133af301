// The type checker: instantiates an entry at bound dims, checks every expression it reaches
// by the named-axis rules, and elaborates it to PSK-Core (A-normal form) as it goes.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "core/core.h"
#include "lang/ast.h"

namespace presk {

struct CheckOptions {
    std::map<std::string, int64_t> dims;        // --dim k=v: named axes and dims named in the entry
    std::map<std::string, std::string> consts;  // --const k=v: overrides `const` declarations
    /// Refuse a dim the entry does not use (an axis of its parameters or a dim named in it), one
    /// that contradicts a dim of the entry's module, and a const the file does not declare (the
    /// CLI's options; the fuzzer sizes every name and leaves this off).
    bool strict = false;
};

/// Checks entry `entry` ("Module{3, 2}.fn", "module.fn" or "fn") of `file` and returns its
/// Core program. Throws Error with the position of the first problem.
core::Program check(const ast::File& file, const std::string& entry, const CheckOptions& opts);

/// The entries of a file, as `presk check` lists them: "fn" and "Module{dims}.fn".
std::vector<std::string> list_entries(const ast::File& file);

} // namespace presk
