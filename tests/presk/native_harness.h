// A machine-code kernel (kernel/native.h) checked against the kernel interpreter bit for bit:
// the kernels the examples and the primitive cases launch, on inputs drawn for them, run both
// ways and compared element by element. Shared by the tests of the native and cc backends.
#pragma once
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

/// Runs `k` on `in` through the interpreter and through `code` (over [lo, hi) of its split
/// loop when given, else the whole range), and compares: "" when both fail or both write the
/// same bytes, else what differs (the first element).
inline std::string compare_with_interpreter(const kernel::Kernel& k, const kernel::NativeCode& code,
                                            const std::vector<kernel::Data>& in, int64_t lo = -1, int64_t hi = -1) {
    std::vector<const kernel::Data*> ptrs;
    for (const kernel::Data& d : in) ptrs.push_back(&d);
    kernel::Data want;
    std::string want_err;
    try {
        kernel::run(k, ptrs, want);
    } catch (const std::exception& e) {
        want_err = e.what();
    }
    int64_t n = 1;
    for (const Axis& a : k.output.axes) n *= a.size;
    const size_t esize = (size_t)kernel::element_size(k.output.dtype);
    std::vector<unsigned char> got((size_t)n * esize, (unsigned char)0xA5);  // not zeroed: the kernel writes every element
    std::vector<void*> bufs;
    for (const kernel::Data& d : in) bufs.push_back(const_cast<void*>(d.raw()));
    bufs.push_back(got.data());
    int64_t err[3] = {0, 0, 0};
    const std::optional<kernel::Split> sp = kernel::split_loop(k);
    const int st = code.fn(bufs.data(), sp ? (lo >= 0 ? lo : sp->lo) : 0, sp ? (hi >= 0 ? hi : sp->hi) : 0, err);
    if (!want_err.empty() || st != PRESK_OK) {
        if (!want_err.empty() && st != PRESK_OK) return "";
        return k.name + ": interpreter " + (want_err.empty() ? "ran" : "failed: " + want_err) + ", compiled " +
               (st == PRESK_OK ? "ran" : "failed: " + kernel::status_message(k, st, err));
    }
    if ((size_t)want.size() * esize != got.size()) return k.name + ": output sizes differ";
    const auto* w = static_cast<const unsigned char*>(want.raw());
    for (size_t i = 0; i < got.size(); i += esize) {
        if (std::memcmp(w + i, &got[i], esize) != 0)
            return k.name + ": element " + std::to_string(i / esize) + " differs from the interpreter's";
    }
    return "";
}

} // namespace presk::test
