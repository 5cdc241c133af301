// transfer_2d.cpp - ggml_backend_tensor_set_2d / _get_2d and their _async forms: n_copies
// runs of size bytes. Run i is at byte offset + i * stride_tensor in the tensor and at
// i * stride_data in the caller's memory. Each run is one ggml_backend_tensor_set / _get,
// so gk's bounds check applies to every run: a run outside the tensor aborts with gk's
// message, where ggml asserts. gk's backends finish every transfer before returning, so
// the _async forms are the same copies (async.cpp says why).
#include "convert.h"

extern "C" {

void ggml_backend_tensor_set_2d(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data) {
    for (size_t i = 0; i < n_copies; ++i) {
        ggml_backend_tensor_set(tensor, static_cast<const char *>(data) + i * stride_data, offset + i * stride_tensor,
                                size);
    }
}

void ggml_backend_tensor_get_2d(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data) {
    for (size_t i = 0; i < n_copies; ++i) {
        ggml_backend_tensor_get(tensor, static_cast<char *>(data) + i * stride_data, offset + i * stride_tensor, size);
    }
}

void ggml_backend_tensor_set_2d_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data) {
    for (size_t i = 0; i < n_copies; ++i) {
        ggml_backend_tensor_set_async(backend, tensor, static_cast<const char *>(data) + i * stride_data,
                                      offset + i * stride_tensor, size);
    }
}

void ggml_backend_tensor_get_2d_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data) {
    for (size_t i = 0; i < n_copies; ++i) {
        ggml_backend_tensor_get_async(backend, tensor, static_cast<char *>(data) + i * stride_data,
                                      offset + i * stride_tensor, size);
    }
}

} // extern "C"
