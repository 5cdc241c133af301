// meta.cpp - ggml's meta backend: a device made of several devices (ggml_backend_meta_device,
// which llama.cpp builds for --split-mode tensor), and the split axis names.
//
// On compat the meta device is correct, not parallel. A meta buffer keeps every tensor whole
// in one buffer of the first device, and a meta backend computes every graph on a backend of
// the first device; the other devices hold nothing and compute nothing. The split callback is
// asked for the tensors ggml asks it for (placed in a meta buffer that is not a compute
// buffer, not views, not empty) and its answer is checked by ggml's rules, but it moves no
// byte: set and get move whole tensors, so a tensor reads back what was written whatever its
// split state (mirrored, split along an axis, partial sums). Semantics (names, memory, the
// ops and buffer types it supports, the same device for the same arguments) from ggml 0.25.3's
// ggml-backend-meta.cpp; docs/compat.md says what differs.
#include "convert.h"

#include "gk/backend/impl.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace {

/// One meta device. `device` is what ggml_backend_dev_t points at and `buft` its buffer type;
/// the context of both is this struct.
struct meta_device {
    gk_backend_device                   device{};
    gk_backend_buffer_type              buft{};
    std::vector<gk_backend_dev_t>       devs;
    ggml_backend_meta_get_split_state_t get_split_state    = nullptr;
    void *                              get_split_state_ud = nullptr;
    std::string                         name, description, buft_name;
};

meta_device & meta_of(gk_backend_dev_t dev) { return *static_cast<meta_device *>(dev->context); }
meta_device & meta_of(gk_backend_buffer_type_t buft) { return *static_cast<meta_device *>(buft->context); }

/// The buffer type of device i of m.
gk_backend_buffer_type_t simple_buft(const meta_device & m, size_t i) { return gk_backend_dev_buffer_type(m.devs[i]); }

std::string printf_string(const char * fmt, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char * fmt, ...) {
    char    text[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    return text;
}

/// Why `st` cannot be the split state of t on a meta device of n devices ("" when it can),
/// by ggml's rules: an axis 0..3 cuts t->ne[axis] into sizes per segment and device,
/// ne[s*n + j], that add up to ne[axis] with segment s counted nr[s] times (along axis 0 in
/// whole blocks of t's type); partial sums are one segment counted once; mirrored needs
/// nothing.
std::string split_error(const ggml_backend_meta_split_state & st, const gk_tensor & t, size_t n) {
    const int axis = st.axis;
    if (axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        return "";
    }
    if (axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
        return st.n_segments == 1 && st.nr[0] == 1
                   ? ""
                   : printf_string("partial sums need n_segments 1 and nr[0] 1 (got %u and %u)", st.n_segments,
                                   st.nr[0]);
    }
    if (axis < 0 || axis >= GGML_MAX_DIMS) {
        return printf_string("axis %d is none of 0..3, MIRRORED (10), PARTIAL (11)", axis);
    }
    if (st.n_segments < 1 || st.n_segments > 16) {
        return printf_string("n_segments is %u, not 1..16", st.n_segments);
    }
    const int64_t whole = t.ne[axis];
    const int64_t block = axis == 0 ? gk_blck_size(t.type) : 1;
    int64_t       sum   = 0;
    for (size_t s = 0; s < st.n_segments; ++s) {
        if (st.nr[s] == 0) {
            return printf_string("segment %zu repeats 0 times", s);
        }
        for (size_t j = 0; j < n; ++j) {
            const int64_t ne = st.ne[s * n + j];
            if (ne < 0 || ne % block != 0) {
                return printf_string("device %zu's size %lld in segment %zu is not a multiple of %lld (%s)", j,
                                     static_cast<long long>(ne), s, static_cast<long long>(block),
                                     block > 1 ? "the type's block size" : "non-negative");
            }
            if (ne > 0 && static_cast<int64_t>(st.nr[s]) > (whole - sum) / ne) {
                return printf_string("the sizes along axis %d add up to more than ne[%d] = %lld", axis, axis,
                                     static_cast<long long>(whole));
            }
            sum += ne * st.nr[s];
        }
    }
    if (sum != whole) {
        return printf_string("the sizes along axis %d add up to %lld, not ne[%d] = %lld", axis,
                             static_cast<long long>(sum), axis, static_cast<long long>(whole));
    }
    return "";
}

// ---- buffer: a buffer of the first device (its context) under the meta buffer type --------

gk_backend_buffer_t inner_of(gk_backend_buffer_t buffer) { return static_cast<gk_backend_buffer_t>(buffer->context); }

void buffer_free(gk_backend_buffer_t buffer) { gk_backend_buffer_free(inner_of(buffer)); }

void * buffer_base(gk_backend_buffer_t buffer) { return gk_backend_buffer_get_base(inner_of(buffer)); }

/// Asks the split callback as ggml does (a tensor of a buffer that is not a compute buffer,
/// not a view, not empty), refuses a state ggml's rules refuse, then lets the first device's
/// buffer prepare the tensor.
gk_status buffer_init_tensor(gk_backend_buffer_t buffer, gk_tensor * tensor) {
    if (buffer->usage != GK_BACKEND_BUFFER_USAGE_COMPUTE && !tensor->view_src && gk_nelements(tensor) > 0) {
        const meta_device &                 m   = meta_of(buffer->buft);
        const ggml_backend_meta_split_state st  = m.get_split_state(compat::to_ggml(tensor), m.get_split_state_ud);
        const std::string                   why = split_error(st, *tensor, m.devs.size());
        if (!why.empty()) {
            gk::backend_error("%s: split state of '%s': %s", m.name.c_str(), tensor->name, why.c_str());
            compat::log_error("%s\n", gk_backend_last_error());
            return GK_STATUS_INVALID_ARGUMENT;
        }
    }
    return gk_backend_buffer_init_tensor(inner_of(buffer), tensor);
}

// The byte ranges were checked by the caller (impl.h); the first device's entries move them.
void buffer_memset_tensor(gk_backend_buffer_t buffer, gk_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    inner_of(buffer)->iface.memset_tensor(inner_of(buffer), tensor, value, offset, size);
}

void buffer_set_tensor(gk_backend_buffer_t buffer, gk_tensor * tensor, const void * data, size_t offset, size_t size) {
    inner_of(buffer)->iface.set_tensor(inner_of(buffer), tensor, data, offset, size);
}

void buffer_get_tensor(gk_backend_buffer_t buffer, const gk_tensor * tensor, void * data, size_t offset, size_t size) {
    inner_of(buffer)->iface.get_tensor(inner_of(buffer), tensor, data, offset, size);
}

void buffer_clear(gk_backend_buffer_t buffer, uint8_t value) { gk_backend_buffer_clear(inner_of(buffer), value); }

void buffer_reset(gk_backend_buffer_t buffer) { gk_backend_buffer_reset(inner_of(buffer)); }

constexpr gk_backend_buffer_i buffer_iface{buffer_free,          buffer_base,       buffer_init_tensor,
                                           buffer_memset_tensor, buffer_set_tensor, buffer_get_tensor,
                                           buffer_clear,         buffer_reset,      inner_of};

// ---- buffer type: ggml's answers over the devices' buffer types ----------------------------

const char * buft_name(gk_backend_buffer_type_t buft) { return meta_of(buft).buft_name.c_str(); }

bool is_meta_buft(gk_backend_buffer_type_t buft) { return buft && buft->iface.get_name == buft_name; }

gk_backend_buffer_t buft_alloc_buffer(gk_backend_buffer_type_t buft, size_t size) {
    gk_backend_buffer_t inner = gk_backend_buft_alloc_buffer(simple_buft(meta_of(buft), 0), size);
    if (!inner) {
        return nullptr;  // the first device's message stays
    }
    gk_backend_buffer_t buffer = gk::buffer_init(buft, buffer_iface, inner, gk_backend_buffer_get_size(inner));
    if (!buffer) {
        gk_backend_buffer_free(inner);
    }
    return buffer;
}

size_t buft_alignment(gk_backend_buffer_type_t buft) {
    const meta_device & m = meta_of(buft);
    size_t              a = 1;
    for (size_t i = 0; i < m.devs.size(); ++i) {
        a = std::max(a, gk_backend_buft_get_alignment(simple_buft(m, i)));  // powers of two: the largest divides by all
    }
    return a;
}

size_t buft_max_size(gk_backend_buffer_type_t buft) {
    const meta_device & m = meta_of(buft);
    size_t              n = SIZE_MAX;
    for (size_t i = 0; i < m.devs.size(); ++i) {
        n = std::min(n, gk_backend_buft_get_max_size(simple_buft(m, i)));
    }
    return n;
}

size_t buft_alloc_size(gk_backend_buffer_type_t buft, const gk_tensor * tensor) {
    const meta_device & m = meta_of(buft);
    size_t              n = 0;
    for (size_t i = 0; i < m.devs.size(); ++i) {
        n = std::max(n, gk_backend_buft_get_alloc_size(simple_buft(m, i), tensor));
    }
    return n;
}

bool buft_is_host(gk_backend_buffer_type_t buft) {
    const meta_device & m = meta_of(buft);
    for (size_t i = 0; i < m.devs.size(); ++i) {
        if (!gk_backend_buft_is_host(simple_buft(m, i))) {
            return false;
        }
    }
    return true;
}

// ---- backend: a backend of the first device (its context) ----------------------------------

gk_backend_t inner_of(gk_backend_t backend) { return static_cast<gk_backend_t>(backend->context); }

const char * backend_name(gk_backend_t backend) { return meta_of(backend->device).name.c_str(); }

void backend_free(gk_backend_t backend) { gk_backend_free(inner_of(backend)); }

gk_status backend_graph_compute(gk_backend_t backend, gk_cgraph * graph) {
    return gk_backend_graph_compute(inner_of(backend), graph);
}

void backend_synchronize(gk_backend_t backend) { gk_backend_synchronize(inner_of(backend)); }

constexpr gk_backend_i backend_iface{backend_name, backend_free, backend_graph_compute, backend_synchronize};

// ---- device ---------------------------------------------------------------------------------

const char * dev_name(gk_backend_dev_t dev) { return meta_of(dev).name.c_str(); }

const char * dev_description(gk_backend_dev_t dev) { return meta_of(dev).description.c_str(); }

void dev_memory(gk_backend_dev_t dev, size_t * free, size_t * total) {
    *free  = 0;
    *total = 0;
    for (gk_backend_dev_t d : meta_of(dev).devs) {
        size_t f = 0;
        size_t t = 0;
        gk_backend_dev_memory(d, &f, &t);
        *free += f;
        *total += t;
    }
}

enum gk_backend_dev_type dev_type(gk_backend_dev_t) { return GK_BACKEND_DEVICE_TYPE_META; }

gk_backend_t dev_init_backend(gk_backend_dev_t dev, const char * params) {
    gk_backend_t inner = gk_backend_dev_init(meta_of(dev).devs[0], params);
    if (!inner) {
        return nullptr;
    }
    gk_backend_t backend = gk::backend_init(backend_iface, dev, inner);
    if (!backend) {
        gk_backend_free(inner);
    }
    return backend;
}

gk_backend_buffer_type_t dev_buffer_type(gk_backend_dev_t dev) { return &meta_of(dev).buft; }

bool dev_supports_op(gk_backend_dev_t dev, const gk_tensor * op) {
    const std::vector<gk_backend_dev_t> & devs = meta_of(dev).devs;
    return std::all_of(devs.begin(), devs.end(),
                       [op](gk_backend_dev_t d) { return gk_backend_dev_supports_op(d, op); });
}

bool dev_supports_buft(gk_backend_dev_t dev, gk_backend_buffer_type_t buft) {
    return is_meta_buft(buft) && meta_of(buft).devs == meta_of(dev).devs;
}

bool dev_can_run_in_place(gk_backend_dev_t dev, const gk_tensor * node) {
    return gk_backend_dev_can_run_in_place(meta_of(dev).devs[0], node);  // the first device runs every kernel
}

constexpr gk_backend_device_i device_iface{dev_name,         dev_description,     dev_memory,      dev_type,
                                           dev_init_backend, dev_buffer_type,     dev_supports_op, dev_supports_buft,
                                           nullptr,          dev_can_run_in_place};

/// "Meta(" + each device's text + ")", separated by commas (ggml's names).
template <typename F>
std::string joined(const std::vector<gk_backend_dev_t> & devs, F text) {
    std::string out = "Meta(";
    for (size_t i = 0; i < devs.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        out += text(devs[i]);
    }
    return out + ")";
}

/// Why ggml_backend_meta_device's arguments are refused, or nullptr.
const char * bad_arguments(ggml_backend_dev_t * devs, size_t n_devs,
                           ggml_backend_meta_get_split_state_t get_split_state) {
    if (!devs || n_devs == 0) {
        return !devs ? "devs is NULL" : "n_devs is 0";
    }
    if (n_devs > GGML_BACKEND_META_MAX_DEVICES) {
        return "more devices than GGML_BACKEND_META_MAX_DEVICES (16)";
    }
    if (!std::all_of(devs, devs + n_devs, [](ggml_backend_dev_t d) { return d != nullptr; })) {
        return "a device is NULL";
    }
    return get_split_state ? nullptr : "get_split_state is NULL";
}

} // namespace

extern "C" {

const char * ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis) {
    switch (split_axis) {
    case GGML_BACKEND_SPLIT_AXIS_0: return "0";
    case GGML_BACKEND_SPLIT_AXIS_1: return "1";
    case GGML_BACKEND_SPLIT_AXIS_2: return "2";
    case GGML_BACKEND_SPLIT_AXIS_3: return "3";
    case GGML_BACKEND_SPLIT_AXIS_MIRRORED: return "MIRRORED";
    case GGML_BACKEND_SPLIT_AXIS_PARTIAL: return "PARTIAL";
    case GGML_BACKEND_SPLIT_AXIS_NONE: return "NONE";
    case GGML_BACKEND_SPLIT_AXIS_UNKNOWN: return "UNKNOWN";
    }
    ggml_abort(__FILE__, __LINE__, "ggml_backend_meta_split_axis_name: %d is not a split axis",
               static_cast<int>(split_axis));
}

ggml_backend_dev_t ggml_backend_meta_device(ggml_backend_dev_t * devs, size_t n_devs,
                                            ggml_backend_meta_get_split_state_t get_split_state,
                                            void *                              get_split_state_ud) {
    if (const char * why = bad_arguments(devs, n_devs, get_split_state)) {
        compat::log_error("ggml_backend_meta_device: %s\n", why);
        return nullptr;
    }
    std::vector<gk_backend_dev_t> simple(n_devs);
    std::transform(devs, devs + n_devs, simple.begin(), [](ggml_backend_dev_t d) { return compat::to_gk(d); });

    // Devices live as long as the process, as ggml's; the same arguments give the same device.
    static std::mutex                 lock;
    static std::deque<meta_device>    made;
    const std::lock_guard<std::mutex> hold(lock);
    for (meta_device & m : made) {
        if (m.devs == simple && m.get_split_state == get_split_state && m.get_split_state_ud == get_split_state_ud) {
            return compat::to_ggml(&m.device);
        }
    }
    meta_device & m      = made.emplace_back();
    m.devs               = simple;
    m.get_split_state    = get_split_state;
    m.get_split_state_ud = get_split_state_ud;
    m.name               = joined(simple, gk_backend_dev_name);
    m.description        = joined(simple, gk_backend_dev_description);
    m.buft_name          = joined(simple,
                                  [](gk_backend_dev_t d) { return gk_backend_buft_name(gk_backend_dev_buffer_type(d)); });
    m.device             = {device_iface, &m};
    m.buft               = {
                      {buft_name, buft_alloc_buffer, buft_alignment, buft_max_size, buft_alloc_size, buft_is_host}, &m.device, &m};
    return compat::to_ggml(&m.device);
}

} // extern "C"
