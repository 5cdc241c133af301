// fuzz-model - libFuzzer target for gk-run's model loading beyond the GGUF parser
// (check_model.h): the tokenizer, the hyperparameters, the weights' shapes and types, a
// session and one evaluation. A failed check, a crash, a sanitizer report or a leak is a
// failure. Built and run by tests/gguf/fuzz/run-fuzz.sh (ctest: test-gk-run-fuzz).
#include "check_model.h"

#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const std::string why = model_check::check_model(data, size);
    if (!why.empty()) {
        std::fprintf(stderr, "fuzz-model: %s\n", why.c_str());
        __builtin_trap();
    }
    return 0;
}
