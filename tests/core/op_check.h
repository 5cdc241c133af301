// op_check.h - shared by the core op tests: a context with a deterministic source of
// random inputs, reading any tensor back as doubles in index order, computing one
// output, and comparing it with a double-precision reference.
#pragma once

#include "gk/gk.h"

#include "quant/codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gk_test {

/// A context (freed on destruction) and random inputs for it.
class env {
public:
    explicit env(size_t bytes = 64u << 20) : ctx(gk_init({bytes, nullptr, false})) {}
    ~env() { gk_free(ctx); }
    env(const env &)             = delete;
    env & operator=(const env &) = delete;

    gk_context * ctx;

    /// A tensor of `type` holding uniform values in [lo, hi), encoded by the codec.
    gk_tensor * rand(gk_type type, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1, float lo = -1.0f,
                     float hi = 1.0f) {
        gk_tensor * t = gk_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
        if (!t) {
            return nullptr;
        }
        std::vector<float> v(static_cast<size_t>(gk_nelements(t)));
        for (float & x : v) {
            x = lo + (hi - lo) * uniform();
        }
        gk::quant::quantize_rows(type, v.data(), t->data, gk_nrows(t), ne0, nullptr);
        return t;
    }
    gk_tensor * f32(int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1) {
        return rand(GK_TYPE_F32, ne0, ne1, ne2, ne3);
    }
    gk_tensor * positive(int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1) {
        return rand(GK_TYPE_F32, ne0, ne1, ne2, 1, 0.1f, 2.0f);
    }

    /// I32 (or I64) indices uniform in [0, range).
    gk_tensor * indices(int64_t range, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, gk_type type = GK_TYPE_I32) {
        gk_tensor * t = gk_new_tensor_3d(ctx, type, ne0, ne1, ne2);
        for (int64_t i = 0; i < gk_nelements(t); ++i) {
            const int64_t v = static_cast<int64_t>(uniform() * static_cast<float>(range)) % range;
            if (type == GK_TYPE_I64) {
                static_cast<int64_t *>(t->data)[i] = v;
            } else {
                static_cast<int32_t *>(t->data)[i] = static_cast<int32_t>(v);
            }
        }
        return t;
    }

    /// A causal mask [n_kv, n_q] of `type`: 0 where key k is visible to query q
    /// (k <= q + n_kv - n_q), -inf elsewhere.
    gk_tensor * causal_mask(gk_type type, int64_t n_kv, int64_t n_q) {
        gk_tensor *        t = gk_new_tensor_2d(ctx, type, n_kv, n_q);
        std::vector<float> v(static_cast<size_t>(n_kv * n_q));
        for (int64_t q = 0; q < n_q; ++q) {
            for (int64_t k = 0; k < n_kv; ++k) {
                v[static_cast<size_t>(q * n_kv + k)] = k <= q + (n_kv - n_q) ? 0.0f : -INFINITY;
            }
        }
        gk::quant::quantize_rows(type, v.data(), t->data, n_q, n_kv, nullptr);
        return t;
    }

    /// Labels: F32 [n, rows, ne2], each row a probability distribution (positive, summing to 1).
    gk_tensor * distributions(int64_t n, int64_t rows, int64_t ne2 = 1) {
        gk_tensor * t = rand(GK_TYPE_F32, n, rows, ne2, 1, 0.0f, 1.0f);
        auto *      v = static_cast<float *>(t->data);
        for (int64_t r = 0; r < rows * ne2; ++r) {
            float s = 0;
            for (int64_t i = 0; i < n; ++i) {
                s += v[r * n + i];
            }
            for (int64_t i = 0; i < n; ++i) {
                v[r * n + i] /= s;
            }
        }
        return t;
    }

    float uniform() {
        state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<float>(state_ >> 40) / static_cast<float>(1ull << 24);
    }

private:
    uint64_t state_ = 0x2545F4914F6CDD1Dull;
};

/// Every element of t as a double, in index order (i0 fastest), following its strides
/// and decoding its type.
inline std::vector<double> values(const gk_tensor * t) {
    std::vector<double> out;
    out.reserve(static_cast<size_t>(gk_nelements(t)));
    const auto *       tt = gk::quant::get_type_traits(t->type);
    std::vector<float> row(static_cast<size_t>(t->ne[0]));
    for (int64_t i3 = 0; i3 < t->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < t->ne[2]; ++i2) {
            for (int64_t i1 = 0; i1 < t->ne[1]; ++i1) {
                const char * base = static_cast<const char *>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
                if (t->type == GK_TYPE_I32 || t->type == GK_TYPE_I64) {
                    for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) {
                        int64_t v = 0;
                        if (t->type == GK_TYPE_I32) {
                            int32_t v32;
                            std::memcpy(&v32, base + i0 * t->nb[0], 4);
                            v = v32;
                        } else {
                            std::memcpy(&v, base + i0 * t->nb[0], 8);
                        }
                        out.push_back(static_cast<double>(v));
                    }
                    continue;
                }
                if (t->nb[0] == gk_type_size(t->type)) {
                    tt->to_float(base, row.data(), t->ne[0]);
                } else {
                    for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) {
                        tt->to_float(base + i0 * t->nb[0], &row[static_cast<size_t>(i0)], 1);
                    }
                }
                out.insert(out.end(), row.begin(), row.end());
            }
        }
    }
    return out;
}

/// Flat index of (i0, i1, i2, i3) in a values() vector of a tensor of shape ne.
inline size_t flat(const int64_t ne[4], int64_t i0, int64_t i1, int64_t i2 = 0, int64_t i3 = 0) {
    return static_cast<size_t>(((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0);
}

/// Build the graph of `out` and compute it; false (with a test failure) on any error.
inline bool compute(gk_context * ctx, gk_tensor * out, int n_threads = 3) {
    if (!out) {
        ADD_FAILURE() << "build failed: " << gk_last_error(ctx);
        return false;
    }
    gk_cgraph * g = gk_new_graph(ctx);
    if (gk_build_forward_expand(g, out) != GK_STATUS_SUCCESS) {
        ADD_FAILURE() << "graph: " << gk_last_error(ctx);
        return false;
    }
    const gk_status s = gk_graph_compute(g, n_threads);
    if (s != GK_STATUS_SUCCESS) {
        ADD_FAILURE() << "compute: " << gk_status_name(s) << ": " << gk_last_error(ctx);
        return false;
    }
    return true;
}

/// Every element of out within atol + rtol*|ref| of ref (infinities must match).
inline void expect_close(const gk_tensor * out, const std::vector<double> & ref, double atol, double rtol,
                         const char * what) {
    const std::vector<double> got = values(out);
    ASSERT_EQ(got.size(), ref.size()) << what;
    int reported = 0;
    for (size_t i = 0; i < ref.size() && reported < 5; ++i) {
        const bool ok = std::isinf(ref[i]) ? got[i] == ref[i] : std::fabs(got[i] - ref[i]) <= atol + rtol * std::fabs(ref[i]);
        if (!ok) {
            ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", reference " << ref[i];
            ++reported;
        }
    }
}

/// A builder's refusal: r is NULL and ctx's last error contains `expect` (then cleared).
inline void expect_refused(gk_context * ctx, const gk_tensor * r, const char * what, const char * expect) {
    EXPECT_EQ(r, nullptr) << what;
    EXPECT_NE(std::string(gk_last_error(ctx)).find(expect), std::string::npos) << what << ": " << gk_last_error(ctx);
    gk_clear_error(ctx);
}

} // namespace gk_test
