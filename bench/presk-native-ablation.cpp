// presk-native-ablation: the native backend's code-generator rules (kernel::NativeOptions)
// measured one by one on representative kernels, each rule switched off with the others on,
// and LLVM's O2 pipeline against O3; one thread, the kernel called on its whole range.
// It prints a Markdown table of medians (ms) for docs/performance.md ("presk: the native
// code generator") and never fails. Each variant's output is checked against the default's
// bytes (the rules change no bit), and the kernel interpreter is timed beside them where it
// takes under a few seconds.
//
// Usage: presk-native-ablation [--repeat N] (default 5)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/prims.h"
#include "median_time.h"
#include "kernel/eval.h"
#include "kernel/llvm_jit.h"
#include "kernel/lower.h"

namespace {

using namespace presk;
using kernel::DType;
using kernel::Kernel;

TypeP real_t(std::vector<Axis> axes) { return tensor_type(Elem::Real, std::move(axes)); }

kernel::Node node(const std::string& prim, std::vector<TypeP> ops, std::vector<int64_t> ints = {}) {
    TypeP r = core::prim_type(prim, ops, ints, "");
    return kernel::Node{prim, std::move(ints), "", std::move(ops), r};
}

struct Bench {
    std::string name;
    Kernel k;
    bool interp = true;  // time the kernel interpreter too
};

// Typed buffers for k's inputs (normal(0, 1)) and its output.
struct Buffers {
    std::vector<std::vector<unsigned char>> bytes;
    std::vector<kernel::Data> data;  // the inputs as the interpreter takes them
    std::vector<void*> ptrs;
};

Buffers make_buffers(const Kernel& k) {
    Buffers b;
    std::mt19937_64 g(7);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (const kernel::BufferType& t : k.inputs) {
        int64_t n = 1;
        for (const Axis& a : t.axes) n *= a.size;
        std::vector<double> x((size_t)n);
        for (double& v : x) v = normal(g);
        kernel::Data d = kernel::Data::from_reals(t.dtype, x);
        const auto* p = static_cast<const unsigned char*>(d.raw());
        b.bytes.emplace_back(p, p + (size_t)n * kernel::element_size(t.dtype));
        b.data.push_back(std::move(d));
    }
    int64_t n = 1;
    for (const Axis& a : k.output.axes) n *= a.size;
    b.bytes.emplace_back((size_t)n * kernel::element_size(k.output.dtype));
    for (auto& x : b.bytes) b.ptrs.push_back(x.data());
    return b;
}

} // namespace

int main(int argc, char** argv) {
    int repeat = 5;
    CLI::App app{"presk-native-ablation: presk's native code-generator rules on and off", "presk-native-ablation"};
    app.add_option("--repeat", repeat, "timed calls per median")->check(CLI::Range(1, 1000000))->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    if (!kernel::have_llvm()) {
        std::printf("presk-native-ablation: presk was built without LLVM\n");
        return 0;
    }
    const Axis S{"", 128}, M{"", 1024}, N{"", 1024};
    const TypeP small = real_t({S, S}), mat = real_t({M, N});
    auto dot = [&](const TypeP& a, const TypeP& b, DType t, int lanes) {
        return kernel::lower(node("dot", {a, b}), t, lanes);
    };
    const kernel::Node mul = node("mul", {mat, mat}), add = node("add", {mat, mat});
    const kernel::Group mul_add{{mul, add}, {{-1, -2}, {0, -3}}, {mat, mat, mat}};  // x * y + z
    const std::vector<Bench> benches = {
        {"dot 128^3 f32, tile [1, 8]", dot(small, small, DType::F32, 1)},
        {"dot 128^3 f32, tile [1, 8], 4 lanes", dot(small, small, DType::F32, 4)},
        {"dot 128^3 f64, tile [1, 8], 4 lanes", dot(small, small, DType::F64, 4)},
        {"dot 128^3 bf16, tile [1, 1]", dot(small, small, DType::BF16, 1)},
        {"dot 1024^3 f32, tile [1, 8]", dot(mat, mat, DType::F32, 1), false},
        {"dot 1024^3 f32, tile [1, 8], 4 lanes", dot(mat, mat, DType::F32, 4), false},
        {"matvec 1024 x 1024 f32 (row-wise)", dot(mat, real_t({N}), DType::F32, 1)},
        {"mul+add 1024 x 1024 f32", kernel::lower_group(mul_add, DType::F32)},
        {"mul+add 1024 x 1024 bf16", kernel::lower_group(mul_add, DType::BF16)},
        {"gelu 1024 x 1024 f32", kernel::lower(node("gelu", {mat}), DType::F32)},
        {"softmax 1024 x 1024 f32", kernel::lower(node("softmax", {mat}), DType::F32)},
        {"sum over rows 1024 x 1024 f64", kernel::lower(node("sum", {mat}, {1}), DType::F64)},
    };

    struct Variant {
        std::string name;
        kernel::NativeOptions o;
    };
    std::vector<Variant> variants{{"all on (O3)", {}}};
    {
        kernel::NativeOptions o;
        o.opt_level = 2;
        variants.push_back({"O2", o});
    }
    const char* rules[] = {"register output off", "loop addresses off", "unroll off", "vectorize off",
                           "invariant loads off"};
    for (int r = 0; r < 5; ++r) {
        kernel::NativeOptions o;
        bool* sw[] = {&o.register_output, &o.loop_addresses, &o.unroll, &o.vectorize, &o.invariant_loads};
        *sw[r] = false;
        variants.push_back({rules[r], o});
    }
    {
        // Without the alias scopes LLVM cannot keep an output element in a register itself.
        kernel::NativeOptions o;
        o.register_output = o.invariant_loads = false;
        variants.push_back({"register output and invariant loads off", o});
    }
    {
        kernel::NativeOptions o;
        o.register_output = o.loop_addresses = o.unroll = o.vectorize = o.invariant_loads = false;
        variants.push_back({"all rules off (O3)", o});
    }

    std::printf("LLVM's host CPU: %s; f32 lanes %d, f64 lanes %d; median of %d calls (ms), one thread\n\n",
                kernel::native_cpu().c_str(), kernel::native_lanes(DType::F32), kernel::native_lanes(DType::F64),
                repeat);
    std::printf("| kernel |");
    for (const Variant& v : variants) std::printf(" %s |", v.name.c_str());
    std::printf(" interpreter |\n|---|");
    for (size_t i = 0; i <= variants.size(); ++i) std::printf("---:|");
    std::printf("\n");
    for (const Bench& b : benches) {
        Buffers bufs = make_buffers(b.k);
        std::vector<unsigned char> want;
        std::printf("| %s |", b.name.c_str());
        for (const Variant& v : variants) {
            const kernel::NativeCode code = kernel::compile_llvm(b.k, v.o);
            const std::optional<kernel::Split> sp = kernel::split_loop(b.k);
            int64_t err[3];
            int st = 0;
            const int64_t lo = sp ? sp->lo : 0, hi = sp ? sp->hi : 0;
            const double ms = median_call_us(repeat, [&] { st = code.fn(bufs.ptrs.data(), lo, hi, err); }) / 1e3;
            const bool same = want.empty() || want == bufs.bytes.back();
            if (want.empty()) want = bufs.bytes.back();
            std::printf(" %.3f%s |", ms, st != PRESK_OK ? " (failed)" : same ? "" : " (bits differ)");
            std::fflush(stdout);
        }
        if (b.interp) {
            kernel::Compiled c(b.k);
            std::vector<const kernel::Data*> in;
            for (const kernel::Data& d : bufs.data) in.push_back(&d);
            kernel::Data out;
            std::printf(" %.1f |\n", median_call_us(std::min(repeat, 3), [&] { c.run(in, out); }) / 1e3);
        } else {
            std::printf(" |\n");
        }
    }
    return 0;
}
