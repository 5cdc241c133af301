// A machine-code kernel (kernel/native.h) checked against the kernel interpreter bit for bit:
// the kernels the examples and the primitive cases launch, on inputs drawn for them, run both
// ways and compared element by element. Shared by the tests of the native and cc backends.
#pragma once
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel/eval.h"
#include "kernel/native.h"
#include "lang/checker.h"
#include "lang/parser.h"
#include "realize/conformance.h"
#include "realize/executor.h"
#include "ref/interp.h"

namespace presk::test {

/// The distinct kernels the cases launch on the kernel backend in realization `r`
/// ("f64", "f32", "bf16"). Cases that fail on the kernel backend are skipped.
inline std::vector<kernel::Kernel> launched_kernels(const std::vector<realize::Case>& cases, const std::string& r) {
    std::vector<kernel::Kernel> out;
    for (const realize::Case& c : cases) {
        try {
            Source src{c.path, c.text};
            CheckOptions co;
            co.dims = c.dims;
            core::Program p = check(parse(src), c.entry, co);
            ref::Interp interp(p, {64, 7, false});
            std::vector<ref::Value> args = interp.entry_args(c.given);
            realize::Executor ex(p, realize::parse_realization(r));
            ex.call(p.entry, args);
            for (const kernel::Kernel* k : ex.kernels()) out.push_back(*k);
        } catch (const std::exception&) {
        }
    }
    return out;
}

/// Inputs for `k`: reals normal(0, 1) rounded to the buffer's type (a few of them 0, -0, ±inf,
/// NaN when `specials`), integers 0 or 1 (valid ids, masks and targets of every axis of size
/// 2 or more).
inline std::vector<kernel::Data> draw_inputs(const kernel::Kernel& k, uint64_t seed, bool specials = false) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<kernel::Data> in;
    for (const kernel::BufferType& b : k.inputs) {
        int64_t n = 1;
        for (const Axis& a : b.axes) n *= a.size;
        if (b.dtype == kernel::DType::I64) {
            std::vector<int64_t> v((size_t)n);
            for (int64_t& x : v) x = (int64_t)(g() & 1);
            in.push_back(kernel::Data::from_ints(v));
            continue;
        }
        std::vector<double> v((size_t)n);
        for (double& x : v) {
            x = normal(g);
            if (specials) {
                static const double sp[] = {0.0, -0.0, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0};
                if (g() % 16 == 0) x = sp[g() % 5];
            }
        }
        in.push_back(kernel::Data::from_reals(b.dtype, v));
    }
    return in;
}

/// The bytes of `d`'s elements in its storage type.
inline std::vector<unsigned char> bytes_of(const kernel::Data& d) {
    const auto* p = static_cast<const unsigned char*>(d.raw());
    return std::vector<unsigned char>(p, p + (size_t)d.size() * kernel::element_size(d.dtype()));
}

/// A compiled kernel's run: its status, err[] and output bytes.
struct Ran {
    int status = PRESK_OK;
    std::vector<int64_t> err;
    std::vector<unsigned char> out;
};

/// `code` (compiled from `k`) run on `in` over the split ranges between consecutive `cuts` (the
/// whole range when empty), into one output that is not zeroed first, stopping at the first
/// failure.
inline Ran run_compiled(const kernel::Kernel& k, const kernel::NativeCode& code, const std::vector<kernel::Data>& in,
                        std::vector<int64_t> cuts = {}) {
    int64_t n = 1;
    for (const Axis& a : k.output.axes) n *= a.size;
    Ran r;
    r.out.assign((size_t)n * kernel::element_size(k.output.dtype), (unsigned char)0xA5);
    std::vector<void*> bufs;
    for (const kernel::Data& d : in) bufs.push_back(const_cast<void*>(d.raw()));
    bufs.push_back(r.out.data());
    int64_t err[3] = {-1, -1, -1};
    const std::optional<kernel::Split> sp = kernel::split_loop(k);
    if (cuts.empty()) cuts = {sp ? sp->lo : 0, sp ? sp->hi : 0};
    for (size_t c = 0; c + 1 < cuts.size() && r.status == PRESK_OK; ++c) r.status = code.fn(bufs.data(), cuts[c], cuts[c + 1], err);
    r.err = {err[0], err[1], err[2]};
    return r;
}

/// Whether element i of `a` and `b` (row-major bytes of storage type `t`) are both NaN.
inline bool both_nan(kernel::DType t, const std::vector<unsigned char>& a, const std::vector<unsigned char>& b, size_t i) {
    auto nan = [&](const std::vector<unsigned char>& v) {
        switch (t) {
        case kernel::DType::F64: {
            double x;
            std::memcpy(&x, &v[i * 8], 8);
            return std::isnan(x);
        }
        case kernel::DType::F32: {
            float x;
            std::memcpy(&x, &v[i * 4], 4);
            return std::isnan(x);
        }
        case kernel::DType::BF16: {
            uint16_t h;
            std::memcpy(&h, &v[i * 2], 2);
            return (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
        }
        case kernel::DType::I64:
        case kernel::DType::I8:
        case kernel::DType::I4: return false;  // integers have no NaN
        }
        return false;
    };
    return nan(a) && nan(b);
}

/// "" when `got` has the interpreter's bytes `want` (the output of `k`), else the first element
/// that differs. An element NaN in both counts as equal whatever its bits (counted in `*nans`):
/// a binary operation of two NaNs passes on one of them, and which one (its sign and payload)
/// is the operand order its compiler chose, in the interpreter as in the kernel (IEEE 754
/// leaves it open). Every other element must be bit-identical.
inline std::string differs(const kernel::Kernel& k, const std::vector<unsigned char>& want,
                           const std::vector<unsigned char>& got, int64_t* nans = nullptr) {
    const kernel::DType t = k.output.dtype;
    const size_t e = kernel::element_size(t);
    if (want.size() != got.size()) return k.name + ": output sizes differ";
    for (size_t i = 0; i * e < want.size(); ++i) {
        if (std::memcmp(&want[i * e], &got[i * e], e) == 0) continue;
        if (!both_nan(t, want, got, i)) return k.name + ": element " + std::to_string(i) + " differs from the interpreter's";
        if (nans) ++*nans;
    }
    return "";
}

/// Runs `k` on `in` through the interpreter and through `code` (over the split ranges between
/// `cuts`, as run_compiled), and compares: "" when both fail or both write the same bytes
/// (differs' rule), else what differs.
inline std::string compare_with_interpreter(const kernel::Kernel& k, const kernel::NativeCode& code,
                                            const std::vector<kernel::Data>& in, int64_t* nans = nullptr,
                                            std::vector<int64_t> cuts = {}) {
    std::vector<const kernel::Data*> ptrs;
    for (const kernel::Data& d : in) ptrs.push_back(&d);
    kernel::Data want;
    std::string want_err;
    try {
        kernel::run(k, ptrs, want);
    } catch (const std::exception& e) {
        want_err = e.what();
    }
    const Ran got = run_compiled(k, code, in, std::move(cuts));
    if (!want_err.empty() || got.status != PRESK_OK) {
        if (!want_err.empty() && got.status != PRESK_OK) return "";
        return k.name + ": interpreter " + (want_err.empty() ? "ran" : "failed: " + want_err) + ", compiled " +
               (got.status == PRESK_OK ? "ran" : "failed: " + kernel::status_message(k, got.status, got.err.data()));
    }
    return differs(k, bytes_of(want), got.out, nans);
}

} // namespace presk::test
