// test-gguf-corpus: every file of the fuzzer's seed corpus and of the regression
// folder (inputs that once crashed the reader) through the fuzz target's checks,
// in every default test run, with or without clang.
#include "fuzz/check_input.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;

namespace {

void replay(const fs::path & dir, size_t min_files) {
    size_t n = 0;
    for (const auto & e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file() || e.path().extension() == ".md" || e.path().extension() == ".py") {
            continue;
        }
        std::ifstream f(e.path(), std::ios::binary);
        const std::vector<uint8_t> b{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
        EXPECT_EQ(gguf_check::check_input(b.data(), b.size()), "") << e.path();
        ++n;
    }
    EXPECT_GE(n, min_files) << dir;
}

TEST(GgufCorpus, Seeds) { replay(fs::path(GK_GGUF_TEST_DIR) / "corpus", 6); }

TEST(GgufCorpus, Regressions) { replay(fs::path(GK_GGUF_TEST_DIR) / "regressions", 0); }

} // namespace
