// backend_double.h - a backend double for the scheduler tests. It computes with a CPU
// backend of its own, but
//   - refuses one nominated op (supports_op says no, and a graph holding it fails), and
//   - optionally keeps its tensors in memory of its own that reports itself as device
//     memory (not host, and the CPU does not address it) while being ordinary host
//     memory, so the scheduler's whole staging path runs on a machine with no GPU.
// With its own memory it also checks, before computing, that every node and source of
// the graph it is given lives in that memory: a value the scheduler forgot to stage
// fails the compute instead of being read from host memory by accident.
#pragma once

#include "gk/backend/impl.h"
#include "gk/internal.h"
#include "gk/gk-backend.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace gktest {

class backend_double {
public:
    /// A double named `name` refusing op `refuse` (GK_OP_COUNT: none), with device
    /// memory of its own when device_memory, else computing on host memory like the CPU.
    backend_double(const char * name, gk_op refuse, bool device_memory)
        : name_(name), refuse_(refuse), device_memory_(device_memory), inner_(gk_backend_cpu_init()) {
        dev_.iface    = {dev_name,        dev_name,        dev_memory,        dev_type, dev_init,
                         dev_buffer_type, dev_supports_op, dev_supports_buft, nullptr,  dev_can_run_in_place};
        dev_.context  = this;
        buft_.iface   = {buft_name, buft_alloc, buft_alignment, nullptr, nullptr, nullptr};  // is_host: false
        buft_.device  = &dev_;
        buft_.context = this;
        backend_      = new gk_backend{{backend_name, backend_free, backend_compute, nullptr}, &dev_, this};
    }
    ~backend_double() {
        gk_backend_free(backend_);
        gk_backend_free(inner_);
    }
    backend_double(const backend_double &)             = delete;
    backend_double & operator=(const backend_double &) = delete;

    gk_backend_t backend() const { return backend_; }
    /// Its memory: its own buffer type, or the CPU's.
    gk_backend_buffer_type_t buft() { return device_memory_ ? &buft_ : gk_backend_cpu_buffer_type(); }
    void                     set_n_threads(int n) { gk_backend_cpu_set_n_threads(inner_, n); }

    int         computes = 0;  // graphs computed
    std::string problem;       // the first thing it found wrong, "" when none

private:
    static backend_double & of(gk_backend_dev_t d) { return *static_cast<backend_double *>(d->context); }

    // ---- device
    static const char *             dev_name(gk_backend_dev_t d) { return of(d).name_; }
    static void                     dev_memory(gk_backend_dev_t, size_t * free, size_t * total) { *free = *total = 0; }
    static enum gk_backend_dev_type dev_type(gk_backend_dev_t d) {
        return of(d).device_memory_ ? GK_BACKEND_DEVICE_TYPE_GPU : GK_BACKEND_DEVICE_TYPE_ACCEL;
    }
    static gk_backend_t dev_init(gk_backend_dev_t, const char *) {
        gk::backend_error("backend_double: made by its constructor only");
        return nullptr;
    }
    static gk_backend_buffer_type_t dev_buffer_type(gk_backend_dev_t d) { return of(d).buft(); }
    static bool                     dev_supports_op(gk_backend_dev_t d, const gk_tensor * op) {
                            return op->op != of(d).refuse_ && gk_cpu_supports_op(op);
    }
    static bool dev_supports_buft(gk_backend_dev_t d, gk_backend_buffer_type_t b) {
        return of(d).device_memory_ ? b == &of(d).buft_ : gk_backend_buft_is_host(b);
    }
    static bool dev_can_run_in_place(gk_backend_dev_t, const gk_tensor * node) {
        return gk_backend_dev_can_run_in_place(gk_backend_dev_by_type(GK_BACKEND_DEVICE_TYPE_CPU), node);
    }

    // ---- buffer type and buffers over host memory that say they are not
    static backend_double &    of(gk_backend_buffer_type_t b) { return *static_cast<backend_double *>(b->context); }
    static const char *        buft_name(gk_backend_buffer_type_t b) { return of(b).name_; }
    static size_t              buft_alignment(gk_backend_buffer_type_t) { return GK_MEM_ALIGN; }
    static gk_backend_buffer_t buft_alloc(gk_backend_buffer_type_t b, size_t size) {
        const size_t bytes = (size + GK_MEM_ALIGN) / GK_MEM_ALIGN * GK_MEM_ALIGN;
        void *       mem   = std::aligned_alloc(GK_MEM_ALIGN, bytes);
        if (!mem) {
            gk::backend_error("backend_double: cannot allocate %zu bytes", size);
            return nullptr;
        }
        gk_backend_buffer_i i{};
        i.free_buffer   = [](gk_backend_buffer_t buf) { std::free(buf->context); };
        i.get_base      = [](gk_backend_buffer_t buf) { return buf->context; };
        i.memset_tensor = [](gk_backend_buffer_t, gk_tensor * t, uint8_t v, size_t off, size_t n) {
            std::memset(static_cast<char *>(t->data) + off, v, n);
        };
        i.set_tensor = [](gk_backend_buffer_t, gk_tensor * t, const void * d, size_t off, size_t n) {
            std::memcpy(static_cast<char *>(t->data) + off, d, n);
        };
        i.get_tensor = [](gk_backend_buffer_t, const gk_tensor * t, void * d, size_t off, size_t n) {
            std::memcpy(d, static_cast<const char *>(t->data) + off, n);
        };
        i.clear                 = [](gk_backend_buffer_t buf, uint8_t v) { std::memset(buf->context, v, buf->size); };
        gk_backend_buffer_t buf = gk::buffer_init(b, i, mem, size);
        if (!buf) {
            std::free(mem);
        }
        return buf;
    }

    // ---- backend
    static backend_double & of(gk_backend_t b) { return *static_cast<backend_double *>(b->context); }
    static const char *     backend_name(gk_backend_t b) { return of(b).name_; }
    static void             backend_free(gk_backend_t) {}

    /// Where t's storage lives, or nullptr when it is host memory of no buffer.
    static gk_backend_buffer_type_t memory(const gk_tensor * t) {
        const gk_tensor * r = t->view_src ? t->view_src : t;
        return r->buffer ? gk_backend_buffer_get_type(r->buffer) : nullptr;
    }

    static gk_status backend_compute(gk_backend_t b, gk_cgraph * g) {
        backend_double & d = of(b);
        for (int i = 0; i < gk_graph_n_nodes(g); ++i) {
            const gk_tensor * node = gk_graph_node(g, i);
            if (node->op == d.refuse_) {
                d.note(std::string("was given refused op ") + gk_op_name(node->op) + " ('" + node->name + "')");
                return GK_STATUS_UNSUPPORTED;
            }
            if (!d.device_memory_ || gk::is_layout_op(node->op)) {
                continue;
            }
            for (int j = -1; j < GK_MAX_SRC; ++j) {
                const gk_tensor * t = j < 0 ? node : node->src[j];
                if (t && memory(t) != &d.buft_) {
                    d.note(std::string("node '") + node->name + "' touches '" + t->name + "' outside its memory");
                    return GK_STATUS_FAILED;
                }
            }
        }
        d.computes++;
        return gk_backend_graph_compute(d.inner_, g);
    }

    void note(const std::string & what) {
        if (problem.empty()) {
            problem = name_ + std::string(": ") + what;
        }
    }

    const char *           name_;
    gk_op                  refuse_;
    bool                   device_memory_;
    gk_backend_t           inner_;
    gk_backend_device      dev_{};
    gk_backend_buffer_type buft_{};
    gk_backend_t           backend_ = nullptr;
};

} // namespace gktest
