// fuzz-presk - libFuzzer target for the presk parser and checker (check_program.h).
// Built and run by tests/gguf/fuzz/run-fuzz.sh (ctest: test-presk-fuzz).
#include "check_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    presk_check::check_program(data, size);
    return 0;
}
