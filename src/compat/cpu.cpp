// cpu.cpp - ggml-cpu.h on gk's CPU compute pass: graph plans and compute, threadpools
// (a thread count: gk's pool is owned by the graph's context), CPU feature queries,
// element accessors, and the CPU backend's setters.
#include "convert.h"
#include "ggml-cpu.h"

#include "quant/fp16.h"

#include <cstdint>
#include <cstring>

struct ggml_threadpool {
    int n_threads;
};

extern "C" {

struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph * cgraph, int n_threads, struct ggml_threadpool * threadpool) {
    ggml_cplan plan{};
    plan.n_threads  = threadpool ? threadpool->n_threads : n_threads > 0 ? n_threads : GGML_DEFAULT_N_THREADS;
    plan.threadpool = threadpool;
    return plan;  // gk's compute pass needs no caller work buffer: work_size 0
}

enum ggml_status ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan) {
    if (!cgraph || !cplan || cplan->n_threads < 1) {
        ggml_abort(__FILE__, __LINE__, "ggml_graph_compute: no graph, no plan or n_threads < 1");
    }
    if (cplan->abort_callback && cplan->abort_callback(cplan->abort_callback_data)) {
        return GGML_STATUS_ABORTED;
    }
    return compat::to_ggml(gk_graph_compute(compat::to_gk(cgraph), cplan->n_threads));
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads) {
    ggml_cplan plan = ggml_graph_plan(cgraph, n_threads, nullptr);
    return ggml_graph_compute(cgraph, &plan);
}

struct ggml_threadpool * ggml_threadpool_new(struct ggml_threadpool_params * params) {
    if (!params || params->n_threads < 1) {
        ggml_abort(__FILE__, __LINE__, "ggml_threadpool_new: n_threads < 1");
    }
    return new ggml_threadpool{params->n_threads};
}
void ggml_threadpool_free(struct ggml_threadpool * threadpool) { delete threadpool; }
int  ggml_threadpool_get_n_threads(struct ggml_threadpool * threadpool) { return threadpool ? threadpool->n_threads : 0; }
void ggml_threadpool_pause(struct ggml_threadpool * threadpool) {}
void ggml_threadpool_resume(struct ggml_threadpool * threadpool) {}

void ggml_cpu_init(void) {}
void ggml_numa_init(enum ggml_numa_strategy numa) {}
bool ggml_is_numa(void) { return false; }

#if defined(__x86_64__) || defined(__i386__)
#define GK_COMPAT_X86(feature) __builtin_cpu_supports(feature)
#else
#define GK_COMPAT_X86(feature) 0
#endif
int ggml_cpu_has_sse3(void) { return GK_COMPAT_X86("sse3"); }
int ggml_cpu_has_ssse3(void) { return GK_COMPAT_X86("ssse3"); }
int ggml_cpu_has_avx(void) { return GK_COMPAT_X86("avx"); }
int ggml_cpu_has_avx_vnni(void) { return GK_COMPAT_X86("avxvnni"); }
int ggml_cpu_has_avx2(void) { return GK_COMPAT_X86("avx2"); }
int ggml_cpu_has_bmi2(void) { return GK_COMPAT_X86("bmi2"); }
int ggml_cpu_has_f16c(void) { return GK_COMPAT_X86("f16c"); }
int ggml_cpu_has_fma(void) { return GK_COMPAT_X86("fma"); }
int ggml_cpu_has_avx512(void) { return GK_COMPAT_X86("avx512f"); }
int ggml_cpu_has_avx512_vbmi(void) { return GK_COMPAT_X86("avx512vbmi"); }
int ggml_cpu_has_avx512_vnni(void) { return GK_COMPAT_X86("avx512vnni"); }
int ggml_cpu_has_avx512_bf16(void) { return GK_COMPAT_X86("avx512bf16"); }
int ggml_cpu_has_amx_int8(void) { return 0; }
int ggml_cpu_has_neon(void) { return 0; }
int ggml_cpu_has_arm_fma(void) { return 0; }
int ggml_cpu_has_fp16_va(void) { return 0; }
int ggml_cpu_has_dotprod(void) { return 0; }
int ggml_cpu_has_matmul_int8(void) { return 0; }
int ggml_cpu_has_sve(void) { return 0; }
int ggml_cpu_get_sve_cnt(void) { return 0; }
int ggml_cpu_has_sme(void) { return 0; }
int ggml_cpu_has_sme2(void) { return 0; }
int ggml_cpu_has_riscv_v(void) { return 0; }
int ggml_cpu_get_rvv_vlen(void) { return 0; }
int ggml_cpu_has_vsx(void) { return 0; }
int ggml_cpu_has_vxe(void) { return 0; }
int ggml_cpu_has_wasm_simd(void) { return 0; }
int ggml_cpu_has_llamafile(void) { return 0; }

ggml_backend_t ggml_backend_cpu_init(void) { return compat::to_ggml(gk_backend_cpu_init()); }
bool ggml_backend_is_cpu(ggml_backend_t backend) { return backend && gk_backend_is_cpu(compat::to_gk(backend)); }
void ggml_backend_cpu_set_n_threads(ggml_backend_t backend_cpu, int n_threads) {
    compat::check(gk_backend_cpu_set_n_threads(compat::to_gk(backend_cpu), n_threads), "ggml_backend_cpu_set_n_threads");
}
void ggml_backend_cpu_set_threadpool(ggml_backend_t backend_cpu, ggml_threadpool_t threadpool) {
    if (threadpool) {
        ggml_backend_cpu_set_n_threads(backend_cpu, threadpool->n_threads);
    }
}
void ggml_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, ggml_abort_callback abort_callback,
                                         void * abort_callback_data) {}
void ggml_backend_cpu_set_use_ref(ggml_backend_t backend_cpu, bool use_ref) {}

void ggml_cpu_fp32_to_fp32(const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = x[i];
    }
}
void ggml_cpu_fp32_to_i32(const float * x, int32_t * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = static_cast<int32_t>(x[i]);
    }
}
void ggml_cpu_fp32_to_fp16(const float * x, ggml_fp16_t * y, int64_t n) { ggml_fp32_to_fp16_row(x, y, n); }
void ggml_cpu_fp16_to_fp32(const ggml_fp16_t * x, float * y, int64_t n) { ggml_fp16_to_fp32_row(x, y, n); }
void ggml_cpu_fp32_to_bf16(const float * x, ggml_bf16_t * y, int64_t n) { ggml_fp32_to_bf16_row(x, y, n); }
void ggml_cpu_bf16_to_fp32(const ggml_bf16_t * x, float * y, int64_t n) { ggml_bf16_to_fp32_row(x, y, n); }

} // extern "C"

// The CPU backend's registry entry (registry.cpp lists it with the others).
extern "C" ggml_backend_reg_t ggml_backend_cpu_reg(void) {
    static ggml_backend_reg reg{"CPU"};
    return &reg;
}

// Element accessors of ggml-cpu.h, for the types ggml's accept: I8, I16, I32 (read and
// written exactly as integers), F16, BF16 and F32; any other type aborts naming the
// accessor, and so does an index outside the tensor or a tensor without data.
namespace {

// float -> int32 as the x86 truncating conversion does it, defined for every input: NaN
// and values outside int32's range give INT32_MIN.
int32_t truncate_to_i32(float v) {
    if (!(v >= -2147483648.0f && v < 2147483648.0f)) {
        return INT32_MIN;
    }
    return static_cast<int32_t>(v);
}

template <class T> T load(const char * p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class T> void store(char * p, T v) { std::memcpy(p, &v, sizeof v); }

[[noreturn]] void unsupported_type(const ggml_tensor * t, const char * fn) {
    ggml_abort(__FILE__, __LINE__, "%s: type %s not supported", fn, ggml_type_name(t->type));
}

// The element at p: integers exactly (as int64), floats as float; is_int tells which.
struct element {
    bool    is_int;
    int64_t i;
    float   f;
};

element read_element(const ggml_tensor * t, const char * p, const char * fn) {
    switch (t->type) {
    case GGML_TYPE_I8: return {true, load<int8_t>(p), 0.0f};
    case GGML_TYPE_I16: return {true, load<int16_t>(p), 0.0f};
    case GGML_TYPE_I32: return {true, load<int32_t>(p), 0.0f};
    case GGML_TYPE_F16: return {false, 0, ggml_fp16_to_fp32(load<ggml_fp16_t>(p))};
    case GGML_TYPE_BF16: return {false, 0, ggml_bf16_to_fp32(load<ggml_bf16_t>(p))};
    case GGML_TYPE_F32: return {false, 0, load<float>(p)};
    default: unsupported_type(t, fn);
    }
}

// Writes an integer: integer types keep its low bits (as a C cast does), float types get it
// converted to float and then rounded to the type.
void write_int(const ggml_tensor * t, char * p, int32_t v, const char * fn) {
    switch (t->type) {
    case GGML_TYPE_I8: store(p, static_cast<int8_t>(v)); return;
    case GGML_TYPE_I16: store(p, static_cast<int16_t>(v)); return;
    case GGML_TYPE_I32: store(p, v); return;
    case GGML_TYPE_F16: store(p, ggml_fp32_to_fp16(static_cast<float>(v))); return;
    case GGML_TYPE_BF16: store(p, ggml_fp32_to_bf16(static_cast<float>(v))); return;
    case GGML_TYPE_F32: store(p, static_cast<float>(v)); return;
    default: unsupported_type(t, fn);
    }
}

// Writes a float: integer types get it truncated (truncate_to_i32, then the low bits).
void write_float(const ggml_tensor * t, char * p, float v, const char * fn) {
    switch (t->type) {
    case GGML_TYPE_F16: store(p, ggml_fp32_to_fp16(v)); return;
    case GGML_TYPE_BF16: store(p, ggml_fp32_to_bf16(v)); return;
    case GGML_TYPE_F32: store(p, v); return;
    default: write_int(t, p, truncate_to_i32(v), fn);
    }
}

char * element_nd(const ggml_tensor * t, int i0, int i1, int i2, int i3, const char * fn) {
    const int at[4] = {i0, i1, i2, i3};
    for (int d = 0; d < 4; ++d) {
        if (at[d] < 0 || at[d] >= t->ne[d]) {
            ggml_abort(__FILE__, __LINE__, "%s: index %d of dimension %d outside [0, %lld)", fn, at[d], d,
                       static_cast<long long>(t->ne[d]));
        }
    }
    if (!t->data) {
        ggml_abort(__FILE__, __LINE__, "%s: the tensor has no data", fn);
    }
    return static_cast<char *>(t->data) + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

char * element_1d(const ggml_tensor * t, int i, const char * fn) {
    if (i < 0 || i >= ggml_nelements(t)) {
        ggml_abort(__FILE__, __LINE__, "%s: index %d outside [0, %lld)", fn, i, static_cast<long long>(ggml_nelements(t)));
    }
    int64_t at[4];
    ggml_unravel_index(t, i, &at[0], &at[1], &at[2], &at[3]);
    return element_nd(t, static_cast<int>(at[0]), static_cast<int>(at[1]), static_cast<int>(at[2]), static_cast<int>(at[3]), fn);
}

int32_t as_i32(element e) { return e.is_int ? static_cast<int32_t>(e.i) : truncate_to_i32(e.f); }
float   as_f32(element e) { return e.is_int ? static_cast<float>(e.i) : e.f; }

} // namespace

extern "C" {

void ggml_unravel_index(const struct ggml_tensor * t, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3) {
    const int64_t n0 = t->ne[0], n1 = t->ne[1], n2 = t->ne[2];
    const int64_t a3 = i / (n2 * n1 * n0), a2 = (i - a3 * n2 * n1 * n0) / (n1 * n0);
    const int64_t a1 = (i - a3 * n2 * n1 * n0 - a2 * n1 * n0) / n0, a0 = i - a3 * n2 * n1 * n0 - a2 * n1 * n0 - a1 * n0;
    if (i0) *i0 = a0;
    if (i1) *i1 = a1;
    if (i2) *i2 = a2;
    if (i3) *i3 = a3;
}

struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value) {
    ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    return ggml_set_i32(t, value);
}
struct ggml_tensor * ggml_new_f32(struct ggml_context * ctx, float value) {
    ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    return ggml_set_f32(t, value);
}
struct ggml_tensor * ggml_set_i32(struct ggml_tensor * t, int32_t value) {
    for (int64_t i = 0; i < ggml_nelements(t); ++i) ggml_set_i32_1d(t, static_cast<int>(i), value);
    return t;
}
struct ggml_tensor * ggml_set_f32(struct ggml_tensor * t, float value) {
    for (int64_t i = 0; i < ggml_nelements(t); ++i) ggml_set_f32_1d(t, static_cast<int>(i), value);
    return t;
}
int32_t ggml_get_i32_1d(const struct ggml_tensor * t, int i) {
    return as_i32(read_element(t, element_1d(t, i, "ggml_get_i32_1d"), "ggml_get_i32_1d"));
}
void ggml_set_i32_1d(const struct ggml_tensor * t, int i, int32_t value) {
    write_int(t, element_1d(t, i, "ggml_set_i32_1d"), value, "ggml_set_i32_1d");
}
float ggml_get_f32_1d(const struct ggml_tensor * t, int i) {
    return as_f32(read_element(t, element_1d(t, i, "ggml_get_f32_1d"), "ggml_get_f32_1d"));
}
void ggml_set_f32_1d(const struct ggml_tensor * t, int i, float value) {
    write_float(t, element_1d(t, i, "ggml_set_f32_1d"), value, "ggml_set_f32_1d");
}
int32_t ggml_get_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return as_i32(read_element(t, element_nd(t, i0, i1, i2, i3, "ggml_get_i32_nd"), "ggml_get_i32_nd"));
}
void ggml_set_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, int32_t value) {
    write_int(t, element_nd(t, i0, i1, i2, i3, "ggml_set_i32_nd"), value, "ggml_set_i32_nd");
}
float ggml_get_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return as_f32(read_element(t, element_nd(t, i0, i1, i2, i3, "ggml_get_f32_nd"), "ggml_get_f32_nd"));
}
void ggml_set_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, float value) {
    write_float(t, element_nd(t, i0, i1, i2, i3, "ggml_set_f32_nd"), value, "ggml_set_f32_nd");
}

} // extern "C"
