// opt.cpp - the parts of ggml-opt.h that do not need training. gk does not train, so no
// optimisation context, result or dataset can be created (their *_init entry points abort,
// missing.cpp); freeing NULL, which llama.cpp does for every context it tears down, is a
// no-op as in ggml, and freeing anything else aborts, since it cannot have come from compat.
#include "convert.h"
#include "ggml-opt.h"

namespace {

void free_nothing(const void * object, const char * fn) {
    if (object) {
        ggml_abort(__FILE__, __LINE__, "%s: not an object of gk's ggml compat layer (it creates none)", fn);
    }
}

} // namespace

extern "C" {

void ggml_opt_free(ggml_opt_context_t opt_ctx) { free_nothing(opt_ctx, "ggml_opt_free"); }
void ggml_opt_result_free(ggml_opt_result_t result) { free_nothing(result, "ggml_opt_result_free"); }
void ggml_opt_dataset_free(ggml_opt_dataset_t dataset) { free_nothing(dataset, "ggml_opt_dataset_free"); }

} // extern "C"
