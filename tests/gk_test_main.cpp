// gk_test_main.cpp - the GoogleTest main of every tests/<layer>/test-*.cpp program.
//
// A case that cannot run on this machine skips with a message that starts "GK-SKIP: "
// (GTEST_SKIP() << "GK-SKIP: why"). The program then exits 77, which CTest reports as
// skipped (SKIP_RETURN_CODE), unless a case failed: a failure always fails the program.
// (Matching "GK-SKIP: " in the output instead, as before, reported a program that printed
// it as skipped even when another of its cases failed.) Other skips - a case that needs
// an opt-in variable, or a machine larger than the test assumes - leave the program's
// result to its other cases.
#include <gtest/gtest.h>

#include <string>

namespace {

/** Whether test `t` skipped with a "GK-SKIP: " message. */
bool skipped_here(const testing::TestInfo & t) {
    const testing::TestResult & r = *t.result();
    if (!r.Skipped()) {
        return false;
    }
    for (int i = 0; i < r.total_part_count(); ++i) {
        const testing::TestPartResult & part = r.GetTestPartResult(i);
        if (part.skipped() && std::string(part.message()).find("GK-SKIP: ") != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace

int main(int argc, char ** argv) {
    testing::InitGoogleTest(&argc, argv);
    if (RUN_ALL_TESTS() != 0) {
        return 1;
    }
    const testing::UnitTest & u = *testing::UnitTest::GetInstance();
    for (int s = 0; s < u.total_test_suite_count(); ++s) {
        const testing::TestSuite & suite = *u.GetTestSuite(s);
        for (int t = 0; t < suite.total_test_count(); ++t) {
            if (skipped_here(*suite.GetTestInfo(t))) {
                return 77;
            }
        }
    }
    return 0;
}
