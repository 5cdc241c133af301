// llama_options.h - the options of llama.cpp's llama-cli and llama-completion
// (common/arg.cpp), each with what gk-run does with it: takes it, accepts it as a no-op
// where that is truthful on a CPU-only runner, or refuses it by its own name.
//
// gk-run's parser (options.cpp) looks every argument up here before CLI11 sees it, so a
// multi-letter single-dash option (-ngl, -ctk, -fa) is never read as letters combined
// (-f with the value "a"), and an option gk-run lacks is refused with one line that
// names it and says why ("option -ngl (GPU layers) is not supported: gk-run runs on the
// CPU") instead of CLI11's guess.
//
// To take an option: register one of its spellings (llama.cpp's long name) with CLI11 in
// options.cpp and mark its row here `taken`; every spelling of the row then reaches it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gk_run_tool {

enum class llama_option_use {
    taken,    // gk-run takes it with llama.cpp's meaning (options.cpp registers a spelling)
    no_op,    // accepted and ignored when its value is one of `accepted`; refused otherwise
    refused,  // refused by name
};

struct llama_option {
    const char *     names;  // llama.cpp's spellings, comma-separated: "-ngl,--gpu-layers,--n-gpu-layers"
    const char *     what;   // what it does in llama.cpp, in a few words
    llama_option_use use;
    bool             value;     // takes a value
    const char *     accepted;  // no_op: the values that are accepted, comma-separated ("" for a flag)
    const char *     reason;    // no_op, refused: why gk-run does not take it (otherwise)
};

/** Every row, in llama.cpp's help order (common, sampling, program-specific). */
std::span<const llama_option> llama_options();

/** The row with spelling `name` ("-ngl", "--n-gpu-layers"), or nullptr. */
const llama_option * find_llama_option(std::string_view name);

/** The spellings of `row`, in order. */
std::vector<std::string_view> llama_option_names(const llama_option & row);

/** Whether `value` is one of row.accepted (no_op rows). */
bool llama_option_accepts(const llama_option & row, std::string_view value);

/** The one-line message refusing `row` as spelled `spelled` (without "gk-run: error: "):
 *  "option -ngl (GPU layers) is not supported: gk-run runs on the CPU". */
std::string llama_option_refusal(const llama_option & row, std::string_view spelled);

} // namespace gk_run_tool
