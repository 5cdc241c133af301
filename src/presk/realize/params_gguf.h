// A module's parameter tree in a GGUF file, and the values a quantised parameter has: the seam
// between presk's parameters and gk's formats (kernel/quant.h, ../shared/seeds/presk-native.txt,
// "A parameter a realization quantises"). A leaf at path P (`blocks.attn.q.w`) is the tensor
// "P.weight" (the suffix that gk-quantize's rules quantise matrices by), its GGUF shape the
// leaf's axes innermost first (ne[0] the last axis), at most four of them.
#pragma once
#include <map>
#include <string>

#include "core/core.h"
#include "kernel/data.h"
#include "kernel/ir.h"
#include "ref/values.h"

namespace presk::realize {

/// The GGUF tensor name of parameter path `path` ("head" -> "head.weight").
std::string gguf_tensor_name(const std::string& path);

/// Writes `p`'s parameter tree `params` to the GGUF file `file` with gk's writer: each leaf in
/// f32 (its values rounded to nearest), or as the q8_0 / q4_0 blocks of gk's encoder where
/// `quant` gives its path int8 / int4. Throws presk::Error naming the file or the leaf when a
/// leaf has more than four axes, a quantised leaf's last axis is not whole blocks, or the file
/// cannot be written.
void write_params_gguf(const core::Program& p, const ref::Value& params, const std::map<std::string, kernel::DType>& quant,
                       const std::string& file);

/// A parameter tree read from a GGUF file.
struct GgufParams {
    ref::Value params;                          // every value exactly (MPFR numbers)
    std::map<std::string, kernel::Data> blocks;  // the leaves stored as q8_0 (int8) or q4_0 (int4): their blocks
};

/// Reads `p`'s parameter tree from the GGUF file `file` with gk's reader and decoder: every leaf
/// of p.params must be there with the leaf's shape, in f32, f16, bf16, f64, q8_0 or q4_0; its
/// values are decoded exactly into MPFR numbers of `bits` (at least 53), and a q8_0 or q4_0
/// tensor's blocks are kept as they are (for ExecOptions::blocks: the kernels read the file's
/// blocks). Throws presk::Error naming the file and tensor on an unreadable file, a missing
/// tensor, or a shape or type other than these.
GgufParams read_params_gguf(const core::Program& p, const std::string& file, long bits);

/// `params` with the leaves `quant` names replaced by the values of their int8 / int4 blocks
/// (each value rounded to f32, encoded by gk's encoder, decoded: f32(q) * s exactly): the values
/// the reference path substitutes for what the kernels read. Other leaves are kept, and so are
/// those `stored` holds blocks for (their values are those blocks' already).
ref::Value quantised_values(const ref::Value& params, const std::map<std::string, kernel::DType>& quant, long bits,
                            const std::map<std::string, kernel::Data>& stored = {});

} // namespace presk::realize
