// replay - runs every seed of the presk fuzz target (examples/, tests/presk/bad/) and every
// input that ever failed it (tests/presk/fuzz/regressions/) through check_program.h, so
// that a fixed failure stays fixed without clang or libFuzzer (ctest: presk-fuzz-replay).
#include "check_program.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

TEST(PreskFuzzReplay, SeedsAndRegressions) {
    namespace fs = std::filesystem;
    const fs::path root = PRESK_SOURCE_DIR;
    size_t n = 0;
    for (const char* dir : {"examples", "tests/presk/bad", "tests/presk/fuzz/regressions"}) {
        for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
            if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
            SCOPED_TRACE(e.path().string());
            std::ifstream in(e.path(), std::ios::binary);
            const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
            EXPECT_NO_THROW(presk_check::check_program(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
            ++n;
        }
    }
    EXPECT_GT(n, 20u);
}

} // namespace
