// The data pipeline of presk train (docs/presk.md, "presk train"): the inputs of each step's
// gradient call, either windows of a token file in a seeded order or inputs synthesised as
// `presk run` synthesises them, under a key of their step. Every draw is a function of the seed
// and the step, so a run resumed at step n sees the batches of an uninterrupted one.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/types.h"
#include "ref/values.h"

namespace presk::train {

/// A token file: whitespace-separated decimal integers (at least 0).
struct TokenData {
    std::string path;
    std::vector<int64_t> tokens;
    uint64_t hash = 0;  // FNV-1a 64 of the file's bytes: the checkpoint's record of its data
};

/// Reads a token file. Throws presk::Error naming the file: unreadable, a directory, a word that
/// is not a natural number below 2^63 (with its position), or no tokens.
TokenData read_tokens(const std::string& path);

/// Where a step's batch lies: its epoch and its index within the epoch (0-based).
struct BatchPos {
    int64_t epoch = 0, index = 0;
};

/// Synthesises an input of `type` under stream name `name` (ref::Interp::synthesize).
using Synthesize = std::function<ref::Value(const TypeP& type, const std::string& name)>;

class Pipeline {
public:
    /// The inputs of the gradient entry (after its parameter tree): their types and names.
    /// With `data`, the entry must take exactly two inputs of one type int<V>[B, T] (the ids and
    /// the targets), every token must be below V and the file must hold at least B windows of
    /// T + 1 tokens; otherwise throws presk::Error saying which. Without it, each input is
    /// synthesised by `synth`.
    Pipeline(std::vector<TypeP> types, std::vector<std::string> names, uint64_t seed, std::optional<TokenData> data,
             Synthesize synth);

    /// The inputs of step n (1-based) and where they lie. Tokens: window w is tokens
    /// [w·T, w·T + T] (ids its first T, targets its last T), W = ⌊(N − 1)/T⌋ windows; epoch e
    /// visits them in a Fisher–Yates order drawn from the ChaCha stream (seed, "data.epoch.<e>")
    /// (for i = W − 1 down to 1, j = ⌊u·(i + 1)⌋), in ⌊W/B⌋ batches of B windows (the rest of an
    /// epoch is left out); step n takes batch (n − 1) mod ⌊W/B⌋ of epoch ⌊(n − 1)/⌊W/B⌋⌋.
    /// Synthesised: input x of step n is what `presk run` synthesises for an input named
    /// "x@n" (stream "input.x@n"), every step in epoch 0.
    std::vector<ref::Value> batch(int64_t n, BatchPos* pos);

    /// The data's identity for a checkpoint: "tokens <hash> <count>" or "synthesised".
    std::string source() const;

private:
    std::vector<TypeP> types_;
    std::vector<std::string> names_;
    uint64_t seed_;
    std::optional<TokenData> data_;
    Synthesize synth_;
    int64_t windows_ = 0, per_epoch_ = 0;
    int64_t order_epoch_ = -1;
    std::vector<int64_t> order_;  // the windows of epoch order_epoch_, in order
};

} // namespace presk::train
