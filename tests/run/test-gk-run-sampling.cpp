// test-gk-run-sampling: gk-run's sampling options end to end on stories260K: each is
// taken, changes the text, and gives the same text again with the same seed; the order
// options spell llama.cpp's default; bad values are refused with one line.
#include "gk_run_exec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::run_gk_run;
using gk_run_test::run_result;

namespace {

const std::string k_stories = (fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf").string();

using args = std::vector<std::string>;

/** gk-run on stories260K with the prompt "Once" and `a` (one thread: the text does not
 *  depend on it, and the machine may be busy). */
run_result run(const args & a) {
    args all = {"-m", k_stories, "-p", "Once", "-t", "1"};
    all.insert(all.end(), a.begin(), a.end());
    return run_gk_run(all);
}

std::string text(const args & a) {
    const run_result r = run(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
}

/** The ids on -v's "generated tokens:" line. */
std::vector<int> generated(const run_result & r) {
    const std::string key = "gk-run: generated tokens:";
    const size_t      at  = r.err.find(key);
    std::vector<int>  ids;
    if (at == std::string::npos) return ids;
    std::istringstream ss(r.err.substr(at + key.size(), r.err.find('\n', at) - at - key.size()));
    for (int id; ss >> id;) ids.push_back(id);
    return ids;
}

}  // namespace

TEST(GkRunSampling, EachOptionChangesTheTextTheSameWayEveryTime) {
    struct pair_case {
        args base, with;
    };
    const args n40  = {"-n", "40", "-s", "7"};
    const auto plus = [](args a, const args & b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    const std::vector<pair_case> cases = {
        {n40, plus(n40, {"--presence-penalty", "5"})},
        {n40, plus(n40, {"--frequency-penalty", "5"})},
        {n40, plus(n40, {"--typical", "0.2"})},
        {n40, plus(n40, {"--xtc-probability", "1", "--xtc-threshold", "0.05"})},
        {n40, plus(n40, {"--mirostat", "2"})},
        {n40, plus(n40, {"--min-keep", "20"})},
        {n40, plus(n40, {"--dynatemp-range", "0.7"})},
        {plus(n40, {"--dynatemp-range", "0.7"}), plus(n40, {"--dynatemp-range", "0.7", "--dynatemp-exp", "0.2"})},
        {plus(n40, {"--mirostat", "2"}), plus(n40, {"--mirostat", "2", "--mirostat-ent", "1"})},
        {plus(n40, {"--mirostat", "1"}), plus(n40, {"--mirostat", "1", "--mirostat-ent", "2"})},
        {n40, plus(n40, {"-l", "261-inf"})},
        {n40, plus(n40, {"--logit-bias", "261-inf"})},
        {{"-n", "60", "-s", "7", "--top-k", "0", "--top-p", "1", "--min-p", "0", "--temp", "3"},
         {"-n", "60", "-s", "7", "--top-k", "0", "--top-p", "1", "--min-p", "0", "--temp", "3", "--top-n-sigma", "1"}},
        {{"-n", "60", "--temp", "0"},
         {"-n", "60", "--temp", "0", "--dry-multiplier", "5", "--dry-allowed-length", "1"}},
        // Order: min-p before the temperature of 2 cuts at the raw logits, after it at the
        // flattened ones.
        {plus(n40, {"--temp", "2", "--samplers", "min_p;temperature"}),
         plus(n40, {"--temp", "2", "--samplers", "temperature;min_p"})},
    };
    for (const pair_case & c : cases) {
        std::string line;
        for (const auto & a : c.with) line += a + " ";
        const std::string base = text(c.base);
        const std::string with = text(c.with);
        EXPECT_FALSE(with.empty()) << line;
        EXPECT_NE(with, base) << line;
        EXPECT_EQ(text(c.with), with) << line;
    }
}

TEST(GkRunSampling, OrderOptionsSpellLlamaCppsDefault) {
    const args        n40  = {"-n", "40", "-s", "7"};
    const std::string base = text(n40);
    args              a = n40, b = n40;
    a.insert(a.end(), {"--samplers", "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature"});
    b.insert(b.end(), {"--sampling-seq", "edskypmxt"});
    EXPECT_EQ(text(a), base);
    EXPECT_EQ(text(b), base);
    // Letters and names for the same order give the same text; the last of the two counts.
    args k = n40, kn = n40, both = n40;
    k.insert(k.end(), {"--sampling-seq", "kt"});
    kn.insert(kn.end(), {"--samplers", "top-k;temp"});
    both.insert(both.end(), {"--samplers", "min_p", "--sampling-seq", "kt"});
    const std::string kt = text(k);
    EXPECT_NE(kt, base);
    EXPECT_EQ(text(kn), kt);
    EXPECT_EQ(text(both), kt);
}

TEST(GkRunSampling, MinusInfBiasNeverEmitsTheToken) {
    const run_result plain = run({"-n", "40", "-s", "7", "-v"});
    const auto       ids   = generated(plain);
    ASSERT_FALSE(ids.empty()) << plain.err;
    ASSERT_NE(std::find(ids.begin(), ids.end(), 261), ids.end()) << "token 261 is not in the plain text";
    const run_result biased = run({"-n", "40", "-s", "7", "-v", "-l", "261-inf"});
    const auto       bids   = generated(biased);
    ASSERT_EQ(bids.size(), 40u) << biased.err;
    EXPECT_EQ(std::find(bids.begin(), bids.end(), 261), bids.end());
    EXPECT_NE(biased.err.find("gk-run: sampler chain: logits -> logit-bias -> penalties -> dry"), std::string::npos)
        << biased.err;
}

TEST(GkRunSampling, BadValuesAreRefused) {
    struct bad_case {
        args        a;
        std::string message;
    };
    const std::vector<bad_case> cases = {
        {{"--presence-penalty", "nan"}, "--presence-penalty must be a finite number"},
        {{"--frequency-penalty", "inf"}, "--frequency-penalty must be a finite number"},
        {{"--typical", "2"}, "--typical must be in [0, 1]"},
        {{"--typical", "nan"}, "--typical must be in [0, 1]"},
        {{"--top-n-sigma", "nan"}, "--top-n-sigma must be a finite number"},
        {{"--xtc-probability", "-0.5"}, "--xtc-probability must be in [0, 1]"},
        {{"--xtc-threshold", "1.5"}, "--xtc-threshold must be in [0, 1]"},
        {{"--mirostat", "3"}, "--mirostat must be 0, 1 or 2"},
        {{"--min-keep", "-1"}, "--min-keep must be >= 0"},
        {{"--dynatemp-range", "nan"}, "--dynatemp-range must be a finite number >= 0"},
        {{"--dynatemp-exp", "-1"}, "--dynatemp-exp must be a finite number >= 0"},
        {{"--mirostat-lr", "nan"}, "--mirostat-lr must be a finite number >= 0"},
        {{"--mirostat-ent", "-1"}, "--mirostat-ent must be a finite number >= 0"},
        {{"--dry-multiplier", "-1"}, "--dry-multiplier must be a finite number >= 0"},
        {{"--dry-base", "nan"}, "--dry-base must be a finite number >= 0"},
        {{"--dry-allowed-length", "-1"}, "--dry-allowed-length must be >= 0"},
        {{"--dry-penalty-last-n", "-2"}, "--dry-penalty-last-n must be >= -1"},
        {{"--dry-sequence-breaker", ""}, "--dry-sequence-breaker must not be empty"},
        {{"-l", "5"}, "--logit-bias '5': expected TOKEN_ID+BIAS or TOKEN_ID-BIAS"},
        {{"-l", "x+1"}, "--logit-bias 'x+1': expected"},
        {{"-l", "5+"}, "--logit-bias '5+': expected"},
        {{"-l", "5+1x"}, "--logit-bias '5+1x': expected"},
        {{"-l", "5+nan"}, "--logit-bias '5+nan': expected"},
        {{"-l", "5+inf"}, "--logit-bias '5+inf': +inf is not a bias"},
        {{"-l", "512+1", "-n", "1"}, "--logit-bias: token 512 is not in the vocabulary (512 tokens)"},
        {{"--samplers", "top_k;foo"}, "--samplers: unknown sampler 'foo'"},
        {{"--samplers", "top_k;"}, "--samplers: unknown sampler ''"},
        {{"--samplers", "infill"}, "--samplers: the sampler 'infill' is llama.cpp's but gk-run does not have it"},
        {{"--sampling-seq", "kq"}, "--sampling-seq: unknown letter 'q'"},
        {{"--sampling-seq", "a"}, "--sampling-seq: the letter 'a' (adaptive_p) is llama.cpp's"},
    };
    for (const bad_case & c : cases) {
        const run_result r = run(c.a);
        EXPECT_EQ(r.exit_code, 1) << c.message << "\n" << r.err;
        const auto lines = r.err_lines();
        ASSERT_EQ(lines.size(), 1u) << r.err;
        EXPECT_EQ(lines[0].rfind("gk-run: error: ", 0), 0u) << lines[0];
        EXPECT_NE(lines[0].find(c.message), std::string::npos) << lines[0];
    }
}
