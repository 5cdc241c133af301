// impl.h - what a buffer type, buffer, backend and device are made of: a table of
// functions and a context pointer each. A backend implementation (the CPU one in
// cpu.cpp, the test doubles of tests/backend and tests/sched) fills these tables; the
// public functions of gk-backend.h check their arguments and call through them.
//
// Entries marked optional may be nullptr; the public function then does the default
// named beside it. Every other entry must be set.
#pragma once

#include "gk/gk-backend.h"

#include <cstdarg>

struct gk_backend_buffer_type_i {
    const char *        (*get_name)(gk_backend_buffer_type_t buft);
    /// A buffer of `size` bytes, or nullptr with a message recorded (gk::backend_error).
    gk_backend_buffer_t (*alloc_buffer)(gk_backend_buffer_type_t buft, size_t size);
    size_t              (*get_alignment)(gk_backend_buffer_type_t buft);
    size_t              (*get_max_size)(gk_backend_buffer_type_t buft);                             // optional: SIZE_MAX
    size_t              (*get_alloc_size)(gk_backend_buffer_type_t buft, const gk_tensor * tensor);  // optional: gk_nbytes
    bool                (*is_host)(gk_backend_buffer_type_t buft);                                  // optional: false
};

struct gk_backend_buffer_type {
    gk_backend_buffer_type_i iface;
    gk_backend_dev_t         device;   // may be nullptr (a buffer type of no listed device)
    void *                   context;
};

struct gk_backend_buffer_i {
    /// Release the buffer's memory and context (the struct itself is deleted by
    /// gk_backend_buffer_free). Optional: nothing to release.
    void           (*free_buffer)(gk_backend_buffer_t buffer);
    void *         (*get_base)(gk_backend_buffer_t buffer);
    gk_status      (*init_tensor)(gk_backend_buffer_t buffer, gk_tensor * tensor);   // optional: nothing to do
    /// Byte ranges are checked by the caller: they lie inside the tensor's storage.
    void           (*memset_tensor)(gk_backend_buffer_t buffer, gk_tensor * tensor, uint8_t value, size_t offset,
                                    size_t size);
    void           (*set_tensor)(gk_backend_buffer_t buffer, gk_tensor * tensor, const void * data, size_t offset,
                                 size_t size);
    void           (*get_tensor)(gk_backend_buffer_t buffer, const gk_tensor * tensor, void * data, size_t offset,
                                 size_t size);
    void           (*clear)(gk_backend_buffer_t buffer, uint8_t value);
    void           (*reset)(gk_backend_buffer_t buffer);                               // optional: nothing to do
    /// The buffer whose memory this one presents (the graph allocator's proxy: its
    /// current memory); optional: the buffer itself. A device backend binds what
    /// gk::buffer_memory gives.
    gk_backend_buffer_t (*memory)(gk_backend_buffer_t buffer);
};

struct gk_backend_buffer {
    gk_backend_buffer_i          iface;
    gk_backend_buffer_type_t     buft;
    void *                       context;
    size_t                       size;
    gk_backend_buffer_usage      usage = GK_BACKEND_BUFFER_USAGE_ANY;
};

struct gk_backend_i {
    const char * (*get_name)(gk_backend_t backend);
    /// Release the backend's context (the struct is deleted by gk_backend_free).
    void         (*free)(gk_backend_t backend);
    gk_status    (*graph_compute)(gk_backend_t backend, gk_cgraph * graph);
    void         (*synchronize)(gk_backend_t backend);  // optional: computation is synchronous
};

struct gk_backend {
    gk_backend_i     iface;
    gk_backend_dev_t device;
    void *           context;
};

struct gk_backend_device_i {
    const char *             (*get_name)(gk_backend_dev_t dev);
    const char *             (*get_description)(gk_backend_dev_t dev);
    void                     (*get_memory)(gk_backend_dev_t dev, size_t * free, size_t * total);
    enum gk_backend_dev_type (*get_type)(gk_backend_dev_t dev);
    gk_backend_t             (*init_backend)(gk_backend_dev_t dev, const char * params);
    gk_backend_buffer_type_t (*get_buffer_type)(gk_backend_dev_t dev);
    bool                     (*supports_op)(gk_backend_dev_t dev, const gk_tensor * op);
    bool                     (*supports_buft)(gk_backend_dev_t dev, gk_backend_buffer_type_t buft);
    const gk_backend_feature * (*get_features)(gk_backend_dev_t dev);  // optional: none
    /// True when the device's kernel for node may write its result over node->src[0]
    /// (same type, shape and strides). Optional: never.
    bool                     (*can_run_in_place)(gk_backend_dev_t dev, const gk_tensor * node);
};

struct gk_backend_device {
    gk_backend_device_i iface;
    void *              context;
};

namespace gk {

/// Record a printf-style message as this thread's gk_backend_last_error().
void backend_error(const char * fmt, ...) __attribute__((format(printf, 1, 2)));
/// Clear this thread's message.
void backend_error_clear();

/// True when both `owner` (the scheduler, allocator, ... a call belongs to; `owner_kind`
/// names it) and `graph` are given; else false with the message "<what>: <owner_kind or
/// graph> is NULL".
bool graph_call_args_ok(const void * owner, const char * owner_kind, const gk_cgraph * graph, const char * what);

/// A new buffer struct (operator new) with the given table, type, context and size;
/// nullptr with a message when out of memory.
gk_backend_buffer_t buffer_init(gk_backend_buffer_type_t buft, const gk_backend_buffer_i & iface, void * context,
                                size_t size);

/// A new backend struct (operator new) with the given table, device and context; nullptr
/// with a message when out of memory (the caller then releases its context).
gk_backend_t backend_init(const gk_backend_i & iface, gk_backend_dev_t device, void * context);

/// The buffer entries of memory the host addresses (the CPU's, a device's mapped memory):
/// plain memset / memcpy at the tensor's data pointer.
namespace host {
void memset_tensor(gk_backend_buffer_t buffer, gk_tensor * tensor, uint8_t value, size_t offset, size_t size);
void set_tensor(gk_backend_buffer_t buffer, gk_tensor * tensor, const void * data, size_t offset, size_t size);
void get_tensor(gk_backend_buffer_t buffer, const gk_tensor * tensor, void * data, size_t offset, size_t size);
} // namespace host

/// The buffer that holds `buffer`'s memory: buffer itself, or what its `memory` entry
/// gives, followed to the end (nullptr for nullptr).
gk_backend_buffer_t buffer_memory(gk_backend_buffer_t buffer);

/// The CPU device (always present; also what the registry lists first).
gk_backend_dev_t cpu_device();

} // namespace gk
