// test-gk-run-batch: continuous batching (Batcher, model_session.h). Sessions that share
// a batcher are evaluated together, one forward graph per step; each session's logits
// must have the bits it gets alone, whatever shares its steps, however its tokens are cut
// into micro-batches, on every bundled model (stories260K, the random llama q8_0, qwen3
// and gemma3 - the last with sliding-window layers), and when a step reuses the last
// step's graph. A bad request fails alone, and
// threads that step in lockstep through the queue get the texts they get alone.
#include "run/completion.h"
#include "run/model.h"
#include "run/model_session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using gk::run::Batcher;
using gk::run::Model;
using gk::run::Session;
using gk::run::token_id;

namespace {

const fs::path k_models = fs::path(GK_TEST_DATA) / "models";

std::unique_ptr<Model> load(const std::string & name) {
    std::string error;
    auto        model = Model::load((k_models / name).string(), {}, &error);
    EXPECT_TRUE(model) << name << ": " << error;
    return model;
}

/** n token ids from a seed, all inside the vocabulary. */
std::vector<token_id> ids(int n, int seed, int64_t n_vocab) {
    std::vector<token_id> v;
    for (int i = 0; i < n; ++i) v.push_back(static_cast<token_id>(1 + (seed * 131 + i * 37) % (n_vocab - 1)));
    return v;
}

Batcher::request make_request(Session * s, std::span<const token_id> tokens, std::vector<float> * logits) {
    Batcher::request r;
    r.session = s;
    r.tokens  = tokens;
    r.logits  = logits;
    return r;
}

/** The logits `session` (alone, its own batcher) gives after each of `chunks` in turn. */
std::vector<std::vector<float>> solo(const Model & model, const std::vector<std::vector<token_id>> & chunks) {
    std::string             error;
    gk::run::session_params sp;
    sp.n_ctx     = 64;
    auto session = Session::create(model, sp, &error);
    EXPECT_TRUE(session) << error;
    std::vector<std::vector<float>> out;
    for (const auto & c : chunks) {
        std::vector<float> logits;
        EXPECT_TRUE(session->eval(c, logits, &error)) << error;
        out.push_back(logits);
    }
    return out;
}

class BatchedModels : public ::testing::TestWithParam<const char *> {};

TEST_P(BatchedModels, EachSessionGetsTheBitsItGetsAlone) {
    auto model = load(GetParam());
    ASSERT_TRUE(model);
    const int64_t V = model->hp().n_vocab;
    // Three sessions' steps: prompts of different lengths, single tokens, then a mix.
    const std::vector<std::vector<std::vector<token_id>>> steps = {
        {ids(9, 1, V), ids(3, 2, V), ids(12, 3, V)},
        {ids(1, 4, V), ids(1, 5, V), ids(1, 6, V)},
        {ids(1, 7, V), ids(1, 8, V), ids(1, 9, V)},
        {ids(7, 10, V), ids(1, 11, V), ids(2, 12, V)},
    };
    std::vector<std::vector<std::vector<float>>> expect(3);
    for (size_t s = 0; s < 3; ++s) {
        std::vector<std::vector<token_id>> chunks;
        for (const auto & step : steps) chunks.push_back(step[s]);
        expect[s] = solo(*model, chunks);
    }

    std::string             error;
    gk::run::session_params sp;
    sp.n_ctx    = 64;
    sp.n_ubatch = 5;  // cuts the prompts: a step holds parts of several requests
    auto batcher = Batcher::create(*model, sp, 3, &error);
    ASSERT_TRUE(batcher) << error;
    std::vector<std::unique_ptr<Session>> sessions;
    for (int s = 0; s < 3; ++s) {
        sessions.push_back(Session::create(*batcher, &error));
        ASSERT_TRUE(sessions.back()) << error;
    }
    int64_t n_past[3] = {0, 0, 0};
    for (size_t k = 0; k < steps.size(); ++k) {
        std::vector<float>          logits[3];
        std::vector<Batcher::request> req(3);
        std::vector<Batcher::request *> ptrs;
        for (size_t s = 0; s < 3; ++s) {
            req[s].session = sessions[s].get();
            req[s].tokens  = steps[k][s];
            req[s].logits  = &logits[s];
            ptrs.push_back(&req[s]);
        }
        batcher->eval_all(ptrs);
        for (size_t s = 0; s < 3; ++s) {
            ASSERT_TRUE(req[s].ok) << "step " << k << " session " << s << ": " << req[s].error;
            n_past[s] += static_cast<int64_t>(steps[k][s].size());
            EXPECT_EQ(sessions[s]->n_past(), n_past[s]);
            EXPECT_TRUE(logits[s] == expect[s][k]) << GetParam() << ": step " << k << ", session " << s
                                                   << ": the batched logits differ from the session's alone";
        }
    }
}

// Hidden states (Session::embed, the server's embeddings): a prompt's states have the same
// bits evaluated at once, in micro-batches of 1 and 3, beside another session that asks
// for logits, and in two embed() calls.
TEST_P(BatchedModels, HiddenStatesDoNotDependOnTheSteps) {
    auto model = load(GetParam());
    ASSERT_TRUE(model);
    const int64_t               V = model->hp().n_vocab, D = model->hp().n_embd;
    const std::vector<token_id> prompt = ids(11, 21, V);
    std::vector<float>          first;
    for (int64_t ub : {64, 1, 3}) {
        std::string             error;
        gk::run::session_params sp;
        sp.n_ctx    = 64;
        sp.n_ubatch = ub;
        auto batcher = Batcher::create(*model, sp, 2, &error);
        ASSERT_TRUE(batcher) << error;
        auto a = Session::create(*batcher, &error), b = Session::create(*batcher, &error);
        ASSERT_TRUE(a && b) << error;
        std::vector<float>              embd, logits;
        const std::vector<token_id>     other = ids(5, 22, V);
        Batcher::request                ra    = make_request(a.get(), prompt, nullptr);
        ra.embd                                = &embd;
        Batcher::request                rb    = make_request(b.get(), other, &logits);
        std::vector<Batcher::request *> both  = {&ra, &rb};
        batcher->eval_all(both);
        ASSERT_TRUE(ra.ok && rb.ok) << ra.error << rb.error;
        ASSERT_EQ(embd.size(), prompt.size() * static_cast<size_t>(D));
        EXPECT_EQ(a->n_past(), static_cast<int64_t>(prompt.size()));
        if (first.empty()) {
            first = embd;
            // Alone, through Session::embed, continuing after a part of the prompt.
            auto               c = Session::create(*batcher, &error);
            std::vector<float> head, tail;
            ASSERT_TRUE(c->embed(std::span(prompt).first(4), head, &error)) << error;
            ASSERT_TRUE(c->embed(std::span(prompt).subspan(4), tail, &error)) << error;
            head.insert(head.end(), tail.begin(), tail.end());
            EXPECT_TRUE(head == first) << GetParam() << ": embed in two calls differs from one";
        } else {
            EXPECT_TRUE(embd == first) << GetParam() << ": micro-batches of " << ub << " change the hidden states";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Bundled, BatchedModels,
                         ::testing::Values("stories260K.gguf", "llama-random-q8_0.gguf", "qwen3-random.gguf",
                                           "gemma3-random.gguf", "qwen2-random.gguf", "phi3-random.gguf",
                                           "gemma2-random.gguf"));

// A decode step reuses the previous step's graph while its shape holds (model_session.h:
// the cells read are padded to 32): token by token across a boundary (256), after a
// truncation (the reused graph now writes earlier cells), and after another session's
// step (a graph of another shape in between), each token's logits have the bits of the
// whole sequence evaluated at once in a new session.
TEST_P(BatchedModels, ReusedGraphsGiveTheBitsOfANewOne) {
    auto model = load(GetParam());
    ASSERT_TRUE(model);
    const int64_t               V    = model->hp().n_vocab;
    const std::vector<token_id> text = ids(262, 31, V);
    std::string                 error;
    gk::run::session_params     sp;
    sp.n_ctx = 300;
    /** The logits of text[0 .. n) evaluated at once. */
    const auto at_once = [&](size_t n) {
        auto               s = Session::create(*model, sp, &error);
        std::vector<float> logits;
        EXPECT_TRUE(s && s->eval(std::span(text).first(n), logits, &error)) << error;
        return logits;
    };
    auto batcher = Batcher::create(*model, sp, 2, &error);
    ASSERT_TRUE(batcher) << error;
    auto a = Session::create(*batcher, &error), b = Session::create(*batcher, &error);
    ASSERT_TRUE(a && b) << error;
    std::vector<float> logits;
    ASSERT_TRUE(a->eval(std::span(text).first(250), logits, &error)) << error;
    for (size_t n = 251; n <= text.size(); ++n) {
        ASSERT_TRUE(a->eval(std::span(text).subspan(n - 1, 1), logits, &error)) << error;
        if (n == 253 || n == 256 || n == 257 || n == text.size()) {
            EXPECT_TRUE(logits == at_once(n)) << GetParam() << ": token " << n << " one at a time";
        }
    }
    a->truncate(253);
    ASSERT_TRUE(a->eval(std::span(text).subspan(253, 1), logits, &error)) << error;
    EXPECT_TRUE(logits == at_once(254)) << GetParam() << ": after truncating to 253";
    std::vector<float> other;
    ASSERT_TRUE(b->eval(std::span(text).first(3), other, &error)) << error;
    ASSERT_TRUE(a->eval(std::span(text).subspan(254, 1), logits, &error)) << error;
    EXPECT_TRUE(logits == at_once(255)) << GetParam() << ": after another session's step";
}

TEST(Batcher, ABadRequestFailsAlone) {
    auto model = load("stories260K.gguf");
    ASSERT_TRUE(model);
    const int64_t           V = model->hp().n_vocab;
    std::string             error;
    gk::run::session_params sp;
    sp.n_ctx     = 16;
    auto batcher = Batcher::create(*model, sp, 4, &error);
    ASSERT_TRUE(batcher) << error;
    auto good = Session::create(*batcher, &error), bad_id = Session::create(*batcher, &error),
         too_long = Session::create(*batcher, &error), empty = Session::create(*batcher, &error);
    ASSERT_TRUE(good && bad_id && too_long && empty) << error;

    const std::vector<token_id> prompt = ids(6, 1, V);
    std::vector<token_id>       out_of_range = ids(4, 2, V);
    out_of_range[2]                          = static_cast<token_id>(V);
    const std::vector<token_id> over = ids(17, 3, V);
    std::vector<float>          logits[4];
    Batcher::request            req[4];
    req[0] = make_request(good.get(), prompt, &logits[0]);
    req[1] = make_request(bad_id.get(), out_of_range, &logits[1]);
    req[2] = make_request(too_long.get(), over, &logits[2]);
    req[3] = make_request(empty.get(), {}, &logits[3]);
    Batcher::request * ptrs[4] = {&req[0], &req[1], &req[2], &req[3]};
    batcher->eval_all(ptrs);

    ASSERT_TRUE(req[0].ok) << req[0].error;
    EXPECT_TRUE(logits[0] == solo(*model, {prompt})[0]);
    EXPECT_FALSE(req[1].ok);
    EXPECT_NE(req[1].error.find("outside the vocabulary"), std::string::npos) << req[1].error;
    EXPECT_FALSE(req[2].ok);
    EXPECT_NE(req[2].error.find("context full"), std::string::npos) << req[2].error;
    EXPECT_FALSE(req[3].ok);
    EXPECT_NE(req[3].error.find("no tokens"), std::string::npos) << req[3].error;
    EXPECT_EQ(bad_id->n_past(), 0);
    EXPECT_EQ(too_long->n_past(), 0);

    // A session of another batcher, and one session twice in a batch.
    auto other         = Session::create(*model, sp, &error);
    ASSERT_TRUE(other) << error;
    const std::vector<token_id> one = ids(1, 4, V), another = ids(1, 5, V);
    Batcher::request            f = make_request(other.get(), prompt, &logits[1]);
    Batcher::request            g = make_request(good.get(), one, &logits[2]);
    Batcher::request            h = make_request(good.get(), another, &logits[3]);
    Batcher::request * mixed[3] = {&f, &g, &h};
    batcher->eval_all(mixed);
    EXPECT_NE(f.error.find("not made on this batcher"), std::string::npos) << f.error;
    EXPECT_NE(g.error.find("two requests in one batch"), std::string::npos) << g.error;
    EXPECT_NE(h.error.find("two requests in one batch"), std::string::npos) << h.error;
    EXPECT_EQ(good->n_past(), 6);
}

TEST(Batcher, RefusesBadSizes) {
    auto model = load("stories260K.gguf");
    ASSERT_TRUE(model);
    std::string             error;
    gk::run::session_params sp;
    EXPECT_FALSE(Batcher::create(*model, sp, 0, &error));
    EXPECT_NE(error.find("at least one session"), std::string::npos) << error;
    sp.n_ubatch = 0;
    EXPECT_FALSE(Batcher::create(*model, sp, 2, &error));
    EXPECT_NE(error.find("micro-batch size 0"), std::string::npos) << error;
}

/** Greedy completions run on threads through one batcher give each thread the text it
 *  gets alone (the queue joins their steps; batch invariance keeps the bits). */
TEST(Batcher, ThreadsInLockstepGetTheirOwnText) {
    auto model = load("stories260K.gguf");
    ASSERT_TRUE(model);
    const int64_t V         = model->hp().n_vocab;
    constexpr int n_threads = 4;
    std::vector<gk::run::completion_params> params(n_threads);
    for (int t = 0; t < n_threads; ++t) {
        params[t].prompt             = ids(3 + 4 * t, 20 + t, V);
        params[t].n_predict          = 24;
        params[t].ignore_eos         = true;
        params[t].sampling.temp = 0.0f;
    }
    const auto run = [&](Session & s, const gk::run::completion_params & p, std::string & text) {
        gk::run::completion_result out;
        std::string                error;
        EXPECT_TRUE(gk::run::run_completion(s, *model, p, [](std::string_view) { return true; }, out, &error))
            << error;
        text = out.text;
    };
    std::vector<std::string> alone(n_threads), together(n_threads);
    std::string              error;
    gk::run::session_params  sp;
    sp.n_ctx = 64;
    for (int t = 0; t < n_threads; ++t) {
        auto s = Session::create(*model, sp, &error);
        ASSERT_TRUE(s) << error;
        run(*s, params[t], alone[t]);
    }
    auto batcher = Batcher::create(*model, sp, n_threads, &error);
    ASSERT_TRUE(batcher) << error;
    std::vector<std::unique_ptr<Session>> sessions;
    for (int t = 0; t < n_threads; ++t) {
        sessions.push_back(Session::create(*batcher, &error));
        ASSERT_TRUE(sessions.back()) << error;
        batcher->join();
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < n_threads; ++t) {
        threads.emplace_back([&, t] {
            run(*sessions[t], params[t], together[t]);
            batcher->leave();
        });
    }
    for (auto & th : threads) th.join();
    for (int t = 0; t < n_threads; ++t) {
        EXPECT_FALSE(alone[t].empty());
        EXPECT_EQ(together[t], alone[t]) << "thread " << t;
    }
}

} // namespace
