// test-gk-run-pipeline: the pieces of gk-run --mpi that need no MPI (docs/mpi.md): how
// pipeline_layers splits the layers over the ranks, and that the forward graphs of the
// stages (build_forward with a layer_range), chained in one process - each stage's
// out_embd handed to the next one's inp_embd as bytes, as the ranks hand it on - give the
// logits of the whole graph bit for bit.
#include "run/model.h"
#include "run/model_session.h"
#include "run/pipeline.h"

#include "gk/gk-sched.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace gk::run;

namespace {

const fs::path k_models = fs::path(GK_TEST_DATA) / "models";

TEST(PipelineLayers, ContiguousInRankOrderLargerFirst) {
    for (int n_ranks = 1; n_ranks <= 5; ++n_ranks) {
        int64_t at = 0;
        for (int rank = 0; rank < n_ranks; ++rank) {
            layer_range r;
            std::string error;
            ASSERT_TRUE(pipeline_layers(5, rank, n_ranks, r, &error)) << error;
            EXPECT_EQ(r.first, at) << n_ranks << " ranks, rank " << rank;
            const int64_t n = r.end - r.first;
            EXPECT_EQ(n, 5 / n_ranks + (rank < 5 % n_ranks ? 1 : 0)) << n_ranks << " ranks, rank " << rank;
            at = r.end;
        }
        EXPECT_EQ(at, 5) << n_ranks << " ranks";
    }
}

TEST(PipelineLayers, MoreRanksThanLayersIsRefused) {
    layer_range r;
    std::string error;
    EXPECT_FALSE(pipeline_layers(5, 0, 6, r, &error));
    EXPECT_NE(error.find("5 layers, fewer than the 6 MPI ranks"), std::string::npos) << error;
    EXPECT_FALSE(pipeline_layers(5, 3, 3, r, &error));
    EXPECT_FALSE(pipeline_layers(5, -1, 3, r, &error));
    EXPECT_FALSE(pipeline_layers(5, 0, 0, r, &error));
}

constexpr int64_t  k_tokens      = 6;  // within gemma3-random's window of 8: one mask serves both
constexpr uint16_t k_f16_neg_inf = 0xFC00;

/** The causal mask of k_tokens tokens at positions 0.. over as many cells. */
std::vector<uint16_t> causal_mask() {
    std::vector<uint16_t> m(k_tokens * k_tokens);
    for (int64_t i = 0; i < k_tokens; ++i) {
        for (int64_t j = 0; j < k_tokens; ++j) m[i * k_tokens + j] = j <= i ? 0 : k_f16_neg_inf;
    }
    return m;
}

void set(gk_tensor * t, const void * data, size_t bytes) {
    if (t) {
        ASSERT_EQ(gk_backend_tensor_set(t, data, 0, bytes), GK_STATUS_SUCCESS) << gk_backend_last_error();
    }
}

/** One forward graph of `layers` over the first k_tokens tokens of the prompt, on the CPU:
 *  from `hidden` when the layers start past 0; returns the bytes of the logits, or of
 *  out_embd when the layers end before the last. */
std::vector<uint8_t> forward(const Model & model, const KvCache & kv, layer_range layers,
                             const std::vector<uint8_t> & hidden) {
    const size_t   size = forward_graph_size(model.hp(), 1);
    gk_init_params ip{};
    ip.mem_size              = gk_graph_overhead_custom(size, false) + size * gk_tensor_overhead();
    ip.no_alloc              = true;
    gk_context *         ctx = gk_init(ip);
    gk_cgraph *          g   = gk_new_graph_custom(ctx, size, false);
    gk_backend_t         cpu = gk_backend_cpu_init();
    gk_sched_t           s   = gk_sched_new(&cpu, 1);
    const forward_seq    seq{&kv, k_tokens, k_tokens, true};
    forward_tensors      ft;
    std::vector<uint8_t> out;
    EXPECT_TRUE(build_forward(ctx, g, model, {&seq, 1}, ft, layers)) << gk_last_error(ctx);
    EXPECT_EQ(gk_sched_alloc_graph(s, g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    const std::vector<int32_t>  tokens{1, 400, 32, 7, 99, 250};
    const std::vector<int32_t>  pos{0, 1, 2, 3, 4, 5};
    const std::vector<uint16_t> mask = causal_mask();
    set(ft.tokens, tokens.data(), tokens.size() * sizeof(int32_t));
    set(ft.pos, pos.data(), pos.size() * sizeof(int32_t));
    set(ft.mask[0], mask.data(), mask.size() * sizeof(uint16_t));
    set(ft.mask_swa[0], mask.data(), mask.size() * sizeof(uint16_t));
    set(ft.inp_embd, hidden.data(), hidden.size());
    EXPECT_EQ(gk_sched_graph_compute(s, g), GK_STATUS_SUCCESS) << gk_backend_last_error();
    gk_tensor * result = ft.out_embd ? ft.out_embd : ft.logits;
    if (result) {
        out.resize(gk_nbytes(result));
        EXPECT_EQ(gk_backend_tensor_get(result, out.data(), 0, out.size()), GK_STATUS_SUCCESS);
    }
    gk_sched_free(s);
    gk_backend_free(cpu);
    gk_free(ctx);
    return out;
}

class PipelineStages : public ::testing::TestWithParam<const char *> {};

TEST_P(PipelineStages, ChainedGiveTheWholeGraphsLogits) {
    std::string error;
    auto        model = Model::load((k_models / GetParam()).string(), {}, &error);
    ASSERT_TRUE(model) << error;
    const hparams & hp = model->hp();
    auto            kv = KvCache::create(hp, 16, GK_TYPE_F16, GK_TYPE_F16, &error);
    ASSERT_TRUE(kv) << error;
    const std::vector<uint8_t> whole = forward(*model, *kv, {}, {});
    ASSERT_EQ(whole.size(), static_cast<size_t>(hp.n_vocab) * sizeof(float));
    for (int n_ranks = 2; n_ranks <= std::min<int64_t>(3, hp.n_layer); ++n_ranks) {
        auto staged = KvCache::create(hp, 16, GK_TYPE_F16, GK_TYPE_F16, &error);
        ASSERT_TRUE(staged) << error;
        std::vector<uint8_t> hidden;
        for (int rank = 0; rank < n_ranks; ++rank) {
            layer_range layers;
            ASSERT_TRUE(pipeline_layers(hp.n_layer, rank, n_ranks, layers, &error)) << error;
            hidden            = forward(*model, *staged, layers, hidden);
            const size_t want = rank + 1 < n_ranks ? static_cast<size_t>(hp.n_embd * k_tokens) * sizeof(float)
                                                   : whole.size();
            ASSERT_EQ(hidden.size(), want) << n_ranks << " stages, stage " << rank;
        }
        EXPECT_EQ(hidden, whole) << GetParam() << " in " << n_ranks << " stages";
    }
}

INSTANTIATE_TEST_SUITE_P(BundledModels, PipelineStages,
                         ::testing::Values("stories260K.gguf", "gemma3-random.gguf", "phi3-random.gguf"));

} // namespace
