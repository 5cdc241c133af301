// presk export --target c, in process: the exported program's element text (the C library's
// %.*g) equals presk run's (ref::append_real, MPFR's %.*Rg) on doubles of every kind; the files
// export_c writes, its program's name, and a launch input that an earlier launch wrote referring
// to that buffer. The programs themselves are built and run by the presk-export-* tests
// (tests/presk/CMakeLists.txt, export_check.sh).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>

#include "presk_test.h"
#include "realize/export_c.h"
#include "ref/interp.h"
#include "ref/print.h"

namespace presk::realize {
namespace {

std::string printf_g(double x, int digits) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    return buf;
}

std::string append_real(double x, int digits) {
    std::string s;
    ref::append_real(s, x, digits);
    return s;
}

TEST(ExportPrint, PrintfGEqualsAppendReal) {
    std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3, 5e-324, 2.2250738585072009e-308, 1.7976931348623157e308,
                              0.5, 2.5, 1e16, 1e17, 123456789012345678.0, 9.5, 0.95, 0.00001, 0.0001};
    for (int e = -320; e <= 308; ++e) {  // around every power of ten: the notation switches there
        const double p = std::pow(10.0, e);
        xs.insert(xs.end(), {p, std::nextafter(p, 0.0), std::nextafter(p, INFINITY), -p});
    }
    std::mt19937_64 g(11);
    for (int i = 0; i < 20000; ++i) {
        const double x = std::bit_cast<double>(g());
        if (std::isfinite(x)) xs.push_back(x);
    }
    int64_t compared = 0;
    for (double x : xs)
        for (int digits : {1, 2, 3, 6, 9, 15, 16, 17, 21, 40}) {
            ASSERT_EQ(printf_g(x, digits), append_real(x, digits)) << std::hexfloat << x << " at " << digits << " digits";
            ++compared;
        }
    EXPECT_GT(compared, 200000);
}

CExport export_of(const std::string& text, const std::string& entry, const std::map<std::string, int64_t>& dims,
                  const std::string& r) {
    CheckOptions co;
    co.dims = dims;
    std::string err;
    core::Program p = test::compile(text, entry, co, &err);
    if (!err.empty()) throw Error({}, err);
    ref::Interp interp(p, {64, 7, false});
    return export_c(p, parse_realization(r), interp.entry_args({}), {7, false, true}, p.entry, 17);
}

const std::string* file(const CExport& x, const std::string& name) {
    for (const auto& [n, t] : x.files)
        if (n == name) return &t;
    return nullptr;
}

/// The buffers launch `l` of main.c `m` passes ("b[3]", ...).
std::vector<std::string> launch_args(const std::string& m, int l) {
    size_t at = 0;
    for (int i = 0; i <= l; ++i) at = m.find("void* const a[] = {", at) + 19;
    std::vector<std::string> out;
    const std::string list = m.substr(at, m.find('}', at) - at);
    for (size_t p = 0; p < list.size();) {
        const size_t q = std::min(list.find(", ", p), list.size());
        out.push_back(list.substr(p, q - p));
        p = q + 2;
    }
    return out;
}

TEST(ExportC, FilesAndLaunches) {
    // One launch; an output that is an input unchanged (embedded, printed from its bits).
    const CExport x = export_of("fn f(x : [n, 2], y : [2]) -> ([n, 2], [2]) { (exp(x) * 2 + y, y) }", "f", {{"n", 3}}, "f32");
    EXPECT_EQ(x.name, "f");
    ASSERT_EQ(x.launches, 1);  // exp, mul and add fused
    for (const char* n : {"kernel0.c", "pmath.c", "pmath.h", "main.c", "Makefile"}) EXPECT_TRUE(file(x, n)) << n;
    EXPECT_EQ(x.files.size(), 5u);
    const std::string& m = *file(x, "main.c");
    EXPECT_NE(m.find("fputs(\"out0 : [n: 3, 2] = \", stdout);"), std::string::npos) << m;
    EXPECT_NE(m.find("fputs(\"\\nout1 : [2] = \", stdout);"), std::string::npos) << m;
    EXPECT_NE(file(x, "Makefile")->find("PROGRAM = f\n"), std::string::npos);
    EXPECT_NE(file(x, "Makefile")->find("-ffp-contract=off"), std::string::npos);

    // x * x, its sum, the sum / 2: each launch reads the one before it (and x is passed twice).
    const CExport y = export_of("fn g(x : [n, 2]) -> [n] { sum(x * x, 1) / 2 }", "g", {{"n", 3}}, "f64");
    ASSERT_EQ(y.launches, 3);
    const std::string& my = *file(y, "main.c");
    const std::vector<std::string> mul = launch_args(my, 0), sum = launch_args(my, 1), div = launch_args(my, 2);
    ASSERT_EQ(mul.size(), 3u) << my;
    EXPECT_EQ(mul[0], mul[1]) << my;
    ASSERT_EQ(sum.size(), 2u) << my;
    EXPECT_EQ(sum[0], mul[2]) << my;
    ASSERT_EQ(div.size(), 3u) << my;
    EXPECT_EQ(div[0], sum[1]) << my;
}

TEST(ExportC, ProgramNames) {
    const CExport x = export_of("fn main(x : [2]) -> [2] { x + 1 }", "main", {}, "f64");
    EXPECT_EQ(x.name, "entry_main");  // not the name of one of its files
    EXPECT_NE(file(x, "Makefile")->find("PROGRAM = entry_main\n"), std::string::npos);
}

} // namespace
} // namespace presk::realize
