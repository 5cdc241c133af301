// context_check.cpp - see context_check.h.
#include "context_check.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace gk::run {

double kv_cache_bytes(const hparams & hp, int64_t n_ctx, enum gk_type type_k, enum gk_type type_v) {
    const double per_position = static_cast<double>(gk_row_size(type_k, hp.n_embd_k_gqa()) +
                                                    gk_row_size(type_v, hp.n_embd_v_gqa()));
    return per_position * static_cast<double>(n_ctx) * static_cast<double>(hp.n_layer);
}

uint64_t available_memory_bytes() {
    std::ifstream f("/proc/meminfo");
    uint64_t      avail = 0, swap = 0;
    bool          found = false;
    for (std::string line; std::getline(f, line);) {
        std::istringstream ss(line);
        std::string        key;
        uint64_t           kib = 0;
        ss >> key >> kib;
        if (key == "MemAvailable:") {
            avail = kib * 1024;
            found = true;
        } else if (key == "SwapFree:") {
            swap = kib * 1024;
        }
    }
    if (found) return avail + swap;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

int64_t resolve_n_ctx(const hparams & hp, int64_t n_ctx, bool given) {
    return n_ctx == 0 ? hp.n_ctx_train : given ? n_ctx : std::min(n_ctx, hp.n_ctx_train);
}

std::string context_warning(const hparams & hp, int64_t n_ctx) {
    if (hp.n_ctx_train <= 0 || n_ctx <= hp.n_ctx_train) return "";
    return "the context of " + std::to_string(n_ctx) + " tokens is larger than the model's training context (" +
           std::to_string(hp.n_ctx_train) + "); text past it may degrade";
}

std::string check_context(const hparams & hp, int64_t n_ctx, enum gk_type type_k, enum gk_type type_v,
                          uint64_t available) {
    const double need = kv_cache_bytes(hp, n_ctx, type_k, type_v);
    if (available == 0 || need <= static_cast<double>(available)) return "";
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "the KV cache of a %lld-token context needs %.1f GiB (%s/%s) but only %.1f GiB of memory is "
                  "available; lower -c",
                  static_cast<long long>(n_ctx), need / 1073741824.0, gk_type_name(type_k), gk_type_name(type_v),
                  available / 1073741824.0);
    return msg;
}

} // namespace gk::run
