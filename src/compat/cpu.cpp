// cpu.cpp - ggml-cpu.h on gk's CPU compute pass: graph plans and compute, threadpools
// (a thread count: gk's pool is owned by the graph's context), CPU feature queries,
// element accessors, and the CPU backend's setters.
#include "convert.h"
#include "ggml-cpu.h"

#include "quant/fp16.h"

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

// The CPU backend's registry entry: its devices are gk's devices.
struct ggml_backend_reg {
    const char * name;
};

extern "C" ggml_backend_reg_t ggml_backend_cpu_reg(void) {
    static ggml_backend_reg reg{"CPU"};
    return &reg;
}

// Element accessors of ggml-cpu.h for the plain types (F32, F16, BF16, I32); any other
// type aborts naming the accessor.
namespace {

float read_f32(const ggml_tensor * t, size_t offset, const char * fn) {
    const char * p = static_cast<const char *>(t->data) + offset;
    switch (t->type) {
    case GGML_TYPE_F32: return *reinterpret_cast<const float *>(p);
    case GGML_TYPE_F16: return ggml_fp16_to_fp32(*reinterpret_cast<const ggml_fp16_t *>(p));
    case GGML_TYPE_BF16: return ggml_bf16_to_fp32(*reinterpret_cast<const ggml_bf16_t *>(p));
    case GGML_TYPE_I32: return static_cast<float>(*reinterpret_cast<const int32_t *>(p));
    default: ggml_abort(__FILE__, __LINE__, "%s: type %s not supported", fn, ggml_type_name(t->type));
    }
}

void write_f32(const ggml_tensor * t, size_t offset, float v, const char * fn) {
    char * p = static_cast<char *>(t->data) + offset;
    switch (t->type) {
    case GGML_TYPE_F32: *reinterpret_cast<float *>(p) = v; return;
    case GGML_TYPE_F16: *reinterpret_cast<ggml_fp16_t *>(p) = ggml_fp32_to_fp16(v); return;
    case GGML_TYPE_BF16: *reinterpret_cast<ggml_bf16_t *>(p) = ggml_fp32_to_bf16(v); return;
    case GGML_TYPE_I32: *reinterpret_cast<int32_t *>(p) = static_cast<int32_t>(v); return;
    default: ggml_abort(__FILE__, __LINE__, "%s: type %s not supported", fn, ggml_type_name(t->type));
    }
}

size_t offset_nd(const ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

size_t offset_1d(const ggml_tensor * t, int i, const char * fn) {
    if (!t->data || i < 0 || i >= ggml_nelements(t)) {
        ggml_abort(__FILE__, __LINE__, "%s: index %d outside the tensor or no data", fn, i);
    }
    if (ggml_is_contiguous(t)) {
        return static_cast<size_t>(i) * ggml_type_size(t->type);
    }
    int64_t idx[4];
    ggml_unravel_index(t, i, &idx[0], &idx[1], &idx[2], &idx[3]);
    return offset_nd(t, static_cast<int>(idx[0]), static_cast<int>(idx[1]), static_cast<int>(idx[2]), static_cast<int>(idx[3]));
}

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
    if (t->type == GGML_TYPE_I32) return *reinterpret_cast<const int32_t *>(static_cast<const char *>(t->data) + offset_1d(t, i, "ggml_get_i32_1d"));
    return static_cast<int32_t>(read_f32(t, offset_1d(t, i, "ggml_get_i32_1d"), "ggml_get_i32_1d"));
}
void ggml_set_i32_1d(const struct ggml_tensor * t, int i, int32_t value) {
    if (t->type == GGML_TYPE_I32) { *reinterpret_cast<int32_t *>(static_cast<char *>(t->data) + offset_1d(t, i, "ggml_set_i32_1d")) = value; return; }
    write_f32(t, offset_1d(t, i, "ggml_set_i32_1d"), static_cast<float>(value), "ggml_set_i32_1d");
}
float ggml_get_f32_1d(const struct ggml_tensor * t, int i) { return read_f32(t, offset_1d(t, i, "ggml_get_f32_1d"), "ggml_get_f32_1d"); }
void  ggml_set_f32_1d(const struct ggml_tensor * t, int i, float value) { write_f32(t, offset_1d(t, i, "ggml_set_f32_1d"), value, "ggml_set_f32_1d"); }
int32_t ggml_get_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return static_cast<int32_t>(read_f32(t, offset_nd(t, i0, i1, i2, i3), "ggml_get_i32_nd"));
}
void ggml_set_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, int32_t value) {
    write_f32(t, offset_nd(t, i0, i1, i2, i3), static_cast<float>(value), "ggml_set_i32_nd");
}
float ggml_get_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return read_f32(t, offset_nd(t, i0, i1, i2, i3), "ggml_get_f32_nd");
}
void ggml_set_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, float value) {
    write_f32(t, offset_nd(t, i0, i1, i2, i3), value, "ggml_set_f32_nd");
}

} // extern "C"
