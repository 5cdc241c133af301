// context_check.h - the checks of a context size before its KV cache is allocated: a
// warning past the model's training context (as llama.cpp gives), and an error when the
// cache cannot fit in the memory the machine has (rather than being killed part-way).
// Shared by gk-run and gk-server; nothing here prints.
#pragma once

#include "model.h"

#include <cstdint>
#include <string>

namespace gk::run {

/** Bytes of the KV cache of `n_ctx` positions of every layer of `hp`, with K and V
 *  rows of type_k / type_v (gk_row_size of n_embd_k_gqa / n_embd_v_gqa per position);
 *  a double, as n_ctx is not range-checked yet. */
double kv_cache_bytes(const hparams & hp, int64_t n_ctx, enum gk_type type_k, enum gk_type type_v);

/** Memory the process can still get, in bytes: MemAvailable + SwapFree of /proc/meminfo,
 *  else the physical memory; 0 when neither can be read. */
uint64_t available_memory_bytes();

/** The context size of a session asked for with -c n_ctx (as llama.cpp reads it): 0 means
 *  the model's training context; a size given on the command line is kept as given (see
 *  context_warning); the default size is capped at the training context. */
int64_t resolve_n_ctx(const hparams & hp, int64_t n_ctx, bool given);

/** The warning for a context past the model's training context ("" when n_ctx is within
 *  it), without a program-name prefix. */
std::string context_warning(const hparams & hp, int64_t n_ctx);

/** "" when the KV cache of `n_ctx` positions fits in `available` bytes (0: unknown, not
 *  checked), else the error message (it ends by advising a lower -c). */
std::string check_context(const hparams & hp, int64_t n_ctx, enum gk_type type_k, enum gk_type type_v,
                          uint64_t available);

} // namespace gk::run
