// test-sampler: each stage of the sampler chain on hand-made logits. The expected values
// are worked out by hand from each sampler's definition (llama.cpp's), in the comments.
#include "run/sampler.h"
#include "run/sampler_dry.h"
#include "run/tokenizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace gk::run;

namespace {

/** Every stage off but the temperature (1, or greedy with temp 0). */
sampler_params plain(float temp = 1.0f) {
    sampler_params p;
    p.temp  = temp;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed  = 42;
    return p;
}

/** The tokens drawn in `n` steps (a fresh sampler per seed 1..n, one draw each). */
std::set<token_id> first_draws(sampler_params p, const std::vector<float> & logits, int n = 200,
                               const sampler_context & context = {}) {
    std::set<token_id> seen;
    for (int s = 1; s <= n; ++s) {
        p.seed = static_cast<uint32_t>(s);
        Sampler smp(p, context);
        seen.insert(smp.sample(logits));
    }
    return seen;
}

/** Logits of the probabilities 0.4, 0.3, 0.2, 0.1. */
const std::vector<float> k_p4321 = {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};

}  // namespace

TEST(SamplerStages, DefaultOrderIsLlamaCpps) {
    std::string names;
    for (sampler_stage s : default_sampler_order())
        names += std::string(names.empty() ? "" : ";") + sampler_stage_name(s);
    EXPECT_EQ(names, "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature");
    std::string letters;
    for (char c : std::string("edskypmxt")) {
        const auto s = sampler_stage_from_char(c);
        ASSERT_TRUE(s) << c;
        letters += std::string(letters.empty() ? "" : ";") + sampler_stage_name(*s);
    }
    EXPECT_EQ(letters, names);
    EXPECT_EQ(sampler_stage_from_name("nucleus"), sampler_stage::top_p);
    EXPECT_EQ(sampler_stage_from_name("typical"), sampler_stage::typical_p);
    EXPECT_EQ(sampler_stage_from_name("temp"), sampler_stage::temperature);
    EXPECT_EQ(sampler_stage_from_name("top-n-sigma"), sampler_stage::top_n_sigma);
    EXPECT_FALSE(sampler_stage_from_name("infill"));
    EXPECT_FALSE(sampler_stage_from_name("TOP_K"));
    EXPECT_FALSE(sampler_stage_from_char('i'));
    EXPECT_EQ(Sampler(sampler_params{}).chain(),
              "logits -> penalties -> dry -> top-n-sigma -> top-k -> typical -> top-p -> min-p -> xtc -> temp-ext -> "
              "dist");
    sampler_params m;
    m.mirostat = 2;
    m.logit_biases.push_back({0, 1.0f});
    EXPECT_EQ(Sampler(m).chain(), "logits -> logit-bias -> temp -> mirostat-v2");
}

TEST(SamplerStages, FrequencyAndPresencePenalties) {
    // Accepted 2, 2, 1: token 2 loses 2 * 0.5 + 0.25 = 1.25 (3 -> 1.75), token 1 loses
    // 0.5 + 0.25 = 0.75 (2 -> 1.25); token 0 keeps its logit. Greedy then picks token 2 when
    // token 0 is below 1.75 and token 0 when above.
    sampler_params p    = plain(0.0f);
    p.frequency_penalty = 0.5f;
    p.presence_penalty  = 0.25f;
    const auto run      = [&](float l0, float l1) {
        Sampler s(p);
        for (token_id t : {2, 2, 1}) s.accept(t);
        return s.sample(std::vector<float>{l0, l1, 3.0f});
    };
    EXPECT_EQ(run(1.74f, 1.0f), 2);
    EXPECT_EQ(run(1.76f, 1.0f), 0);
    // Token 1 at 1.25 after its penalty, against token 0 (token 2 out of the way).
    const auto run1 = [&](float l0) {
        Sampler s(p);
        for (token_id t : {2, 2, 1}) s.accept(t);
        return s.sample(std::vector<float>{l0, 2.0f, -10.0f});
    };
    EXPECT_EQ(run1(1.24f), 1);
    EXPECT_EQ(run1(1.26f), 0);
}

TEST(SamplerStages, RepeatPenaltyThenFrequency) {
    // llama.cpp's order inside the stage: 3 / 2 = 1.5, then 1.5 - (2 * 0.5 + 0) = 0.5.
    sampler_params p    = plain(0.0f);
    p.repeat_penalty    = 2.0f;
    p.frequency_penalty = 0.5f;
    for (const auto & [l0, want] : {std::pair{0.49f, 1}, std::pair{0.51f, 0}}) {
        Sampler s(p);
        s.accept(1);
        s.accept(1);
        EXPECT_EQ(s.sample(std::vector<float>{l0, 3.0f}), want) << l0;
    }
}

TEST(SamplerStages, PenaltyWindow) {
    // repeat_last_n 2 after 2, 2, 1: the window holds 2 and 1, each once, so token 2 loses
    // 1 (3 -> 2) and beats token 0 at 1.9.
    sampler_params p    = plain(0.0f);
    p.frequency_penalty = 1.0f;
    p.repeat_last_n     = 2;
    Sampler s(p);
    for (token_id t : {2, 2, 1}) s.accept(t);
    EXPECT_EQ(s.sample(std::vector<float>{1.9f, -5.0f, 3.0f}), 2);
    // -1: the context (3 tokens here): after 2, 2, 1, 0 the window is 2, 1, 0.
    p.repeat_last_n = -1;
    Sampler c(p, sampler_context{3, {}, {}});
    for (token_id t : {2, 2, 1, 0}) c.accept(t);
    // 0: 2.5 - 1 = 1.5; 2: 3 - 1 = 2 (one 2 left in the window).
    EXPECT_EQ(c.sample(std::vector<float>{2.5f, -5.0f, 3.0f}), 2);
    // 0 (off): nothing is penalised.
    p.repeat_last_n = 0;
    Sampler off(p);
    for (token_id t : {2, 2, 2}) off.accept(t);
    EXPECT_EQ(off.sample(std::vector<float>{1.0f, 0.0f, 3.0f}), 2);
}

TEST(SamplerStages, LogitBias) {
    // [1, 2, 3] + {0: +1.5, 2: -inf}: [2.5, 2, -inf].
    sampler_params p = plain(0.0f);
    p.logit_biases   = {{0, 1.5f}, {2, -INFINITY}};
    EXPECT_EQ(Sampler(p).sample(std::vector<float>{1.0f, 2.0f, 3.0f}), 0);
    // Two biases on one token add: 1 + 0.4 + 0.4 = 1.8 < 2.
    p.logit_biases = {{0, 0.4f}, {0, 0.4f}};
    EXPECT_EQ(Sampler(p).sample(std::vector<float>{1.0f, 2.0f, 0.0f}), 1);
    // An id past the vocabulary is ignored, not written.
    p.logit_biases = {{7, 100.0f}};
    EXPECT_EQ(Sampler(p).sample(std::vector<float>{1.0f, 2.0f, 0.0f}), 1);
    // -inf on every token but one: sampling can only draw that one.
    sampler_params q = plain(1.0f);
    q.logit_biases   = {{0, -INFINITY}, {1, -INFINITY}, {3, -INFINITY}};
    EXPECT_EQ(first_draws(q, k_p4321), (std::set<token_id>{2}));
}

TEST(SamplerStages, BannedTokensAreNeverSampled) {
    // --ignore-eos: the end-of-generation tokens get -inf after the user's biases, so a
    // +100 bias does not bring one back (llama.cpp: "implies --logit-bias EOS-inf").
    sampler_params p = plain(0.0f);
    p.logit_biases   = {{2, 100.0f}};
    EXPECT_EQ(Sampler(p, sampler_context{0, {}, {2}}).sample(std::vector<float>{1.0f, 2.0f, 3.0f}), 1);
    sampler_params q = plain(1.0f);
    EXPECT_EQ(first_draws(q, k_p4321, 200, sampler_context{0, {}, {0, 3}}), (std::set<token_id>{1, 2}));
}

TEST(SamplerStages, TypicalP) {
    // p = 0.4, 0.3, 0.2, 0.1: entropy H = 1.27985 nats; |-ln p - H| = 0.3636, 0.0759,
    // 0.3296, 1.0227, so the typical order is 1, 2, 0, 3. Cumulative 0.3, 0.5, 0.9, 1.0:
    // typical 0.25 keeps {1} (0.3 > 0.25); 0.45 keeps {1, 2}; 0.85 keeps {1, 2, 0}.
    sampler_params p = plain();
    p.typical_p      = 0.25f;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{1}));
    p.typical_p = 0.45f;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{1, 2}));
    p.typical_p = 0.85f;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{0, 1, 2}));
    p.typical_p = 1.0f;  // off
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{0, 1, 2, 3}));
    // Greedy after typical: the most likely survivor, token 1, not token 0.
    sampler_params g = plain(0.0f);
    g.typical_p      = 0.25f;
    EXPECT_EQ(Sampler(g).sample(k_p4321), 1);
}

TEST(SamplerStages, TopNSigma) {
    // [3, 2, 1, 0]: mean 1.5, standard deviation sqrt(1.25) = 1.118. n = 1 keeps logits
    // >= 1.882 ({0, 1}); n = 0.5 keeps >= 2.441 ({0}); n = 2 keeps >= 0.764 ({0, 1, 2}).
    // The NaN (read as -inf) is left out of the mean and deviation.
    const std::vector<float> l = {3.0f, 2.0f, 1.0f, 0.0f, NAN};
    sampler_params           p = plain();
    p.top_n_sigma              = 1.0f;
    EXPECT_EQ(first_draws(p, l), (std::set<token_id>{0, 1}));
    p.top_n_sigma = 0.5f;
    EXPECT_EQ(first_draws(p, l), (std::set<token_id>{0}));
    p.top_n_sigma = 2.0f;
    EXPECT_EQ(first_draws(p, l), (std::set<token_id>{0, 1, 2}));
    p.top_n_sigma = -1.0f;  // off
    EXPECT_EQ(first_draws(p, l), (std::set<token_id>{0, 1, 2, 3}));
}

TEST(SamplerStages, Xtc) {
    // p = 0.4, 0.3, 0.2, 0.1. Threshold 0.25: tokens 0 and 1 reach it, all but the least
    // likely of them (token 1) go, so greedy then takes token 1. Threshold 0.15: 0, 1, 2
    // reach it, 0 and 1 go: token 2. Threshold 0.35: only token 0 reaches it, nothing goes.
    sampler_params p  = plain(0.0f);
    p.xtc_probability = 1.0f;
    for (const auto & [threshold, want] :
         {std::pair{0.25f, 1}, std::pair{0.15f, 2}, std::pair{0.35f, 0}, std::pair{0.6f, 0} /* > 0.5: off */}) {
        p.xtc_threshold = threshold;
        EXPECT_EQ(Sampler(p).sample(k_p4321), want) << threshold;
    }
    // Probability 0.5: the coin sometimes removes token 0 and sometimes not; the same seed
    // gives the same coins.
    p.xtc_probability = 0.5f;
    p.xtc_threshold   = 0.25f;
    std::vector<token_id> a, b;
    Sampler               sa(p), sb(p);
    for (int i = 0; i < 64; ++i) {
        a.push_back(sa.sample(k_p4321));
        b.push_back(sb.sample(k_p4321));
    }
    EXPECT_EQ(a, b);
    EXPECT_EQ(std::set<token_id>(a.begin(), a.end()), (std::set<token_id>{0, 1}));
}

TEST(SamplerStages, MinKeep) {
    // p = 0.4, 0.3, 0.2, 0.1. top-p 0.5: cumulative 0.4, 0.7 keeps {0, 1}; min-keep 3 {0, 1, 2}.
    sampler_params p = plain();
    p.top_p          = 0.5f;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{0, 1}));
    p.min_keep = 3;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{0, 1, 2}));
    // min-p 0.6: p >= 0.24 keeps {0, 1}; min-keep 3 {0, 1, 2} (with top-k, sorted, and
    // without, unsorted).
    for (int k : {0, 4}) {
        sampler_params q = plain();
        q.top_k          = k;
        q.min_p          = 0.6f;
        EXPECT_EQ(first_draws(q, k_p4321), (std::set<token_id>{0, 1})) << k;
        q.min_keep = 3;
        EXPECT_EQ(first_draws(q, k_p4321), (std::set<token_id>{0, 1, 2})) << k;
    }
    // typical 0.25 keeps {1} (see TypicalP); min-keep 2 {1, 2}.
    sampler_params t = plain();
    t.typical_p      = 0.25f;
    t.min_keep       = 2;
    EXPECT_EQ(first_draws(t, k_p4321), (std::set<token_id>{1, 2}));
    // XTC threshold 0.15 would leave {2, 3}: fewer than min-keep 3, so nothing goes.
    sampler_params x  = plain(0.0f);
    x.xtc_probability = 1.0f;
    x.xtc_threshold   = 0.15f;
    EXPECT_EQ(Sampler(x).sample(k_p4321), 2);
    x.min_keep = 3;
    EXPECT_EQ(Sampler(x).sample(k_p4321), 0);
}

TEST(SamplerStages, DynamicTemperature) {
    // p = 0.4, 0.3, 0.2, 0.1: entropy 1.27985 over ln 4 = 1.38629 is 0.92322. temp 1,
    // range 0.5, exponent 1: T = 0.5 + 1.0 * 0.92322 = 1.42322. min-p after it sees
    // token 3 at 0.25^(1/T) = 0.3776 of token 0: kept at min-p 0.37 (T >= 1.394), dropped
    // at 0.39 (T < 1.472). A fixed T of 1 (0.25) or 1.5 (0.397) fails one of the two.
    sampler_params p = plain();
    p.dynatemp_range = 0.5f;
    p.order          = {sampler_stage::temperature, sampler_stage::min_p};
    p.min_p          = 0.37f;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{0, 1, 2, 3}));
    p.min_p = 0.39f;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{0, 1, 2}));
    // temp 0 with a range is not greedy: T = 0 + 0.5 * 0.92322.
    sampler_params g = plain(0.0f);
    g.dynatemp_range = 0.5f;
    EXPECT_EQ(first_draws(g, k_p4321).size(), 4u);
}

TEST(SamplerStages, MirostatV2) {
    // p = 0.4, 0.3, 0.2, 0.1: surprises 1.32, 1.74, 2.32, 3.32 bits. tau 0.8: mu starts
    // at 1.6, so only token 0 is kept (p 1 after renormalising, surprise 0); mu becomes
    // 1.6 - 0.1 * (0 - 0.8) = 1.68, still below 1.74: token 0 again; then mu = 1.76 keeps
    // tokens 0 and 1.
    sampler_params p = plain();
    p.mirostat       = 2;
    p.mirostat_tau   = 0.8f;
    p.mirostat_eta   = 0.1f;
    std::set<token_id> third;
    for (uint32_t seed = 1; seed <= 100; ++seed) {
        p.seed = seed;
        Sampler s(p);
        EXPECT_EQ(s.sample(k_p4321), 0);
        EXPECT_EQ(s.sample(k_p4321), 0);
        third.insert(s.sample(k_p4321));
    }
    EXPECT_EQ(third, (std::set<token_id>{0, 1}));
    // A high target keeps every token.
    p.mirostat_tau = 10.0f;
    EXPECT_EQ(first_draws(p, k_p4321), (std::set<token_id>{0, 1, 2, 3}));
}

TEST(SamplerStages, MirostatV1) {
    // p proportional to 1, 1/4, 1/9 (Zipf, s = 2): the estimate s_hat is 2, epsilon 1,
    // and k = (epsilon * 2^mu / (1 - 3^-1))^(1/2) = sqrt(1.5 * 2^mu). tau 0.5 (mu 1):
    // k = 1.73, one token; tau 1 (mu 2): k = 2.45, two; tau 3 (mu 6): k = 9.8, all three.
    const std::vector<float> l = {0.0f, -2.0f * std::log(2.0f), -2.0f * std::log(3.0f)};
    sampler_params           p = plain();
    p.mirostat                 = 1;
    p.mirostat_tau             = 0.5f;
    EXPECT_EQ(first_draws(p, l), (std::set<token_id>{0}));
    p.mirostat_tau = 1.0f;
    EXPECT_EQ(first_draws(p, l), (std::set<token_id>{0, 1}));
    p.mirostat_tau = 3.0f;
    EXPECT_EQ(first_draws(p, l), (std::set<token_id>{0, 1, 2}));
    // 20 tokens, p proportional to 1 / (i + 1)^2: k = sqrt(2^mu / (1 - 1/20)); tau 2 (mu 4):
    // sqrt(16.84) = 4.10, the four most likely (the 4th has p 0.044 among them).
    std::vector<float> zipf;
    for (int i = 0; i < 20; ++i) zipf.push_back(-2.0f * std::log(static_cast<float>(i + 1)));
    p.mirostat_tau = 2.0f;
    EXPECT_EQ(first_draws(p, zipf, 400), (std::set<token_id>{0, 1, 2, 3}));
}

TEST(SamplerStages, MirostatIgnoresTheOtherStages) {
    // llama.cpp's mirostat chain is temperature then mirostat: top-k 1 has no effect.
    sampler_params p = plain();
    p.mirostat       = 2;
    p.mirostat_tau   = 10.0f;
    p.top_k          = 1;
    EXPECT_EQ(first_draws(p, k_p4321).size(), 4u);
}

TEST(SamplerStages, OrderMatters) {
    // [3, 2.5], token 0 accepted, repeat penalty 2 (3 -> 1.5). Penalties then top-k 1: token 1.
    // Top-k 1 then penalties: only token 0 is left to penalise: token 0.
    sampler_params p = plain();
    p.top_k          = 1;
    p.repeat_penalty = 2.0f;
    p.order          = {sampler_stage::penalties, sampler_stage::top_k, sampler_stage::temperature};
    Sampler a(p);
    a.accept(0);
    EXPECT_EQ(a.sample(std::vector<float>{3.0f, 2.5f}), 1);
    p.order = {sampler_stage::top_k, sampler_stage::penalties, sampler_stage::temperature};
    Sampler b(p);
    b.accept(0);
    EXPECT_EQ(b.sample(std::vector<float>{3.0f, 2.5f}), 0);
    // The same with greedy: penalties after a cut are not folded into the argmax.
    p.temp = 0.0f;
    Sampler c(p);
    c.accept(0);
    EXPECT_EQ(c.sample(std::vector<float>{3.0f, 2.5f}), 0);
    // No temperature stage: temp 0 is not applied, the draw is at temperature 1.
    sampler_params q = plain(0.0f);
    q.order          = {};
    EXPECT_EQ(first_draws(q, k_p4321).size(), 4u);
}

TEST(SamplerStages, DryPenaltyOfLlamaCppsExample) {
    // a b c c b c y a b c (a = 0, b = 1, c = 2, y = 3). The text ends with "a b c"; earlier
    // "a b c" (followed by c) repeats 3 tokens, "b c" (followed by y) 2, "c" (followed by
    // b) 1. allowed length 2, multiplier 1, base 2: c loses 2^(3-2) = 2, y loses 2^0 = 1,
    // b (1 < 2) nothing.
    const std::vector<token_id> text = {0, 1, 2, 2, 1, 2, 3, 0, 1, 2};
    DryPenalty                  d(1.0f, 2.0f, 2, 100, {});
    for (token_id t : text) d.accept(t);
    using pen = std::vector<std::pair<token_id, float>>;
    EXPECT_EQ(d.penalties(), (pen{{2, 2.0f}, {3, 1.0f}}));

    // y a breaker: a repeat cannot reach back past it (3 tokens newer than it), and y
    // itself is never penalised.
    DryPenalty by(1.0f, 2.0f, 2, 100, {{3, {}}});
    for (token_id t : text) by.accept(t);
    EXPECT_EQ(by.penalties(), (pen{{2, 2.0f}}));
    // "a b" a two-token breaker: it ends one token from the end, so nothing repeats long enough.
    DryPenalty bab(1.0f, 2.0f, 2, 100, {{0, {1}}});
    for (token_id t : text) bab.accept(t);
    EXPECT_TRUE(bab.penalties().empty());
    // A window of 4 (y a b c) holds no repeat.
    DryPenalty w(1.0f, 2.0f, 2, 4, {});
    for (token_id t : text) w.accept(t);
    EXPECT_TRUE(w.penalties().empty());
    // Multiplier 0.8, base 1.75, allowed 1: c 0.8 * 1.75^2 = 2.45, y 0.8 * 1.75 = 1.4,
    // b 0.8 * 1.75^0 = 0.8.
    DryPenalty m(0.8f, 1.75f, 1, 100, {});
    for (token_id t : text) m.accept(t);
    const auto & got = m.penalties();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].first, 1);
    EXPECT_FLOAT_EQ(got[0].second, 0.8f);
    EXPECT_EQ(got[1].first, 2);
    EXPECT_FLOAT_EQ(got[1].second, 2.45f);
    EXPECT_EQ(got[2].first, 3);
    EXPECT_FLOAT_EQ(got[2].second, 1.4f);
    // Off: multiplier 0, or base below 1.
    DryPenalty off(0.0f, 2.0f, 2, 100, {}), low(1.0f, 0.5f, 2, 100, {});
    EXPECT_FALSE(off.enabled());
    EXPECT_FALSE(low.enabled());
}

TEST(SamplerStages, DryInTheSampler) {
    // The example above, logits for a, b, c, y = 0, 0, 1.9, 0.5: c drops to -0.1 and y to
    // -0.5, so greedy takes a (the lowest id of the two zeros).
    sampler_params p     = plain(0.0f);
    p.dry_multiplier     = 1.0f;
    p.dry_base           = 2.0f;
    p.dry_allowed_length = 2;
    Sampler s(p, sampler_context{100, {}, {}});
    for (token_id t : {0, 1, 2, 2, 1, 2, 3, 0, 1, 2}) s.accept(t);
    EXPECT_EQ(s.sample(std::vector<float>{0.0f, 0.0f, 1.9f, 0.5f}), 0);
    // Without DRY, c.
    Sampler n(plain(0.0f));
    EXPECT_EQ(n.sample(std::vector<float>{0.0f, 0.0f, 1.9f, 0.5f}), 2);
}

TEST(SamplerStages, DryBreakersFromTheVocabulary) {
    struct closer {
        void operator()(gk_gguf * g) const { gk_gguf_free(g); }
    };
    const auto                       path = std::filesystem::path(GK_TEST_DATA) / "models" / "stories260K.gguf";
    gk_gguf_error                    err{};
    std::unique_ptr<gk_gguf, closer> g(gk_gguf_open(path.c_str(), &err));
    ASSERT_TRUE(g) << err.message;
    std::string msg;
    const auto  tok = Tokenizer::load(g.get(), &msg);
    ASSERT_TRUE(tok) << msg;

    const auto has = [](const std::vector<dry_breaker> & v, const dry_breaker & b) {
        return std::find(v.begin(), v.end(), b) != v.end();
    };
    // ":" : every token whose piece holds a colon is a breaker alone.
    const auto colon = dry_breakers_from_text(*tok, {":"});
    ASSERT_FALSE(colon.empty());
    for (const dry_breaker & b : colon) {
        EXPECT_TRUE(b.tail.empty());
        EXPECT_NE(tok->token_to_piece(b.head, true).find(':'), std::string::npos);
    }
    // "Once upon": the token " Once" ends with the breaker's start, its tail is " upon" encoded.
    const auto once = tok->encode("Once", false, false);
    ASSERT_EQ(once.size(), 1u);
    ASSERT_EQ(tok->token_to_piece(once[0], true), " Once");
    const auto upon = tok->encode(" upon", false, false);
    const auto seq  = dry_breakers_from_text(*tok, {"Once upon"});
    EXPECT_TRUE(has(seq, {once[0], upon}));
    // Nothing for an empty breaker.
    EXPECT_TRUE(dry_breakers_from_text(*tok, {""}).empty());
}
