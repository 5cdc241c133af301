// test-discovery - the registry's discovery line: printed to stderr once, on the first
// use of the registry, one line per device, unless GK_QUIET is set. ctest runs this
// program twice: with GK_QUIET=1 (silent) and with GK_QUIET=0 (tests/backend/CMakeLists.txt).
#include "gk/gk-backend.h"

#include "gk/debug.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace {

TEST(Discovery, OneLinePerDeviceOnFirstUseUnlessQuiet) {
    testing::internal::CaptureStderr();
    const size_t n = gk_backend_dev_count();  // the first use in this process
    gk_backend_dev_count();                   // prints nothing more
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_EQ(n, 1u);
    if (gk::env_flag("GK_QUIET")) {
        EXPECT_EQ(err, "");
        return;
    }
    const std::regex line("gk: CPU - gk CPU backend, [0-9]+ MiB \\| SIMD = (AVX512|AVX2|NEON|scalar) \\| AVX512 = [01] "
                          "\\| AVX2 = [01] \\| FMA = [01] \\| F16C = [01]"
                          "( \\| (HOST_[A-Z0-9_]+|BF16_DOT) = [a-z0-9-]+)+\n");
    EXPECT_TRUE(std::regex_match(err, line)) << err;
}

} // namespace
