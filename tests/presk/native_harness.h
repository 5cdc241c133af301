// A machine-code kernel (kernel/native.h) checked against the kernel interpreter bit for bit:
// the kernels the examples and the primitive cases launch, on inputs drawn for them, run both
// ways and compared element by element. Shared by the tests of the native and cc backends.
#pragma once
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../src/quant/fp16.h"
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
        kernel::Data d;
        d.dtype = b.dtype;
        for (int64_t j = 0; j < n; ++j) {
            if (b.dtype == kernel::DType::I64) {
                d.in.push_back((int64_t)(g() & 1));
                continue;
            }
            double x = normal(g);
            if (specials) {
                static const double sp[] = {0.0, -0.0, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0};
                if (g() % 16 == 0) x = sp[g() % 5];
            }
            d.re.push_back(kernel::round_to(b.dtype, x));
        }
        in.push_back(std::move(d));
    }
    return in;
}

/// `d` as the typed row-major buffer a machine-code kernel reads (native.h).
inline std::vector<unsigned char> typed(const kernel::Data& d) {
    std::vector<unsigned char> b;
    auto put = [&](const void* p, size_t n) { b.insert(b.end(), (const unsigned char*)p, (const unsigned char*)p + n); };
    switch (d.dtype) {
    case kernel::DType::F64:
        for (double x : d.re) put(&x, 8);
        break;
    case kernel::DType::F32:
        for (double x : d.re) {
            const float f = (float)x;
            put(&f, 4);
        }
        break;
    case kernel::DType::BF16:
        for (double x : d.re) {
            const uint16_t h = gk::fp32_to_bf16((float)x);
            put(&h, 2);
        }
        break;
    case kernel::DType::I64:
        for (int64_t x : d.in) put(&x, 8);
        break;
    }
    return b;
}

/// The bytes of `d`'s elements as the kernel interpreter computed them, in its storage type.
inline std::vector<unsigned char> typed_output(const kernel::Data& d) { return typed(d); }

/// Whether the `esize` bytes at `p` are a NaN of a real storage type (8: f64, 4: f32, 2: bf16).
inline bool is_nan_bytes(const unsigned char* p, size_t esize) {
    if (esize == 8) {
        uint64_t u;
        std::memcpy(&u, p, 8);
        return (u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    }
    if (esize == 4) {
        uint32_t u;
        std::memcpy(&u, p, 4);
        return (u & 0x7FFFFFFFu) > 0x7F800000u;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return (h & 0x7FFFu) > 0x7F80u;
}

/// Runs `k` on `in` through the interpreter and through `code`, and compares: "" when both
/// fail or both write the same bytes, else what differs (the first element). A NaN equals any
/// NaN: IEEE 754 leaves the sign and payload of an operation's NaN result open, and compilers
/// (GCC for the interpreter, LLVM and cc for the machine code) commute a + b and a * b, which
/// picks the other operand's NaN when both are NaNs of different signs.
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
    std::vector<std::vector<unsigned char>> bytes;
    for (const kernel::Data& d : in) bytes.push_back(typed(d));
    int64_t n = 1;
    for (const Axis& a : k.output.axes) n *= a.size;
    const size_t esize = k.output.dtype == kernel::DType::BF16 ? 2 : k.output.dtype == kernel::DType::F32 ? 4 : 8;
    bytes.emplace_back((size_t)n * esize, (unsigned char)0xA5);  // not zeroed: the kernel writes every element
    std::vector<void*> bufs;
    for (auto& b : bytes) bufs.push_back(b.data());
    int64_t err[3] = {0, 0, 0};
    const std::optional<kernel::Split> sp = kernel::split_loop(k);
    const int st = code.fn(bufs.data(), sp ? (lo >= 0 ? lo : sp->lo) : 0, sp ? (hi >= 0 ? hi : sp->hi) : 0, err);
    if (!want_err.empty() || st != PRESK_OK) {
        if (!want_err.empty() && st != PRESK_OK) return "";
        return k.name + ": interpreter " + (want_err.empty() ? "ran" : "failed: " + want_err) + ", compiled " +
               (st == PRESK_OK ? "ran" : "failed: " + kernel::status_message(k, st, err));
    }
    const std::vector<unsigned char> w = typed_output(want);
    const std::vector<unsigned char>& got = bytes.back();
    if (w.size() != got.size()) return k.name + ": output sizes differ";
    const bool real = k.output.dtype != kernel::DType::I64;
    for (size_t i = 0; i < w.size(); i += esize) {
        if (real && is_nan_bytes(&w[i], esize) && is_nan_bytes(&got[i], esize)) continue;
        if (std::memcmp(&w[i], &got[i], esize) != 0)
            return k.name + ": element " + std::to_string(i / esize) + " differs from the interpreter's";
    }
    return "";
}

} // namespace presk::test
