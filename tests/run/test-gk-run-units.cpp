// test-gk-run-units: the pieces of gk-run's runtime on their own: the sampler and the
// hyperparameters read from the bundled and random models.
#include "run/model.h"
#include "run/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace gk::run;

namespace {

const fs::path k_models = fs::path(GK_TEST_DATA) / "models";

struct closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};

hparams read(const std::string & file) {
    gk_gguf_error                     err{};
    std::unique_ptr<gk_gguf, closer>  g(gk_gguf_open((k_models / file).c_str(), &err));
    hparams                           hp;
    std::string                       msg;
    EXPECT_TRUE(g) << err.message;
    EXPECT_TRUE(read_hparams(g.get(), 512, hp, &msg)) << msg;
    return hp;
}

sampler_params greedy_params() {
    sampler_params p;
    p.temp = 0.0f;
    return p;
}

} // namespace

TEST(Sampler, GreedyTakesTheLowestIdOfTheLargest) {
    Sampler s(greedy_params());
    EXPECT_EQ(s.sample(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}), 1);
}

TEST(Sampler, NaNIsNeverChosen) {
    Sampler s(greedy_params());
    EXPECT_EQ(s.sample(std::vector<float>{NAN, -3.0f, NAN}), 1);
}

TEST(Sampler, RepeatPenaltyDividesPositiveAndMultipliesNegative) {
    sampler_params p = greedy_params();
    p.repeat_penalty = 2.0f;
    Sampler s(p);
    s.accept(1);
    // 3.0 / 2 = 1.5 < 2.0: token 0 wins.
    EXPECT_EQ(s.sample(std::vector<float>{2.0f, 3.0f}), 0);
    // -1 * 2 = -2 < -1.5: token 0 wins again.
    EXPECT_EQ(s.sample(std::vector<float>{-1.5f, -1.0f}), 0);
}

TEST(Sampler, TopKOfOneIsGreedy) {
    sampler_params p;
    p.top_k = 1;
    p.seed  = 5;
    Sampler s(p);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(std::vector<float>{0.1f, 0.3f, 0.2f}), 1);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
    // p(1)/p(0) = e^-5 < 0.05: only token 0 survives min_p.
    sampler_params p;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.05f;
    p.temp  = 1.0f;
    p.seed  = 9;
    Sampler s(p);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(std::vector<float>{5.0f, 0.0f}), 0);
}

TEST(Sampler, SameSeedSameDraws) {
    sampler_params p;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.temp  = 1.0f;
    p.seed  = 1234;
    Sampler            a(p), b(p);
    std::vector<float> flat(16, 0.0f);
    std::vector<int>   da, db;
    for (int i = 0; i < 64; ++i) {
        da.push_back(a.sample(flat));
        db.push_back(b.sample(flat));
    }
    EXPECT_EQ(da, db);
    // Uniform logits: every token is possible, so 64 draws hit more than one.
    EXPECT_GT(std::set<int>(da.begin(), da.end()).size(), 4u);
}

/** The sampler written the plain way (every candidate built, penalised, then partial_sort
 *  or sort), to hold Sampler's faster selection to the same tokens. */
class reference_sampler {
public:
    explicit reference_sampler(const sampler_params & p) : p_(p), rng_(p.seed) {}
    void accept(token_id id) {
        recent_.push_back(id);
        while (recent_.size() > static_cast<size_t>(p_.repeat_last_n)) recent_.erase(recent_.begin());
    }
    token_id sample(const std::vector<float> & logits) {
        struct cand {
            token_id id;
            float    logit, p;
        };
        std::vector<cand> c;
        for (size_t i = 0; i < logits.size(); ++i) {
            c.push_back({static_cast<token_id>(i), std::isnan(logits[i]) ? -INFINITY : logits[i], 0.0f});
        }
        for (token_id id : std::set<token_id>(recent_.begin(), recent_.end())) {
            float & l = c[static_cast<size_t>(id)].logit;
            l         = l > 0.0f ? l / p_.repeat_penalty : l * p_.repeat_penalty;
        }
        const auto by_logit = [](const cand & a, const cand & b) {
            return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
        };
        if (p_.temp <= 0.0f) return std::min_element(c.begin(), c.end(), by_logit)->id;
        if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < c.size()) {
            std::partial_sort(c.begin(), c.begin() + p_.top_k, c.end(), by_logit);
            c.resize(static_cast<size_t>(p_.top_k));
        } else {
            std::sort(c.begin(), c.end(), by_logit);
        }
        const auto softmax = [&] {
            float mx = -INFINITY;
            for (const cand & x : c) mx = std::max(mx, x.logit);
            double sum = 0.0;
            for (cand & x : c) sum += (x.p = std::exp(x.logit - mx));
            for (cand & x : c) x.p = static_cast<float>(x.p / sum);
        };
        softmax();
        if (p_.top_p < 1.0f) {
            double cum  = 0.0;
            size_t keep = c.size();
            for (size_t i = 0; i < c.size(); ++i) {
                cum += c[i].p;
                if (cum >= p_.top_p) {
                    keep = i + 1;
                    break;
                }
            }
            c.resize(keep);
        }
        if (p_.min_p > 0.0f) {
            const float floor_logit = c.front().logit + std::log(p_.min_p);
            size_t      keep        = 1;
            while (keep < c.size() && c[keep].logit >= floor_logit) ++keep;
            c.resize(keep);
        }
        for (cand & x : c) x.logit /= p_.temp;
        softmax();
        const double u   = static_cast<double>(rng_() >> 8) / static_cast<double>(1u << 24);
        double       cum = 0.0;
        for (const cand & x : c) {
            cum += x.p;
            if (u < cum) return x.id;
        }
        return c.back().id;
    }

private:
    sampler_params        p_;
    std::mt19937          rng_;
    std::vector<token_id> recent_;
};

// Logits with many ties (values on a coarse grid), a few NaN and -inf, over settings that
// take every path (greedy, top-k below / at / above the vocabulary, top-k off, top-p,
// min-p, penalties): Sampler draws the reference's tokens, step for step.
TEST(Sampler, SameTokensAsThePlainPipeline) {
    std::mt19937 gen(77);
    struct setting {
        float temp;
        int   top_k;
        float top_p, min_p, penalty;
    };
    const setting settings[] = {{0.0f, 40, 0.95f, 0.05f, 1.0f}, {0.0f, 40, 0.95f, 0.05f, 1.3f},
                                {0.8f, 40, 0.95f, 0.05f, 1.0f}, {0.8f, 40, 0.95f, 0.05f, 1.1f},
                                {1.5f, 1, 1.0f, 0.0f, 1.0f},    {1.0f, 300, 1.0f, 0.0f, 1.0f},
                                {1.0f, 301, 0.5f, 0.0f, 1.0f},  {1.0f, 0, 0.9f, 0.02f, 1.2f},
                                {2.0f, 7, 1.0f, 0.0f, 0.7f},    {0.6f, 64, 0.99f, 0.1f, 1.0f}};
    for (const setting & st : settings) {
        SCOPED_TRACE(testing::Message() << "temp " << st.temp << " top_k " << st.top_k << " top_p " << st.top_p
                                        << " min_p " << st.min_p << " penalty " << st.penalty);
        sampler_params p;
        p.temp           = st.temp;
        p.top_k          = st.top_k;
        p.top_p          = st.top_p;
        p.min_p          = st.min_p;
        p.repeat_penalty = st.penalty;
        p.repeat_last_n  = 16;
        p.seed           = 4242;
        Sampler           s(p);
        reference_sampler r(p);
        for (int step = 0; step < 60; ++step) {
            std::vector<float> logits(300);
            for (float & l : logits) l = static_cast<float>(static_cast<int>(gen() % 41) - 20) / 4.0f;
            logits[gen() % 300] = NAN;
            logits[gen() % 300] = -INFINITY;
            const token_id a = s.sample(logits), b = r.sample(logits);
            ASSERT_EQ(a, b) << "step " << step;
            s.accept(a);
            r.accept(b);
        }
    }
}

TEST(Hparams, Stories260K) {
    const hparams hp = read("stories260K.gguf");
    EXPECT_EQ(hp.arch, arch_kind::llama);
    EXPECT_EQ(hp.n_embd, 64);
    EXPECT_EQ(hp.n_head, 8);
    EXPECT_EQ(hp.n_head_kv, 4);
    EXPECT_EQ(hp.head_dim_k, 8);
    EXPECT_EQ(hp.rope_mode, GK_ROPE_TYPE_NORMAL);
    EXPECT_FLOAT_EQ(hp.rope_base, 10000.0f);
    EXPECT_FLOAT_EQ(hp.kq_scale, 1.0f / std::sqrt(8.0f));
    EXPECT_EQ(hp.n_swa, 0);
}

TEST(Hparams, Gemma3SlidingWindowPattern) {
    const hparams hp = read("gemma3-random.gguf");
    EXPECT_EQ(hp.arch, arch_kind::gemma3);
    EXPECT_EQ(hp.n_swa, 8);
    EXPECT_EQ(hp.swa_layer, (std::vector<bool>{true, true, true, true, true, false}));
    EXPECT_FLOAT_EQ(hp.rope_base, 1000000.0f);
    EXPECT_FLOAT_EQ(hp.rope_base_swa, 10000.0f);
    EXPECT_FLOAT_EQ(hp.embd_scale, 8.0f);
    EXPECT_FLOAT_EQ(hp.q_scale, 1.0f / std::sqrt(32.0f));
    EXPECT_EQ(hp.ffn_glu, GK_GLU_OP_GEGLU);
    EXPECT_TRUE(hp.post_norms);
}

TEST(Hparams, Qwen3HeadSize) {
    const hparams hp = read("qwen3-random.gguf");
    EXPECT_EQ(hp.arch, arch_kind::qwen3);
    EXPECT_EQ(hp.head_dim_k, 32);  // not n_embd / n_head = 16
    EXPECT_EQ(hp.n_embd_q(), 128);
    EXPECT_EQ(hp.rope_mode, GK_ROPE_TYPE_NEOX);
    EXPECT_TRUE(hp.qk_norm);
}

TEST(Hparams, Qwen2Biases) {
    const hparams hp = read("qwen2-random.gguf");
    EXPECT_EQ(hp.arch, arch_kind::qwen2);
    EXPECT_EQ(hp.rope_mode, GK_ROPE_TYPE_NEOX);
    EXPECT_FALSE(hp.qk_norm);
    EXPECT_FLOAT_EQ(hp.kq_scale, 1.0f / std::sqrt(16.0f));
}

TEST(Hparams, Phi3LongRope) {
    const hparams hp = read("phi3-random.gguf");
    EXPECT_EQ(hp.arch, arch_kind::phi3);
    EXPECT_EQ(hp.rope_mode, GK_ROPE_TYPE_NEOX);
    EXPECT_EQ(hp.n_rot, 12);  // partial rope: 12 of 16
    EXPECT_EQ(hp.n_ctx_train, 4096);
    EXPECT_EQ(hp.n_ctx_orig, 256);
    EXPECT_FLOAT_EQ(hp.rope_attn_factor, 1.2f);
    EXPECT_FLOAT_EQ(hp.q_scale, 1.0f / std::sqrt(16.0f));  // q scaled before attention
    EXPECT_FLOAT_EQ(hp.kq_scale, 1.0f);
    EXPECT_TRUE(hp.ffn_fused_up);
    EXPECT_EQ(hp.n_swa, 0);
}

TEST(Hparams, Gemma2Softcaps) {
    const hparams hp = read("gemma2-random.gguf");
    EXPECT_EQ(hp.arch, arch_kind::gemma2);
    EXPECT_EQ(hp.n_swa, 8);
    EXPECT_EQ(hp.swa_layer, (std::vector<bool>{true, false, true, false}));  // every other layer
    EXPECT_FLOAT_EQ(hp.rope_base_swa, hp.rope_base);
    EXPECT_FLOAT_EQ(hp.attn_softcap, 5.0f);
    EXPECT_FLOAT_EQ(hp.logit_softcap, 8.0f);
    EXPECT_FLOAT_EQ(hp.q_scale, 1.0f / std::sqrt(32.0f));
    EXPECT_FALSE(hp.qk_norm);
    EXPECT_TRUE(hp.post_norms);
}
