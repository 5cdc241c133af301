// abort.cpp - ggml's abort path and log callback, and the compat helpers that fail through it.
#include "convert.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace {

ggml_abort_callback_t g_abort_callback = nullptr;
ggml_log_callback     g_log_callback   = nullptr;
void *                g_log_user_data  = nullptr;

} // namespace

extern "C" {

ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback) {
    ggml_abort_callback_t previous = g_abort_callback;
    g_abort_callback = callback;
    return previous;
}

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    char message[2048];
    int  n = std::snprintf(message, sizeof message, "%s:%d: ", file ? file : "?", line);
    if (n < 0 || n >= static_cast<int>(sizeof message)) {
        n = 0;
    }
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(message + n, sizeof message - static_cast<size_t>(n), fmt, args);
    va_end(args);
    if (g_abort_callback) {
        g_abort_callback(message);
    } else {
        std::fprintf(stderr, "%s\n", message);
    }
    std::abort();
}

const char * ggml_status_to_string(enum ggml_status status) {
    switch (status) {
    case GGML_STATUS_ALLOC_FAILED: return "GGML status: error (failed to allocate memory)";
    case GGML_STATUS_FAILED: return "GGML status: error (operation failed)";
    case GGML_STATUS_SUCCESS: return "GGML status: success";
    case GGML_STATUS_ABORTED: return "GGML status: warning (operation aborted)";
    }
    return "GGML status: unknown";
}

void ggml_log_get(ggml_log_callback * log_callback, void ** user_data) {
    if (log_callback) {
        *log_callback = g_log_callback;
    }
    if (user_data) {
        *user_data = g_log_user_data;
    }
}

void ggml_log_set(ggml_log_callback log_callback, void * user_data) {
    g_log_callback  = log_callback;
    g_log_user_data = user_data;
}

} // extern "C"

namespace compat {

void unsupported(const char * name) {
    ggml_abort(__FILE__, __LINE__, "%s: not provided by gk's ggml compat layer (see docs/compat.md)", name);
}

ggml_tensor * built(ggml_context * ctx, gk_tensor * result, const char * name) {
    if (!result) {
        const char * why = ctx ? gk_last_error(to_gk(ctx)) : "no context";
        ggml_abort(__FILE__, __LINE__, "%s: %s", name, why && *why ? why : "refused by gk");
    }
    return to_ggml(result);
}

void check(gk_status status, const char * name) {
    if (status != GK_STATUS_SUCCESS) {
        ggml_abort(__FILE__, __LINE__, "%s: %s", name, gk_status_name(status));
    }
}

void check_backend(bool ok, const char * name) {
    if (!ok) {
        const char * why = gk_backend_last_error();
        ggml_abort(__FILE__, __LINE__, "%s: %s", name, why && *why ? why : "failed");
    }
}

namespace {

void log_line(ggml_log_level level, const char * fmt, va_list ap) {
    char line[256];
    std::vsnprintf(line, sizeof(line), fmt, ap);
    if (g_log_callback) {
        g_log_callback(level, line, g_log_user_data);
    } else {
        std::fputs(line, stderr);
    }
}

} // namespace

void log_info(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_line(GGML_LOG_LEVEL_INFO, fmt, ap);
    va_end(ap);
}

void log_error(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_line(GGML_LOG_LEVEL_ERROR, fmt, ap);
    va_end(ap);
}

} // namespace compat
