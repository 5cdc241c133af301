// The reference interpreter (--backend interp): PSK-Core evaluated with exact reals (MPFR at
// `bits`, every primitive correctly rounded or a sequence of correctly rounded steps), integers
// exact, random numbers from ChaCha20 streams keyed by (seed, path).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/core.h"
#include "ref/values.h"

namespace presk::ref {

struct InterpOptions {
    long bits = 256;
    uint64_t seed = 0;
    bool train = false;          // dropout draws its mask only when training
    int64_t max_elements = 1 << 24;  // refuse tensors larger than this (runtime error)
};

class Interp {
public:
    Interp(const core::Program& p, InterpOptions o) : p_(p), o_(o) {}

    /// Runs function `fn` on `args`. Throws Error naming the site on a runtime failure
    /// (an index out of range, a fully masked softmax row, a tensor too large).
    Value call(const std::string& fn, const std::vector<Value>& args);
    /// The entry module's parameter tree drawn from its initializers (path-keyed streams).
    Value init_params();
    /// An input of `type` synthesised from the stream (seed, "input." + name): reals normal(0, 1),
    /// ints uniform below their bound, masks fair coins.
    Value synthesize(const TypeP& type, const std::string& name);
    /// The entry's arguments: its parameters, then its inputs, synthesised unless `given`
    /// names them (a decimal value for a real scalar input).
    std::vector<Value> entry_args(const std::map<std::string, std::string>& given = {});

private:
    const core::Program& p_;
    InterpOptions o_;
    std::vector<std::string> ctx_;  // loop indices of the steps being run, for random keys
    int depth_ = 0;

    Value prim(const core::Function& f, const core::Let& l, const std::vector<const Value*>& a);
    Value loop(const core::Let& l, const std::vector<const Value*>& a);
    Tensor fresh(const TypeP& t, const std::string& site);
    Real lit(const std::string& text) const;
    std::string key(const std::string& text) const;
};

} // namespace presk::ref
