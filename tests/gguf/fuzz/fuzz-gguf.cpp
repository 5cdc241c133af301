// fuzz-gguf - libFuzzer target for the GGUF reader and writer: any input is refused
// cleanly or read, written, read again and written identically (check_input.h).
// Built and run by run-fuzz.sh (ctest: test-gguf-fuzz).
#include "check_input.h"

#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const std::string why = gguf_check::check_input(data, size);
    if (!why.empty()) {
        std::fprintf(stderr, "fuzz-gguf: %s\n", why.c_str());
        __builtin_trap();
    }
    return 0;
}
