// presk train (src/presk/train, docs/presk.md "presk train"): the schedule, the data pipeline,
// reproducibility (the same seed twice gives the same parameters), the native backend's bits
// equal to the kernel interpreter's in f64, f32 and bf16, a resumed run equal to an
// uninterrupted one, and the refusals of bad checkpoints and bad options, on the tiny
// MiniGPT (V 16, D 8, H 2, L 2 at B = 2, T = 4) for a few steps.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernel/data.h"
#include "kernel/cost.h"
#include "kernel/llvm_jit.h"
#include "lang/checker.h"
#include "lang/parser.h"
#include "realize/planner.h"
#include "train/checkpoint.h"
#include "ref/chacha.h"
#include "train/pipeline.h"
#include "train/schedule.h"
#include "train/trainer.h"

namespace fs = std::filesystem;
using namespace presk;
using train::TrainOptions;

namespace {

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write(const fs::path& p, const std::string& text) {
    std::ofstream o(p, std::ios::binary);
    o << text;
}

CheckOptions tiny() {
    CheckOptions o;
    o.strict = true;
    o.dims = {{"V", 16}, {"D", 8}, {"H", 2}, {"L", 2}, {"T", 4}, {"B", 2}};
    return o;
}

class Train : public ::testing::Test {
protected:
    fs::path dir;

    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("presk-train-" + std::to_string(getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
        // A corpus with something to learn: phrases over 16 symbols in a seeded order.
        const std::vector<std::vector<int>> phrases = {{1, 2, 3, 4, 5}, {6, 7, 8, 9}, {10, 11, 12, 13, 14, 15}, {0, 3, 6, 9, 12}};
        ref::ChaCha rng(5, "test.corpus");
        std::string text;
        for (int n = 0; n < 60; ++n)
            for (int t : phrases[(size_t)(rng.next_unit() * 4)]) text += std::to_string(t) + " ";
        write(dir / "tokens.txt", text);
    }
    void TearDown() override { fs::remove_all(dir); }

    TrainOptions opts(const std::string& backend, int64_t steps) const {
        TrainOptions o;
        o.backend = backend;
        o.steps = steps;
        o.seed = 3;
        o.lr = 0.01;
        o.warmup = 1;
        o.data = (dir / "tokens.txt").string();
        return o;
    }

    /// The run's log; its checkpoints under dir/NAME when `name` is given.
    std::string run(TrainOptions o, const std::string& name = "", const CheckOptions& dims = tiny(),
                    const std::string& file = "minigpt.psk") {
        if (!name.empty()) o.checkpoint = (dir / name).string();
        Source src{std::string(PRESK_SOURCE_DIR) + "/examples/" + file, read(std::string(PRESK_SOURCE_DIR) + "/examples/" + file)};
        std::ostringstream log;
        train::train(src, o, dims, log);
        return log.str();
    }

    /// The message of the refusal, "" when the run succeeds.
    std::string refusal(const TrainOptions& o, const CheckOptions& dims = tiny(), const std::string& file = "minigpt.psk") {
        try {
            run(o, "", dims, file);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    }

    std::string tensors(const std::string& name, int64_t step) const {
        return read(dir / name / ("step-" + std::to_string(step)) / "tensors.bin");
    }
};

#define NEED_LLVM() \
    if (!kernel::have_llvm()) GTEST_SKIP() << "GK-SKIP: presk was built without LLVM (llvm-16-dev)"

} // namespace

TEST(TrainSchedule, WarmupThenCosine) {
    const train::Schedule s{0.01, 4, 12};
    EXPECT_EQ(train::learning_rate(s, 1), 0.01 / 4);
    EXPECT_EQ(train::learning_rate(s, 4), 0.01);
    EXPECT_EQ(train::learning_rate(s, 5), 0.01);  // the first step after the warm-up: the peak
    EXPECT_NEAR(train::learning_rate(s, 9), 0.005, 1e-15);  // half-way through the decay
    EXPECT_GT(train::learning_rate(s, 12), 0);
    EXPECT_LT(train::learning_rate(s, 12), train::learning_rate(s, 11));
    EXPECT_EQ(train::learning_rate({0.5, 0, 1}, 1), 0.5);
}

TEST_F(Train, PipelineWindowsAndEpochs) {
    std::string text;  // 0 1 2 ... 200: a window is known by its first token
    for (int t = 0; t <= 200; ++t) text += std::to_string(t) + "\n";
    write(dir / "count.txt", text);
    const train::TokenData d = train::read_tokens((dir / "count.txt").string());
    const TypeP ids = tensor_type(Elem::Int, {{"B", 3}, {"T", 4}}, 1000);
    train::Pipeline p({ids, ids}, {"ids", "targets"}, 3, d, nullptr);
    const int64_t windows = 200 / 4, per_epoch = windows / 3;  // 50 windows, 16 batches, 2 left out
    std::vector<std::vector<int64_t>> epochs(2);
    for (int64_t n = 1; n <= 2 * per_epoch; ++n) {
        train::BatchPos pos;
        const auto b = p.batch(n, &pos);
        EXPECT_EQ(pos.epoch, (n - 1) / per_epoch);
        EXPECT_EQ(pos.index, (n - 1) % per_epoch);
        ASSERT_EQ(b.size(), 2u);
        for (int64_t r = 0; r < 3; ++r) {
            const int64_t* x = b[0].t->in.data() + r * 4;
            const int64_t* y = b[1].t->in.data() + r * 4;
            EXPECT_EQ(x[0] % 4, 0) << "a window starts at a multiple of T";
            for (int k = 0; k < 4; ++k) {
                EXPECT_EQ(x[k], x[0] + k);
                EXPECT_EQ(y[k], x[k] + 1) << "the targets are the ids one token later";
            }
            epochs[(size_t)pos.epoch].push_back(x[0] / 4);
        }
    }
    for (auto e : epochs) {
        std::sort(e.begin(), e.end());
        EXPECT_EQ(std::adjacent_find(e.begin(), e.end()), e.end()) << "an epoch visits each window once at most";
        EXPECT_EQ(e.size(), (size_t)(3 * per_epoch));
    }
    EXPECT_NE(epochs[0], epochs[1]) << "each epoch has an order of its own";
    train::Pipeline again({ids, ids}, {"ids", "targets"}, 3, d, nullptr);
    train::BatchPos a, b;
    EXPECT_EQ(again.batch(per_epoch + 1, &a)[0].t->in, p.batch(per_epoch + 1, &b)[0].t->in) << "a batch is a function of the step";
}

TEST_F(Train, SameSeedSameParameters) {
    const std::string log = run(opts("kernel", 3), "a");
    EXPECT_EQ(run(opts("kernel", 3), "b"), log);
    EXPECT_EQ(tensors("a", 3), tensors("b", 3));
    TrainOptions other = opts("kernel", 3);
    other.seed = 4;
    run(other, "c");
    EXPECT_NE(tensors("c", 3), tensors("a", 3));
    EXPECT_NE(log.find("step 3  epoch 0  loss "), std::string::npos) << log;
}

TEST_F(Train, LossFallsOnTheCorpus) {
    TrainOptions o = opts("kernel", 12);
    o.lr = 0.03;
    const std::string log = run(o);
    auto loss = [&](int step) {
        const size_t at = log.find("step " + std::to_string(step) + "  ");
        return std::stod(log.substr(log.find("loss ", at) + 5));
    };
    EXPECT_NEAR(loss(1), std::log(16.0), 0.3) << log;
    EXPECT_LT(loss(12), loss(1) - 0.2) << log;
}

TEST_F(Train, NativeEqualsKernelInterpreter) {
    NEED_LLVM();
    for (const char* r : {"f64", "f32", "bf16"}) {
        TrainOptions k = opts("kernel", 3), n = opts("native", 3);
        k.realize = n.realize = r;
        n.threads = 2;
        EXPECT_EQ(run(n, std::string("n") + r), run(k, std::string("k") + r)) << r;
        EXPECT_EQ(tensors(std::string("n") + r, 3), tensors(std::string("k") + r, 3)) << r;
    }
}

TEST_F(Train, UnderThePlannersPlanEqualsTheDefault) {
    NEED_LLVM();
    const std::string file = std::string(PRESK_SOURCE_DIR) + "/examples/minigpt.psk";
    const core::Program grad = check(parse(Source{file, read(file)}), "MiniGPT{16, 8, 2, 2}.loss_grad", tiny());
    for (const char* r : {"f32"}) {
        const auto choices = realize::choose_plan(grad, realize::parse_realization(r), 2, kernel::host_registers(), kernel::native_lanes);
        bool moved = false;
        for (const auto& c : choices) moved = moved || kernel::to_string(c.point) != kernel::to_string(kernel::Layout{});
        EXPECT_TRUE(moved) << r << ": the planner keeps every nest of the gradient at its default";
        TrainOptions planned = opts("native", 1), plain = planned;
        planned.realize = plain.realize = r;
        planned.threads = plain.threads = 2;
        planned.plan = realize::parse_plan_json(realize::plan_json(choices, r), "@plan.json");
        EXPECT_EQ(run(planned, std::string("p") + r), run(plain, std::string("d") + r)) << r;
        EXPECT_EQ(tensors(std::string("p") + r, 1), tensors(std::string("d") + r, 1)) << r;
    }
    TrainOptions interp = opts("interp", 1);
    interp.plan = realize::parse_plan_json(R"({"layout": {"f/%1": {"split": "none"}}})", "@p.json");
    EXPECT_NE(refusal(interp).find("--backend interp runs none"), std::string::npos) << refusal(interp);
}

TEST_F(Train, ResumeEqualsUninterrupted) {
    for (const char* backend : {"kernel", "interp"}) {
        TrainOptions whole = opts(backend, 4);
        whole.bits = 64;
        whole.save_every = 2;
        const std::string log = run(whole, std::string("whole-") + backend);
        TrainOptions resumed = whole;
        resumed.save_every = 0;
        resumed.resume = (dir / (std::string("whole-") + backend) / "step-2").string();
        const std::string tail = run(resumed, std::string("resumed-") + backend);
        EXPECT_EQ(tail, log.substr(log.find("step 3 "))) << backend;
        EXPECT_EQ(tensors(std::string("resumed-") + backend, 4), tensors(std::string("whole-") + backend, 4)) << backend;
    }
}

TEST_F(Train, NativeResumesKernelCheckpoint) {
    NEED_LLVM();
    TrainOptions whole = opts("kernel", 4);
    whole.realize = "f32";
    whole.save_every = 2;
    run(whole, "whole");
    TrainOptions resumed = opts("native", 4);
    resumed.realize = "f32";
    resumed.resume = (dir / "whole" / "step-2").string();
    run(resumed, "resumed");
    EXPECT_EQ(tensors("resumed", 4), tensors("whole", 4));
}

TEST_F(Train, BadCheckpointsRefused) {
    TrainOptions o = opts("kernel", 2);
    run(o, "good");
    const fs::path good = dir / "good" / "step-2";
    auto copy = [&](const std::string& name) {
        fs::copy(good, dir / name, fs::copy_options::recursive);
        return dir / name;
    };
    auto resume = [&](const fs::path& p, TrainOptions r, const CheckOptions& dims = tiny()) {
        r.resume = p.string();
        return refusal(r, dims);
    };
    EXPECT_EQ(resume(good, o), "");

    fs::path bad = copy("corrupt");
    std::string bin = read(bad / "tensors.bin");
    bin[bin.size() / 2] ^= 1;
    write(bad / "tensors.bin", bin);
    EXPECT_NE(resume(bad, o).find("tensors.bin is corrupt: its checksum is"), std::string::npos) << resume(bad, o);

    bad = copy("truncated");
    write(bad / "tensors.bin", bin.substr(0, 100));
    EXPECT_NE(resume(bad, o).find("tensors.bin is truncated: 100 bytes"), std::string::npos) << resume(bad, o);

    bad = copy("longer");
    write(bad / "tensors.bin", read(good / "tensors.bin") + "x");
    EXPECT_NE(resume(bad, o).find("tensors.bin has " + std::to_string(bin.size() + 1) + " bytes"), std::string::npos);

    bad = copy("nojson");
    fs::remove(bad / "checkpoint.json");
    EXPECT_NE(resume(bad, o).find("no checkpoint.json (not a presk checkpoint)"), std::string::npos);
    EXPECT_NE(resume(dir / "nosuch", o).find("no such folder"), std::string::npos);

    bad = copy("malformed");
    write(bad / "checkpoint.json", read(good / "checkpoint.json").substr(0, 50));
    EXPECT_NE(resume(bad, o).find("checkpoint.json is not valid JSON"), std::string::npos) << resume(bad, o);

    bad = copy("foreign-format");
    write(bad / "checkpoint.json", "{\"format\": \"gguf\"}");
    EXPECT_NE(resume(bad, o).find("is not a presk checkpoint"), std::string::npos);

    bad = copy("no-field");
    std::string json = read(good / "checkpoint.json");
    json.replace(json.find("\"seed\""), 6, "\"sed\"");
    write(bad / "checkpoint.json", json);
    EXPECT_NE(resume(bad, o).find("lacks a field"), std::string::npos) << resume(bad, o);

    bad = copy("tensor-renamed");
    json = read(good / "checkpoint.json");
    json.replace(json.find("\"params.tok\""), 12, "\"params.tik\"");
    write(bad / "checkpoint.json", json);
    EXPECT_NE(resume(bad, o).find("has no tensor params.tok (another model?)"), std::string::npos) << resume(bad, o);

    // Another model, realization, backend family, seed, schedule or data.
    CheckOptions wider = tiny();
    wider.dims["D"] = 4;
    EXPECT_NE(resume(good, o, wider).find("is of another run: entry MiniGPT{16,8,2,2}.loss_grad, this run's MiniGPT{16,4,2,2}.loss_grad; parameter tree"),
              std::string::npos)
        << resume(good, o, wider);
    TrainOptions f32 = o;
    f32.realize = "f32";
    EXPECT_NE(resume(good, f32).find("arithmetic f64, this run's f32"), std::string::npos) << resume(good, f32);
    TrainOptions interp = o;
    interp.backend = "interp";
    EXPECT_NE(resume(good, interp).find("arithmetic f64, this run's interp 256 bits"), std::string::npos);
    TrainOptions seed = o;
    seed.seed = 9;
    EXPECT_NE(resume(good, seed).find("seed 3, this run's 9"), std::string::npos);
    TrainOptions longer = o;
    longer.steps = 5;
    EXPECT_NE(resume(good, longer).find("--steps 2, this run's 5"), std::string::npos);
    TrainOptions synthetic = o;
    synthetic.data.clear();
    EXPECT_NE(resume(good, synthetic).find("this run's synthesised"), std::string::npos);
}

TEST_F(Train, BadOptionsRefused) {
    auto with = [&](auto edit) {
        TrainOptions o = opts("kernel", 2);
        edit(o);
        return refusal(o);
    };
    EXPECT_EQ(with([](TrainOptions& o) { o.steps = 0; }), "--steps must be in 1..1000000000");
    EXPECT_EQ(with([](TrainOptions& o) { o.warmup = 3; }), "--warmup must be in 0..--steps (2)");
    EXPECT_EQ(with([](TrainOptions& o) { o.lr = -1; }), "--lr must be a finite positive number");
    EXPECT_EQ(with([](TrainOptions& o) { o.lr = NAN; }), "--lr must be a finite positive number");
    EXPECT_EQ(with([](TrainOptions& o) { o.backend = "llvm"; }), "--backend llvm: presk train runs on interp, kernel, native and cc");
    EXPECT_EQ(with([](TrainOptions& o) { o.save_every = 1; }), "--save-every needs --checkpoint DIR");
    EXPECT_EQ(with([](TrainOptions& o) { o.realize = "f16"; }).substr(0, 30), "--realize f16: there is no f16");
    EXPECT_EQ(with([](TrainOptions& o) { o.entry = "MiniGPT{V, D, H, L}.loss"; }),
              "--entry MiniGPT{V, D, H, L}.loss: presk train takes a module's gradient entry M{dims}.F_grad, whose objective is M{dims}.F");
    EXPECT_EQ(with([](TrainOptions& o) { o.entry = "Nope{V, D, H, L}.loss_grad"; }),
              "--entry Nope{V, D, H, L}.loss_grad: the file has no module Nope");
    EXPECT_EQ(with([](TrainOptions& o) { o.batch = 2; }), "");  // the same size --dim B gives
    EXPECT_EQ(with([](TrainOptions& o) { o.batch = 3; }), "--batch 3 and --dim B=2 disagree");
    EXPECT_EQ(with([](TrainOptions& o) { o.data += ".missing"; }).substr(0, 7), "--data ");
    EXPECT_NE(with([](TrainOptions& o) { o.data = "/"; }).find("it is a directory"), std::string::npos);
    write(dir / "big.txt", "1 2 3 16 4 5 6 7 8 9 10 11");
    EXPECT_EQ(with([&](TrainOptions& o) { o.data = (dir / "big.txt").string(); }).substr(std::string("--data ").size() + (dir / "big.txt").string().size()),
              ": token 4 is 16, not below the vocabulary's 16");
    write(dir / "short.txt", "1 2 3 4 5 6 7 8");
    EXPECT_NE(with([&](TrainOptions& o) { o.data = (dir / "short.txt").string(); }).find("8 tokens make 1 window(s) of 5, fewer than a batch of 2"),
              std::string::npos);
    write(dir / "words.txt", "1 2 x3");
    EXPECT_NE(with([&](TrainOptions& o) { o.data = (dir / "words.txt").string(); }).find("token 3 ('x3') is not a natural number"),
              std::string::npos);
    write(dir / "r.json", "{\"default\": \"f32\", \"params\": {\"tok\": \"bf16\"}}");
    EXPECT_NE(with([&](TrainOptions& o) { o.realize = "@" + (dir / "r.json").string(); }).find("a realization's params is not taken"),
              std::string::npos);
    write(dir / "q.json", "{\"default\": \"f32\", \"quant\": {\"head\": \"int8\"}}");
    EXPECT_NE(with([&](TrainOptions& o) { o.realize = "@" + (dir / "q.json").string(); }).find("a realization's quant is not taken"),
              std::string::npos);
    // A file without a gradient entry, and one whose data does not fit the entry's inputs.
    TrainOptions mse = opts("kernel", 2);
    mse.data.clear();
    CheckOptions none;
    none.strict = true;
    EXPECT_EQ(refusal(mse, none, "mse.psk"), "the file has no entry M{dims}.loss_grad: name the gradient entry with --entry");
    CheckOptions mlp;
    mlp.strict = true;
    mlp.dims = {{"batch", 3}};
    TrainOptions regression = opts("kernel", 2);
    regression.entry = "MLP{2, 4, 1}.loss_grad";
    EXPECT_NE(refusal(regression, mlp, "tutorial/02_mlp_regression.psk").find("a token file feeds an entry of two inputs int<V>[B, T]"),
              std::string::npos);
    regression.data.clear();  // synthesised inputs
    EXPECT_EQ(refusal(regression, mlp, "tutorial/02_mlp_regression.psk"), "");
}

namespace {

/// The parameters of the checkpoint in `dir` by name, every element as a double (an mpfr text
/// rounded once).
std::map<std::string, std::vector<double>> parameters(const fs::path& dir) {
    train::CheckpointMeta meta;
    std::map<std::string, std::vector<double>> out;
    for (const train::Blob& b : train::load_checkpoint(dir.string(), &meta)) {
        if (b.name.rfind("params.", 0) != 0) continue;
        std::vector<double>& x = out[b.name];
        if (b.dtype == "mpfr") {
            mpfr_t v;
            mpfr_init2(v, 256);
            for (size_t at = 0; at < b.bytes.size(); at = b.bytes.find('\0', at) + 1) {
                mpfr_set_str(v, b.bytes.c_str() + at, 16, MPFR_RNDN);
                x.push_back(mpfr_get_d(v, MPFR_RNDN));
            }
            mpfr_clear(v);
        } else {
            const kernel::DType t = b.dtype == "f64" ? kernel::DType::F64 : kernel::DType::F32;
            kernel::Data d(t, b.count);
            std::memcpy(d.raw(), b.bytes.data(), b.bytes.size());
            x = d.reals();
        }
    }
    return out;
}

} // namespace

// The seed's regression measurement: 200 AdamW steps of the MLP regression on the reference at
// 256 bits and natively in f64 and f32, the final parameters' worst relative gap
// max |x^ - x| / max |x| over each tensor, within a few units of the seed's (4.4e-16 for f64,
// 1.6e-7 for f32).
TEST_F(Train, RegressionAgainstTheReference) {
    NEED_LLVM();
    CheckOptions dims;
    dims.strict = true;
    dims.dims = {{"batch", 16}};
    TrainOptions o = opts("interp", 200);
    o.entry = "MLP{2, 8}.loss_grad";
    o.data.clear();
    o.warmup = 10;
    o.log_every = 200;
    run(o, "ref", dims, "train/mlp_regression.psk");
    const auto exact = parameters(dir / "ref" / "step-200");
    for (const char* r : {"f64", "f32"}) {
        TrainOptions n = o;
        n.backend = "native";
        n.realize = r;
        run(n, r, dims, "train/mlp_regression.psk");
        double worst = 0, element = 0;
        for (const auto& [name, x] : parameters(dir / r / "step-200")) {
            const std::vector<double>& e = exact.at(name);
            double gap = 0, scale = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                gap = std::max(gap, std::fabs(x[i] - e[i]));
                scale = std::max(scale, std::fabs(e[i]));
                if (e[i] != 0) element = std::max(element, std::fabs(x[i] - e[i]) / std::fabs(e[i]));
            }
            worst = std::max(worst, gap / scale);
        }
        std::printf("native %s: worst relative gap after 200 AdamW steps %.2g (of each tensor's largest magnitude; "
                    "%.2g of each element's)\n", r, worst, element);
        EXPECT_LT(worst, std::string(r) == "f64" ? 1e-13 : 2e-5) << r;
        EXPECT_GT(worst, 0) << r;
    }
}
