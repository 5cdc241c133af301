// async.cpp - ggml's asynchronous backend calls on gk's CPU backend, which has no queue:
// every transfer and compute is finished when the call returns, which is what ggml does
// for a backend without asynchronous hooks (the CPU's). The CPU device has no events
// either: ggml_backend_event_new returns NULL, as ggml's does for such a device, freeing
// NULL does nothing, and recording, waiting for or synchronising an event aborts naming
// the call (ggml asserts there).
#include "convert.h"

namespace {

void require_backend(ggml_backend_t backend, const char * fn) {
    if (!backend) {
        ggml_abort(__FILE__, __LINE__, "%s: no backend", fn);
    }
}

[[noreturn]] void no_events(const char * fn) {
    ggml_abort(__FILE__, __LINE__, "%s: gk's CPU backend has no events (ggml_backend_event_new returned NULL)", fn);
}

} // namespace

extern "C" {

void ggml_backend_tensor_set_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data, size_t offset,
                                   size_t size) {
    require_backend(backend, "ggml_backend_tensor_set_async");
    ggml_backend_tensor_set(tensor, data, offset, size);
}

void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data, size_t offset,
                                   size_t size) {
    require_backend(backend, "ggml_backend_tensor_get_async");
    ggml_backend_tensor_get(tensor, data, offset, size);
}

// A copy queued after both backends' work: both are synchronous, so it is the blocking copy.
void ggml_backend_tensor_copy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst,
                                    const struct ggml_tensor * src, struct ggml_tensor * dst) {
    require_backend(backend_dst, "ggml_backend_tensor_copy_async");
    if (src != dst) {
        ggml_backend_tensor_copy(src, dst);
    }
}

enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    require_backend(backend, "ggml_backend_graph_compute_async");
    return ggml_backend_graph_compute(backend, cgraph);
}

ggml_backend_event_t ggml_backend_event_new(ggml_backend_dev_t device) { return nullptr; }
void                 ggml_backend_event_free(ggml_backend_event_t event) {
    if (event) {
        no_events("ggml_backend_event_free");
    }
}
void ggml_backend_event_record(ggml_backend_event_t event, ggml_backend_t backend) { no_events("ggml_backend_event_record"); }
void ggml_backend_event_synchronize(ggml_backend_event_t event) { no_events("ggml_backend_event_synchronize"); }
void ggml_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event) { no_events("ggml_backend_event_wait"); }

} // extern "C"
