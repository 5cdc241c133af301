// Threads on the machine-code backends (issue 11, "one worker and many agree bit for bit on
// every example"): every example entry of the conformance suite run on native and cc at 1, 2
// and 3 workers, with every kernel that has a split loop divided (ExecOptions::split_work 0, so
// that the small examples exercise the split as a large model does), gives the same bytes as
// one worker, element by element, in f64, f32 and bf16.
#include <gtest/gtest.h>

#include <cstring>

#include "kernel/llvm_jit.h"
#include "leaves.h"
#include "lang/checker.h"
#include "lang/parser.h"
#include "realize/conformance.h"
#include "realize/executor.h"
#include "ref/interp.h"

namespace presk::realize {
namespace {

using test::leaves;

void same_bits_at_every_worker_count(Backend b) {
    for (const Case& c : example_cases(PRESK_SOURCE_DIR "/examples")) {
        Source src{c.path, c.text};
        CheckOptions co;
        co.dims = c.dims;
        const core::Program p = check(parse(src), c.entry, co);
        ref::Interp interp(p, {64, 7, false});
        const std::vector<ref::Value> args = interp.entry_args(c.given);
        for (const char* r : {"f64", "f32", "bf16"}) {
            std::vector<std::vector<unsigned char>> one;
            int64_t divided = 0;
            std::vector<std::unique_ptr<Executor>> held;  // their kernels stay compiled for the next
            for (int threads : {1, 2, 3}) {
                ExecOptions o{7};
                o.backend = b;
                o.threads = threads;
                o.split_work = 0;
                Executor& ex = *held.emplace_back(std::make_unique<Executor>(p, parse_realization(r), o));
                std::vector<std::vector<unsigned char>> got;
                leaves(ex.call(p.entry, args), got);
                if (threads == 1) {
                    one = got;
                    for (const kernel::Kernel* k : ex.kernels()) divided += kernel::split_loop(*k) ? 1 : 0;
                    continue;
                }
                ASSERT_EQ(got.size(), one.size());
                for (size_t l = 0; l < got.size(); ++l)
                    EXPECT_TRUE(got[l] == one[l]) << c.name << " in " << r << " at " << threads << " workers: leaf " << l;
            }
            EXPECT_GT(divided, 0) << c.name << " in " << r << ": no kernel was divided";
        }
    }
}

TEST(Threads, NativeOneWorkerAndManyAgree) {
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: built without LLVM (the native backend)";
    same_bits_at_every_worker_count(Backend::Native);
}

TEST(Threads, CcOneWorkerAndManyAgree) {
    try {
        same_bits_at_every_worker_count(Backend::Cc);
    } catch (const Error& e) {
        if (std::strstr(e.what(), "was not found")) GTEST_SKIP() << "GK-SKIP: " << e.what();
        throw;
    }
}

} // namespace
} // namespace presk::realize
