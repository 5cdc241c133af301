// debug.cpp - the environment switches of debug.h.
#include "debug.h"

#include <cstdlib>
#include <cstring>

namespace gk {

bool env_flag(const char * name) {
    const char * v = std::getenv(name);
    return v && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

const debug_flags & debug() {
    static const debug_flags flags{env_flag("GK_NAN_FILL"), env_flag("GK_NODE_HASH"), env_flag("GK_ALLOC_NO_REUSE"),
                                   env_flag("GK_NO_SOLO")};
    return flags;
}

void debug_fill_fresh(void * p, size_t n) {
    if (p && debug().nan_fill) {
        std::memset(p, 0xFF, n);  // all-ones is a NaN in f32, f16, bf16 and f64
    }
}

} // namespace gk
