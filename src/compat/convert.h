// convert.h - the casts between ggml's handles and gk's, used by every compat forwarder.
// Tensors, init params and enums are layout- and value-identical (layout.cpp asserts it);
// contexts, graphs, backends, buffers, buffer types, devices and gallocrs are opaque in
// ggml's public headers, and a ggml handle is the gk object itself.
#pragma once

#include <string>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

#include "gk/gk-alloc.h"
#include "gk/gk-backend.h"
#include "gk/gk.h"

/// A registry entry of compat: one per kind of gk device ("CPU", "Vulkan", "CUDA", "MPI":
/// a device's name without its number); registry.cpp lists them.
struct ggml_backend_reg {
    const char * name;
};

namespace compat {

/// A backend's or device's kind: its name without the trailing device number ("Vulkan1" ->
/// "Vulkan"). The registry has one entry per kind, and each kind has one guid.
inline std::string kind_of(const char * name) {
    std::string kind = name ? name : "";
    while (!kind.empty() && kind.back() >= '0' && kind.back() <= '9') {
        kind.pop_back();
    }
    return kind;
}

// ggml -> gk. A scalar passes unchanged (the template); a pointer or enum with no
// overload here is a compile error, never a silent reinterpretation.
template <typename T> T to_gk(T v) { return v; }
inline gk_context *               to_gk(ggml_context * p) { return reinterpret_cast<gk_context *>(p); }
inline const gk_context *         to_gk(const ggml_context * p) { return reinterpret_cast<const gk_context *>(p); }
inline gk_tensor *                to_gk(ggml_tensor * p) { return reinterpret_cast<gk_tensor *>(p); }
inline const gk_tensor *          to_gk(const ggml_tensor * p) { return reinterpret_cast<const gk_tensor *>(p); }
inline gk_tensor **               to_gk(ggml_tensor ** p) { return reinterpret_cast<gk_tensor **>(p); }
inline gk_cgraph *                to_gk(ggml_cgraph * p) { return reinterpret_cast<gk_cgraph *>(p); }
inline const gk_cgraph *          to_gk(const ggml_cgraph * p) { return reinterpret_cast<const gk_cgraph *>(p); }
inline gk_init_params             to_gk(ggml_init_params p) { return {p.mem_size, p.mem_buffer, p.no_alloc}; }
inline gk_type                    to_gk(ggml_type v) { return static_cast<gk_type>(v); }
inline gk_op                      to_gk(ggml_op v) { return static_cast<gk_op>(v); }
inline gk_unary_op                to_gk(ggml_unary_op v) { return static_cast<gk_unary_op>(v); }
inline gk_glu_op                  to_gk(ggml_glu_op v) { return static_cast<gk_glu_op>(v); }
inline gk_sort_order              to_gk(ggml_sort_order v) { return static_cast<gk_sort_order>(v); }
inline gk_tri_type                to_gk(ggml_tri_type v) { return static_cast<gk_tri_type>(v); }
inline gk_op_pool                 to_gk(ggml_op_pool v) { return static_cast<gk_op_pool>(v); }
inline gk_scale_mode              to_gk(ggml_scale_mode v) { return static_cast<gk_scale_mode>(v); }
inline gk_backend_t               to_gk(ggml_backend_t p) { return reinterpret_cast<gk_backend_t>(p); }
inline gk_backend_buffer_t        to_gk(ggml_backend_buffer_t p) { return reinterpret_cast<gk_backend_buffer_t>(p); }
inline gk_backend_buffer_type_t   to_gk(ggml_backend_buffer_type_t p) { return reinterpret_cast<gk_backend_buffer_type_t>(p); }
inline gk_backend_buffer_type_t * to_gk(ggml_backend_buffer_type_t * p) { return reinterpret_cast<gk_backend_buffer_type_t *>(p); }
inline gk_backend_dev_t           to_gk(ggml_backend_dev_t p) { return reinterpret_cast<gk_backend_dev_t>(p); }
inline gk_gallocr_t               to_gk(ggml_gallocr_t p) { return reinterpret_cast<gk_gallocr_t>(p); }
inline gk_backend_buffer_usage    to_gk(ggml_backend_buffer_usage v) { return static_cast<gk_backend_buffer_usage>(v); }
inline enum gk_backend_dev_type   to_gk(enum ggml_backend_dev_type v) { return static_cast<enum gk_backend_dev_type>(v); }
inline gk_tallocr *               to_gk(ggml_tallocr * p) { return reinterpret_cast<gk_tallocr *>(p); }
inline const gk_object *          to_gk(const ggml_object * p) { return reinterpret_cast<const gk_object *>(p); }

// gk -> ggml.
template <typename T> T to_ggml(T v) { return v; }
inline ggml_context *               to_ggml(gk_context * p) { return reinterpret_cast<ggml_context *>(p); }
inline ggml_tensor *                to_ggml(gk_tensor * p) { return reinterpret_cast<ggml_tensor *>(p); }
inline ggml_tensor **               to_ggml(gk_tensor ** p) { return reinterpret_cast<ggml_tensor **>(p); }
inline ggml_cgraph *                to_ggml(gk_cgraph * p) { return reinterpret_cast<ggml_cgraph *>(p); }
inline ggml_type                    to_ggml(gk_type v) { return static_cast<ggml_type>(v); }
inline ggml_op                      to_ggml(gk_op v) { return static_cast<ggml_op>(v); }
inline ggml_unary_op                to_ggml(gk_unary_op v) { return static_cast<ggml_unary_op>(v); }
inline ggml_glu_op                  to_ggml(gk_glu_op v) { return static_cast<ggml_glu_op>(v); }
inline ggml_status                  to_ggml(gk_status v) { return v > 0 ? GGML_STATUS_ABORTED : v == 0 ? GGML_STATUS_SUCCESS : v == GK_STATUS_ALLOC_FAILED ? GGML_STATUS_ALLOC_FAILED : GGML_STATUS_FAILED; }
inline ggml_backend_t               to_ggml(gk_backend_t p) { return reinterpret_cast<ggml_backend_t>(p); }
inline ggml_backend_buffer_t        to_ggml(gk_backend_buffer_t p) { return reinterpret_cast<ggml_backend_buffer_t>(p); }
inline ggml_backend_buffer_type_t   to_ggml(gk_backend_buffer_type_t p) { return reinterpret_cast<ggml_backend_buffer_type_t>(p); }
inline ggml_backend_dev_t           to_ggml(gk_backend_dev_t p) { return reinterpret_cast<ggml_backend_dev_t>(p); }
inline ggml_gallocr_t               to_ggml(gk_gallocr_t p) { return reinterpret_cast<ggml_gallocr_t>(p); }
inline ggml_backend_buffer_usage    to_ggml(gk_backend_buffer_usage v) { return static_cast<ggml_backend_buffer_usage>(v); }
inline enum ggml_backend_dev_type   to_ggml(enum gk_backend_dev_type v) { return static_cast<enum ggml_backend_dev_type>(v); }
inline const ggml_object *          to_ggml(const gk_object * p) { return reinterpret_cast<const ggml_object *>(p); }
inline ggml_tallocr                 to_ggml(gk_tallocr t) { return {to_ggml(t.buffer), t.base, t.alignment, t.offset}; }

/// One printf-style line through ggml's log callback (ggml_log_set) at INFO level, or to
/// stderr without one (ggml's GGML_LOG_INFO); longer lines are cut at 255 characters.
void log_info(const char * fmt, ...) __attribute__((format(printf, 1, 2)));
/// log_info at ERROR level (ggml's GGML_LOG_ERROR).
void log_error(const char * fmt, ...) __attribute__((format(printf, 1, 2)));

/// Abort through ggml's abort path: `name` is not computed (or not provided) by gk.
[[noreturn]] void unsupported(const char * name);

/// The result of a gk op builder: the tensor, or an abort naming `name` with the message
/// gk recorded in ctx (ggml asserts on the same bad input).
ggml_tensor * built(ggml_context * ctx, gk_tensor * result, const char * name);

/// Abort naming `name` unless status is success (for ggml entry points that return void
/// and assert on failure).
void check(gk_status status, const char * name);

/// Abort naming `name` with gk_backend_last_error() unless ok.
void check_backend(bool ok, const char * name);

} // namespace compat
