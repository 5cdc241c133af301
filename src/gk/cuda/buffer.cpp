// buffer.cpp - buffers in a CUDA device's memory (cudaMalloc); the device pointer is the
// base every tensor's data pointer is taken from, and set/get/memset go through the
// runtime's copies.
#include "cuda.h"

#include "../debug.h"

#include <cuda_runtime.h>

#include <vector>

namespace gk::cuda {
namespace {

constexpr size_t k_alignment = 256;

struct buffer_context {
    device_context * d;
    void *           ptr;
};

buffer_context * ctx_of(gk_backend_buffer_t b) { return static_cast<buffer_context *>(b->context); }

/// Make the buffer's device current; false (with a message) when that fails.
bool use(const buffer_context * c, const char * what) {
    if (cudaSetDevice(c->d->index) == cudaSuccess) return true;
    backend_error("%s: %s: cudaSetDevice: %s", c->d->name.c_str(), what, cudaGetErrorString(cudaGetLastError()));
    return false;
}

void free_buffer(gk_backend_buffer_t b) {
    buffer_context * c = ctx_of(b);
    if (use(c, "free")) cudaFree(c->ptr);
    delete c;
}

void * base(gk_backend_buffer_t b) { return ctx_of(b)->ptr; }

void check(const buffer_context * c, cudaError_t e, const char * what) {
    if (e != cudaSuccess) backend_error("%s: %s: %s", c->d->name.c_str(), what, cudaGetErrorString(e));
}

void memset_tensor(gk_backend_buffer_t b, gk_tensor * t, uint8_t value, size_t offset, size_t size) {
    if (use(ctx_of(b), "memset")) {
        check(ctx_of(b), cudaMemset(static_cast<char *>(t->data) + offset, value, size), "memset");
    }
}

void set_tensor(gk_backend_buffer_t b, gk_tensor * t, const void * data, size_t offset, size_t size) {
    if (use(ctx_of(b), "set_tensor")) {
        check(ctx_of(b), cudaMemcpy(static_cast<char *>(t->data) + offset, data, size, cudaMemcpyHostToDevice),
              "set_tensor");
    }
}

void get_tensor(gk_backend_buffer_t b, const gk_tensor * t, void * data, size_t offset, size_t size) {
    if (use(ctx_of(b), "get_tensor")) {
        check(ctx_of(b), cudaMemcpy(data, static_cast<const char *>(t->data) + offset, size, cudaMemcpyDeviceToHost),
              "get_tensor");
    }
}

void clear(gk_backend_buffer_t b, uint8_t value) {
    if (use(ctx_of(b), "clear")) check(ctx_of(b), cudaMemset(ctx_of(b)->ptr, value, b->size), "clear");
}

const char * buft_name(gk_backend_buffer_type_t buft) {
    return static_cast<device_context *>(buft->context)->name.c_str();
}

gk_backend_buffer_t alloc_buffer(gk_backend_buffer_type_t buft, size_t size) {
    auto * d = static_cast<device_context *>(buft->context);
    auto * c = new buffer_context{d, nullptr};
    if (!use(c, "alloc")) {
        delete c;
        return nullptr;
    }
    if (const cudaError_t e = cudaMalloc(&c->ptr, size == 0 ? k_alignment : size); e != cudaSuccess) {
        cudaGetLastError();
        backend_error("%s buffer: cannot allocate %zu bytes (%s)", d->name.c_str(), size, cudaGetErrorString(e));
        delete c;
        return nullptr;
    }
    const gk_backend_buffer_i i{free_buffer, base,  nullptr, memset_tensor, set_tensor,
                                get_tensor,  clear, nullptr, nullptr};
    gk_backend_buffer_t       b = buffer_init(buft, i, c, size);
    if (!b) {
        cudaFree(c->ptr);
        delete c;
    }
    return b;
}

size_t alignment(gk_backend_buffer_type_t) { return k_alignment; }

} // namespace

void init_buffer_type(device_context & d) {
    d.buffer_type = {{buft_name, alloc_buffer, alignment, nullptr, nullptr, nullptr}, &d.device, &d};
}

} // namespace gk::cuda
