// buffer.cpp - the public functions of buffer types and buffers, placing tensors in a
// buffer, and reading and writing tensor data wherever it lives.
//
// Every function checks its arguments before calling through the implementation's
// table (impl.h), so an implementation sees only valid requests: a byte range handed
// to set_tensor lies inside the tensor's storage.
#include "impl.h"

#include "../internal.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

namespace gk {
namespace {

thread_local char g_error[512];

/// The buffer holding t's storage: its own, or its view source's.
gk_backend_buffer_t storage_buffer(const gk_tensor * t) { return t->view_src ? t->view_src->buffer : t->buffer; }

/// Checks that t has data and that [offset, offset + size) lies inside its bytes.
bool check_range(const char * what, const gk_tensor * t, size_t offset, size_t size) {
    if (!t) {
        backend_error("%s: tensor is NULL", what);
        return false;
    }
    if (!t->data) {
        backend_error("%s: tensor '%s' has no data (not allocated)", what, t->name);
        return false;
    }
    const size_t n = gk_nbytes(t);
    if (offset > n || size > n - offset) {
        backend_error("%s: bytes [%zu, %zu + %zu) of tensor '%s' lie outside its %zu bytes", what, offset, offset, size,
                      t->name, n);
        return false;
    }
    return true;
}

} // namespace

void backend_error(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(g_error, sizeof(g_error), fmt, ap);
    va_end(ap);
}

void backend_error_clear() { g_error[0] = '\0'; }

bool graph_call_args_ok(const void * owner, const char * owner_kind, const gk_cgraph * graph, const char * what) {
    if (!owner || !graph) {
        backend_error("%s: %s is NULL", what, owner ? "graph" : owner_kind);
        return false;
    }
    return true;
}

gk_backend_buffer_t buffer_memory(gk_backend_buffer_t buffer) {
    while (buffer && buffer->iface.memory) {
        buffer = buffer->iface.memory(buffer);
    }
    return buffer;
}

gk_backend_t backend_init(const gk_backend_i & iface, gk_backend_dev_t device, void * context) {
    auto * b = new (std::nothrow) gk_backend{iface, device, context};
    if (!b) {
        backend_error("%s: out of memory for the backend struct", gk_backend_dev_name(device));
    }
    return b;
}

namespace host {
void memset_tensor(gk_backend_buffer_t, gk_tensor * t, uint8_t value, size_t offset, size_t size) {
    std::memset(static_cast<char *>(t->data) + offset, value, size);
}
void set_tensor(gk_backend_buffer_t, gk_tensor * t, const void * data, size_t offset, size_t size) {
    std::memcpy(static_cast<char *>(t->data) + offset, data, size);
}
void get_tensor(gk_backend_buffer_t, const gk_tensor * t, void * data, size_t offset, size_t size) {
    std::memcpy(data, static_cast<const char *>(t->data) + offset, size);
}
} // namespace host

gk_backend_buffer_t buffer_init(gk_backend_buffer_type_t buft, const gk_backend_buffer_i & iface, void * context,
                                size_t size) {
    auto * b = new (std::nothrow) gk_backend_buffer{iface, buft, context, size};
    if (!b) {
        backend_error("buffer: out of memory for the buffer struct");
    }
    return b;
}

} // namespace gk

using gk::backend_error;

extern "C" {

const char * gk_backend_last_error(void) { return gk::g_error; }

// ---- buffer types -------------------------------------------------------------------

const char * gk_backend_buft_name(gk_backend_buffer_type_t buft) { return buft ? buft->iface.get_name(buft) : "(null)"; }

gk_backend_buffer_t gk_backend_buft_alloc_buffer(gk_backend_buffer_type_t buft, size_t size) {
    if (!buft) {
        backend_error("buft_alloc_buffer: buffer type is NULL");
        return nullptr;
    }
    if (size > gk_backend_buft_get_max_size(buft)) {
        backend_error("buft_alloc_buffer: %zu bytes exceed the %zu bytes a %s buffer can have", size,
                      gk_backend_buft_get_max_size(buft), gk_backend_buft_name(buft));
        return nullptr;
    }
    return buft->iface.alloc_buffer(buft, size);
}

size_t gk_backend_buft_get_alignment(gk_backend_buffer_type_t buft) { return buft ? buft->iface.get_alignment(buft) : 1; }

size_t gk_backend_buft_get_max_size(gk_backend_buffer_type_t buft) {
    return buft && buft->iface.get_max_size ? buft->iface.get_max_size(buft) : SIZE_MAX;
}

size_t gk_backend_buft_get_alloc_size(gk_backend_buffer_type_t buft, const gk_tensor * tensor) {
    if (!tensor) {
        return 0;
    }
    return buft && buft->iface.get_alloc_size ? buft->iface.get_alloc_size(buft, tensor) : gk_nbytes(tensor);
}

bool gk_backend_buft_is_host(gk_backend_buffer_type_t buft) { return buft && buft->iface.is_host && buft->iface.is_host(buft); }

gk_backend_dev_t gk_backend_buft_get_device(gk_backend_buffer_type_t buft) { return buft ? buft->device : nullptr; }

// ---- buffers --------------------------------------------------------------------------

const char * gk_backend_buffer_name(gk_backend_buffer_t buffer) {
    return buffer ? gk_backend_buft_name(buffer->buft) : "(null)";
}

void gk_backend_buffer_free(gk_backend_buffer_t buffer) {
    if (!buffer) {
        return;
    }
    if (buffer->iface.free_buffer) {
        buffer->iface.free_buffer(buffer);
    }
    delete buffer;
}

void * gk_backend_buffer_get_base(gk_backend_buffer_t buffer) { return buffer ? buffer->iface.get_base(buffer) : nullptr; }

size_t gk_backend_buffer_get_size(gk_backend_buffer_t buffer) { return buffer ? buffer->size : 0; }

size_t gk_backend_buffer_get_alignment(gk_backend_buffer_t buffer) {
    return buffer ? gk_backend_buft_get_alignment(buffer->buft) : 1;
}

size_t gk_backend_buffer_get_max_size(gk_backend_buffer_t buffer) {
    return buffer ? gk_backend_buft_get_max_size(buffer->buft) : 0;
}

size_t gk_backend_buffer_get_alloc_size(gk_backend_buffer_t buffer, const gk_tensor * tensor) {
    return buffer ? gk_backend_buft_get_alloc_size(buffer->buft, tensor) : 0;
}

gk_status gk_backend_buffer_init_tensor(gk_backend_buffer_t buffer, gk_tensor * tensor) {
    if (!buffer || !tensor) {
        backend_error("buffer_init_tensor: %s is NULL", buffer ? "tensor" : "buffer");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    return buffer->iface.init_tensor ? buffer->iface.init_tensor(buffer, tensor) : GK_STATUS_SUCCESS;
}

void gk_backend_buffer_clear(gk_backend_buffer_t buffer, uint8_t value) {
    if (buffer && buffer->size > 0) {
        buffer->iface.clear(buffer, value);
    }
}

bool gk_backend_buffer_is_host(gk_backend_buffer_t buffer) { return buffer && gk_backend_buft_is_host(buffer->buft); }

void gk_backend_buffer_set_usage(gk_backend_buffer_t buffer, gk_backend_buffer_usage usage) {
    if (buffer) {
        buffer->usage = usage;
    }
}

gk_backend_buffer_usage gk_backend_buffer_get_usage(gk_backend_buffer_t buffer) {
    return buffer ? buffer->usage : GK_BACKEND_BUFFER_USAGE_ANY;
}

gk_backend_buffer_type_t gk_backend_buffer_get_type(gk_backend_buffer_t buffer) { return buffer ? buffer->buft : nullptr; }

void gk_backend_buffer_reset(gk_backend_buffer_t buffer) {
    if (buffer && buffer->iface.reset) {
        buffer->iface.reset(buffer);
    }
}

// ---- placing tensors ------------------------------------------------------------------

gk_status gk_backend_tensor_alloc(gk_backend_buffer_t buffer, gk_tensor * tensor, void * addr) {
    if (!buffer || !tensor) {
        backend_error("tensor_alloc: %s is NULL", buffer ? "tensor" : "buffer");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (tensor->view_src) {
        backend_error("tensor_alloc: '%s' is a view (use gk_backend_view_init)", tensor->name);
        return GK_STATUS_INVALID_ARGUMENT;
    }
    const auto   base = reinterpret_cast<uintptr_t>(gk_backend_buffer_get_base(buffer));
    const auto   at   = reinterpret_cast<uintptr_t>(addr);
    const size_t need = gk_backend_buffer_get_alloc_size(buffer, tensor);
    if (!addr || at < base || at - base > buffer->size || need > buffer->size - (at - base)) {
        backend_error("tensor_alloc: '%s' (%zu bytes) at byte %lld does not fit in the %zu bytes of the %s buffer",
                      tensor->name, need, addr ? static_cast<long long>(at - base) : -1LL, buffer->size,
                      gk_backend_buffer_name(buffer));
        return GK_STATUS_INVALID_ARGUMENT;
    }
    // Kernels load elements (and the scale fields of blocks) as typed values: the address
    // must suit them. The largest power of two dividing the element/block size, up to 8,
    // covers every type (f32: 4, f16 and the fp16-scaled blocks: 2, f64/i64: 8).
    const size_t size  = gk_type_size(tensor->type);
    const size_t align = std::min<size_t>(size & (~size + 1), 8);
    if (at % align != 0) {
        backend_error("tensor_alloc: '%s' at byte %lld of the %s buffer is not aligned to the %zu bytes %s needs",
                      tensor->name, static_cast<long long>(at - base), gk_backend_buffer_name(buffer), align,
                      gk_type_name(tensor->type));
        return GK_STATUS_INVALID_ARGUMENT;
    }
    tensor->buffer = buffer;
    tensor->data   = addr;
    return gk_backend_buffer_init_tensor(buffer, tensor);
}

gk_status gk_backend_view_init(gk_tensor * tensor) {
    if (!tensor || !tensor->view_src) {
        backend_error("view_init: %s", tensor ? "tensor is not a view" : "tensor is NULL");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    const gk_tensor * src = tensor->view_src;
    if (!src->data) {
        backend_error("view_init: the source '%s' of view '%s' has no data", src->name, tensor->name);
        return GK_STATUS_INVALID_ARGUMENT;
    }
    tensor->buffer = src->buffer;
    tensor->data   = static_cast<char *>(src->data) + tensor->view_offs;
    return src->buffer ? gk_backend_buffer_init_tensor(src->buffer, tensor) : GK_STATUS_SUCCESS;
}

// ---- tensor data ----------------------------------------------------------------------

gk_status gk_backend_tensor_set(gk_tensor * tensor, const void * data, size_t offset, size_t size) {
    if (!gk::check_range("tensor_set", tensor, offset, size)) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (size == 0) {
        return GK_STATUS_SUCCESS;
    }
    if (!data) {
        backend_error("tensor_set: data is NULL");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    gk_backend_buffer_t buf = gk::storage_buffer(tensor);
    if (buf) {
        buf->iface.set_tensor(buf, tensor, data, offset, size);
    } else {
        std::memcpy(static_cast<char *>(tensor->data) + offset, data, size);  // context memory
    }
    return GK_STATUS_SUCCESS;
}

gk_status gk_backend_tensor_get(const gk_tensor * tensor, void * data, size_t offset, size_t size) {
    if (!gk::check_range("tensor_get", tensor, offset, size)) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (size == 0) {
        return GK_STATUS_SUCCESS;
    }
    if (!data) {
        backend_error("tensor_get: data is NULL");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    gk_backend_buffer_t buf = gk::storage_buffer(tensor);
    if (buf) {
        buf->iface.get_tensor(buf, tensor, data, offset, size);
    } else {
        std::memcpy(data, static_cast<const char *>(tensor->data) + offset, size);
    }
    return GK_STATUS_SUCCESS;
}

gk_status gk_backend_tensor_memset(gk_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    if (!gk::check_range("tensor_memset", tensor, offset, size)) {
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (size == 0) {
        return GK_STATUS_SUCCESS;
    }
    gk_backend_buffer_t buf = gk::storage_buffer(tensor);
    if (buf) {
        buf->iface.memset_tensor(buf, tensor, value, offset, size);
    } else {
        std::memset(static_cast<char *>(tensor->data) + offset, value, size);
    }
    return GK_STATUS_SUCCESS;
}

gk_status gk_backend_tensor_copy(const gk_tensor * src, gk_tensor * dst) {
    if (!src || !dst) {
        backend_error("tensor_copy: %s is NULL", src ? "dst" : "src");
        return GK_STATUS_INVALID_ARGUMENT;
    }
    const size_t n = gk_nbytes(src);
    if (n != gk_nbytes(dst) || !gk_is_contiguous(src) || !gk_is_contiguous(dst)) {
        backend_error("tensor_copy: '%s' %s and '%s' %s must be contiguous with equal byte counts", src->name,
                      gk::describe(src).c_str(), dst->name, gk::describe(dst).c_str());
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (!src->data || !dst->data) {
        backend_error("tensor_copy: '%s' has no data", src->data ? dst->name : src->name);
        return GK_STATUS_INVALID_ARGUMENT;
    }
    if (src == dst || n == 0) {
        return GK_STATUS_SUCCESS;
    }
    gk_backend_buffer_t sb = gk::storage_buffer(src);
    gk_backend_buffer_t db = gk::storage_buffer(dst);
    if (!sb || gk_backend_buffer_is_host(sb)) {  // the source is readable in place
        return gk_backend_tensor_set(dst, src->data, 0, n);
    }
    if (!db || gk_backend_buffer_is_host(db)) {  // the destination is writable in place
        return gk_backend_tensor_get(src, dst->data, 0, n);
    }
    std::vector<unsigned char> staging;
    try {
        staging.resize(n);
    } catch (const std::bad_alloc &) {
        backend_error("tensor_copy: out of memory for %zu bytes of staging", n);
        return GK_STATUS_ALLOC_FAILED;
    }
    const gk_status got = gk_backend_tensor_get(src, staging.data(), 0, n);
    return got != GK_STATUS_SUCCESS ? got : gk_backend_tensor_set(dst, staging.data(), 0, n);
}

} // extern "C"
