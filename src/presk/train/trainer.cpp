#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "kernel/pool.h"
#include "lang/parser.h"
#include "realize/executor.h"
#include "ref/interp.h"
#include "train/model.h"
#include "train/pipeline.h"

namespace presk::train {
namespace {

constexpr const char* kAdamw = "presk_train_adamw";

/// `x` as "1.500e-5": `decimals` digits after the point, the exponent without padding.
std::string sci(double x, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", decimals, x);
    std::string s(buf);
    const size_t e = s.find('e');
    if (e == std::string::npos) return s;  // inf, nan
    const int exp = std::atoi(s.c_str() + e + 1);
    return s.substr(0, e + 1) + std::to_string(exp);
}

void check_options(const TrainOptions& o) {
    if (o.backend != "interp" && o.backend != "kernel" && o.backend != "native" && o.backend != "cc")
        throw Error({}, "--backend " + o.backend + ": presk train runs on interp, kernel, native and cc");
    if (o.steps < 1 || o.steps > 1000000000) throw Error({}, "--steps must be in 1..1000000000");
    if (!(o.lr > 0) || !std::isfinite(o.lr)) throw Error({}, "--lr must be a finite positive number");
    if (o.warmup < 0 || o.warmup > o.steps) throw Error({}, "--warmup must be in 0..--steps (" + std::to_string(o.steps) + ")");
    if (o.log_every < 1) throw Error({}, "--log-every must be at least 1");
    if (o.save_every < 0) throw Error({}, "--save-every must be at least 0");
    if (o.save_every > 0 && o.checkpoint.empty()) throw Error({}, "--save-every needs --checkpoint DIR");
    if (o.batch < 0) throw Error({}, "--batch must be at least 1");
    if (o.threads < 1 || o.threads > 1024) throw Error({}, "--threads must be in 1..1024");
    if (o.bits < 53 || o.bits > 100000) throw Error({}, "--bits must be in 53..100000 for presk train");
}

/// The gradient entry: --entry, or the file's one entry whose function is loss_grad.
std::string gradient_entry(const ast::File& file, const TrainOptions& o) {
    if (!o.entry.empty()) return o.entry;
    std::vector<std::string> found;
    for (const std::string& e : list_entries(file))
        if (e.size() > 10 && e.compare(e.size() - 10, 10, ".loss_grad") == 0) found.push_back(e);
    if (found.size() == 1) return found[0];
    std::string names;
    for (const auto& e : found) names += (names.empty() ? "" : ", ") + e;
    throw Error({}, found.empty() ? "the file has no entry M{dims}.loss_grad: name the gradient entry with --entry"
                                  : "the file has " + std::to_string(found.size()) + " entries *.loss_grad (" + names +
                                        "): name one with --entry");
}

/// `--entry M{dims}.F_grad` cut into the module's name, its dims' text and F.
struct EntryParts {
    std::string module, dims, objective_fn, grad_fn;
};

EntryParts split_entry(const std::string& e) {
    const size_t dot = e.rfind('.');
    const std::string fn = dot == std::string::npos ? e : e.substr(dot + 1);
    if (dot == std::string::npos || fn.size() <= 5 || fn.compare(fn.size() - 5, 5, "_grad") != 0)
        throw Error({}, "--entry " + e + ": presk train takes a module's gradient entry M{dims}.F_grad, whose objective is M{dims}.F");
    EntryParts p;
    p.grad_fn = fn;
    p.objective_fn = fn.substr(0, fn.size() - 5);
    std::string mod = e.substr(0, dot);
    const size_t brace = mod.find('{');
    if (brace != std::string::npos) {
        if (mod.back() != '}') throw Error({}, "--entry " + e + ": the module's dims must end with '}'");
        p.dims = mod.substr(brace + 1, mod.size() - brace - 2);
        mod = mod.substr(0, brace);
    }
    mod.erase(std::remove(mod.begin(), mod.end(), ' '), mod.end());
    p.module = mod;
    return p;
}

const ast::Module& find_module(const ast::File& file, const std::string& name, const std::string& entry) {
    for (const ast::Module& m : file.modules)
        if (m.name == name) return m;
    throw Error({}, "--entry " + entry + ": the file has no module " + name);
}

/// --batch B: the size of the gradient function's first input's first axis, which must be
/// named (and not given otherwise by --dim).
void bind_batch(const ast::Module& m, const EntryParts& parts, const TrainOptions& o, CheckOptions& dims) {
    if (o.batch == 0) return;
    const ast::Fn* fn = nullptr;
    for (const ast::Fn& f : m.fns)
        if (f.name == parts.grad_fn) fn = &f;
    const ast::Type* t = fn && !fn->params.empty() ? fn->params[0].type.get() : nullptr;
    if (!t || t->kind != ast::Type::Tensor || t->ellipsis || t->axes.empty() || t->axes[0]->kind != ast::Expr::Var ||
        std::find(m.dims.begin(), m.dims.end(), t->axes[0]->text) != m.dims.end())
        throw Error({}, "--batch: the first input of " + m.name + "." + parts.grad_fn + " has no named first axis to size");
    const std::string& name = t->axes[0]->text;
    auto [it, fresh] = dims.dims.emplace(name, o.batch);
    if (!fresh && it->second != o.batch)
        throw Error({}, "--batch " + std::to_string(o.batch) + " and --dim " + name + "=" + std::to_string(it->second) + " disagree");
}

/// The checkpoint identity's differences, "" when there are none.
std::string differences(const CheckpointMeta& a, const CheckpointMeta& b) {
    std::string out;
    auto field = [&](const char* name, const std::string& have, const std::string& want) {
        if (have != want) out += std::string(out.empty() ? "" : "; ") + name + " " + have + ", this run's " + want;
    };
    field("entry", a.entry, b.entry);
    field("parameter tree", a.params_type, b.params_type);
    field("arithmetic", a.arithmetic, b.arithmetic);
    field("seed", std::to_string(a.seed), std::to_string(b.seed));
    field("--lr", sci(a.lr, 17), sci(b.lr, 17));
    field("--warmup", std::to_string(a.warmup), std::to_string(b.warmup));
    field("--steps", std::to_string(a.steps), std::to_string(b.steps));
    field("data", a.data, b.data);
    return out;
}

} // namespace

std::string adamw_module(const ast::Module& m) {
    std::string dims;
    for (const auto& d : m.dims) dims += (dims.empty() ? "" : ", ") + d;
    const std::string p = "params(" + m.name + "{" + dims + "})";
    return "\n# presk train's AdamW step (examples/adamw.psk) over the parameters of " + m.name + "\nmodule " + kAdamw +
           (dims.empty() ? "" : "{" + dims + "}") + " {\n  fn step(p : " + p + ", g : " + p + ", m : " + p + ", s : " + p +
           ", t : f64, lr : f64) -> (" + p + ", " + p + ", " + p +
           ") {\n"
           "    let m2 = 0.9 * m + (1 - 0.9) * g\n"
           "    let s2 = sqrt(0.999 * s * s + (1 - 0.999) * g * g)\n"
           "    let mhat = m2 / (1 - pow(0.9, t))\n"
           "    let shat = s2 / sqrt(1 - pow(0.999, t))\n"
           "    (p - lr * (mhat / (shat + 0.00000001) + 0.01 * p), m2, s2)\n"
           "  }\n}\n";
}

void train(Source& src, const TrainOptions& o, const CheckOptions& given, std::ostream& log) {
    check_options(o);
    realize::Realization r = realize::parse_realization(o.realize);  // checked on interp too
    if (!r.params.empty() || !r.quant.empty())
        throw Error({}, "--realize " + o.realize + ": presk train keeps the parameters in the default type (a realization's " +
                            (r.params.empty() ? "quant" : "params") + " is not taken)");
    std::optional<TokenData> data;
    if (!o.data.empty()) data = read_tokens(o.data);

    const ast::File file = parse(src);
    const std::string entry = gradient_entry(file, o);
    const EntryParts parts = split_entry(entry);
    const ast::Module& mod = find_module(file, parts.module, entry);
    if (parts.module == kAdamw) throw Error({}, std::string("the module name ") + kAdamw + " is presk train's own");
    CheckOptions dims = given;
    bind_batch(mod, parts, o, dims);

    src.text += adamw_module(mod);
    const ast::File all = parse(src);
    CheckOptions loose = dims;
    loose.strict = false;
    const std::string prefix = entry.substr(0, entry.rfind('.'));
    Programs p{check(all, prefix + "." + parts.objective_fn, loose), check(all, entry, dims),
               check(all, std::string(kAdamw) + (parts.dims.empty() ? "" : "{" + parts.dims + "}") + ".step", loose)};
    const core::Function* gf = p.grad.find(p.grad.entry);
    const core::Function* lf = p.loss.find(p.loss.entry);
    const TypeP gret = gf->type_of(gf->result), lret = lf->type_of(lf->result);
    if (!p.grad.params_type || !same_type(*gret, *p.grad.params_type))
        throw Error({}, "--entry " + entry + " returns " + to_string(*gret) + ", not the gradient of " + parts.module + "'s parameters");
    if (!(lret->is_real_tensor() && lret->axes.empty()))
        throw Error({}, "the objective " + p.loss.entry + " returns " + to_string(*lret) + ", not a real scalar");
    if (lf->param_types.size() != gf->param_types.size() ||
        !std::equal(lf->param_types.begin(), lf->param_types.end(), gf->param_types.begin(),
                    [](const TypeP& a, const TypeP& b) { return same_type(*a, *b); }))
        throw Error({}, "the objective " + p.loss.entry + " and the gradient entry " + p.grad.entry + " take different inputs");

    ref::Interp draw(p.grad, {o.bits, o.seed, false});
    Pipeline pipeline(std::vector<TypeP>(gf->param_types.begin() + 1, gf->param_types.end()),
                      std::vector<std::string>(gf->param_names.begin() + 1, gf->param_names.end()), o.seed, std::move(data),
                      [&](const TypeP& t, const std::string& name) { return draw.synthesize(t, name); });
    if (o.backend == "interp" && !o.plan.layout.empty())
        throw Error({}, "--plan " + o.plan.spelling + ": a plan lays out kernels, and --backend interp runs none");
    std::unique_ptr<Model> model = o.backend == "interp" ? interp_model(p, o.bits, o.seed)
                                                         : kernel_model(p, o.backend, r, o.seed, o.threads, o.plan);
    model->start(draw.init_params());

    const Schedule schedule{o.lr, o.warmup, o.steps};
    CheckpointMeta meta;
    meta.entry = p.grad.entry;
    meta.params_type = to_string(*p.grad.params_type);
    meta.arithmetic = o.backend == "interp" ? "interp " + std::to_string(o.bits) + " bits" : r.spelling;
    meta.backend = o.backend;
    meta.seed = o.seed;
    meta.lr = o.lr;
    meta.warmup = o.warmup;
    meta.steps = o.steps;
    meta.data = pipeline.source();

    int64_t first = 1;
    if (!o.resume.empty()) {
        CheckpointMeta saved;
        const std::vector<Blob> blobs = load_checkpoint(o.resume, &saved);
        const std::string diff = differences(saved, meta);
        if (!diff.empty()) throw Error({}, "checkpoint " + o.resume + " is of another run: " + diff);
        if (saved.step < 0 || saved.step > o.steps)
            throw Error({}, "checkpoint " + o.resume + " is at step " + std::to_string(saved.step) + ", outside 0..--steps " + std::to_string(o.steps));
        BatchPos pos;
        if (saved.step > 0) pipeline.batch(saved.step, &pos);
        if (saved.step > 0 && (pos.epoch != saved.epoch || pos.index != saved.batch))
            throw Error({}, "checkpoint " + o.resume + " records the data at epoch " + std::to_string(saved.epoch) + " batch " +
                                std::to_string(saved.batch) + ", where this pipeline's step " + std::to_string(saved.step) +
                                " is epoch " + std::to_string(pos.epoch) + " batch " + std::to_string(pos.index));
        try {
            model->load(blobs);
        } catch (const Error& e) {
            throw Error({}, "checkpoint " + o.resume + ": " + e.what());
        }
        first = saved.step + 1;
    }
    for (int64_t n = first; n <= o.steps; ++n) {
        BatchPos pos;
        const std::vector<ref::Value> inputs = pipeline.batch(n, &pos);
        const double loss = model->loss(inputs);
        const double norm = model->gradient(inputs);
        const double lr = learning_rate(schedule, n);
        model->update(n, lr);
        if (n % o.log_every == 0 || n == o.steps) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.6f", loss);
            log << "step " << n << "  epoch " << pos.epoch << "  loss " << buf << "  lr " << sci(lr, 3) << "  |g| " << sci(norm, 4)
                << std::endl;
        }
        if (!o.checkpoint.empty() && ((o.save_every > 0 && n % o.save_every == 0) || n == o.steps)) {
            meta.step = n;
            meta.epoch = pos.epoch;
            meta.batch = pos.index;
            save_checkpoint((std::filesystem::path(o.checkpoint) / ("step-" + std::to_string(n))).string(), meta, model->save());
        }
    }
}

} // namespace presk::train
