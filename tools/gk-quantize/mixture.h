// mixture.h - the quantization types llama-quantize takes (its "mixtures": Q4_K_M,
// IQ2_XS, COPY, ...), with their llama_ftype ids (llama.h) and default matrix types,
// and llama.cpp's file type of a model whose matrices are mostly of one type.
#pragma once

#include "gk/gk-type.h"

#include <span>
#include <string>

namespace gk_quantize {

/// llama_ftype (llama.h), the value of general.file_type.
enum ftype : int {
    FTYPE_ALL_F32   = 0,
    FTYPE_F16       = 1,
    FTYPE_Q4_0      = 2,
    FTYPE_Q4_1      = 3,
    FTYPE_Q8_0      = 7,
    FTYPE_Q5_0      = 8,
    FTYPE_Q5_1      = 9,
    FTYPE_Q2_K      = 10,
    FTYPE_Q3_K_S    = 11,
    FTYPE_Q3_K_M    = 12,
    FTYPE_Q3_K_L    = 13,
    FTYPE_Q4_K_S    = 14,
    FTYPE_Q4_K_M    = 15,
    FTYPE_Q5_K_S    = 16,
    FTYPE_Q5_K_M    = 17,
    FTYPE_Q6_K      = 18,
    FTYPE_IQ2_XXS   = 19,
    FTYPE_IQ2_XS    = 20,
    FTYPE_Q2_K_S    = 21,
    FTYPE_IQ3_XS    = 22,
    FTYPE_IQ3_XXS   = 23,
    FTYPE_IQ1_S     = 24,
    FTYPE_IQ4_NL    = 25,
    FTYPE_IQ3_S     = 26,
    FTYPE_IQ3_M     = 27,
    FTYPE_IQ2_S     = 28,
    FTYPE_IQ2_M     = 29,
    FTYPE_IQ4_XS    = 30,
    FTYPE_IQ1_M     = 31,
    FTYPE_BF16      = 32,
    FTYPE_TQ1_0     = 36,
    FTYPE_TQ2_0     = 37,
    FTYPE_MXFP4_MOE = 38,
    FTYPE_NVFP4     = 39,
    FTYPE_Q1_0      = 40,
};

struct mixture {
    const char * name;         // as llama-quantize spells it ("Q4_K_M")
    ftype        id;           // recorded in general.file_type
    gk_type      base;         // the type of a matrix no per-tensor rule changes
    bool         copy;         // COPY: every tensor copied as stored
    const char * description;  // one line for --help
};

/// Every mixture, in the order --help lists them (aliases such as Q4_K included).
std::span<const mixture> mixtures();

/// The mixture called `name` (any case) or numbered `name` (its llama_ftype id, the first
/// entry with that id, as llama-quantize takes it); nullptr when there is none.
const mixture * find_mixture(const std::string & name);

/// llama.cpp's file type for a model whose most common matrix type is `type`, as its
/// loader guesses one for a file without general.file_type (q4_K -> Q4_K_M, q3_K ->
/// Q3_K_M, q5_K -> Q5_K_M); -1 when llama.cpp names none (q2_0).
int file_type_of(gk_type type);

/// The name of llama_ftype `id` ("Q4_K_M"); "?" for an id no mixture has.
const char * file_type_name(int id);

}  // namespace gk_quantize
